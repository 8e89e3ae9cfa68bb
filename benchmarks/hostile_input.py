"""Hostile input at scale: the four families of tests/test_hostile_input.py with more inputs,
printing the worst wall time and peak memory per family (goal: every input < 2 s, < 300 MiB).

    python benchmarks/hostile_input.py [--n 4000] [--seed 1] [--families cli,readers,folder,http,budgets]
                                       [--memory rss|tracemalloc]

Families (generators and checks in tests/hostile.py): ``cli`` -- ``wizard.cli.main(argv)``
in-process (check/fix/export/plan/serve --dry-run); ``readers`` -- YAML / --speculative-config /
command / JSON readers; ``folder`` -- generated model folders checked and planned; ``http`` --
the UI's HTTP API (build_app() on a loopback port, requests with httpx). ``--n`` inputs are
split over the families as in the test (cli 25%, readers 45%, folder 17.5%, http 12.5%).
``budgets`` -- the byte budgets of issue 20 item 3 (tests/budget_cases.py), each case once: the
alias-bomb YAML (10,000 aliases: 8.4 GiB expanded; goal: refused in < 1 s), the same through
``wizard check --config`` in a subprocess (1,000 aliases), a 200,000-key "Other options" box,
``/restore`` and a session file of 200,000 options, the bomb uploaded to the UI, and hostile
/metrics pages (a 10^7 position label, 60,000 positions, a page that never ends, 1,800 scrapes
of 513 positions).

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
ALIAS_BOMB_GOAL_S = 1.0


def budget_cases(budget, server) -> list[str]:
    """Run every byte-budget case once under ``budget``; returns failures (wrong outcome)."""
    import os
    import subprocess

    import budget_cases as B
    from wizard.config import ConfigError
    from wizard.io.yaml_config import parse_yaml

    fails: list[str] = []

    def expect(ok: bool, what: str) -> None:
        if not ok:
            fails.append(what)

    bomb = B.alias_bomb_yaml(10_000)
    t0 = time.perf_counter()
    with budget.measure("alias bomb: parse_yaml (10,000 aliases)"):
        try:
            parse_yaml(bomb, source="bomb.yaml")
            expect(False, "alias bomb was not refused")
        except ConfigError as err:
            expect("aliases expand to 8.4 GiB" in str(err), f"alias bomb message: {str(err)[:200]}")
    bomb_s = time.perf_counter() - t0
    expect(bomb_s < ALIAS_BOMB_GOAL_S, f"alias bomb took {bomb_s:.2f} s (goal < {ALIAS_BOMB_GOAL_S:g} s)")
    print(f"alias bomb (10,000 aliases, {len(bomb) / 1e6:.1f} MB text) refused in {bomb_s * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "bomb.yaml"
        f.write_text(B.alias_bomb_yaml(1_000))
        root = Path(__file__).resolve().parents[1]
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "wizard", "check", "--offline", "--config", str(f)],
                           capture_output=True, text=True, timeout=300, cwd=str(root), stdin=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"})
        cli_s = time.perf_counter() - t0
        expect(p.returncode == 2 and "aliases expand to" in p.stderr, f"check --config bomb: rc {p.returncode}")
        print(f"wizard check --config <1,000-alias bomb>: exit {p.returncode} in {cli_s:.2f} s (a fresh interpreter)")
    sess = "bench-budgets"

    def call(name, data):
        with budget.measure(f"{name} {str(data)[:80]}"):
            event, body = B.session_call(server, name, data, sess)
        expect(event == "complete", f"{name}: {event}")
        return B.texts_of(body)

    call("restore", [None])
    call("field_model", [B.LLAMA])
    out = call("field_extra_args", [B.wide_box()])
    expect("more than the 262,144 one box takes" in out, "200,000-key box not refused")
    out = call("restore", [B.wide_bstate()])
    expect("Other options (extra_args) holds 200,000" in out, "/restore of 200,000 options not trimmed")
    out = call("do_load_session", [server.upload("s.json", B.wide_session())])
    expect("holds 200,000 options" in out, "session file of 200,000 options not refused")
    out = call("do_import_yaml", [server.upload("bomb.yaml", bomb.encode())])
    expect("aliases expand to 8.4 GiB" in out, "bomb upload not refused")
    call("field_max_num_seqs", ["8"])  # a later event stays quick
    from wizard.launch.metrics import parse_metrics

    with budget.measure("metrics: position=10000000"):
        raw = parse_metrics(B.metrics_far_position())
    expect(raw["accepted_per_pos"] == [52, 32, 16], "far position label changed the counts")
    for label, srv in (("metrics: 60,000 positions", B.MetricsServer(B.metrics_many_positions().encode())),
                       ("metrics: endless page", B.MetricsServer(endless=True))):
        try:
            with budget.measure(label):
                res = B.scrape_case(srv.url, scrapes=2)
            expect(res["kept"] == 2, f"{label}: {res}")
        finally:
            srv.close()
    with budget.measure("metrics: 1,800 scrapes of 513 positions"):
        B.series_case(B.metrics_many_positions(513))
    return fails


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
        if "budgets" in fams:
            server = H.UiServer()
            try:
                warm_up("http")
                t0 = time.perf_counter()
                failures["budgets"] = budget_cases(budgets["budgets"], server)
                wall["budgets"] = time.perf_counter() - t0
            finally:
                server.close()
                server = None
        for fam in [f for f in fams if f != "budgets"]:
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
