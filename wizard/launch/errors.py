"""The launcher's errors: every refusal happens before anything is started.

    LaunchError            the server could not be started (bad input, spawn failure...)
    ├── LaunchRefused      error findings and no ``force`` (``.findings`` carry the fixes)
    ├── PortInUse          the port is bound (``.free_port`` names a free one)
    └── VllmMissing        the Python that starts servers has no vLLM (``.commands`` install it)
"""

from __future__ import annotations

from typing import Any

__all__ = ["LaunchError", "LaunchRefused", "PortInUse", "VllmMissing"]


class LaunchError(RuntimeError):
    """The server could not be started (bad entrypoint, bad input, spawn failure...)."""


class LaunchRefused(LaunchError):
    """The configuration has error findings and ``force`` was not given.

    ``findings``: the error :class:`~wizard.rules.registry.Finding` objects (each with fixes);
    ``report``: the full :class:`~wizard.api.Report`.
    """

    def __init__(self, findings: list, report: Any = None):
        self.findings = list(findings)
        self.report = report
        ids = ", ".join(f"{f.rule}" for f in self.findings)
        first = self.findings[0].message if self.findings else ""
        super().__init__(
            f"refusing to launch: {len(self.findings)} error finding(s) ({ids}): {first} "
            "Apply the fixes, or pass force=True (CLI: --force)."
        )


class PortInUse(LaunchError):
    """``host:port`` is already bound by another process; ``free_port`` is a free alternative."""

    def __init__(self, host: str, port: int, free_port: int | None):
        self.host, self.port, self.free_port = host, port, free_port
        alt = f"; port {free_port} is free (use port={free_port}, CLI: --port {free_port})" if free_port else ""
        super().__init__(f"port {port} on {host} is already in use{alt}")


class VllmMissing(LaunchError):
    """vLLM cannot be imported by the Python that starts servers. The message is the install hint
    (:func:`wizard.launch.install.install_hint`); ``commands`` are its commands as argv lists."""

    def __init__(self, hint: str, commands: list[list[str]]):
        self.hint, self.commands = hint, [list(c) for c in commands]
        super().__init__(hint)
