"""One module per wizard step. Each has ``build(ui)`` (create components inside the Blocks
context, register fields with ``ui.field``) and ``update(ui, state, ev, full, changed)``
returning ``{component: update}`` for what it derives from the state."""
