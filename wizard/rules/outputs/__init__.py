"""Structured outputs, reasoning, compilation and observability options (SD170-SD199).

Checks of ``StructuredOutputsConfig``, ``ReasoningConfig``, ``CompilationConfig`` and
``ObservabilityConfig`` beyond their field types (the generic option rules SD010/SD011/SD015/SD016
check those): names looked up in a registry at config time, such as ``--reasoning-parser``.
"""

ID_RANGE = ("SD170", "SD199")
