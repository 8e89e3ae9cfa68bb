"""One module per wizard step. Each has ``build(ui)`` (create its components inside the Blocks
context, register its fields with ``ui.field`` and its widgets with ``ui.react``, naming the
fields they depend on) and ``wire(ui)`` (bind its fields and its own events)."""
