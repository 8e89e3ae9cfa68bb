"""Measured conformance: the wizard's config-time verdict vs vLLM's own create_engine_config().

    python benchmarks/conformance.py [--n 300] [--seed 0] [--vllm-version 0.32] [--json OUT]

Builds the tiny model variants of ``tests/conformance_corpus.py`` in a temporary folder,
generates ``--n`` configurations (plus the hand-written issue-2 set), and for each one runs

* the wizard in-process (``wizard.api.check`` with ``gpu='cpu'``, the installed version), and
* vLLM in one long-lived worker (``wizard.oracle.VllmOracle``).

Prints: agreement on accept/reject (wizard config-time error <-> vLLM rejects), the list of
disagreements with the rule ids and vLLM's message, the share of rejected configs that the
wizard's first fixes (applied until no config-time error is left) turn into configs vLLM then
accepts, and the median time per config on each side. Configuration classes in
``conformance_corpus.EXCLUDED`` are counted separately with their reason.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from _common import test_env_defaults  # noqa: E402  (sets sys.path)

test_env_defaults()


def excluded_class(d: dict) -> str | None:
    """The EXCLUDED class a configuration belongs to, or None."""
    spec = d.get("speculative_config") or {}
    if spec.get("method") == "suffix":
        return "suffix"
    return None


def config_errors(report):
    from wizard.oracle import rule_phase

    return [f for f in report.findings if f.severity.value == "error" and rule_phase(f.rule) == "config"]


def fix_config_errors(cfg, check, max_rounds: int = 8):
    """Apply the first fix of the first config-time error until none is left (or no fix)."""
    from wizard.config import apply_patch

    applied = []
    rep = check(cfg)
    for _ in range(max_rounds):
        errs = [f for f in config_errors(rep) if f.fixes]
        if not errs:
            break
        cfg = apply_patch(cfg, errs[0].fixes[0])
        applied.append(f"{errs[0].rule}: {errs[0].fixes[0].description}")
        rep = check(cfg)
    return cfg, applied, rep


def run(n: int, seed: int, version: str | None, out_json: str | None, quiet: bool = False, noise: bool = True) -> dict:
    from conformance_corpus import build_models, generate, hand_written

    from wizard import api
    from wizard.config import config_from_dict
    from wizard.oracle import VllmOracle, compare, engine_kwargs, vllm_unavailable_reason

    reason = vllm_unavailable_reason()
    if reason:
        print(f"conformance: {reason}")
        return {}
    tmp = Path(tempfile.mkdtemp(prefix="sw-conformance-"))
    models = build_models(tmp)
    cases = list(hand_written(models)) + list(generate(models, n, seed, noise))

    def check(cfg):
        return api.check(cfg, vllm_version=version, gpu="cpu", allow_hub=False)

    rows = []
    wiz_times, vllm_times = [], []
    fixes_total = fixes_ok = 0
    fix_failures = []
    with VllmOracle() as oracle:
        t_start = time.time()
        for cid, d in cases:
            cfg = config_from_dict(d)
            t0 = time.perf_counter()
            rep = check(cfg)
            wiz_times.append(time.perf_counter() - t0)
            kw, env = engine_kwargs(cfg)
            v = oracle.check_kwargs(kw, env, timeout=300)
            if v.seconds is not None:
                vllm_times.append(v.seconds)
            cc = compare(rep, v, kw, env)
            row = {"id": cid, "config": d, "agreement": cc.agreement, "vllm": v.verdict, "exc_type": v.exc_type,
                   "vllm_message": v.short_message(200), "wizard_errors": [f["rule"] for f in cc.wizard_config_errors],
                   "excluded": excluded_class(d)}
            if cc.wizard_config_errors and v.rejected and row["excluded"] is None:
                fixed, applied, frep = fix_config_errors(cfg, check)
                fixes_total += 1
                if not config_errors(frep):
                    kw2, env2 = engine_kwargs(fixed)
                    v2 = oracle.check_kwargs(kw2, env2, timeout=300)
                    ok = v2.accepted
                    row["fix"] = {"applied": applied, "vllm": v2.verdict, "message": v2.short_message(200)}
                else:
                    ok = False
                    row["fix"] = {"applied": applied, "vllm": "not run: config-time errors left",
                                  "left": [f.rule for f in config_errors(frep)]}
                fixes_ok += ok
                if not ok:
                    fix_failures.append(row)
            rows.append(row)
            if not quiet and cc.agreement not in ("agree",):
                print(f"  {cc.agreement:11s} {cid}: wizard={row['wizard_errors']} vllm={v.verdict} {v.exc_type or ''}: {row['vllm_message']}",
                      flush=True)
        wall = time.time() - t_start

    counted = [r for r in rows if r["excluded"] is None and r["agreement"] != "unavailable"]
    agree = sum(r["agreement"] == "agree" for r in counted)
    dis = [r for r in counted if r["agreement"] != "agree"]
    summary = {
        "configs": len(rows), "compared": len(counted), "agree": agree,
        "agreement_pct": round(100.0 * agree / max(1, len(counted)), 2),
        "vllm_rejected": sum(r["vllm"] == "rejected" for r in counted),
        "excluded": {k: sum(r["excluded"] == k for r in rows) for k in {r["excluded"] for r in rows if r["excluded"]}},
        "unavailable": sum(r["agreement"] == "unavailable" for r in rows),
        "fixes_tried": fixes_total, "fixes_accepted": fixes_ok,
        "fixes_accepted_pct": round(100.0 * fixes_ok / max(1, fixes_total), 2),
        "median_ms_wizard": round(1000 * statistics.median(wiz_times), 2) if wiz_times else None,
        "median_ms_vllm": round(1000 * statistics.median(vllm_times), 2) if vllm_times else None,
        "wall_s": round(wall, 1),
    }
    print("\n== conformance (vLLM {} on {}) ==".format(oracle.info.get("vllm_version"), oracle.info.get("platform")))
    print(f"configurations: {summary['configs']} ({len(cases) - n} hand-written + {n} generated, seed {seed}"
          f"{'' if noise else ', clean'}); "
          f"compared {summary['compared']}, vLLM rejected {summary['vllm_rejected']}")
    print(f"agreement on accept/reject: {agree}/{len(counted)} = {summary['agreement_pct']}%")
    print(f"excluded classes: {summary['excluded'] or 'none'}; unavailable: {summary['unavailable']}")
    print(f"first fixes accepted by vLLM: {fixes_ok}/{fixes_total} = {summary['fixes_accepted_pct']}%")
    print(f"median time per config: wizard {summary['median_ms_wizard']} ms, vLLM {summary['median_ms_vllm']} ms "
          f"(wall {summary['wall_s']} s incl. vLLM import and model-family warm-up)")
    if dis:
        print("disagreements:")
        for r in dis:
            print(f"  {r['id']} [{r['agreement']}] wizard={r['wizard_errors']} vllm={r['vllm']} {r['exc_type'] or ''}: {r['vllm_message']}")
            print(f"     config={json.dumps(r['config'])}")
    if fix_failures:
        print("fixes vLLM did not accept:")
        for r in fix_failures:
            print(f"  {r['id']}: {r['fix']}")
    if out_json:
        Path(out_json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, default=str))
    return {"summary": summary, "disagreements": dis, "fix_failures": fix_failures}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300, help="generated configurations (default 300)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--vllm-version", default=None, help="wizard rules version (default: installed)")
    p.add_argument("--json", default=None, help="write all rows to this file")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--clean", action="store_true", help="generate without the obvious single-field errors")
    a = p.parse_args(argv)
    run(a.n, a.seed, a.vllm_version, a.json, a.quiet, noise=not a.clean)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
