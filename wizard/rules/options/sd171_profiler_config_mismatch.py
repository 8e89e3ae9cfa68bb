from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register

#: proton_* keys and their defaults (ProfilerConfig), with the release that added the key
_PROTON = (("proton_profiler_dir", "", "0.28"), ("proton_context", "shadow", "0.28"), ("proton_data", "tree", "0.28"),
           ("proton_backend", None, "0.28"), ("proton_mode", None, "0.28"), ("proton_hook", None, "0.28"),
           ("proton_output_format", None, "0.28"), ("proton_graph_attribution", False, "0.30"))


@register
class ProfilerConfigMismatch(Rule):
    r"""--profiler-config keys that do not fit the chosen profiler

    ## What it does

    Checks ``--profiler-config`` (JSON or dotted keys) the way ``ProfilerConfig``'s validator
    does: ``torch_profiler_dir``, ``capture_torch_profiler`` and (0.31+)
    ``torch_profiler_activities`` only with ``profiler: torch``, which needs
    ``torch_profiler_dir``; ``proton_*`` keys other than their defaults only with
    ``profiler: proton``, which needs ``proton_profiler_dir``.

    ## Why it matters

    vLLM's parser refuses the option, e.g. "proton_hook only applicable when profiler is set
    to 'proton'" or "torch_profiler_dir must be set when profiler is 'torch'".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --profiler-config '{"profiler":"torch"}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --profiler-config '{"profiler":"torch","torch_profiler_dir":"/tmp/traces"}'
    ```

    ## Fix safety

    Dropping the keys that do not apply to the chosen profiler is safe (vLLM would not use
    them). A profiler without its trace directory is fixed by removing ``--profiler-config``
    (the server then runs unprofiled); choosing a directory is left to the user.

    ## Source

    vllm/config/profiler.py ``ProfilerConfig._validate_profiler_config`` (0.28-0.33;
    ``proton_graph_attribution`` from 0.30, ``torch_profiler_activities`` from 0.31);
    conformance ``benchmarks/conformance_schema.py`` on 0.32.
    """

    id = "SD171"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.profiler_config",)
    phase = "parse"

    def check(self, ctx):
        p = option(ctx, "profiler_config")
        if not isinstance(p, dict):
            return
        prof = p.get("profiler")
        msgs, drop = [], []  # messages; keys to drop (None: the whole option)
        if p.get("torch_profiler_activities") is not None and prof != "torch" and ctx.version.matches(">=0.31"):
            msgs.append("torch_profiler_activities is only applicable when profiler is set to 'torch'")
            drop.append("torch_profiler_activities")
        if p.get("torch_profiler_dir") and prof != "torch":
            msgs.append("torch_profiler_dir is only applicable when profiler is set to 'torch'")
            drop.append("torch_profiler_dir")
        if prof == "torch" and not p.get("torch_profiler_dir"):
            msgs.append("torch_profiler_dir must be set when profiler is 'torch'")
            drop.append(None)
        proton = [k for k, default, since in _PROTON
                  if k in p and p[k] != default and ctx.version.matches(f">={since}")]
        if prof != "proton" and proton:
            msgs.append(f"{', '.join(proton)} only applicable when profiler is set to 'proton'")
            drop.extend(proton)
        if prof == "proton" and not p.get("proton_profiler_dir"):
            msgs.append("proton_profiler_dir must be set when profiler is 'proton'")
            drop.append(None)
        if p.get("capture_torch_profiler") is True and prof != "torch":
            msgs.append("capture_torch_profiler is only applicable when profiler is set to 'torch'")
            drop.append("capture_torch_profiler")
        if not msgs:
            return
        rest = None if None in drop else {k: v for k, v in p.items() if k not in drop}
        fix = (set_option_patch(ctx, "profiler_config", rest or None, f"Drop {', '.join(drop)} from --profiler-config")
               if rest is not None else set_option_patch(ctx, "profiler_config", None, "Remove --profiler-config"))
        yield self.finding(f"--profiler-config: {'; '.join(msgs)}. vLLM's parser rejects it.", fixes=[fix])
