"""The ``wizard tune`` sweep (k x concurrency, the no-speculation server included) as a
``vllm bench sweep serve`` grid, for running it with vLLM's own tool (on a GPU machine, in CI):

    vllm bench sweep serve --serve-cmd 'vllm serve MODEL ...' --bench-cmd 'vllm bench serve ...' \\
        --serve-params serve_params.json --bench-params bench_params.json --num-runs 1 -o results -e NAME

Format (vllm/benchmarks/sweep/serve.py and param_sweep.py, vLLM 0.32): each params file is a JSON
dict ``{name: {param: value}}`` (``ParameterSweep.read_from_dict``; the name becomes
``_benchmark_name``); the grid is the Cartesian product of serve and bench entries, one server
per serve entry. ``ParameterSweepItem.apply_to_cmd`` replaces or appends ``--param value``
(``_`` spelled ``-``; a dict value is written as JSON), so:

* the serve command carries no ``--speculative-config``; the ``k0`` entry is empty (the
  no-speculation server) and each ``kN`` entry sets ``speculative_config`` to the configuration's
  speculative config with ``num_speculative_tokens`` N (an override can replace an option but
  never remove one, hence the base command without it);
* each ``cN`` bench entry sets ``max_concurrency`` N.

The results (``results/NAME/SERVE--kN-BENCH--cM/run=0.json``, ``summary.json``) read back with
``wizard plan --from-tune results/NAME`` (:mod:`wizard.launch.tune_results`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from wizard.config import Patch, ServeConfig, apply_patch
from wizard.io.export import spec_dict, to_argv
from wizard.launch.bench import BenchSpec, bench_serve_args
from wizard.launch.tune_inputs import _check_concurrencies, _check_ks, validate_prompts
from wizard.launch.tune_results import TuneError

__all__ = ["SweepGrid", "sweep_grid"]


@dataclass
class SweepGrid:
    """Where the grid was written and the command that runs it. ``serve_params`` /
    ``bench_params``: the two JSON files; ``argv``: ``vllm bench sweep serve`` as an argument list;
    ``command``: the same, shell-quoted."""

    serve_params: str
    bench_params: str
    serve_cmd: list[str]
    bench_cmd: list[str]
    argv: list[str]
    command: str
    entries: int

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sweep_grid(cfg: ServeConfig, out_dir: str | Path, *, ks: Sequence[int] = (1, 2, 4),
               concurrency: int | Sequence[int] = 4, baseline: bool = True, num_prompts: int = 32,
               output_len: int = 128, prompts: str | Path | None = None, port: int = 8000,
               temperature: float = 0.0, chat: bool = False, experiment: str = "wizard-tune",
               results_dir: str = "results") -> SweepGrid:
    """Write ``serve_params.json`` and ``bench_params.json`` into ``out_dir`` for the sweep
    ``tune`` would run (same ks, concurrencies, prompts, output length, baseline) and return the
    ``vllm bench sweep serve`` command. Nothing is started.

    Raises:
        TuneError: no speculative_config, bad k / concurrency lists, unreadable prompts, a port
            outside 1..65535.
    """
    spec = spec_dict(cfg)
    if cfg.speculative_config is None or not spec:
        raise TuneError("the sweep grid needs a speculative_config (the method to sweep)")
    ks_list, concs = _check_ks(ks), _check_concurrencies(concurrency)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise TuneError(f"--port: {port!r} must be a port number from 1 to 65535")
    pfile = validate_prompts(prompts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    serve: dict[str, dict[str, Any]] = {"k0": {}} if baseline else {}
    for k in ks_list:
        serve[f"k{k}"] = {"speculative_config": {**spec, "num_speculative_tokens": k}}
    bench = {f"c{c}": {"max_concurrency": c} for c in concs}
    sp, bp = out / "serve_params.json", out / "bench_params.json"
    sp.write_text(json.dumps(serve, indent=2) + "\n", encoding="utf-8")
    bp.write_text(json.dumps(bench, indent=2) + "\n", encoding="utf-8")
    plain = apply_patch(cfg, Patch(description="the grid's base server: no speculation", unset=["speculative_config"]))
    serve_cmd = to_argv(plain) + ["--port", str(port)]
    bspec = BenchSpec(base_url=f"http://127.0.0.1:{port}", model=cfg.model, tokenizer=cfg.tokenizer or cfg.model,
                      prompts=pfile, num_prompts=num_prompts, concurrency=concs[0], output_len=output_len,
                      temperature=temperature, chat=chat)
    bench_cmd = ["vllm", "bench", "serve", *bench_serve_args(bspec)]
    argv = ["vllm", "bench", "sweep", "serve", "--serve-cmd", shlex.join(serve_cmd), "--bench-cmd", shlex.join(bench_cmd),
            "--serve-params", str(sp), "--bench-params", str(bp), "--num-runs", "1", "-o", results_dir,
            "-e", experiment]
    return SweepGrid(serve_params=str(sp), bench_params=str(bp), serve_cmd=serve_cmd, bench_cmd=bench_cmd, argv=argv,
                     command=shlex.join(argv), entries=len(serve) * len(bench))
