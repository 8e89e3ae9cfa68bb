"""Hostile-input generators and the per-input budget, shared by tests/test_hostile_input.py and
benchmarks/hostile_input.py.

Four families of input, each run the way a user or a client reaches SpecWizard:

* ``cli``     -- ``wizard.cli.main(argv)`` in-process (check / fix / export / plan / serve --dry-run)
  with generated commands, options, numbers, shell text and --config files (FIFOs, devices,
  YAML bombs...);
* ``readers`` -- the YAML / JSON / shell-command readers (``parse_yaml``, ``parse_spec_json``,
  ``parse_command``, ``json_loads_bounded``);
* ``folder``  -- generated model folders (config.json text, safetensors headers, FIFOs, symlinks,
  directories in place of files) checked and planned through ``wizard.api`` / ``wizard.plan``;
* ``http``    -- the UI's HTTP API (``build_app()`` served on a loopback port, payloads posted with
  httpx to ``/gradio_api/call/<endpoint>``).

Budget per input: 300 MiB of Python allocations (``tracemalloc`` peak) and, as a safety net
only, a 20 s wall-clock cap (``signal.setitimer``); a soft ``RLIMIT_AS`` keeps a blow-up from
eating the machine. Figures are recorded (:class:`Budget`), never asserted as timings.
"""

from __future__ import annotations

import contextlib
import io
import inspect
import json
import os
import re
import resource
import signal
import struct
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Iterator

from hypothesis import strategies as st

MEM_BUDGET = 300 * 2 ** 20
TIME_CAP_S = 20.0
AS_HEADROOM = 4 * 2 ** 30


class OverBudget(AssertionError):
    """An input used more than :data:`MEM_BUDGET` or ran past :data:`TIME_CAP_S`."""


class Budget:
    """Worst wall time and tracemalloc peak of one family (figures, not assertions on time)."""

    def __init__(self, family: str, mode: str = "tracemalloc"):
        self.family = family
        self.mode = mode  # 'tracemalloc' (Python allocations) or 'rss' (peak resident set, cheaper)
        self.count = 0
        self.worst_s = 0.0
        self.worst_s_input = ""
        self.worst_mem = 0
        self.worst_mem_input = ""
        self.total_s = 0.0

    @contextlib.contextmanager
    def measure(self, label: str) -> Iterator[None]:
        rss = self.mode == "rss" and _rss_reset()
        started_here = not rss and not tracemalloc.is_tracing()
        if started_here:
            tracemalloc.start()
        if rss:
            base = _rss("VmRSS")
        else:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
        main = threading.current_thread() is threading.main_thread()
        old = None
        if main:
            def _alarm(signum, frame):
                raise OverBudget(f"{self.family}: input ran past the {TIME_CAP_S:g} s safety cap: {label[:300]}")

            old = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, TIME_CAP_S)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            if main:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
            peak = max(0, (_rss("VmHWM") if rss else tracemalloc.get_traced_memory()[1]) - base)
            if started_here:
                tracemalloc.stop()
            self.count += 1
            self.total_s += dt
            if dt > self.worst_s:
                self.worst_s, self.worst_s_input = dt, label[:200]
            if peak > self.worst_mem:
                self.worst_mem, self.worst_mem_input = peak, label[:200]
        if peak > MEM_BUDGET:
            raise OverBudget(f"{self.family}: input allocated {peak / 2**20:.0f} MiB (> {MEM_BUDGET / 2**20:.0f}): {label[:300]}")

    def line(self) -> str:
        return (f"{self.family:8s} {self.count:6d} inputs  worst {self.worst_s * 1000:8.1f} ms  "
                f"peak {self.worst_mem / 2**20:7.1f} MiB  mean {self.total_s / max(1, self.count) * 1000:6.1f} ms"
                f"   (slowest: {self.worst_s_input[:70]!r})")


def _rss(field: str) -> int:
    """VmRSS / VmHWM of this process (bytes)."""
    m = re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text())
    return int(m.group(1)) * 1024 if m else 0


