"""Step 3 · Speculation: method (sensible ones first), drafter, k, and the method's own fields."""

from __future__ import annotations

import gradio as gr

from wizard.ui import services
from wizard.ui.state import field_value

NGRAM = ("ngram", "ngram_gpu")
SUFFIX = ("suffix",)
DRAFTER_METHODS = ("eagle", "eagle3", "draft_model", "dflash", "dspark", "medusa", "mlp_speculator", "mtp")

_OTHER_WHY = {
    "medusa": "needs a Medusa head checkpoint",
    "mlp_speculator": "needs an MLP speculator checkpoint",
    "custom_class": "your own proposer class (speculative_config.model = a dotted import path)",
    "extract_hidden_states": "extracts hidden states for training drafters; not a serving speed-up",
    "dflash": "needs a DFlash drafter trained for this target",
    "dspark": "needs a DSpark drafter trained for this target",
    "ngram_gpu": "n-gram lookup on the GPU",
    "eagle": "needs an EAGLE-1 drafter trained for this target",
    "eagle3": "needs an EAGLE3 drafter trained for this target",
    "draft_model": "a small model with the same tokenizer",
    "suffix": "no drafter; suffix-tree lookup (needs arctic-inference)",
    "ngram": "no drafter; finds repeats in the prompt (code, RAG, editing)",
}


def method_choices(ev, version) -> list[tuple[str, str]]:
    """Dropdown choices: recommended methods first (with why), then every other method vLLM
    ``version`` accepts, labelled with what it needs. Values are vLLM method names."""
    from wizard.versions import methods, mtp_types

    allowed = list(methods(version))
    target = ev.ctx.target if ev is not None and ev.ctx is not None else None
    rec: list[tuple[str, str]] = []
    if target is not None and target.mtp_layers:
        rec.append(("mtp", f"checkpoint has {target.mtp_layers} MTP layer(s)"))
    if ev is not None and ev.config is not None:
        try:
            for e in services.drafters_for(ev.config.model):
                ms = getattr(e, "methods", None) or [services.entry_method(e)]
                for m in ms:
                    if m and m not in NGRAM + SUFFIX:
                        rec.append((m, f"catalog drafter {services._entry_id(e)}"))
        except services.Unavailable:
            pass
    if target is not None and target.speculators_config:
        m = (target.speculators_config.get("speculators_model_type") or "eagle3")
        rec.append((str(m), "the model itself is a speculators-format drafter"))
    rec += [("eagle3", _OTHER_WHY["eagle3"]), ("draft_model", _OTHER_WHY["draft_model"]),
            ("ngram", _OTHER_WHY["ngram"]), ("suffix", _OTHER_WHY["suffix"])]
    out: list[tuple[str, str]] = [("none — no speculation", "none")]
    seen = {"none"}
    for m, why in rec:
        if m in seen or m not in allowed:
            continue
        seen.add(m)
        out.append((f"★ {m} — {why}", m))
    mtps = set(mtp_types(version))
    for m in allowed:
        if m in seen:
            continue
        seen.add(m)
        if m == "mtp" or m in mtps:
            why = "target has no MTP layers" if not (target and target.mtp_layers) else "MTP alias; vLLM rewrites it to mtp"
            if m != "mtp":
                why = "MTP alias; vLLM rewrites it to mtp"
        else:
            why = _OTHER_WHY.get(m, "see vLLM docs")
        out.append((f"other: {m} — {why}", m))
    return out


def k_bounds(ev, method: str | None, current) -> tuple[int, str]:
    """(maximum for the k slider, explanation)."""
    target = ev.ctx.target if ev is not None and ev.ctx is not None else None
    if method == "mtp" and target is not None and target.mtp_layers:
        n = target.mtp_layers
        if n > 1:
            top, why = n, f"the checkpoint has {n} MTP layers"
        else:
            top, why = 4, "one MTP layer, reused for every position; acceptance falls fast beyond 1-2"
    elif method in ("eagle", "eagle3", "dflash", "dspark"):
        top, why = 8, "acceptance per position falls with depth; 3-5 is typical"
    else:
        top, why = 10, "draft tokens per step"
    if isinstance(current, int) and current > top:
        top = current
    return top, why


