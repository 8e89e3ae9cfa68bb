from __future__ import annotations

from wizard.config import Patch, SERVE_FIELDS, SPEC_FIELDS, SpeculativeConfig
from wizard.rules.helpers import ABSURD, as_number, patched_ctx
from wizard.rules.optionvalues import option_path, user_options
from wizard.rules.registry import Rule, Severity, register


#: the k a fix writes where vLLM has no default (the n-gram fallback's, wizard.fixes)
_K = 3

_SPEC_NUMERIC = tuple(n for n in SPEC_FIELDS if any(t in str(SpeculativeConfig.model_fields[n].annotation) for t in ("int", "float")))


@register
class AbsurdNumber(Rule):
    """Absurdly large number

    ## What it does

    Flags numeric options (modelled or not) and numeric ``speculative_config`` fields
    whose magnitude exceeds 2**53 (9,007,199,254,740,992).

    ## Why it matters

    No real deployment has that many sequences, tokens, GPUs or bytes: it is
    a typo, a unit mistake or an overflow. vLLM either rejects it (a length above the model's,
    more ranks than devices) or tries to allocate buffers sized by it; JSON tools and the UI
    cannot even represent it exactly.

    ## Example

    ``--max-num-batched-tokens 99999999999999999999``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 99999999999999999999
    ```

    ## Use instead

    Use realistic values or leave the option out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 8192
    ```

    ## Fix safety

    Unsetting restores vLLM's default.

    ## Source

    SpecWizard (sanity bound); vllm/config/scheduler.py / model.py sizes buffers from these values.
    """

    id = "SD012"
    severity = Severity.ERROR
    fields = ("max_num_seqs", "max_num_batched_tokens", "max_model_len", "tensor_parallel_size")
    phase = "load"

    def check(self, ctx):
        cands = [(n, getattr(ctx.config, n)) for n in SERVE_FIELDS]
        for n, v in user_options(ctx).items():
            if n not in SERVE_FIELDS and isinstance(v, str) and v.strip().lstrip("-").isdigit():
                cands.append((option_path(ctx, n), int(v)))
            elif n not in SERVE_FIELDS:
                cands.append((option_path(ctx, n), v))
        if ctx.spec is not None:
            cands += [(f"speculative_config.{n}", getattr(ctx.spec, n)) for n in _SPEC_NUMERIC]
        for path, value in cands:
            v = as_number(value)
            if v is None or abs(v) <= ABSURD:
                continue
            fix = Patch(description=f"Unset {path} (vLLM's default applies)", unset=[path])
            if path == "speculative_config.num_speculative_tokens" and patched_ctx(ctx, fix).k is None:
                # no default to fall back on: vLLM derives k only from a drafter's n_predict / MTP layers (SD043)
                fix = Patch(description=f"Set {path} to {_K}", set={path: _K})
            yield self.finding(
                f"{path}={v!r} exceeds 2**53; that is a typo or an overflow, not a setting vLLM can run with.",
                fields=[path],
                fixes=[fix],
            )
