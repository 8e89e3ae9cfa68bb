"""Step 3 · Speculation: method (fitting ones first), drafter, k, the method's own fields, and the
drafter's facts beside the target's. The choices come from :mod:`wizard.suggest`."""

from __future__ import annotations

import html

import gradio as gr

from wizard import api, suggest
from wizard.ui import services
from wizard.ui.core import WizardUI
from wizard.ui.state import config_of, field_value
from wizard.vllm.methods import SUFFIX, drafts_from_target, is_mtp, needs_drafter_checkpoint, use_ngram

__all__ = ["build", "wire", "on_method_chosen", "method_choices", "drafter_choices", "facts_md"]

SPEC = "speculative_config."
METHOD, DRAFTER, K = SPEC + "method", SPEC + "model", SPEC + "num_speculative_tokens"
CHOICE_PATHS = ("model", "allow_hub", "vllm_version")
FORM_PATHS = ("model", "allow_hub", "vllm_version", METHOD)
NOTE_PATHS = ("model", "allow_hub", "vllm_version", SPEC, "max_model_len", "max_num_batched_tokens")
FIELDS = (METHOD, DRAFTER, SPEC + "draft_tensor_parallel_size", K, SPEC + "prompt_lookup_min", SPEC + "prompt_lookup_max",
          SPEC + "suffix_decoding_max_tree_depth", SPEC + "suffix_decoding_max_cached_requests",
          SPEC + "suffix_decoding_max_spec_factor", SPEC + "suffix_decoding_min_token_prob")


def _uses_drafter(method: str | None) -> bool:
    """The method runs a drafter model (its own checkpoint, or the target's MTP/DSpark layers)."""
    return needs_drafter_checkpoint(method) or drafts_from_target(method)


def _method(state: dict) -> str | None:
    spec = (state.get("config") or {}).get("speculative_config")
    return spec.get("method") if isinstance(spec, dict) else None


def method_choices(ev, version) -> list[tuple[str, str]]:
    """Dropdown choices: "none", then :func:`wizard.suggest.methods_for` (fitting ones starred)."""
    target = ev.ctx.target if ev is not None and ev.ctx is not None else None
    model = ev.config.model if ev is not None and ev.config is not None else None
    out = [("none — no speculation", "none")]
    for m in suggest.methods_for(target, version, model):
        out.append((f"★ {m.method} — {m.why}" if m.recommended else f"other: {m.method} — {m.why}", m.method))
    return out


def drafter_choices(model: str | None, method: str | None, current: str | None) -> list[tuple[str, str]]:
    """Catalog drafters of the method's family for ``model`` (and the current value)."""
    out = []
    fam = method if needs_drafter_checkpoint(method) else None
    for d in suggest.drafters_for(model, fam):
        out.append((f"★ {d.id} — {d.title}" if d.method == method else f"{d.id} — {d.title}" + (f" ({d.method})" if d.method else ""),
                    d.id))
    if current and current not in [v for _, v in out]:
        out.append((current, current))
    return out


def on_method_chosen(ui: WizardUI, st: dict, before: dict | None = None) -> dict:
    """After the method changed: the drafter and k the core's policy picks
    (:func:`wizard.suggest.default_drafter`, :func:`wizard.suggest.default_k`; the CLI's
    ``wizard suggest`` prints the same). Form convenience only: the checks come from wizard.api."""
    cfg = st.get("config") or {}
    spec = cfg.get("speculative_config")
    if not isinstance(spec, dict) or not isinstance(spec.get("method"), str):
        return st
    method = spec["method"]
    prev = _method(before) if before else None
    if method == prev:
        return st
    drafter_id = suggest.default_drafter(cfg.get("model"), method, current=spec.get("model"))
    if drafter_id != spec.get("model"):
        spec["model"] = drafter_id
    try:
        c = config_of(st)
        ctx = api.resolve(c, allow_hub=False, path_allowed=ui.policy.allows) if c is not None else None
    except Exception:  # a version or GPU the check reports itself
        ctx = None
    target = ctx.target if ctx is not None else None
    drafter = ctx.drafter if ctx is not None and ctx.drafter is not target else None
    k = spec.get("num_speculative_tokens")
    new_k = suggest.default_k(method, target, drafter, current=k, previous_method=prev)
    if new_k != k:
        spec["num_speculative_tokens"] = new_k
    return st


