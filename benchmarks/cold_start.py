"""Cold start of `wizard check` against a bare interpreter importing pydantic and yaml, side by side.

    python benchmarks/cold_start.py [--repeat 9] [--python PY]

Two fresh processes, interleaved (bare, check, bare, check, ...), ``--repeat`` times each, from a
folder outside the repository (the installed or editable ``wizard`` is used):

* ``bare``:  ``python -c "import pydantic, yaml"``
* ``check``: ``python -m wizard check --gpu H100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct``
  (offline: the model comes from the bundled catalog)

Bytecode is cached for both sides the way an installed package has it (pip compiles a wheel on
install): ``PYTHONDONTWRITEBYTECODE`` is cleared and ``PYTHONPYCACHEPREFIX`` points at a private
folder, warmed by one untimed run of each side. Prints each side's median wall time and the
ratio check / bare (issue 21 target: <= 3x), and the modules of the launch stack `check` imports
(expected: none; tests/test_cold_start.py asserts it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import ROOT  # noqa: E402  (sets sys.path)

BARE = ["-c", "import pydantic, yaml"]
CHECK = ["-m", "wizard", "check", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
LAUNCH_STACK = ("wizard.launch", "httpx", "psutil", "rich", "gradio")


def _run(py: str, args: list[str], env: dict, cwd: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([py, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {r.returncode}: {r.stderr[-1000:]}")
    return dt


def _launch_imports(py: str, env: dict, cwd: str) -> list[str]:
    r = subprocess.run([py, "-X", "importtime", *CHECK], env=env, cwd=cwd, capture_output=True, text=True)
    names = {ln.rsplit("|", 1)[1].strip() for ln in r.stderr.splitlines() if ln.startswith("import time:")}
    return sorted(n for n in names if any(n == m or n.startswith(m + ".") for m in LAUNCH_STACK))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="runs of each side (default 9)")
    ap.add_argument("--python", default=sys.executable, help="interpreter (default: this one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sw-cold-") as cwd:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(HF_HUB_OFFLINE="1", PYTHONPYCACHEPREFIX=os.path.join(cwd, "pycache"),
                   SPECWIZARD_CACHE_DIR=os.path.join(cwd, "cache"))  # parsed catalogs (wizard/datacache.py)
        if not os.environ.get("SW_COLD_START_INSTALLED"):  # a checkout: import this repository's wizard
            env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        for side in (BARE, CHECK):  # warm the bytecode cache (and the OS page cache)
            _run(args.python, side, env, cwd)
        bare, check = [], []
        for _ in range(max(1, args.repeat)):
            bare.append(_run(args.python, BARE, env, cwd))
            check.append(_run(args.python, CHECK, env, cwd))
        mb, mc = statistics.median(bare), statistics.median(check)
        print(f"bare  `python -c 'import pydantic, yaml'`: median {mb * 1e3:7.1f} ms  (min {min(bare) * 1e3:.1f}, "
              f"max {max(bare) * 1e3:.1f}; n={len(bare)})")
        print(f"check `python -m wizard check --gpu H100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct`: "
              f"median {mc * 1e3:7.1f} ms  (min {min(check) * 1e3:.1f}, max {max(check) * 1e3:.1f}; n={len(check)})")
        ratio = mc / mb
        print(f"ratio check / bare: {ratio:.2f}x (target <= 3x: {'met' if ratio <= 3 else 'NOT met'})")
        stack = _launch_imports(args.python, env, cwd)
        print("launch stack imported by check: " + (", ".join(stack) if stack else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
