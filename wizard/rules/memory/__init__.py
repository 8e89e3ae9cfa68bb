"""Memory: weights, KV cache and token budgets (SD500-SD599).

Memory and scheduling-budget rules from the planner.

All read :func:`wizard.plan.planner.plan_memory` (cached per context in ``ctx.memory_plan_memo``). Every fix is
verified before it is offered: the patched configuration is planned again and the fix is kept
only when the finding is gone.
"""

ID_RANGES = (("SD500", "SD599"),)
