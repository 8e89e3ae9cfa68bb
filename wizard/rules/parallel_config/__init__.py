"""How the target is split over devices: TP, PP, DP, expert parallelism (SD120-SD139).

``ModelConfig.verify_with_parallel_config`` and ``ParallelConfig`` checks (docs/vllm-rules.md
§10.12, §10.17): attention heads divisible by the tensor-parallel size, expert parallelism only
for MoE models, pipeline stages against the layer count. The drafter's parallelism is the
``parallel`` family (SD080-SD089).
"""

ID_RANGE = ("SD120", "SD139")
