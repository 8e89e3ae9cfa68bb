"""Hostile input at scale: the four families of tests/test_hostile_input.py with more inputs,
printing the worst wall time and peak memory per family (goal: every input < 2 s, < 300 MiB).

    python benchmarks/hostile_input.py [--n 4000] [--seed 1] [--families cli,readers,folder,http]
                                       [--memory rss|tracemalloc]

Families (generators and checks in tests/hostile.py): ``cli`` -- ``wizard.cli.main(argv)``
in-process (check/fix/export/plan/serve --dry-run); ``readers`` -- YAML / --speculative-config /
command / JSON readers; ``folder`` -- generated model folders checked and planned; ``http`` --
the UI's HTTP API (build_app() on a loopback port, requests with httpx). ``--n`` inputs are
split over the families as in the test (cli 25%, readers 45%, folder 17.5%, http 12.5%).

Memory: ``rss`` (default) is the process's peak resident set during the input, reset before each
one through /proc/self/clear_refs (falls back to tracemalloc where not allowed); ``tracemalloc``
counts Python allocations only and slows the run down 2-3x, so its times are not the product's.
A failing input (a traceback, an exception, a budget overrun) is printed and the run goes on.
Exit code 1 when any input failed or went over 2 s / 300 MiB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

from _common import test_env_defaults  # noqa: E402  (sets sys.path)

test_env_defaults()

SHARE = {"cli": 0.25, "readers": 0.45, "folder": 0.175, "http": 0.125}
GOAL_S, GOAL_MIB = 2.0, 300


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4000, help="inputs in all (default 4000)")
    ap.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    ap.add_argument("--families", default="cli,readers,folder,http")
    ap.add_argument("--memory", choices=("rss", "tracemalloc"), default="rss")
    a = ap.parse_args(argv)

    from hypothesis import HealthCheck, given, seed, settings, strategies as st

    import hostile as H

    fams = [f.strip() for f in a.families.split(",") if f.strip()]
    budgets = {f: H.Budget(f, mode=a.memory) for f in fams}
    failures: dict[str, list[str]] = {f: [] for f in fams}
    tmp = Path(tempfile.mkdtemp(prefix="sw-hostile-"))
    files = H.make_hostile_files(tmp / "files")
    server = errors = None

    def runner(fam: str, body):
        n = max(1, int(a.n * SHARE.get(fam, 0.25)))
        deco = settings(max_examples=n, deadline=None, database=None, derandomize=False,
                        suppress_health_check=list(HealthCheck))

        @deco
        @given(data=st.data())
        def run(data):
            try:
                body(data)
            except Exception as err:  # keep going: collect, never stop at the first
                failures[fam].append(f"{type(err).__name__}: {str(err)[-1500:]}"
                                     + ("" if isinstance(err, AssertionError) else "\n" + traceback.format_exc(limit=3)))

        if a.seed is not None:
            run = seed(a.seed)(run)
        t0 = time.perf_counter()
        run()
        return time.perf_counter() - t0

    bodies = {
        "cli": lambda data: H.check_cli(data.draw(H.cli_argv(files)), budgets["cli"]),
        "readers": lambda data: (lambda kind: H.reader_case(kind, data.draw(H.reader_source(kind)), budgets["readers"]))(
            data.draw(st.sampled_from(H.READER_KINDS))),
        "folder": lambda data: H.folder_case(tmp / "folders", data.draw(H.folder_specs()), budgets["folder"]),
        "http": lambda data: H.http_case(server, errors, data.draw, budgets["http"]),
    }
    def warm_up(fam: str) -> None:
        """One benign input first (imports, model cache, Gradio routes): not counted."""
        scratch = H.Budget("warm-up", mode=a.memory)
        ok = ["--", "vllm", "serve", H.CATALOG_TARGETS[0], "--speculative-config", '{"method":"ngram","num_speculative_tokens":3}']
        if fam == "cli":
            for sub in (["check", "--offline"], ["plan", "--offline", "--gpu", "H100"], ["export", "--to", "docker"],
                        ["serve", "--dry-run"]):
                H.check_cli(sub + ok, scratch)
        elif fam == "readers":
            H.reader_case("command", " ".join(ok[1:]), scratch)
        elif fam == "folder":
            H.folder_case(tmp / "folders", {"kind": "dict", "config": dict(H.BASE_CONFIG), "text": "", "weights": "ok",
                                            "method": "ngram", "k": 3, "gpu": "H100"}, scratch)
        elif fam == "http":
            for name, payload in (("do_import_cmd", [" ".join(ok[1:])]), ("handler_4", ["2"]), ("do_import_cmd", ["x"])):
                if name in server.endpoints:
                    server.call(name, payload)

    wall = {}
    with H.memory_guard():
        for fam in fams:
            if fam == "http":
                server = H.UiServer()
                errors = H.record_handler_errors(server)
            warm_up(fam)
            try:
                wall[fam] = runner(fam, bodies[fam])
            finally:
                if fam == "http" and server is not None:
                    server.close()

    print(f"hostile input: {sum(b.count for b in budgets.values())} inputs (after one warm-up input per family), "
          f"memory = {a.memory} peak per input")
    print(f"{'family':8s} {'inputs':>7s} {'worst ms':>10s} {'mean ms':>9s} {'peak MiB':>9s}  failures  slowest input")
    bad = 0
    for fam in fams:
        b = budgets[fam]
        over = b.worst_s > GOAL_S or b.worst_mem > GOAL_MIB * 2 ** 20
        bad += len(failures[fam]) + int(over)
        print(f"{fam:8s} {b.count:7d} {b.worst_s * 1000:10.1f} {b.total_s / max(1, b.count) * 1000:9.1f} "
              f"{b.worst_mem / 2**20:9.1f}  {len(failures[fam]):8d}  {b.worst_s_input[:80]!r}")
        if b.worst_mem:
            print(f"{'':8s} {'':7s} {'':10s} {'':9s} {'':9s}  {'':8s}  largest: {b.worst_mem_input[:80]!r}")
    for fam in fams:
        for f in failures[fam][:5]:
            print(f"FAIL {fam}: {f}")
    print(f"goal: every input < {GOAL_S:g} s and < {GOAL_MIB} MiB: {'met' if not bad else 'NOT met'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