def build(ui) -> None:
    ui.field("speculative_config.method", gr.Dropdown([("none — no speculation", "none")], value="none",
                                                      label="Speculative method", allow_custom_value=True,
                                                      elem_id="f-speculative_config-method"),
             to_form=lambda v: v or "none")
    ui.c["method_md"] = gr.Markdown(elem_id="sw-method-md")
    with gr.Group(visible=False) as g:
        ui.field("speculative_config.model", gr.Dropdown([], value=None, label="Drafter model (HF id, folder or catalog id)",
                                                         allow_custom_value=True, elem_id="f-speculative_config-model"),
                 to_form=lambda v: v or None)
        ui.field("speculative_config.draft_tensor_parallel_size",
                 gr.Textbox(label="draft_tensor_parallel_size", placeholder="target TP (default)",
                            elem_id="f-speculative_config-draft_tensor_parallel_size"))
    ui.c["drafter_group"] = g
    ui.field("speculative_config.num_speculative_tokens",
             gr.Slider(1, 10, value=3, step=1, label="num_speculative_tokens (k)",
                       elem_id="f-speculative_config-num_speculative_tokens"),
             to_form=lambda v: v if isinstance(v, int) else 3)
    with gr.Row(visible=False) as g:
        ui.field("speculative_config.prompt_lookup_min", gr.Textbox(label="prompt_lookup_min (tokens)",
                                                                    elem_id="f-speculative_config-prompt_lookup_min"))
        ui.field("speculative_config.prompt_lookup_max", gr.Textbox(label="prompt_lookup_max (tokens)",
                                                                    elem_id="f-speculative_config-prompt_lookup_max"))
    ui.c["ngram_group"] = g
    with gr.Row(visible=False) as g:
        for name, label in (("suffix_decoding_max_tree_depth", "max tree depth"),
                            ("suffix_decoding_max_cached_requests", "max cached requests"),
                            ("suffix_decoding_max_spec_factor", "max spec factor"),
                            ("suffix_decoding_min_token_prob", "min token prob")):
            ui.field(f"speculative_config.{name}", gr.Textbox(label=label, elem_id=f"f-speculative_config-{name}"))
    ui.c["suffix_group"] = g


def update(ui, state, ev, full: bool, changed: str | None) -> dict:
    from wizard.versions import default_version, parse_version

    try:
        version = parse_version(state.get("vllm_version")) if state.get("vllm_version") else default_version()
    except ValueError:
        version = default_version()
    method = field_value(state, "speculative_config.method") if (state.get("config") or {}).get("speculative_config") else None
    resolved = ev.ctx.method if ev.ctx is not None else method
    shown = resolved or method
    out: dict = {}
    if not full and not (changed or "").startswith("speculative_config") and changed not in ("model", "allow_hub", "vllm_version"):
        return out
    method_comp = ui.fields["speculative_config.method"]
    if full or changed in ("model", "vllm_version", "allow_hub", None):
        out[method_comp] = gr.Dropdown(choices=method_choices(ev, version), value=method or "none")
    uses_drafter = shown in DRAFTER_METHODS or (method is None and field_value(state, "speculative_config.model"))
    out[ui.c["drafter_group"]] = gr.Group(visible=bool(uses_drafter) and shown != "mtp")
    out[ui.c["ngram_group"]] = gr.Row(visible=shown in NGRAM)
    out[ui.c["suffix_group"]] = gr.Row(visible=shown in SUFFIX)
    if full or changed in ("model", "speculative_config.method", "allow_hub", None):
        suggestions: list = []
        if ev.config is not None:
            try:
                entries = services.drafters_for(ev.config.model)
            except services.Unavailable:
                entries = []
            fitting = [e for e in entries if services.entry_method(e) == shown]
            for e in fitting + [e for e in entries if e not in fitting]:
                eid = services._entry_id(e)
                title = getattr(e, "title", None) or ""
                m = services.entry_method(e)
                label = f"{'★ ' if e in fitting else ''}{eid} — {title}" + (f" ({m})" if m and e not in fitting else "")
                suggestions.append((label, eid))
        cur = field_value(state, "speculative_config.model")
        if cur and cur not in [v for _, v in suggestions]:
            suggestions.append((cur, cur))
        out[ui.fields["speculative_config.model"]] = gr.Dropdown(choices=suggestions, value=cur)
        k = field_value(state, "speculative_config.num_speculative_tokens")
        top, why = k_bounds(ev, shown, k)
        out[ui.fields["speculative_config.num_speculative_tokens"]] = gr.Slider(
            maximum=top, info=why, visible=shown is not None,
            **({"value": k} if full and isinstance(k, int) else {}))
    lines = []
    if method is None:
        lines.append("No speculation: vLLM decodes one token per step.")
    else:
        lines.append(f"Method as given: `{method}`" + (f" — vLLM will run **{resolved}**" if resolved and resolved != method else ""))
        if ev.ctx is not None and ev.ctx.k:
            lines.append(f"k as vLLM resolves it: **{ev.ctx.k}**")
        if ev.ctx is not None and ev.ctx.lookup_errors.get("speculative_config.model"):
            lines.append(f"Drafter could not be inspected: {ev.ctx.lookup_errors['speculative_config.model']}")
        elif ev.ctx is not None and ev.ctx.drafter is not None and ev.ctx.drafter is not ev.ctx.target:
            d = ev.ctx.drafter
            lines.append(f"Drafter: {', '.join(d.architectures) or d.model_type}, {d.num_hidden_layers} layers, vocab {d.vocab_size}")
    out[ui.c["method_md"]] = "  \n".join(lines)
    return out
