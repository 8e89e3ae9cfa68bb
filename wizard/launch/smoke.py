"""Smoke test: send N real completion requests to a running server; report speed and acceptance.

Prompts mix repetitive text (so n-gram / suffix speculation has n-grams to find in the prompt)
with plain text. Requests are sent one after another with temperature 0 (deterministic,
comparable between runs). Acceptance comes from the /metrics counter deltas around the run,
so it covers exactly these requests when nothing else is being served.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from wizard.launch.metrics import scrape

__all__ = ["SmokeResult", "run_smoke", "SMOKE_PROMPTS"]

SMOKE_PROMPTS: tuple[str, ...] = (
    "the quick brown fox jumps over the lazy dog. the quick brown fox jumps over the lazy dog. the quick brown fox",
    "def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return a + b\n\ndef add(",
    "hello world hello world hello world hello world hello world hello",
    "speculative decoding drafts tokens and the target model verifies them in one step so acceptance matters",
    "1 2 3 4 5 6 7 8 9 10 1 2 3 4 5 6 7 8 9 10 1 2 3 4 5",
    "vllm serves large language models with paged attention and a kv cache of blocks. vllm serves large language models",
)


@dataclass
class SmokeResult:
    """Outcome of :func:`run_smoke`.

    requests / ok / errors: counts and error texts; completion_tokens: tokens generated (from the
    responses' usage); elapsed_s: wall time of all requests (s); tokens_per_s: completion tokens
    per second of wall time; drafts, draft_tokens, accepted_tokens: metric deltas;
    acceptance_rate (0..1), mean_acceptance_length (tokens/step), per_position (0..1 each).
    """

    requests: int
    ok: int = 0
    errors: list[str] = field(default_factory=list)
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    tokens_per_s: float | None = None
    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted_tokens: float = 0.0
    acceptance_rate: float | None = None
    mean_acceptance_length: float | None = None
    per_position: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def render_text(self) -> str:
        """Same as :meth:`summary`, plus the first errors (for the UI)."""
        return self.summary() + "".join(f"\n  error: {e}" for e in self.errors[:3])

    def summary(self) -> str:
        acc = "-" if self.acceptance_rate is None else f"{self.acceptance_rate:.1%}"
        mal = "-" if self.mean_acceptance_length is None else f"{self.mean_acceptance_length:.2f}"
        tps = "-" if self.tokens_per_s is None else f"{self.tokens_per_s:.1f}"
        pp = "/".join(f"{a:.2f}" for a in self.per_position) or "-"
        return (f"smoke: {self.ok}/{self.requests} ok, {self.completion_tokens} tokens in {self.elapsed_s:.1f} s "
                f"= {tps} tok/s | accept {acc} | MAL {mal} | per-pos {pp} | drafts {int(self.drafts)}")


def run_smoke(
    base_url: str,
    n: int = 8,
    *,
    model: str | None = None,
    max_tokens: int = 64,
    timeout: float = 120.0,
    prompts: tuple[str, ...] = SMOKE_PROMPTS,
) -> SmokeResult:
    """Send ``n`` ``POST /v1/completions`` requests (greedy, ``max_tokens`` tokens each).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000`` (a ServerHandle's ``url``).
        model: served model name; default the first of ``GET /v1/models``.
        timeout: seconds per request.

    Returns:
        SmokeResult. Request failures are counted in ``errors`` (never raised).
    """
    import httpx

    res = SmokeResult(requests=n)
    base = base_url.rstrip("/")
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        if model is None:
            try:
                model = client.get(base + "/v1/models").json()["data"][0]["id"]
            except Exception as err:
                res.errors.append(f"GET /v1/models: {err}")
                return res
        try:
            before = scrape(base, client=client)
        except Exception:
            before = None
        t0 = time.perf_counter()
        for i in range(n):
            prompt = prompts[i % len(prompts)]
            try:
                r = client.post(base + "/v1/completions",
                                json={"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
                if r.status_code != 200:
                    res.errors.append(f"request {i}: HTTP {r.status_code}: {r.text[:200]}")
                    continue
                data = r.json()
                res.ok += 1
                res.completion_tokens += int((data.get("usage") or {}).get("completion_tokens") or 0)
                if len(res.samples) < 3:
                    res.samples.append((data.get("choices") or [{}])[0].get("text", ""))
            except Exception as err:
                res.errors.append(f"request {i}: {type(err).__name__}: {err}")
        res.elapsed_s = time.perf_counter() - t0
        if res.elapsed_s > 0 and res.completion_tokens:
            res.tokens_per_s = res.completion_tokens / res.elapsed_s
        try:
            after = scrape(base, client=client)
        except Exception:
            after = None
    if after is not None:
        b = before.raw if before is not None else {}
        a = after.raw
        res.drafts = a["num_drafts"] - b.get("num_drafts", 0.0)
        res.draft_tokens = a["num_draft_tokens"] - b.get("num_draft_tokens", 0.0)
        res.accepted_tokens = a["num_accepted_tokens"] - b.get("num_accepted_tokens", 0.0)
        if res.draft_tokens > 0:
            res.acceptance_rate = res.accepted_tokens / res.draft_tokens
        if res.drafts > 0:
            res.mean_acceptance_length = 1.0 + res.accepted_tokens / res.drafts
            bp = b.get("accepted_per_pos") or []
            res.per_position = [(x - (bp[i] if i < len(bp) else 0.0)) / res.drafts for i, x in enumerate(a["accepted_per_pos"])]
    return res
