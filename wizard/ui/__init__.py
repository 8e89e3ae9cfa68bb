"""The Gradio face of SpecWizard: ``from wizard.ui import build_app; build_app().launch()``."""

from __future__ import annotations

__all__ = ["build_app"]


def build_app(**kwargs):
    """Build the wizard's ``gr.Blocks`` (see :func:`wizard.ui.app.build_app`)."""
    from wizard.ui.app import build_app as _build  # lazy: gradio is heavy; wizard.ui.state needs none of it

    return _build(**kwargs)
