"""A drafter whose context is shorter than the served length (SD750-SD759).

Rules built on :mod:`wizard.mechanisms.drafter_context`, per release and model runner.
"""

ID_RANGE = ("SD750", "SD759")
