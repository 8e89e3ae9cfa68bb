"""Step 3 · Speculation: method (fitting ones first), drafter, k, the method's own fields, and the
drafter's facts beside the target's. The choices come from :mod:`wizard.suggest`."""

from __future__ import annotations

import html

import gradio as gr

from wizard import api, suggest
from wizard.ui import findings as fp, services
from wizard.ui.core import CHANGE_NOTE, WizardUI
from wizard.ui.state import JS_SAFE_INT, config_of, field_value
from wizard.vllm.methods import SUFFIX, drafts_from_target, is_mtp, needs_drafter_checkpoint, use_ngram
from wizard.vllm.versions import default_version

__all__ = ["build", "wire", "on_method_chosen", "on_target_changed", "method_choices", "drafter_choices", "facts_md"]

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


def drafter_choices(model: str | None, method: str | None, current: str | None, version=None,
                    target=None) -> list[tuple[str, str]]:
    """Catalog drafters of the method's family for ``model`` (and the current value).

    What is offered and starred is what :func:`wizard.suggest.methods_for` (the method dropdown,
    the CLI's ``wizard suggest``) decides for vLLM ``version``: a drafter whose method the release
    no longer accepts (0.33: mlp_speculator, medusa) is not offered, and ★ (recommended) marks a
    drafter of the chosen method only when that method is recommended, so never one vLLM cannot
    route to a proposer (mlp_speculator in 0.32, SD760). A current value that is not offered stays,
    unmarked."""
    version = version if version is not None else default_version()
    choices = suggest.methods_for(target, version, model)
    offered = {m.method for m in choices}
    recommended = {m.method for m in choices if m.recommended}
    out = []
    fam = method if needs_drafter_checkpoint(method) else None
    for d in suggest.drafters_for(model, fam):
        if d.method and d.method not in offered:
            continue  # a method this release refuses (the method dropdown does not list it either)
        star = d.method == method and d.method in recommended
        out.append((f"★ {d.id} — {d.title}" if star else f"{d.id} — {d.title}" + (f" ({d.method})" if d.method else ""),
                    d.id))
    if current and current not in [v for _, v in out]:
        out.append((current, current))
    return out


def _with_note(st: dict, notes: list[str]) -> dict:
    if notes:
        prev = st.get(CHANGE_NOTE)
        st[CHANGE_NOTE] = " ".join(([prev] if prev else []) + notes)
    return st


def _context(ui: WizardUI, st: dict):
    try:
        c = config_of(st)
        return api.resolve(c, allow_hub=False, path_allowed=ui.policy.allows) if c is not None else None
    except Exception:  # a version or GPU the check reports itself
        return None


def on_method_chosen(ui: WizardUI, st: dict, before: dict | None = None) -> dict:
    """After the method changed: the fields the new method reads, the drafter and k the core's
    policy picks (:func:`wizard.suggest.spec_for_method` drops what the method does not read and a
    drafter of another family, :func:`wizard.suggest.default_k`; the CLI's ``wizard suggest``
    prints the same), with a note naming what was removed or replaced. Form convenience only:
    the checks come from wizard.api."""
    cfg = st.get("config") or {}
    spec = cfg.get("speculative_config")
    if not isinstance(spec, dict) or not isinstance(spec.get("method"), str):
        return st
    method = spec["method"]
    prev = _method(before) if before else None
    if method == prev:
        return st
    old_spec = dict(spec)
    change = suggest.spec_for_method(spec, cfg.get("model"), previous_method=prev)
    spec = cfg["speculative_config"] = change.spec
    notes = list(change.notes)
    back = None
    stash = st.setdefault("stash", {})
    by_method = stash.setdefault("by_method", {}) if isinstance(stash, dict) else None
    if isinstance(by_method, dict):
        if prev:  # what the change removed or replaced: kept for a return to that method
            dropped = {k: v for k, v in old_spec.items() if k != "method" and spec.get(k) != v}
            if dropped:
                by_method[prev] = dropped
        back = by_method.pop(method, None)
        if isinstance(back, dict) and back:  # back to a method used before: its values return
            spec.update(back)
            notes = [f"Restored what {method} had: " + ", ".join(f"`{k}`" for k in sorted(back)) + "."]
    ctx = _context(ui, st)
    target = ctx.target if ctx is not None else None
    drafter = ctx.drafter if ctx is not None and ctx.drafter is not target else None
    k = spec.get("num_speculative_tokens")
    new_k = suggest.default_k(method, target, drafter, current=k, previous_method=prev)
    if new_k != k and "num_speculative_tokens" not in (back or {}):
        spec["num_speculative_tokens"] = new_k
    return _with_note(st, notes)