def build(ui: WizardUI) -> None:
    c = ui.c
    ui.field(METHOD, gr.Dropdown([("none — no speculation", "none")], value="none", label="Speculative method",
                                 allow_custom_value=True, elem_id="f-speculative_config-method"),
             to_form=lambda v: v or "none", after=lambda new, old: on_method_chosen(ui, new, old))
    c["method_md"] = gr.Markdown(elem_id="sw-method-md")
    with gr.Group(visible=False) as g:
        ui.field(DRAFTER, gr.Dropdown([], value=None, label="Drafter model (HF id, folder or catalog id)",
                                      allow_custom_value=True, elem_id="f-speculative_config-model"),
                 to_form=lambda v: v or None)
        ui.field(SPEC + "draft_tensor_parallel_size",
                 gr.Textbox(label="draft_tensor_parallel_size", placeholder="target TP (default)",
                            elem_id="f-speculative_config-draft_tensor_parallel_size"))
    c["drafter_group"] = g
    ui.field(K, gr.Slider(1, 10, value=3, step=1, label="num_speculative_tokens (k)",
                          elem_id="f-speculative_config-num_speculative_tokens"),
             to_form=lambda v: v if isinstance(v, int) and 1 <= v <= suggest.K_HARD_MAX else 3)
    with gr.Row(visible=False) as g:
        ui.field(SPEC + "prompt_lookup_min", gr.Textbox(label="prompt_lookup_min (tokens)", min_width=180,
                                                        elem_id="f-speculative_config-prompt_lookup_min"))
        ui.field(SPEC + "prompt_lookup_max", gr.Textbox(label="prompt_lookup_max (tokens)", min_width=180,
                                                        elem_id="f-speculative_config-prompt_lookup_max"))
    c["ngram_group"] = g
    with gr.Row(visible=False) as g:
        for name, label in (("suffix_decoding_max_tree_depth", "max tree depth"),
                            ("suffix_decoding_max_cached_requests", "max cached requests"),
                            ("suffix_decoding_max_spec_factor", "max spec factor"),
                            ("suffix_decoding_min_token_prob", "min token prob")):
            ui.field(SPEC + name, gr.Textbox(label=label, min_width=150, elem_id=f"f-speculative_config-{name}"))
    c["suffix_group"] = g
    gr.Markdown("**Drafter facts beside the target's**", elem_id="sw-drafter-facts-title")
    c["drafter_facts"] = gr.Markdown(elem_id="sw-drafter-facts")
    f = ui.fields
    ui.react("speculation", CHOICE_PATHS, [f[METHOD]], _choices)
    ui.react("speculation", FORM_PATHS, [f[DRAFTER], c["drafter_group"], f[K], c["ngram_group"], c["suffix_group"]], _form)
    ui.react("speculation", NOTE_PATHS, [c["method_md"], c["drafter_facts"]], _notes)


def _choices(ui: WizardUI, state: dict, ev) -> dict:
    version, _ = services.version_of(state)
    method = _method(state)
    choices = method_choices(ev, version)
    if method and method not in [v for _, v in choices]:  # e.g. an imported MTP alias
        choices.append((f"{method} (as given)", method))
    return {ui.fields[METHOD]: gr.Dropdown(choices=choices, value=method or "none")}


def _form(ui: WizardUI, state: dict, ev) -> dict:
    method = _method(state)
    shown = (ev.ctx.method if ev.ctx is not None else None) or method
    cur = field_value(state, DRAFTER)
    model = (state.get("config") or {}).get("model")
    target = ev.ctx.target if ev.ctx is not None else None
    drafter = ev.ctx.drafter if ev.ctx is not None and ev.ctx.drafter is not target else None
    k = field_value(state, K)
    kr = suggest.k_range(shown, target, drafter, current=k if isinstance(k, int) else None)
    slider: dict = {"minimum": kr.minimum, "maximum": kr.maximum, "step": kr.step, "info": kr.why,
                    "visible": method is not None}
    if isinstance(k, int) and not isinstance(k, bool) and kr.minimum <= k <= kr.maximum:
        slider["value"] = k
    uses = _uses_drafter(shown) or (method is None and bool(cur))
    return {
        ui.fields[DRAFTER]: gr.Dropdown(choices=drafter_choices(model, shown, cur), value=cur),
        ui.c["drafter_group"]: gr.Group(visible=bool(uses) and not is_mtp(shown)),
        ui.fields[K]: gr.Slider(**slider),
        ui.c["ngram_group"]: gr.Row(visible=use_ngram(shown)),
        ui.c["suffix_group"]: gr.Row(visible=shown == SUFFIX),
    }


def _notes(ui: WizardUI, state: dict, ev) -> dict:
    method = _method(state)
    resolved = ev.ctx.method if ev.ctx is not None else method
    lines = []
    if method is None:
        lines.append("No speculation: vLLM decodes one token per step.")
    else:
        lines.append(f"Method as given: `{method}`" + (f" — vLLM will run **{resolved}**" if resolved and resolved != method else ""))
        if ev.ctx is not None and ev.ctx.k:
            lines.append(f"k as vLLM resolves it: **{ev.ctx.k}**")
        k_typed = field_value(state, K)
        if k_typed is not None and not (isinstance(k_typed, int) and 1 <= k_typed <= suggest.K_HARD_MAX):
            lines.append(f"num_speculative_tokens as given: `{html.escape(str(k_typed)[:40])}` (outside the slider; kept as given)")
        if ev.ctx is not None and ev.ctx.lookup_errors.get(DRAFTER):
            lines.append(f"Drafter could not be inspected: {html.escape(ev.ctx.lookup_errors[DRAFTER])}")
    return {ui.c["method_md"]: "  \n".join(lines), ui.c["drafter_facts"]: facts_md(ev)}


def facts_md(ev) -> str:
    """The drafter's facts beside the target's (:func:`wizard.suggest.drafter_facts`) as a table."""
    if ev is None or ev.ctx is None:
        return "_Choose a target model and a method with a drafter to compare them._"
    rows = suggest.drafter_facts(ev.ctx)
    if not rows:
        return "_The method runs no drafter network: nothing to compare._" if ev.ctx.spec is not None else \
               "_No speculation chosen._"
    esc = lambda x: html.escape(str(x)).replace("|", "\\|")  # noqa: E731
    md = f"| fact | target | drafter | vLLM {html.escape(str(ev.ctx.version))} |\n|---|---|---|---|\n"
    return md + "\n".join(f"| {esc(r.fact)} | {esc(r.target)} | {esc(r.drafter)} | {esc(r.vllm)} |" for r in rows)


def wire(ui: WizardUI) -> None:
    for path in FIELDS:
        ui.bind(path)
