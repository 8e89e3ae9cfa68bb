"""Step 3 · Speculation: method (sensible ones first), drafter, k, and the method's own fields."""

from __future__ import annotations

import gradio as gr

from wizard.ui import services
from wizard.ui.state import field_value
from wizard.vllm.methods import (
    DRAFT_MODEL, EAGLE3, MTP, NGRAM, SUFFIX, allowed_methods, drafts_from_target, is_lookup, is_mtp, mtp_types,
    needs_drafter_checkpoint, traits, use_eagle, use_ngram,
)


def _uses_drafter(method: str | None) -> bool:
    """The method runs a drafter model (its own checkpoint, or the target's MTP/DSpark layers)."""
    return needs_drafter_checkpoint(method) or drafts_from_target(method)


def drafter_method(entry) -> str | None:
    """The speculative method a catalog entry drafts with: its declared drafter method (eagle,
    eagle3, ...), or ``draft_model`` for a small target-role model listed in ``draft_for``
    (such entries declare the methods they *serve* with, e.g. ngram, not how they draft)."""
    role = entry.get("role") if isinstance(entry, dict) else getattr(entry, "role", None)
    draft_for = entry.get("draft_for") if isinstance(entry, dict) else getattr(entry, "draft_for", None)
    if role != "drafter" and draft_for:
        return DRAFT_MODEL
    ms = entry.get("methods") if isinstance(entry, dict) else getattr(entry, "methods", None)
    for m in (ms or [services.entry_method(entry)]):
        if m and not is_lookup(m):
            return str(m)
    return None


def catalog_drafters(target_id: str | None) -> list[tuple[str, str | None, str]]:
    """[(drafter id, method, title)] the catalog lists for ``target_id`` (catalog order)."""
    if not target_id:
        return []
    try:
        entries = services.drafters_for(target_id)
    except services.Unavailable:
        return []
    return [(services._entry_id(e), drafter_method(e), getattr(e, "title", None) or "") for e in entries]


def named_drafter(target_id: str | None, method: str | None) -> str | None:
    """The catalog drafter the method option names for ``target_id`` (the first one of that method)."""
    return next((d for d, m, _ in catalog_drafters(target_id) if m == method and method), None)


def on_method_chosen(st: dict, before: dict | None = None) -> dict:
    """After the method dropdown changed: when the option names a catalog drafter (e.g. "eagle3 —
    catalog drafter yuhuili/EAGLE3-…"), put it in speculative_config.model unless the user already
    chose a drafter of that method (a catalog drafter of another method, e.g. EAGLE-1 under eagle3,
    is replaced); give k the slider's default (3) when unset. Form convenience only: the checks
    come from wizard.api."""
    cfg = st.get("config") or {}
    spec = cfg.get("speculative_config")
    if not isinstance(spec, dict):
        return st
    method = spec.get("method")
    if isinstance(method, str) and _uses_drafter(method) and not is_mtp(method):
        named = named_drafter(cfg.get("model"), method)
        cur = spec.get("model")
        known = {d: m for d, m, _ in catalog_drafters(cfg.get("model"))}
        if named and (not cur or (cur in known and known[cur] != method)):
            spec["model"] = named
    if "num_speculative_tokens" not in spec:
        spec["num_speculative_tokens"] = 3  # what the k slider shows
    return st