def on_target_changed(ui: WizardUI, st: dict, before: dict | None = None) -> dict:
    """After the target changed: a drafter that no longer fits it (:func:`wizard.suggest.spec_for_target`:
    a catalog drafter trained for another target, an EAGLE-family drafter over another vocabulary)
    is replaced by the catalog's drafter of the method for the new target, or removed, with a note."""
    cfg = st.get("config") or {}
    spec = cfg.get("speculative_config")
    old = ((before or {}).get("config") or {}).get("model")
    if not isinstance(spec, dict) or not spec.get("model") or cfg.get("model") == old or not cfg.get("model"):
        return st
    target = drafter = None
    if suggest.drafter_fit(cfg["model"], spec.get("method"), spec["model"]).fits is None:
        ctx = _context(ui, st)  # the catalog does not decide: compare the inspected models
        if ctx is None or ctx.target is None:
            return st  # a target not known yet (still being typed): nothing to compare with
        target, drafter = ctx.target, (ctx.drafter if ctx.drafter is not ctx.target else None)
    change = suggest.spec_for_target(spec, cfg["model"], target=target, drafter=drafter)
    if change.changed:
        cfg["speculative_config"] = change.spec
    return _with_note(st, change.notes)


def _k_to_form(v):
    """What the k box shows: the configured k (any integer a browser holds exactly), None when
    unset or not a number (the step's note shows such a value as given)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if abs(v) <= JS_SAFE_INT else None
    if isinstance(v, float) and v == v and abs(v) < 1e300:
        return v
    return None


def k_info(kr: suggest.KRange) -> str:
    """The suggested k range in words: "1–4 (why)", with the step for MTP multiples."""
    rng = f"{kr.minimum}–{kr.maximum}" + (f" in steps of {kr.step}" if kr.step > 1 else "")
    return f"suggested {rng}: {kr.why}"


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
    # a number box without bounds: Gradio checks a Slider's (and a bounded Number's) range before
    # the handler runs, so a k beyond the suggested range (vLLM accepts any k > 0) was refused and
    # the box snapped back while the state kept the old k. The handler takes every value; the
    # rules report the ones vLLM refuses or runs badly, the step says how k compares with the range.
    ui.field(K, gr.Number(value=3, precision=None, label="num_speculative_tokens (k)", min_width=180,
                          elem_id="f-speculative_config-num_speculative_tokens"),
             to_form=_k_to_form)
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
    version = ev.ctx.version if ev.ctx is not None else services.version_of(state)[0]
    shown = (ev.ctx.method if ev.ctx is not None else None) or method
    cur = field_value(state, DRAFTER)
    model = (state.get("config") or {}).get("model")
    target = ev.ctx.target if ev.ctx is not None else None
    drafter = ev.ctx.drafter if ev.ctx is not None and ev.ctx.drafter is not target else None
    k = field_value(state, K)
    kr = suggest.k_range(shown, target, drafter)
    box: dict = {"info": k_info(kr), "visible": method is not None, "value": _k_to_form(k)}
    uses = _uses_drafter(shown) or (method is None and bool(cur))
    return {
        ui.fields[DRAFTER]: gr.Dropdown(choices=drafter_choices(model, shown, cur, version, target), value=cur),
        ui.c["drafter_group"]: gr.Group(visible=bool(uses) and not is_mtp(shown)),
        ui.fields[K]: gr.Number(**box),
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
        if k_typed is not None:
            target = ev.ctx.target if ev.ctx is not None else None
            drafter = ev.ctx.drafter if ev.ctx is not None and ev.ctx.drafter is not target else None
            kr = suggest.k_range(resolved, target, drafter)
            if not isinstance(k_typed, int) or isinstance(k_typed, bool):
                lines.append(f"num_speculative_tokens as given: {fp.md_code(str(k_typed)[:40])} (not a whole "
                             "number; kept as given, see the Live check)")
            elif not kr.minimum <= k_typed <= kr.maximum or (kr.step > 1 and k_typed % kr.step):
                lines.append(f"k = {k_typed:,} is outside the {k_info(kr)} — kept as given; the Live "
                             "check says what vLLM does with it")
        if ev.ctx is not None and ev.ctx.lookup_errors.get(DRAFTER):
            lines.append(f"Drafter could not be inspected: {html.escape(fp.face_text(ev.ctx.lookup_errors[DRAFTER]))}")
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
