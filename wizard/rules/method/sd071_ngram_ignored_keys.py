from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import NGRAM_MODEL_NAMES, use_ngram


@register
class NgramIgnoredKeys(Rule):
    r"""Option ignored by n-gram speculation

    ## What it does

    With method ngram / ngram_gpu, ``model`` (a drafter checkpoint: vLLM fills ``model`` with
    "ngram" only when none is given and never loads one), ``max_model_len``,
    ``draft_tensor_parallel_size``, ``kv_cache_dtype``, ``quantization``, ``attention_backend``
    and ``revision`` in ``speculative_config`` have no effect (there is no drafter model).

    ## Why it matters

    vLLM accepts them silently; the user believes e.g. the draft KV dtype or
    length limit is applied.

    ## Example

    ``{"method":"ngram","num_speculative_tokens":3,"max_model_len":4096}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"max_model_len":4096}'
    ```

    ## Use instead

    Remove them.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: vLLM ignores them anyway.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (ngram branch reuses the target config),
    0.32 and 0.33; docs/vllm-rules.md R062 (G09, G10, F17).
    """

    id = "SD071"
    severity = Severity.INFO  # docs/severity.md: serves correctly; advice
    fields = ("speculative_config",)
    phase = "config"

    _KEYS = ("model", "max_model_len", "draft_tensor_parallel_size", "kv_cache_dtype", "quantization", "attention_backend",
             "revision", "code_revision", "moe_backend")

    def check(self, ctx):
        if ctx.spec is None or not use_ngram(ctx.method):
            return
        g = given_keys(ctx)
        keys = [k for k in self._KEYS if k in g and not (k == "model" and str(g[k]).strip() in NGRAM_MODEL_NAMES)]
        if not keys:
            return
        paths = [f"speculative_config.{k}" for k in keys]
        yield self.finding(
            f"{', '.join(keys)} in speculative_config {'is' if len(keys) == 1 else 'are'} ignored by "
            f"{ctx.method} speculation (there is no drafter model).",
            fields=paths,
            fixes=[Patch(description="Remove the ignored keys", unset=paths)],
        )
