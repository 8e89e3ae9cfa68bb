"""Cold start of `wizard check` against a bare interpreter importing pydantic and yaml, side by side.

    python benchmarks/cold_start.py [--repeat 9] [--python PY]

Two fresh processes, interleaved (bare, check, bare, check, ...), ``--repeat`` times each, from a
folder outside the repository (the installed or editable ``wizard`` is used):

* ``bare``:  ``python -c "import pydantic, yaml"``
* ``check``: ``python -m wizard check --gpu H100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct``
  (offline: the model comes from the bundled catalog)
* ``model`` (for scale, not the target's baseline): the bare import plus one two-field pydantic
  model class. ``import pydantic`` is lazy; the first model class pulls in pydantic's schema
  machinery, which every `check` pays because its configuration is a pydantic model.

Also prints the CPU time (user + system) of each side, which a loaded machine distorts less than
wall time.

Bytecode is cached for both sides the way an installed package has it (pip compiles a wheel on
install): ``PYTHONDONTWRITEBYTECODE`` is cleared and ``PYTHONPYCACHEPREFIX`` points at a private
folder, warmed by one untimed run of each side. Prints each side's median wall time and the
ratio check / bare (issue 21 target: <= 3x), and the modules of the launch stack `check` imports
(expected: none; tests/test_cold_start.py asserts it).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _common import ROOT  # noqa: E402  (sets sys.path)

BARE = ["-c", "import pydantic, yaml"]
MODEL = ["-c", "import pydantic, yaml\nclass A(pydantic.BaseModel):\n    x: int = 1\n    y: str | None = None"]
CHECK = ["-m", "wizard", "check", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
LAUNCH_STACK = ("wizard.launch", "httpx", "psutil", "rich", "gradio")


def _run(py: str, args: list[str], env: dict, cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([py, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {r.returncode}: {r.stderr[-1000:]}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


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
        for side in (BARE, MODEL, CHECK):  # warm the bytecode cache (and the OS page cache)
            _run(args.python, side, env, cwd)
        runs: dict[str, list[tuple[float, float]]] = {"bare": [], "model": [], "check": []}
        for _ in range(max(1, args.repeat)):
            for name, side in (("bare", BARE), ("model", MODEL), ("check", CHECK)):
                runs[name].append(_run(args.python, side, env, cwd))
        wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
        cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
        n = len(runs["bare"])
        print(f"bare  `python -c 'import pydantic, yaml'`: median {wall['bare'] * 1e3:7.1f} ms wall, "
              f"{cpu['bare'] * 1e3:6.1f} ms CPU (n={n})")
        print(f"model (bare + one pydantic model class):  median {wall['model'] * 1e3:7.1f} ms wall, "
              f"{cpu['model'] * 1e3:6.1f} ms CPU")
        print(f"check `python -m wizard check --gpu H100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct`: "
              f"median {wall['check'] * 1e3:7.1f} ms wall, {cpu['check'] * 1e3:6.1f} ms CPU")
        ratio = wall["check"] / wall["bare"]
        print(f"ratio check / bare: {ratio:.2f}x wall, {cpu['check'] / cpu['bare']:.2f}x CPU "
              f"(target <= 3x: {'met' if ratio <= 3 else 'NOT met'}); pydantic's first model alone: "
              f"{wall['model'] / wall['bare']:.2f}x")
        stack = _launch_imports(args.python, env, cwd)
        print("launch stack imported by check: " + (", ".join(stack) if stack else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