def _rss_reset() -> bool:
    """Reset the peak-RSS mark (VmHWM := VmRSS; Linux >= 4.0). False when not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@contextlib.contextmanager
def memory_guard(headroom: int = AS_HEADROOM) -> Iterator[None]:
    """A soft RLIMIT_AS of the current address space + ``headroom``: a memory blow-up raises
    MemoryError instead of taking the machine. Restored afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        vsz = int(re.search(r"VmSize:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) * 1024
    except (OSError, AttributeError):
        yield
        return
    limit = vsz + headroom
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# ---- what every answer must look like -------------------------------------------------------

BARE_REASONS = re.compile(r"^wizard: (utf-8|Circular reference detected|Exceeds the limit|cannot convert float|"
                          r"internal error|[A-Za-z]+Error\b)")
#: an error line names what is wrong: "wizard: FIELD: ..." / "wizard: error: argument --x: ..." or a --flag
NAMES_FIELD = re.compile(r"^wizard: (error: argument )?[\w.\-/\[\]' ]{1,80}: .|--[a-z]")


def check_error_line(err: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"exit 2 must print exactly one line, got {lines[:5]}"
    line = lines[0]
    assert line.startswith("wizard: "), line
    assert not BARE_REASONS.match(line), f"reason names nothing: {line}"
    assert NAMES_FIELD.search(line), f"reason names no field/file: {line}"
    assert "Traceback" not in err


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``wizard.cli.main(argv)`` in-process: (exit code, stdout, stderr). argparse's SystemExit
    is an exit code; any other exception propagates (a failure)."""
    from wizard.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def check_cli(argv: list[str], budget: Budget) -> tuple[int, str, str]:
    with budget.measure(repr(argv)):
        rc, out, err = run_cli(argv)
    assert rc in (0, 1, 2), (rc, argv, err[-500:])
    assert "Traceback" not in out + err, (argv, err[-2000:])
    assert "internal error" not in out + err, (argv, (out + err)[-2000:])
    if rc == 2:
        check_error_line(err)
    if argv and argv[0] in ("check", "fix") and rc in (0, 1) and "--format" in argv and "json" in argv:
        data = json.loads(out)
        assert {"verdict", "vllm_version", "findings", "command"} <= set(data)
    return rc, out, err


def no_internal_findings(report) -> None:
    bad = [f.message for f in report.findings if f.title.startswith("internal error")]
    assert not bad, bad


# ---- strategies --------------------------------------------------------------------------------

CATALOG_TARGETS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B", "deepseek-ai/DeepSeek-V3", "openai/gpt-oss-20b",
                   "google/gemma-3-12b-it", "Qwen/Qwen3-Next-80B-A3B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3"]
DRAFTERS = ["ngram", "[ngram]", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "meta-llama/Llama-3.2-1B-Instruct", "",
            "/dev/zero", "/nonexistent/drafter", "../..", "x" * 300]
METHODS = ["ngram", "eagle", "eagle3", "mtp", "draft_model", "dflash", "dspark", "suffix", "medusa", "deepseek_mtp",
           "ngram_gpu", "extract_hidden_states", "custom_class", "", "NGRAM", "eagle3\x00", "💥"]

NASTY_NUMBERS = ["0", "-1", "1", "3", "8", "17", "64", "512", "2048", "100000", "1e309", "-1e309", "nan", "NaN", "inf",
                 "-inf", "Infinity", "99999999999999999999", "9" * 4301, "1" * 5000, "0x10", "1_000", "١٢٣", "²",
                 "1k", "1K", "1.5g", "25.6k", "-0", "+5", " 5 ", "5\n", "0.5", "1e18", "2e9", "1000000000",
                 str(2 ** 53 + 1), str(2 ** 63), "-" + "9" * 30, "1" + "0" * 99, "1" + "0" * 150, "1e99", "true", "false", "null", "None", "", " ", "auto"]
numbers = st.one_of(st.sampled_from(NASTY_NUMBERS), st.integers(-(2 ** 70), 2 ** 70).map(str),
                    st.floats().map(repr), st.integers(0, 10 ** 6).map(str))

NASTY_TEXT = ["'", '"', "\\", "{", "}", "[", "]", "&", "&&", "|", ";", ">", ">>", "<", "2>&1", "&>", "$(x)", "`x`",
              "#", "\n", "\r\n", "\t", "\x00", "\x7f", "é", "漢字", "\u202e", "--", "-", "=", "==", ".", "..",
              "{\"a\":", "[[[[[[", "]]]]", "'{\"method\":\"ngram\"}'", "\\'", "\\\n", "~", "*", "?", "!", "%s", "%n"]
text = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=40),
                 st.text(alphabet="{}[]\"':,\\ \n-=&|<>;#$`", max_size=30))

OPTIONS = ["-tp", "--tensor-parallel-size", "-pp", "--pipeline-parallel-size", "-dp", "--max-model-len", "--max-num-seqs",
           "--max-num-batched-tokens", "--gpu-memory-utilization", "--block-size", "--kv-cache-dtype", "--port",
           "--host", "--speculative-config", "-sc", "--speculative-config.num_speculative_tokens",
           "--speculative-config.method", "--speculative-config.model", "--speculative-config.prompt_lookup_max",
           "--spec-tokens", "--spec-method", "--trust-remote-code", "--enforce-eager", "--no-enable-prefix-caching",
           "-x", "--", "--served-model-name", "-O3", "--kv-cache-memory-bytes", "--data-parallel-size",
           "--compilation-config", "--dtype", "--quantization", "--max-num-seq", "--speculative-model",
           "--num-speculative-tokens", "--model", "--tokenizer", "--revision", "--async-scheduling",
           "--speculative-config.num_speculative_tokens_per_batch_size", "--middleware", "--no-x", "-O"]


def _yaml_bomb(depth: int, width: int) -> str:
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    for i in range(1, depth):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines)


SPEC_TEMPLATES = st.builds(
    lambda m, k, model, extra: json.dumps({"method": m, "num_speculative_tokens": k, "model": model, **extra},
                                          allow_nan=True),
    st.sampled_from(METHODS),
    st.one_of(st.integers(-5, 200), st.sampled_from([100000, 10 ** 15, 2 ** 63, 10 ** 400, float("nan"), float("inf"),
                                                     -1.5, "3", None, True])),
    st.sampled_from(DRAFTERS),
    st.dictionaries(st.sampled_from(["prompt_lookup_max", "prompt_lookup_min", "draft_tensor_parallel_size",
                                     "max_model_len", "synthetic_acceptance_rates", "kv_cache_dtype",
                                     "num_speculative_tokens_per_batch_size", "speculative_model", "tensor_parallel_size"]),
                    st.one_of(st.integers(-3, 10 ** 6), st.sampled_from([1e309, float("nan"), "x", [0.5, 2.0], [], {},
                                                                         10 ** 30])), max_size=3),
)
SPEC_TEXTS = st.one_of(
    SPEC_TEMPLATES,
    st.sampled_from([
        "{" + _yaml_bomb(9, 10).replace("\n", ", ") + "}",  # a 560-byte flow-YAML bomb
        "{a: &a [*a]}", "method: ngram", "{'method': 'ngram', 'num_speculative_tokens': 3,}",
        '{"num_speculative_tokens": ' + "1" * 5000 + "}", "[" * 5000, '"' + "\\\"" * 100 + '"',
        '{"method":"ngram","num_speculative_tokens":1e400}', "None", "null", "", "{}", "[]", "3",
        '"{\\"method\\": \\"ngram\\"}"', "{" * 19000, '{"a":' * 3000,
    ]),
    text,
)
shell_words = st.one_of(st.sampled_from(OPTIONS), numbers, text, st.sampled_from(CATALOG_TARGETS), SPEC_TEXTS)
WRAPPERS = ["", "nohup ", "env -u CUDA_VISIBLE_DEVICES ", "env -i A=1 ", "uv run --with vllm ", "sudo -E ", "time -p ",
            "CUDA_VISIBLE_DEVICES=0,1 ", "timeout 10m taskset -c 0-3 ", "docker run --gpus all -p 8000:8000 vllm/vllm-openai ",
            "exec ", "uvx ", "conda run -n x ", "FOO='a b' BAR=\"c\" ", "export A=1; ", "cd /tmp && ", "env -u ", "sudo -u "]
ENTRY = ["vllm serve ", "python -m vllm.entrypoints.openai.api_server --model ", "vllm ", "serve ", "", "python3 -m vllm serve ",
         "uv run -m vllm.entrypoints.openai.api_server --model ", "vllm chat "]
REDIRS = ["", " > log 2>&1 &", " &", " | tee log", " &> out.log", " < /dev/null", " 2>", " >", " && echo done", " # comment"]


@st.composite
def commands(draw) -> str:
    """A shell text around `vllm serve`: wrapper, entry point, model, options, redirections."""
    words = draw(st.lists(shell_words, max_size=8))
    quoted = " ".join(w if draw(st.booleans()) else _shquote(w) for w in words)
    return (draw(st.sampled_from(WRAPPERS)) + draw(st.sampled_from(ENTRY)) + draw(st.sampled_from(CATALOG_TARGETS + [""]))
            + " " + quoted + draw(st.sampled_from(REDIRS)))


def _shquote(w: str) -> str:
    return "'" + w.replace("'", "'\\''") + "'"


@st.composite
def argv_commands(draw) -> list[str]:
    """An argv list after `--`: vllm serve MODEL [options and values]."""
    head = draw(st.sampled_from([["vllm", "serve"], ["python", "-m", "vllm.entrypoints.openai.api_server", "--model"],
                                 ["nohup", "vllm", "serve"], ["uv", "run", "--with", "vllm", "vllm", "serve"],
                                 ["env", "-u", "X", "vllm", "serve"], [], ["serve"], ["vllm", "bench"]]))
    model = draw(st.one_of(st.sampled_from(CATALOG_TARGETS), text))
    opts: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        opt = draw(st.sampled_from(OPTIONS))
        opts.append(opt)
        if opt in ("--speculative-config", "-sc"):
            opts.append(draw(SPEC_TEXTS))
        elif draw(st.integers(0, 3)):
            opts.append(draw(st.one_of(numbers, text)))
    return head + [model] + opts


YAML_DOCS = st.one_of(
    st.sampled_from([
        _yaml_bomb(9, 10) + "\nmodel: m\n", "a: &a [*a]\nmodel: m\n", "model: m\nx: &x {y: *x}\n", "[" * 2000, "- a\n- b\n",
        "", "~", "null", "42", "model: " + "1" * 5000 + "\n", "model: m\nmax-model-len: " + "9" * 5000 + "\n",
        "model: m\n" + "".join(f"k{i}: {i}\n" for i in range(1500)), "model: !!python/object:os.system x\n",
        "model: m\nwhen: 2024-99-99\n", "model: m\nspeculative-config: {method: ngram, num_speculative_tokens: .nan}\n",
        "model: m\ngpu-memory-utilization: .inf\n", "? [a]\n: b\n", "model: m\n" + "  " * 200 + "x: 1\n",
        "model: m\n" + "a:\n" + "".join(" " * (i + 1) + f"b{i}:\n" for i in range(120)), "\ufeffmodel: m\n",
        "model: m\n# args: -x 5 -- 'unterminated\n", "model: m\n# env: A=\"\\ud800\"\n", "model: [m, n]\n", "model: {a: 1}\n",
        "model: m\nspeculative-config: '" + _yaml_bomb(5, 5).replace("\n", ", ") + "'\n", "\t\tmodel: m",
    ]),
    st.builds(lambda k, v: f"model: m\n{k}: {v}\n", st.sampled_from([o.lstrip("-") for o in OPTIONS]),
              st.one_of(numbers, text)),
    st.text(alphabet="&*[]{}:-, \nab!|>'\"%@`#", max_size=80),
)

# ---- model folders --------------------------------------------------------------------------------

SIZE_KEYS = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
             "max_position_embeddings", "sliding_window", "kv_lora_rank", "qk_rope_head_dim", "num_nextn_predict_layers",
             "num_kv_shared_layers", "intermediate_size", "n_predict", "sliding_window_pattern", "attention_chunk_size",
             "mamba_d_state", "mamba_n_heads", "mamba_head_dim", "draft_vocab_size", "full_attention_interval"]
BASE_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 2048,
               "torch_dtype": "bfloat16"}
HUGE = [10 ** 18, 10 ** 30, 2 ** 63, 2 ** 31, 10 ** 9, -1, -(10 ** 18), 0, 1e300, float("nan"), float("inf"), 1.5, "4096",
        None, True, [], {}, 10 ** 400]
size_values = st.one_of(st.sampled_from(HUGE), st.integers(0, 10 ** 6), st.integers(-(2 ** 80), 2 ** 80))

BROKEN_CONFIG_TEXTS = ["", "   \n", "null", "[1, 2]", '"text"', "42", "{", "{'hidden_size': 4096,", "\xff\xfe{}",
                       '{"num_hidden_layers": NaN}', '{"hidden_size": ' + "1" * 5000 + "}", "[" * 100000,
                       '{"a":' * 50000 + "1" + "}" * 50000, "{" + ",".join(f'"k{i}": {i}' for i in range(300000)) + "}"]


@st.composite
def folder_specs(draw) -> dict[str, Any]:
    """What a generated model folder holds (see :func:`build_folder`)."""
    kind = draw(st.sampled_from(["dict", "dict", "dict", "text", "fifo", "dir", "devzero", "broken_link", "params",
                                 "loop_link", "none"]))
    cfg = dict(BASE_CONFIG)
    for k, v in draw(st.dictionaries(st.sampled_from(SIZE_KEYS), size_values, max_size=4)).items():
        cfg[k] = v
    if draw(st.integers(0, 4)) == 0:
        cfg["layer_types"] = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention", "mamba", "x", 3]),
                                           max_size=6))
    if draw(st.integers(0, 5)) == 0:
        cfg["text_config"] = draw(st.one_of(st.just("x"), st.dictionaries(st.sampled_from(SIZE_KEYS), size_values,
                                                                          max_size=3)))
    if draw(st.integers(0, 5)) == 0:
        cfg["quantization_config"] = draw(st.sampled_from([{"quant_method": "fp8"}, "x", {"quant_method": 3},
                                                           {"kv_cache_scheme": {"num_bits": 8, "type": "float"},
                                                            "quant_method": "modelopt"}]))
    return {
        "kind": kind,
        "config": cfg,
        "text": draw(st.sampled_from(BROKEN_CONFIG_TEXTS)),
        "weights": draw(st.sampled_from(["none", "ok", "links", "bad_len", "not_json", "huge_shape", "fifo", "truncated",
                                         "dir", "index_bad", "index_huge_total", "many_small"])),
        "method": draw(st.sampled_from(["ngram", "eagle3", "mtp", "draft_model", None])),
        "k": draw(st.one_of(st.integers(1, 8), st.sampled_from([100000, 10 ** 15]))),
        "gpu": draw(st.sampled_from([None, "H100", "H100x8", "cpu", "L4", "B200x2"])),
    }


def _st_header(entries: dict[str, Any]) -> bytes:
    return json.dumps(entries).encode()


def write_safetensors(path: Path, header: dict[str, Any] | bytes, data_bytes: int = 0, length: int | None = None) -> None:
    blob = header if isinstance(header, bytes) else _st_header(header)
    n = len(blob) if length is None else length
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", n))
        fh.write(blob)
        if data_bytes:
            fh.seek(8 + len(blob) + data_bytes - 1)
            fh.write(b"\0")


def build_folder(root: Path, spec: dict[str, Any]) -> Path:
    """Write the model folder ``spec`` describes under ``root`` (which it creates)."""
    root.mkdir(parents=True, exist_ok=True)
    cfg_path = root / "config.json"
    kind = spec["kind"]
    if kind == "dict":
        cfg_path.write_text(json.dumps(spec["config"], allow_nan=True, default=str), encoding="utf-8")
    elif kind == "text":
        cfg_path.write_bytes(spec["text"].encode("utf-8", "surrogatepass"))
    elif kind == "fifo":
        os.mkfifo(cfg_path)
    elif kind == "dir":
        cfg_path.mkdir()
    elif kind == "devzero":
        cfg_path.symlink_to("/dev/zero")
    elif kind == "broken_link":
        cfg_path.symlink_to(root / "missing.json")
    elif kind == "loop_link":
        cfg_path.symlink_to(cfg_path)
    elif kind == "params":
        (root / "params.json").write_text(json.dumps({"dim": spec["config"].get("hidden_size"), "n_layers": 2,
                                                      "n_heads": 4, "n_kv_heads": 2, "vocab_size": 1000}, default=str))
    w = spec["weights"]
    tensors = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [1000, 128], "data_offsets": [0, 256000]},
               "lm_head.weight": {"dtype": "BF16", "shape": [1000, 128], "data_offsets": [256000, 512000]}}
    st_path = root / "model.safetensors"
    if w == "ok":
        write_safetensors(st_path, tensors, 512000)
    elif w == "links":
        write_safetensors(st_path, tensors, 512000)
        for i in range(30):
            (root / f"link-{i:02d}.safetensors").symlink_to(st_path)
    elif w == "bad_len":
        write_safetensors(st_path, tensors, 0, length=2 ** 62)
    elif w == "not_json":
        write_safetensors(st_path, b"{" * 1000 + b"\xff")
    elif w == "huge_shape":
        write_safetensors(st_path, {"w": {"dtype": "BF16", "shape": [2 ** 62, 2 ** 62, 10 ** 30],
                                          "data_offsets": [0, 2]}}, 2)
    elif w == "fifo":
        os.mkfifo(st_path)
    elif w == "truncated":
        write_safetensors(st_path, tensors, 10)
    elif w == "dir":
        st_path.mkdir()
    elif w == "index_bad":
        (root / "model.safetensors.index.json").write_text('{"weight_map": [1, 2], "metadata": {"total_size": "'
                                                           + "9" * 5000 + '"}}')
    elif w == "index_huge_total":
        (root / "model.safetensors.index.json").write_text(json.dumps(
            {"weight_map": {"lm_head.weight": "model.safetensors"}, "metadata": {"total_size": 10 ** 400,
                                                                                  "total_parameters": -5}}))
        write_safetensors(st_path, tensors, 512000)
    elif w == "many_small":
        for i in range(40):
            write_safetensors(root / f"model-{i:05d}.safetensors", {f"t{i}": {"dtype": "F32", "shape": [1],
                                                                               "data_offsets": [0, 4]}}, 4)
    return root


def folder_command(folder: Path, spec: dict[str, Any]) -> list[str]:
    argv = ["vllm", "serve", str(folder)]
    m = spec["method"]
    if m is not None:
        sc: dict[str, Any] = {"method": m, "num_speculative_tokens": spec["k"]}
        if m in ("eagle3", "draft_model"):
            sc["model"] = str(folder)
        if m == "ngram":
            sc["prompt_lookup_max"] = 4
        argv += ["--speculative-config", json.dumps(sc)]
    return argv


def broken_on_purpose(spec: dict[str, Any]) -> bool:
    """The folder's config.json is one vLLM cannot load: SD007 must say so."""
    if spec["kind"] in ("text", "fifo", "dir", "devzero", "broken_link", "loop_link"):
        return True
    if spec["kind"] != "dict":
        return False
    for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        v = spec["config"].get(k)
        if isinstance(v, float) and v != v:
            return True
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 2 ** 40:
            return True
    return False


# ---- HTTP ---------------------------------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UiServer:
    """``build_app()`` served in this process on a free loopback port (so tracemalloc sees the
    handlers), with the named endpoints from ``/gradio_api/info``."""

    def __init__(self, **app_kwargs: Any) -> None:
        import httpx

        from wizard.ui import build_app

        self.port = free_port()
        self.demo = build_app(**app_kwargs)
        self.demo.launch(server_name="127.0.0.1", server_port=self.port, prevent_thread_lock=True, quiet=True,
                         show_error=True)
        self.base = f"http://127.0.0.1:{self.port}/gradio_api"
        self.client = httpx.Client(timeout=TIME_CAP_S)
        info = self.client.get(f"{self.base}/info").json()
        self.endpoints: dict[str, list[dict]] = {k.lstrip("/"): v["parameters"] for k, v in info["named_endpoints"].items()}

    def call(self, name: str, data: list[Any], session: str | None = None) -> tuple[str, str]:
        """(event, data text) of one call: 'complete' or 'error'. ``session``: a browser session
        hash, so that the wizard's state carries over between calls of one session."""
        body: dict[str, Any] = {"data": data}
        if session is not None:
            body["session_hash"] = session
        r = self.client.post(f"{self.base}/call/{name}", json=body)
        r.raise_for_status()
        eid = r.json()["event_id"]
        text = self.client.get(f"{self.base}/call/{name}/{eid}").text
        events = re.findall(r"^event: (\w+)\ndata: (.*)$", text, re.M)
        if not events:
            return "none", text[:500]
        return events[-1]

    def upload(self, name: str, content: bytes) -> dict[str, Any]:
        r = self.client.post(f"{self.base}/upload", files={"files": (name, content)})
        r.raise_for_status()
        path = r.json()[0]
        return {"path": path, "orig_name": name, "meta": {"_type": "gradio.FileData"}}

    def close(self) -> None:
        self.client.close()
        self.demo.close()


def http_payload(draw_value: Callable[[dict], Any], params: list[dict]) -> list[Any]:
    return [draw_value(p) for p in params]


# ---- the four families: one case each (shared by the test and the benchmark) -----------------------

def make_hostile_files(d: Path) -> Path:
    """--config candidates: a FIFO, a YAML bomb, a recursive alias, 2,000 keys, a good file,
    Latin-1 bytes, 2 MiB, a link to /dev/zero, a dangling link."""
    d.mkdir(parents=True, exist_ok=True)
    os.mkfifo(d / "fifo.yaml")
    (d / "bomb.yaml").write_text(_yaml_bomb(9, 10) + "\nmodel: m\n")
    (d / "loop.yaml").write_text("model: m\nx: &a [*a]\n")
    (d / "wide.yaml").write_text("model: m\n" + "".join(f"k{i}: 1\n" for i in range(2000)))
    (d / "ok.yaml").write_text(f"model: {CATALOG_TARGETS[0]}\nspeculative-config:\n  method: ngram\n"
                               "  num_speculative_tokens: 3\n")
    (d / "latin1.yaml").write_bytes(b"model: \xe9\xff\n")
    (d / "big.yaml").write_bytes(b"model: m\n" + b"#" * (2 * 2 ** 20))
    os.symlink("/dev/zero", d / "zero.yaml")
    os.symlink(d / "nope", d / "dangling.yaml")
    return d


@st.composite
def cli_argv(draw, files: Path) -> list[str]:
    """argv for `python -m wizard` (check/fix/export/plan/serve --dry-run; never a real launch)."""
    sub = draw(st.sampled_from(["check", "check", "fix", "export", "plan", "serve"]))
    argv = [sub]
    if draw(st.integers(0, 9)):
        argv.append("--offline")
    if draw(st.booleans()):
        argv += ["--gpu", draw(st.sampled_from(["H100", "H100x8", "cpu", "L4", "B200x1000000", "bogus", "H100x0",
                                                "H100x-1", "H100x" + "9" * 30, "", "mi300x", "A100-80GBx2"]))]
    if draw(st.integers(0, 5)) == 0:
        argv += ["--vllm-version", draw(st.sampled_from(["0.32", "0.33.0", "v0.31", "abc", "9" * 70, "0.1", ""]))]
    if sub in ("check", "fix", "plan") and draw(st.booleans()):
        argv += ["--format", draw(st.sampled_from(["json", "text"]))]
    if sub in ("fix", "export"):
        argv += ["--to", draw(st.sampled_from(["command", "dotted", "yaml", "python", "k8s", "helm", "ray", "docker",
                                               "multi-gpu", "multinode", "kserve", "llm-d", "bogus", ""]))]
    if sub in ("plan", "serve") and draw(st.booleans()):
        argv += ["--kv-cache-space-gib", draw(numbers)]
    if sub == "serve":
        argv.append("--dry-run")  # never start a server here
        if draw(st.booleans()):
            argv += ["--port", draw(numbers)]
        if draw(st.booleans()):
            argv += ["--gpus", draw(st.sampled_from(["0", "0,1", "x;y", "", ",", "GPU-abc", "-1", "9" * 40, "0,,1"]))]
        if draw(st.integers(0, 3)) == 0:
            argv += [draw(st.sampled_from(["--smoke", "--duration"])), draw(numbers)]
    source = draw(st.sampled_from(["command", "command", "command", "text", "config", "both", "none"]))
    if source in ("config", "both"):
        argv += ["--config", str(files / draw(st.sampled_from(["fifo.yaml", "bomb.yaml", "loop.yaml", "wide.yaml", "ok.yaml",
                                                               "latin1.yaml", "big.yaml", "zero.yaml", "dangling.yaml",
                                                               "missing.yaml", "."])))]
    if source in ("command", "both"):
        argv += ["--"] + draw(argv_commands())
    elif source == "text":
        argv += ["--", draw(commands())]
    return [a for a in argv if "\x00" not in a]


READER_KINDS = ["yaml", "yaml", "spec", "command", "command", "argv", "json"]


def reader_source(kind: str):
    return {"yaml": YAML_DOCS, "spec": SPEC_TEXTS, "command": commands(), "argv": argv_commands(),
            "json": st.one_of(SPEC_TEXTS, st.sampled_from(BROKEN_CONFIG_TEXTS))}[kind]


def reader_case(kind: str, value: Any, budget: Budget) -> None:
    """One reader input: only ConfigError / InputRefused (naming the input), and whatever parses
    exports in every form and re-imports."""
    from wizard.config import ConfigError
    from wizard.io.export import to_command, to_dotted_command, to_python, to_yaml
    from wizard.io.argv import parse_command
    from wizard.io.spec_json import parse_spec_json
    from wizard.io.yaml_config import parse_yaml
    from wizard.io.safeio import InputRefused, json_loads_bounded

    with budget.measure(f"{kind}: {value!r}"[:400]):
        cfg = None
        try:
            if kind == "yaml":
                cfg = parse_yaml(value, source="gen.yaml")
            elif kind == "spec":
                obj, problem = parse_spec_json(value)
                assert obj is None or isinstance(obj, dict)
            elif kind == "json":
                try:
                    json_loads_bounded(value, what="gen.json", max_depth=64)
                except InputRefused as err:
                    assert str(err).startswith("gen.json")
            else:
                cfg = parse_command(value)
        except ConfigError as err:
            assert str(err) and err.field in ("config", "command", "model", None), err
            assert not BARE_REASONS.match("wizard: " + str(err)), err
        if cfg is not None:
            for export in (to_command, to_dotted_command, to_yaml, to_python):
                assert isinstance(export(cfg), str)
            json.dumps(cfg.to_dict(), default=str)
            if kind != "yaml":
                again = parse_command(to_command(cfg))
                assert again.model == cfg.model


def folder_case(root: Path, spec: dict[str, Any], budget: Budget) -> None:
    """One generated model folder, checked and planned: no exception but PlanInputError, no
    internal-error finding, and a broken config.json is an SD007 error naming the file."""
    import shutil
    import uuid

    from wizard import api
    from wizard.context import clear_model_cache, resolve_context
    from wizard.io.argv import parse_command
    from wizard.plan.inputs import PlanInputError
    from wizard.plan.planner import plan
    from wizard.vllm.versions import default_version

    folder = build_folder(root / uuid.uuid4().hex, spec)
    try:
        label = json.dumps({k: spec[k] for k in ("kind", "weights", "method", "k", "gpu")}
                           | {"config": str(spec["config"])[:150]}, default=str)
        with budget.measure(label):
            cfg = parse_command(folder_command(folder, spec))
            hw = None
            if spec["gpu"]:
                from wizard.hardware.catalog import parse_gpu_spec

                hw = parse_gpu_spec(spec["gpu"])
            ctx = resolve_context(cfg, default_version(), hw, allow_hub=False)
            report = api.check_context(ctx)
            try:
                json.dumps(plan(ctx).as_json())
            except PlanInputError as err:
                assert ":" in str(err)
        no_internal_findings(report)
        if broken_on_purpose(spec):
            sd007 = [f for f in report.errors if f.rule == "SD007"]
            assert sd007 and ("config.json" in sd007[0].message or "params.json" in sd007[0].message), \
                [(f.rule, f.message) for f in report.findings]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        clear_model_cache()


#: UI endpoints that start processes (launch, smoke, vLLM cross-check) or only run browser JS
HTTP_SKIP = ("do_launch", "fix_relaunch", "lambda", "xc", "fn")
GRADIO_VALIDATION = ("is not in the list of choices", "greater than maximum", "less than minimum")


def record_handler_errors(server: UiServer) -> list[str]:
    """Wrap every event function of ``server.demo`` so an exception it raises is recorded (and
    re-raised): a UI handler must never raise. Returns the (growing) list of errors."""
    import functools

    errors: list[str] = []

    def recording(fn, name):
        if inspect.isgeneratorfunction(fn):  # a streaming handler stays one (Gradio iterates it)
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                try:
                    yield from fn(*args, **kwargs)
                except Exception as err:
                    errors.append(f"{name}: {type(err).__name__}: {err}"[:500])
                    raise

            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as err:
                errors.append(f"{name}: {type(err).__name__}: {err}"[:500])
                raise

        return wrapper

    for bf in server.demo.fns.values():
        fn = getattr(bf, "fn", None)
        if fn is not None:
            bf.fn = recording(fn, getattr(bf, "api_name", None) or getattr(fn, "__name__", "?"))
    return errors


def _value_for(param: dict, draw) -> Any:
    comp = param.get("component", "")
    ptype = str(param.get("python_type", {}).get("type", ""))
    if comp in ("Textbox", "Code"):
        return draw(st.one_of(numbers, text, commands(), SPEC_TEXTS, st.sampled_from(CATALOG_TARGETS)))
    if comp in ("Number", "Slider"):
        return draw(st.one_of(st.integers(-5, 70), st.floats(allow_nan=False, allow_infinity=False, width=32),
                              st.sampled_from([10 ** 6, 2 ** 53 + 1, 1e300, -1e300, 0.5])))
    if comp == "Checkbox":
        return draw(st.booleans())
    if comp == "Dropdown":
        choices = [c.strip("'") for c in ptype[len("Literal["):-1].split(", ")] if ptype.startswith("Literal[") else []
        return draw(st.one_of(st.sampled_from(choices) if choices else st.nothing(), text,
                              st.sampled_from(CATALOG_TARGETS + ["", "none"])))
    if comp == "Browserstate":
        return draw(st.one_of(st.none(), text, st.fixed_dictionaries({
            "v": st.sampled_from([1, 2, "x"]),
            "config": st.dictionaries(st.sampled_from(["model", "tensor_parallel_size", "max_model_len",
                                                       "speculative_config", "extra_args", "env"]),
                                      st.one_of(numbers, text, st.integers(), st.just({})), max_size=4)})))
    return draw(text)


SESSION_DOCS = st.one_of(YAML_DOCS, SPEC_TEXTS, st.builds(
    lambda c: json.dumps({"v": 1, "config": c}, allow_nan=True),
    st.dictionaries(st.sampled_from(["model", "tensor_parallel_size", "speculative_config", "extra_args", "env",
                                     "max_model_len", "invalid_values"]),
                    st.one_of(numbers, text, st.integers(-2 ** 70, 2 ** 70), st.just({}), st.just(float("nan"))),
                    max_size=5)))


def http_case(server: UiServer, errors: list[str], draw, budget: Budget) -> None:
    """One request to a generated endpoint with a generated payload: the handler does not raise
    and the event completes (or Gradio's own input validation refuses it)."""
    names = sorted(n for n in server.endpoints if not n.startswith(HTTP_SKIP) and n != "secondary")
    name = draw(st.sampled_from(names + ["do_import_cmd"] * 20 + ["do_import_yaml"] * 15 + ["do_load_session"] * 10))
    if name == "do_import_yaml":
        payload = [server.upload("gen.yaml", draw(YAML_DOCS).encode("utf-8", "surrogatepass"))]
    elif name == "do_load_session":
        payload = [server.upload("session.json", draw(SESSION_DOCS).encode("utf-8", "surrogatepass"))]
    else:
        payload = [_value_for(p, draw) for p in server.endpoints[name]]
    before = len(errors)
    with budget.measure(f"{name} {payload!r}"[:400]):
        event, body = server.call(name, payload)
    assert len(errors) == before, errors[before:]
    if event == "error":
        assert any(v in body for v in GRADIO_VALIDATION), (name, payload, body[:500])
    else:
        assert event == "complete", (name, event, body[:500])
