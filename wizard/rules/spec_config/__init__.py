"""Keys and values inside speculative_config that vLLM checks at config time (SD020-SD029).

Keys and values inside ``speculative_config`` that vLLM checks at config time: unknown keys
(R009), KV dtype names (R007, R014), numeric bounds (R011, R012), ``tensor_parallel_size`` inside
the speculative config (R013), attention backend names (R015) and sampler enums (R016).
"""

ID_RANGE = ("SD020", "SD029")
