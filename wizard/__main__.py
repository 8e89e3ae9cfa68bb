"""``python -m wizard`` and the ``specwizard`` console script: the CLI (:mod:`wizard.cli`).

Start-up: importing the CLI builds some 70,000 long-lived objects (pydantic schemas, rule
classes, data tables). The cyclic garbage collector would walk all of them again in every full
collection a short ``wizard check`` triggers (~10 ms, benchmarks/cold_start.py), so collection is
off while they are built, and they are then frozen (``gc.freeze``: kept out of later
collections) before the collector is turned back on for what the command itself allocates.
"""

import gc
import sys

gc.disable()
try:
    from wizard import cli
finally:
    gc.freeze()
    gc.enable()


def run() -> int:
    """``python -m wizard`` and the ``specwizard`` console script (usage lines name the program as
    it was started: :func:`wizard.cli.prog_name`)."""
    return cli.main()


if __name__ == "__main__":
    sys.exit(run())
