"""Parallelism of the drafter and of the target (TP, PP, DP, EP) (SD080-SD089, SD120-SD139).

Drafter tensor parallelism and lengths (SD080-SD089).

Drafter parallelism and length limits at config time (docs/vllm-rules.md R055, R056, R058, R059).

How the target is split over devices: TP, PP, DP, expert parallelism (SD120-SD139).

``ModelConfig.verify_with_parallel_config`` and ``ParallelConfig`` checks (docs/vllm-rules.md
§10.12, §10.17): attention heads divisible by the tensor-parallel size, expert parallelism only
for MoE models, pipeline stages against the layer count. The drafter's parallelism is
SD080-SD089 above.
"""

ID_RANGES = (("SD080", "SD089"), ("SD120", "SD139"))