def _plural(n, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def method_choices(ev, version) -> list[tuple[str, str]]:
    """Dropdown choices: recommended methods first (with why), then every other method vLLM
    ``version`` accepts, labelled with what it needs. Values are vLLM method names."""
    allowed = list(allowed_methods(version))
    target = ev.ctx.target if ev is not None and ev.ctx is not None else None
    rec: list[tuple[str, str]] = []
    if target is not None and target.mtp_layers:
        rec.append((MTP, f"checkpoint has {target.mtp_layers} MTP layer(s)"))
    if ev is not None and ev.config is not None:
        for d, m, _ in catalog_drafters(ev.config.model):
            if m:
                rec.append((m, f"catalog drafter {d}"))
    if target is not None and target.speculators_config:
        m = (target.speculators_config.get("speculators_model_type") or EAGLE3)
        rec.append((str(m), "the model itself is a speculators-format drafter"))
    rec += [(m, traits(m).summary) for m in (EAGLE3, DRAFT_MODEL, NGRAM, SUFFIX)]
    out: list[tuple[str, str]] = [("none — no speculation", "none")]
    seen = {"none"}
    for m, why in rec:
        if m in seen or m not in allowed:
            continue
        seen.add(m)
        out.append((f"★ {m} — {why}", m))
    mtps = set(mtp_types(version)) - {MTP}
    for m in allowed:
        if m in seen or m in mtps:  # model-specific MTP aliases: vLLM rewrites them all to mtp
            continue
        seen.add(m)
        if m == MTP:
            why = ("target has no MTP layers" if not (target and target.mtp_layers)
                   else "multi-token prediction layers of the checkpoint")
        else:
            t = traits(m)
            why = t.summary if t is not None else "see vLLM docs"
        out.append((f"other: {m} — {why}", m))
    return out


def k_bounds(ev, method: str | None, current) -> tuple[int, str]:
    """(maximum for the k slider, explanation)."""
    target = ev.ctx.target if ev is not None and ev.ctx is not None else None
    if method == MTP and target is not None and target.mtp_layers:
        n = target.mtp_layers
        if n > 1:
            top, why = n, f"the checkpoint has {n} MTP layers"
        else:
            top, why = 4, "one MTP layer, reused for every position; acceptance falls fast beyond 1-2"
    elif use_eagle(method) and method != MTP:
        top, why = 8, "acceptance per position falls with depth; 3-5 is typical"
    else:
        top, why = 10, "draft tokens per step"
    if isinstance(current, int) and top < current <= 64:  # beyond 64 the slider stays; the text says k
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
             to_form=lambda v: v if isinstance(v, int) and 1 <= v <= 64 else 3)
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
    from wizard.vllm.versions import default_version, parse_version

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
        choices = method_choices(ev, version)
        if method and method not in [v for _, v in choices]:  # e.g. an imported MTP alias
            choices.append((f"{method} (as given)", method))
        out[method_comp] = gr.Dropdown(choices=choices, value=method or "none")
    uses_drafter = _uses_drafter(shown) or (method is None and field_value(state, "speculative_config.model"))
    out[ui.c["drafter_group"]] = gr.Group(visible=bool(uses_drafter) and not is_mtp(shown))
    out[ui.c["ngram_group"]] = gr.Row(visible=use_ngram(shown))
    out[ui.c["suffix_group"]] = gr.Row(visible=shown == SUFFIX)
    if full or changed in ("model", "speculative_config.method", "allow_hub", None):
        suggestions: list = []
        if ev.config is not None:
            entries = catalog_drafters(ev.config.model)
            # only drafters of the chosen method's family (an EAGLE-1 head is no eagle3 drafter)
            for eid, m, title in entries:
                if _uses_drafter(shown) and m != shown:
                    continue
                label = f"★ {eid} — {title}" if m == shown else f"{eid} — {title}" + (f" ({m})" if m else "")
                suggestions.append((label, eid))
        cur = field_value(state, "speculative_config.model")
        if cur and cur not in [v for _, v in suggestions]:
            suggestions.append((cur, cur))
        out[ui.fields["speculative_config.model"]] = gr.Dropdown(choices=suggestions, value=cur)
        k = field_value(state, "speculative_config.num_speculative_tokens")
        top, why = k_bounds(ev, shown, k)
        out[ui.fields["speculative_config.num_speculative_tokens"]] = gr.Slider(
            maximum=top, info=why, visible=shown is not None,
            **({"value": k} if (full or changed == "speculative_config.method") and isinstance(k, int) and k <= top
               else {}))
    lines = []
    if method is None:
        lines.append("No speculation: vLLM decodes one token per step.")
    else:
        lines.append(f"Method as given: `{method}`" + (f" — vLLM will run **{resolved}**" if resolved and resolved != method else ""))
        if ev.ctx is not None and ev.ctx.k:
            lines.append(f"k as vLLM resolves it: **{ev.ctx.k}**")
        k_typed = field_value(state, "speculative_config.num_speculative_tokens")
        if k_typed is not None and not (isinstance(k_typed, int) and 1 <= k_typed <= 64):
            lines.append(f"num_speculative_tokens as given: `{k_typed}` (outside the slider; kept as given)")
        if ev.ctx is not None and ev.ctx.lookup_errors.get("speculative_config.model"):
            lines.append(f"Drafter could not be inspected: {ev.ctx.lookup_errors['speculative_config.model']}")
        elif ev.ctx is not None and ev.ctx.drafter is not None and ev.ctx.drafter is not ev.ctx.target:
            d = ev.ctx.drafter
            lines.append(f"Drafter: {', '.join(d.architectures) or d.model_type}, {_plural(d.num_hidden_layers, 'layer')}, "
                         f"vocab {d.vocab_size}")
    out[ui.c["method_md"]] = "  \n".join(lines)
    return out
