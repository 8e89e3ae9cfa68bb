"""Which methods each release's engine really runs (SD760-SD779).

Rules built on :mod:`wizard.mechanisms.method_support`: config validation, the model-runner
choice and the proposer chains of each release.
"""

ID_RANGE = ("SD760", "SD779")
