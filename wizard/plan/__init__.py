"""Memory and speed-up planner: will target + drafter fit, how much KV cache is left, how many
requests run at once, and what speculation buys at each k and concurrency.

    from wizard.plan.planner import plan
    p = plan(ctx)                                   # a CheckContext (or a ServeConfig + hardware=)
    p.kv_bytes_per_token   -> {"target": 131072, "drafter": 4096}        (bytes, per GPU)
    p.kv_capacity_tokens   -> 1_365_250                                 (tokens, as vLLM logs it)
    p.max_concurrency      -> 1365.25                                   (requests at max_model_len)
    p.speedup.table        -> [SpeedupRow(k=1, ...), ...]                (batch 1)
    p.speedup.batches      -> [BatchRow(batch=1, points=[KPoint(k, speedup)...], best_k), ...]
    p.speedup.stops_paying_above -> concurrency above which no k pays

Modules, one concern each (this package file imports none of them: each is imported by path):

* :mod:`~wizard.plan.kv` -- KV bytes per token of one model side (layer kinds, MLA, dtypes);
* :mod:`~wizard.plan.memory` -- weights, vLLM's reserve, scheduler defaults, drafter layers;
* :mod:`~wizard.plan.capacity` -- blocks, concurrency, "KV cache size" (vLLM's allocator);
* :mod:`~wizard.plan.acceptance` -- per-position acceptance (cumulative / conditional) and the
  published defaults per method family;
* :mod:`~wizard.plan.cost` -- roofline + overhead time of a forward pass;
* :mod:`~wizard.plan.speedup` -- speed-up vs k and batch size, best k, break-even concurrency;
* :mod:`~wizard.plan.estimate` -- the speed-up step of a plan (acceptance choice, k cap, drafter);
* :mod:`~wizard.plan.inputs` -- what the planner accepts (PlanInputError);
* :mod:`~wizard.plan.planner` -- :func:`~wizard.plan.planner.plan`, the steps in order, :class:`Plan`.

Units: every field named ``*_bytes`` is in bytes; GiB (2**30 bytes) appear only in text output.
The CLI and text faces live in :mod:`wizard.cli_plan`; faces call :func:`wizard.api.plan`.
"""
