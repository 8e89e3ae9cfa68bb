"""build_app(): the Gradio wizard -- header, seven steps and the Live check panel, composed.

    from wizard.ui import build_app
    build_app().launch()           # http://127.0.0.1:7860, or inline in Jupyter

This module only composes: each part builds its components and wires its own events (as
LLaMA-Factory's webui does): :mod:`wizard.ui.header` (preset, import, sessions, New),
:mod:`wizard.ui.panel` (the findings panel, Apply, Undo) and one module per step under
:mod:`wizard.ui.steps`; :class:`wizard.ui.core.WizardUI` is what they share. The UI holds no rule
logic: every change re-runs :func:`wizard.api.check_context` (models cached in
:mod:`wizard.context`), choices come from :mod:`wizard.suggest`.
"""

from __future__ import annotations

import os

import gradio as gr
from starlette.middleware import Middleware

from wizard import privacy, security
from wizard.ui import findings as fp
from wizard.ui import guard, header, panel
from wizard.ui.core import WizardUI, sess_of
from wizard.ui.state import new_state
from wizard.ui.steps import hardware, kv, launch, plan, review, speculation, target
from wizard.ui.theme import CSS

__all__ = ["build_app", "WizardUI", "CSS", "STEP_MODULES", "MAX_UPLOAD"]

#: the step modules, by tab id, in walking order (labels: wizard.ui.findings.STEPS)
STEP_MODULES = {"hardware": hardware, "target": target, "speculation": speculation, "kv": kv, "plan": plan,
                "review": review, "launch": launch}
#: largest file the UI accepts for upload (sessions and YAML files are a few KB)
MAX_UPLOAD = "5mb"


def build_app(*, allow_launch: bool = True, title: str = "SpecWizard",
              allow_model_dirs: list[str | os.PathLike] | None = None, allow_unsafe_options: bool = False) -> gr.Blocks:
    """Build the wizard.

    Args:
        allow_launch: whether the Launch step may start servers at all. Even when True, launching
            (and vLLM's own config check) works only while the UI is bound to loopback without a
            share link, or a login is set, however it is started (:meth:`WizardUI.launch_block`).
        allow_model_dirs: local folders the UI may read and launch models from (default: the
            current folder and the Hugging Face cache); other local paths are refused without
            saying whether they exist. Gradio's upload folder is never allowed.
        allow_unsafe_options: let the Launch step start configurations with options that import
            code, read files outside those folders or widen the server's API
            (``--trust-remote-code``, ``--tool-parser-plugin``, ``--chat-template``...). Only the
            person starting the UI can turn this on; the Launch step says so when it is on.

    Returns a ``gr.Blocks``; call ``.launch()`` (inline in Jupyter). ``launch()`` binds 127.0.0.1
    and installs :class:`wizard.ui.guard.RequestGuard` (Host/Origin check, login throttling)
    unless told otherwise. Files the UI writes, Gradio's uploads included, live in the wizard's
    private folder (mode 0700), removed on exit.
    """
    if not os.environ.get("GRADIO_TEMP_DIR"):  # Gradio's uploads and copies: private, removed on exit
        os.environ["GRADIO_TEMP_DIR"] = str(privacy.private_dir("gradio"))
    dirs = security.default_model_dirs() if allow_model_dirs is None else [os.fspath(d) for d in allow_model_dirs]
    ui = WizardUI(allow_launch=allow_launch,
                  policy=security.PathPolicy(model_dirs=dirs, allow_unsafe_options=bool(allow_unsafe_options)))
    c = ui.c
    with gr.Blocks(title=title, fill_width=True) as demo:
        ui.demo = demo
        c["state"] = gr.State(new_state())
        header.build(ui)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=520):
                with gr.Tabs(elem_id="sw-tabs", overflow_behavior="wrap") as tabs:
                    c["tabs"] = tabs
                    for step_id, label in fp.STEPS:
                        with gr.Tab(label, id=step_id, elem_id=f"sw-tab-{step_id}") as tab:
                            c[f"tab_{step_id}"] = tab
                            STEP_MODULES[step_id].build(ui)
            with gr.Column(scale=3, min_width=320, elem_id="sw-sidebar"):
                panel.build(ui)
        # every part wires its own events, once all components exist
        for part in (panel, header, *STEP_MODULES.values()):
            part.wire(ui)
        _wire_step_tabs(ui)

    demo.wizard_ui = ui  # for tests and benchmarks
    _default_launch_kwargs(demo)
    return demo


def _wire_step_tabs(ui: WizardUI) -> None:
    """Each tab's select tells the UI which step is on screen (:meth:`WizardUI.step_opened`): the
    sync after a pause computes only the views of the step shown (the exports of Review are the
    costly ones), and a step's views left while it was hidden follow when it opens."""
    c = ui.c
    for step_id, _label in fp.STEPS:
        outs = ui.step_outputs(step_id)

        def opened(state, request: gr.Request = None, _step=step_id):
            sess = sess_of(request)
            return ui.step_opened(sess, _step, ui.base(sess, state)) or None

        opened.__name__ = f"open_step_{step_id}"
        ui.on(c[f"tab_{step_id}"].select, opened, [c["state"]], outs)


def _default_launch_kwargs(demo: gr.Blocks) -> None:
    """Make ``demo.launch()`` bind 127.0.0.1, apply the wizard's CSS, cap uploads, and put
    :class:`wizard.ui.guard.RequestGuard` in front of every request, unless told otherwise."""
    orig = demo.launch

    def launch_(*args, **kwargs):
        kwargs.setdefault("server_name", "127.0.0.1")
        kwargs.setdefault("css", CSS)
        kwargs.setdefault("theme", gr.themes.Soft())
        kwargs.setdefault("max_file_size", MAX_UPLOAD)
        # Gradio's start-up probe of its own URL (one HEAD request, 3 s timeout) makes launch()
        # raise "localhost is not accessible" on a loaded machine; the wizard binds loopback
        # itself, so that probe can only fail spuriously.
        kwargs.setdefault("_frontend", False)
        # Gradio 6's run history keeps every event's inputs and outputs (up to 100 runs, ~1 MB
        # here) in the browser's localStorage, unredacted, and re-reads, re-serialises and
        # re-writes all of it two or three times per event: after a minute of use a click spent
        # most of its time there (benchmarks/ui_latency.py). The wizard keeps its own session
        # (BrowserState, credentials redacted); False also deletes runs saved by earlier versions.
        kwargs.setdefault("run_history", False)
        app_kwargs = dict(kwargs.get("app_kwargs") or {})
        app_kwargs["middleware"] = [*app_kwargs.get("middleware", []),
                                    Middleware(guard.RequestGuard, demo=demo, **getattr(demo, "guard_options", {}))]
        kwargs["app_kwargs"] = app_kwargs
        return orig(*args, **kwargs)

    demo.launch = launch_  # type: ignore[method-assign]
