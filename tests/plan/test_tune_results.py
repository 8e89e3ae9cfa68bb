"""Measured results fed back to the planner without a server: the k x concurrency table and its
schedule (wizard.launch.tune_results.measured_schedule), GuideLLM and AIPerf result files in
their tools' formats (tests/data/bench_results/README.md), a `vllm bench sweep serve` experiment
folder, the `tune --concurrency` list and the `vllm bench sweep serve` grid
(wizard.launch.sweep_grid). The grid is also run through vLLM's own sweep parser and dry run
(needs the vllm package). Real `vllm bench serve` files: tests/plan/test_tune_concurrency_vllm.py."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path

import pytest

from wizard import api
from wizard.cli import main
from wizard.config import config_from_dict
from wizard.io.argv import parse_command
from wizard.launch.sweep_grid import sweep_grid
from wizard.launch.tune import TuneError, TuneResult, TuneRun, _recommend, plan_inputs_from_results
from wizard.launch.tune_results import measured_schedule
from wizard.vllm.methods import EAGLE3, NGRAM, NGRAM_GPU
from wizard.vllm.versions import installed_vllm

DATA = Path(__file__).resolve().parents[1] / "data" / "bench_results"


def _pts(table: dict[int, dict[int, float]]) -> list[dict]:
    return [{"k": k, "concurrency": c, "output_tokens_per_s": v} for c, row in table.items() for k, v in row.items()]


def test_schedule_follows_the_measured_best_k_and_switches_speculation_off():
    # the shape of vLLM PR #52362 / sglang #22246: large k at low load, smaller k, then none
    table = {1: {0: 100, 2: 170, 4: 190}, 4: {0: 380, 2: 520, 4: 500}, 16: {0: 1300, 2: 1350, 4: 1200},
             64: {0: 4000, 2: 3600, 4: 3100}}
    s = measured_schedule(_pts(table), max_num_seqs=256)
    assert [r["best_k"] for r in s["by_concurrency"]] == [4, 2, 2, 0]
    assert s["schedule"] == [[1, 3, 4], [4, 63, 2], [64, 256, 0]] and s["schedule_max"] == 4
    assert s["by_concurrency"][0]["speedup"] == pytest.approx(1.9)
    assert "off (k=0) for batch sizes 64-256" in s["schedule_note"]


def test_no_schedule_when_one_k_wins_everywhere_or_none_pays_or_the_proposer_is_fixed():
    assert measured_schedule(_pts({1: {0: 1, 2: 2}, 4: {0: 3, 2: 5}}))["schedule"] is None
    s = measured_schedule(_pts({1: {0: 5, 2: 2}, 4: {0: 9, 2: 5}}))
    assert s["schedule"] is None and "run without speculation" in s["schedule_note"]
    s = measured_schedule(_pts({1: {0: 1, 4: 3}, 8: {0: 9, 2: 10, 4: 5}}), fixed_k=True)
    assert s["schedule"] is None and "NGR-0002" in s["schedule_note"]
    s = measured_schedule(_pts({1: {2: 3}, 8: {2: 5}}))
    assert s["schedule"] is None and "baseline" in s["schedule_note"]


def test_vllm_schedule_validator_accepts_the_measured_schedule():
    pytest.importorskip("vllm")
    if installed_vllm() is None:
        pytest.skip("vLLM not installed")
    from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup

    s = measured_schedule(_pts({1: {0: 1, 3: 3}, 3: {0: 5, 1: 6, 3: 5}, 6: {0: 9, 1: 8}}), max_num_seqs=8)
    assert s["schedule"] == [[1, 2, 3], [3, 5, 1], [6, 8, 0]]
    assert build_dynamic_sd_schedule_lookup(s["schedule"], vllm_max_batch_size=8,
                                            vllm_num_speculative_tokens=3)[1:] == [3, 3, 1, 1, 1, 0, 0, 0]


def _sweep_result() -> TuneResult:
    res = TuneResult(model="m", method=EAGLE3, ks=[2, 4], concurrency=1, concurrencies=[1, 8], num_prompts=8,
                     output_len=32, prompts="p.jsonl")
    res.baselines = [TuneRun(k=0, concurrency=1, ok=True, output_tokens_per_s=100.0, mean_tpot_ms=10.0),
                     TuneRun(k=0, concurrency=8, ok=True, output_tokens_per_s=600.0, mean_tpot_ms=13.0)]
    res.baseline = res.baselines[0]
    res.runs = [TuneRun(k=2, concurrency=1, ok=True, output_tokens_per_s=160.0, per_position=[0.7, 0.5],
                        num_drafts=90, mean_acceptance_length=2.2),
                TuneRun(k=2, concurrency=8, ok=True, output_tokens_per_s=720.0, per_position=[0.7, 0.5],
                        num_drafts=400, mean_acceptance_length=2.2),
                TuneRun(k=4, concurrency=1, ok=True, output_tokens_per_s=180.0, per_position=[0.7, 0.5, 0.35, 0.2],
                        num_drafts=60, mean_acceptance_length=2.75),
                TuneRun(k=4, concurrency=8, ok=True, output_tokens_per_s=540.0, per_position=[0.7, 0.5, 0.35, 0.2],
                        num_drafts=300, mean_acceptance_length=2.75)]
    return res


def test_recommendation_over_concurrencies_and_the_tune_json_round_trip(tmp_path):
    res = _sweep_result()
    _recommend(res, max_num_seqs=32)
    # k=2: 160/180 and 720/720 of the fastest run -> geo-mean 0.943; k=4: 1 and 0.75 -> 0.866
    assert res.recommended_k == 2 and res.best_speedup == pytest.approx((1.6 * 1.2) ** 0.5, rel=1e-3)
    assert [r["best_k"] for r in res.by_concurrency] == [4, 2]
    assert res.schedule == [[1, 7, 4], [8, 32, 2]] and res.schedule_max == 4
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(res.as_json()))
    inp = plan_inputs_from_results(path)
    assert inp["per_position"] == [0.7, 0.5, 0.35, 0.2] and inp["baseline_tpot_ms"] == 10.0 and inp["concurrency"] == 1
    assert inp["schedule"] == res.schedule and len(inp["measured"]) == 6


def test_guidellm_report_is_the_baseline_per_concurrency():
    inp = plan_inputs_from_results(DATA / "guidellm_benchmarks.json")
    assert inp["per_position"] is None and inp["baseline_tpot_ms"] == 6.91 and inp["concurrency"] == 1
    assert inp["measured"] == [{"k": 0, "concurrency": 1, "output_tokens_per_s": 142.5, "mean_tpot_ms": 6.91},
                               {"k": 0, "concurrency": 8, "output_tokens_per_s": 903.2, "mean_tpot_ms": 8.62}]
    assert "no-speculation baseline" in inp["notes"][0]
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "speculative_config": {
        "method": EAGLE3, "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 2}})
    p = api.plan(cfg, gpu="H100", tune_result=DATA / "guidellm_benchmarks.json")
    assert "calibrated on a measured plain step" in p.speedup.cost_model


def test_aiperf_histogram_gives_cumulative_acceptance():
    inp = plan_inputs_from_results(DATA / "aiperf_profile_export_aiperf.json")
    assert inp["per_position"] == pytest.approx([0.70, 0.45, 0.25])
    assert inp["concurrency"] == 4 and inp["baseline_tpot_ms"] is None
    assert inp["measured"] == [{"k": 3, "concurrency": 4, "output_tokens_per_s": 812.4, "mean_tpot_ms": 4.35}]
    assert "AIPerf" in inp["acceptance_source"] and "Llama-3.1-8B" in inp["acceptance_source"]
    data = json.loads((DATA / "aiperf_profile_export_aiperf.json").read_text())
    del data["pooled_spec_decode_acceptance_histogram"], data["spec_decode_acceptance_length"]
    plain = plan_inputs_from_results(data)
    assert plain["per_position"] is None and plain["baseline_tpot_ms"] == 4.35 and plain["concurrency"] == 4
    with pytest.raises(TuneError, match="whole numbers"):
        plan_inputs_from_results({**data, "pooled_spec_decode_acceptance_histogram": {"x": 1}})


def test_a_vllm_bench_sweep_serve_experiment_folder(tmp_path):
    """The folder vllm/benchmarks/sweep/serve.py 0.32 writes: SERVE--<name>-BENCH--<name>/run=N.json,
    each a vllm bench serve result with the serve and bench overrides merged in."""
    exp = tmp_path / "results" / "wizard-tune"
    spec = {"method": EAGLE3, "model": "d", "num_speculative_tokens": 2}
    rows = [({}, 1, 100.0, 10.0, None), ({}, 8, 600.0, 13.0, None),
            ({"speculative_config": spec}, 1, 170.0, 6.0, [0.72, 0.5]),
            ({"speculative_config": spec}, 8, 560.0, 14.0, [0.7, 0.49])]
    for serve, c, tps, tpot, rates in rows:
        d = exp / f"SERVE--k{2 if serve else 0}-BENCH--c{c}"
        d.mkdir(parents=True)
        run = {"model_id": "m", "max_concurrency": c, "output_throughput": tps, "mean_tpot_ms": tpot,
               "run_number": 0, **serve}
        if rates:
            run.update(spec_decode_per_position_acceptance_rates=rates, spec_decode_num_drafts=100 * c,
                       spec_decode_acceptance_length=1 + sum(rates))
        (d / "run=0.json").write_text(json.dumps(run))
    (exp / "SERVE--k2-BENCH--c1" / "run=0.failure.json").write_text("{}")
    inp = plan_inputs_from_results(exp)
    assert inp["per_position"] == [0.7, 0.49]  # the run with more drafts
    assert inp["baseline_tpot_ms"] == 10.0 and inp["concurrency"] == 1
    assert [r["best_k"] for r in inp["by_concurrency"]] == [2, 0]
    assert inp["schedule"] == [[1, 7, 2], [8, 8, 0]]
    with pytest.raises(TuneError, match="experiment folder"):
        plan_inputs_from_results(tmp_path)


def test_concurrency_list_on_the_cli_and_bad_values(capsys):
    with pytest.raises(SystemExit):
        main(["tune", "--concurrency", "0", "--", "vllm", "serve", "m"])
    assert "1 to 4096" in capsys.readouterr().err
    with pytest.raises(TuneError, match="--concurrency"):
        api.tune(config_from_dict({"model": "m", "speculative_config": {"method": NGRAM, "num_speculative_tokens": 2,
                                                                         "prompt_lookup_max": 4}}),
                 concurrency=[1, True])


def _ngram_cfg():
    return config_from_dict({"model": "/models/tiny", "enforce_eager": True, "max_model_len": 512,
                             "speculative_config": {"method": NGRAM_GPU, "num_speculative_tokens": 1,
                                                    "prompt_lookup_max": 4, "prompt_lookup_min": 1}})


def test_sweep_grid_files_and_command(tmp_path):
    g = sweep_grid(_ngram_cfg(), tmp_path, ks=(4, 2), concurrency=(8, 1), num_prompts=6, output_len=16, port=8123)
    serve = json.loads(Path(g.serve_params).read_text())
    assert list(serve) == ["k0", "k2", "k4"] and serve["k0"] == {}
    assert serve["k4"]["speculative_config"] == {"method": NGRAM_GPU, "num_speculative_tokens": 4,
                                                 "prompt_lookup_max": 4, "prompt_lookup_min": 1}
    assert json.loads(Path(g.bench_params).read_text()) == {"c1": {"max_concurrency": 1}, "c8": {"max_concurrency": 8}}
    assert g.entries == 6
    assert "--speculative-config" not in g.serve_cmd and g.serve_cmd[-2:] == ["--port", "8123"]
    b = g.bench_cmd
    assert b[:3] == ["vllm", "bench", "serve"] and b[b.index("--base-url") + 1] == "http://127.0.0.1:8123"
    assert b[b.index("--num-prompts") + 1] == "6" and "--save-result" not in b
    argv = shlex.split(g.command)
    assert argv[:4] == ["vllm", "bench", "sweep", "serve"] and shlex.split(argv[argv.index("--serve-cmd") + 1]) == g.serve_cmd
    out = io.StringIO()
    from wizard.cli_plan import cmd_tune
    import argparse

    ns = argparse.Namespace(sweep_grid=str(tmp_path / "g"), k=[2], concurrency=[1, 2], num_prompts=4, output_len=8,
                            prompts=None, no_baseline=True, temperature=0.0, chat=False, format="json")
    assert cmd_tune(ns, _ngram_cfg(), out=out) == 0
    assert json.loads(out.getvalue())["entries"] == 2


@pytest.mark.vllm
def test_sweep_grid_runs_through_vllms_own_sweep_dry_run(tmp_path, capsys):
    """vLLM 0.32's `vllm bench sweep serve` parser reads the grid; each serve entry applied to the
    serve command (ParameterSweepItem.apply_to_cmd) is a `vllm serve` line the wizard parses back
    to the k of that entry (no speculation for k0); --dry-run prints every server and benchmark."""
    if installed_vllm() is None:
        pytest.skip("vLLM not installed")
    from vllm.benchmarks.sweep.param_sweep import ParameterSweep
    from vllm.benchmarks.sweep.serve import SweepServeArgs, main as sweep_main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    g = sweep_grid(_ngram_cfg(), tmp_path, ks=(2, 3), concurrency=(1, 4), num_prompts=4, output_len=8)
    for item in ParameterSweep.read_json(g.serve_params):
        cmd = item.apply_to_cmd(g.serve_cmd)
        cfg = parse_command(shlex.join(cmd))
        want = int(item.name[1:])
        if want == 0:
            assert cfg.speculative_config is None
        else:
            assert cfg.speculative_config.num_speculative_tokens == want and cfg.speculative_config.method == NGRAM_GPU
    parser = FlexibleArgumentParser()
    SweepServeArgs.add_cli_args(parser)
    argv = g.argv[4:]
    argv[argv.index("-o") + 1] = str(tmp_path / "results")
    sweep_main(parser.parse_args([*argv, "--dry-run"]))
    text = capsys.readouterr().out
    assert text.count("[BEGIN SERVER]") == 3 and text.count("[BEGIN BENCHMARK]") == 6
    assert "'--max-concurrency', '4'" in text and "num_speculative_tokens\": 3" in text


def test_ui_face_parses_concurrencies_and_shows_the_per_concurrency_table():
    from wizard.ui import services
    from wizard.ui.steps.launch import tune_table

    assert services.parse_concurrencies("16, 1,4,4") == ([1, 4, 16], None)
    assert "1 to 4096" in services.parse_concurrencies("0")[1]
    assert services.parse_concurrencies("")[0] is None and services.parse_concurrencies("1," * 40)[1].endswith("16 values")
    res = _sweep_result()
    _recommend(res, max_num_seqs=32)
    md = tune_table(res)
    assert md.count("| baseline |") == 2 and "- concurrency 1: fastest k=4 (1.80× the baseline)" in md
    assert "num_speculative_tokens_per_batch_size = [[1, 7, 4], [8, 32, 2]]" in md


def test_plan_from_a_sweep_notes_the_measured_table_and_schedule(tmp_path):
    res = _sweep_result()
    _recommend(res, max_num_seqs=32)
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(res.as_json()))
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_num_seqs": 32, "speculative_config": {
        "method": EAGLE3, "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 4}})
    p = api.plan(cfg, gpu="H100", tune_result=path)
    assert "measured: concurrency 1: fastest k=4 (1.80x); concurrency 8: fastest k=2 (1.20x)" in p.notes
    assert any("[[1, 7, 4], [8, 32, 2]]" in n for n in p.notes)
    assert p.speedup.acceptance_rates[:4] == pytest.approx([0.7, 0.5, 0.35, 0.2])


def test_from_tune_yaml_list_gets_a_one_line_reason(tmp_path):
    """Trial defect G: a YAML file is not named by its parser's exception class; the reason names
    the file and what --from-tune reads."""
    f = tmp_path / "list.yaml"
    f.write_text("- a\n- b\n")
    with pytest.raises(TuneError) as err:
        plan_inputs_from_results(str(f))
    msg = str(err.value)
    assert "JSONDecodeError" not in msg and "\n" not in msg
    assert msg.startswith("--from-tune: list.yaml is not JSON (YAML is not read): Expecting value at line 1 column 1")
    assert "expected a JSON result (wizard tune.json" in msg and "experiment folder" in msg
    assert plan_inputs_from_results(str(f), raise_errors=False) is None
