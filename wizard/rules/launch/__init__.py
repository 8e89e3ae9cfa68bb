"""What the wizard's launcher will pass to the server (SD600-SD699).

Environment variables and options from imported text that would make the server load code or
files, or that the launcher leaves out (policy: wizard/security.py, docs/security.md).
"""

ID_RANGES = (("SD600", "SD699"),)
