"""Failures fixed in later vLLM releases (SD400-SD499).

Behaviours of older vLLM release lines that newer releases changed.

Each rule names the public report or pull request that shows it and the version range it applies
to (``versions``). Where the exact first release with the change could not be verified, the
docstring says so and the bound is the first release known to have it.
"""

ID_RANGES = (("SD400", "SD499"),)
