"""`vllm serve` option tables per release, from the generated ``serve_options.json``.

    from wizard.vllm import options
    options.serve_options("0.33")["options"]["--max-model-len"]
    # {'dest': 'max_model_len', 'kind': '_StoreAction', 'type': 'human_readable_int_or_auto',
    #  'choices': None, 'default': None, 'group': 'ModelConfig', 'nargs': None, ...}
    options.short_aliases("0.32")["tp"]          # 'tensor_parallel_size'
    options.dests_of_kind("BooleanOptionalAction", "0.32")   # frozenset of dests with --no-X

``version`` is anything :func:`wizard.vllm.releases.nearest_release` accepts (text, packaging
Version, ``wizard.vllm.versions.VllmVersion``); unknown versions use the nearest known release.
Source of every fact: the release's real parser (``ServeSubcommand().subparser_init``: vLLM's
``EngineArgs.add_cli_args`` + the OpenAI frontend's ``make_arg_parser``), dumped by
``scripts/dump_vllm_serve_options.py``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

from wizard import datacache
from wizard.vllm import legacy, releases
from wizard.vllm.legacy import LEGACY_VLLM_VERSION, legacy_parser
from wizard.vllm.releases import known_releases, load, nearest_release

__all__ = ["serve_options", "option", "short_aliases", "dests_of_kind", "nargs_dests", "choices", "option_for_dest",
           "CliVocabulary", "cli_vocabulary"]


def serve_options(version: Any) -> dict[str, Any]:
    """The whole ``serve_options.json`` of the release nearest ``version``: ``options``
    (option string -> facts), ``allow_abbrev``, ``positionals``, ``vllm_version``, ``generator``."""
    return load(version, "serve_options.json")


def option(opt: str, version: Any) -> dict[str, Any] | None:
    """Facts of one option string ('--max-num-seqs', '-tp'), or None if the parser lacks it."""
    return serve_options(version)["options"].get(opt)


@functools.lru_cache(maxsize=None)
def _short_aliases(release: str) -> dict[str, str]:
    opts = load(release, "serve_options.json")["options"]
    return {o[1:]: e["dest"] for o, e in opts.items()
            if o.startswith("-") and not o.startswith("--") and e["kind"] != "_HelpAction"}


def short_aliases(version: Any) -> dict[str, str]:
    """Single-dash aliases without the dash -> dest ({'tp': 'tensor_parallel_size', ...})."""
    return _short_aliases(nearest_release(version))


@functools.lru_cache(maxsize=None)
def _dests_of_kind(kind: str, release: str) -> frozenset[str]:
    opts = load(release, "serve_options.json")["options"]
    return frozenset(e["dest"] for e in opts.values() if e["kind"] == kind)


def dests_of_kind(kind: str, version: Any) -> frozenset[str]:
    """Dests whose argparse action class is ``kind`` ('BooleanOptionalAction',
    '_StoreTrueAction', '_AppendAction', ...)."""
    return _dests_of_kind(kind, nearest_release(version))


@functools.lru_cache(maxsize=None)
def _nargs_dests(nargs: str, release: str) -> frozenset[str]:
    opts = load(release, "serve_options.json")["options"]
    return frozenset(e["dest"] for e in opts.values() if e.get("nargs") == nargs)


def nargs_dests(nargs: str, version: Any) -> frozenset[str]:
    """Dests with argparse ``nargs`` equal to ``nargs`` ('+', '*', '?')."""
    return _nargs_dests(nargs, nearest_release(version))


@functools.lru_cache(maxsize=None)
def _by_dest(release: str) -> dict[str, dict[str, Any]]:
    opts = load(release, "serve_options.json")["options"]
    out: dict[str, dict[str, Any]] = {}
    for o, e in opts.items():
        if o.startswith("--") and not o.startswith("--no-"):
            out.setdefault(e["dest"], {**e, "option": o})
    return out


def option_for_dest(dest: str, version: Any) -> dict[str, Any] | None:
    """Facts of the long option storing ``dest`` (with its spelling under ``option``), or None."""
    return _by_dest(nearest_release(version)).get(dest)


def choices(dest: str, version: Any) -> list[Any] | None:
    """argparse ``choices`` of the option storing ``dest`` (None: no choices or no such option)."""
    e = option_for_dest(dest, version)
    return None if e is None else e.get("choices")


@dataclass(frozen=True)
class CliVocabulary:
    """How `vllm serve` reads each option, over every known release (for the importer, which reads
    a command before the target version is known): a dest that takes no value in one release and a
    value in another is read as the newest release defines it. The oldest layer is vLLM 0.8.2's
    parser (:func:`wizard.vllm.legacy.legacy_parser`), for flags removed before the first generated
    release that old scripts still carry (``--disable-log-requests``, ``--use-v2-block-manager``).

    ``short_aliases``: 'tp' -> 'tensor_parallel_size'; ``boolean_optional``: dests with ``--no-X``
    (BooleanOptionalAction; 0.33's EnableDisableAction, which adds ``--disable-X``); ``store_true``;
    ``store_boolean``: 0.8's StoreBoolean (``--X`` alone or ``--X true|false``); ``nargs``:
    ``nargs='+'``/``'*'`` dests; ``append``: ``action='append'`` dests; ``optional_value``:
    ``nargs='?'`` dests; ``human_int``: dests read with ``human_readable_int`` (``1k``, ``2M``),
    ``human_int_or_auto``: those that also take ``-1``/``auto``."""

    short_aliases: dict[str, str]
    boolean_optional: frozenset[str]
    store_true: frozenset[str]
    store_boolean: frozenset[str]
    nargs: frozenset[str]
    append: frozenset[str]
    optional_value: frozenset[str]
    human_int: frozenset[str]
    human_int_or_auto: frozenset[str]
    #: dests that need a value on the command line (a bare ``--X`` is argparse's "expected one
    #: argument", exit 2): every option that takes a value, except ``nargs`` ``?`` / ``*``
    takes_value: frozenset[str] = frozenset()
    #: dest -> the argparse ``type`` of its number-valued options (``int``, ``float``,
    #: ``human_readable_int``, ``human_readable_int_or_auto``), as serve_options.json names it:
    #: the importer converts command-line text with it (:func:`wizard.vllm.cli_parse.convert`),
    #: so ``-tp 1.0`` is refused as argparse refuses it instead of read by pydantic as 1
    number_types: dict[str, str] = field(default_factory=dict)
    #: dests that carry a credential (their name ends in api_key/token/secret/password, in any
    #: release: api_key, hf_token in 0.32) and every ``--`` option string storing one
    secret_dests: frozenset[str] = frozenset()
    secret_options: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1)
def cli_vocabulary() -> CliVocabulary:
    """The :class:`CliVocabulary` of all known releases (newest definition wins per dest).

    Built once per process, and across processes served by :mod:`wizard.datacache` while every
    release's ``serve_options.json``, 0.8's ``legacy_spec.json`` and the code reading them are
    unchanged (a cold ``wizard check`` then skips parsing every release's options, issue 21)."""
    root = releases._root()
    if not isinstance(root, Path):  # package data not on the file system (zip): nothing to stat
        return _build_cli_vocabulary()
    sources = [root / "0.8" / "legacy_spec.json",
               *(root / rel / "serve_options.json" for rel in sorted(known_releases(), key=Version))]
    return datacache.cached("cli-vocabulary", sources=sources, code=[__file__, releases, legacy],
                            build=_build_cli_vocabulary)


_SECRET_DEST = re.compile(r"(?:^|_)(?:api_key|token|secret|password)$")


def _build_cli_vocabulary() -> CliVocabulary:
    kind: dict[str, dict] = {}
    for action, dests in (("_StoreTrueAction", legacy_parser()["store_true"]),
                          ("StoreBoolean", legacy_parser()["store_boolean"])):
        kind.update({d: {"kind": action, "source": LEGACY_VLLM_VERSION} for d in dests})
    aliases: dict[str, str] = {}
    secret_opts: set[str] = set()
    for rel in sorted(known_releases(), key=Version):  # oldest first: newer releases overwrite
        aliases.update(_short_aliases(rel))
        for o, e in load(rel, "serve_options.json")["options"].items():
            if o.startswith("--") and not o.startswith("--no-"):
                kind[e["dest"]] = e
            if o.startswith("--") and _SECRET_DEST.search(e.get("dest", "")):
                secret_opts.add(o)
    secret = frozenset(e["dest"] for e in kind.values() if _SECRET_DEST.search(e.get("dest", ""))) or \
        frozenset({"api_key", "hf_token"})

    def dests(pred) -> frozenset[str]:
        return frozenset(d for d, e in kind.items() if pred(e))

    return CliVocabulary(
        short_aliases=aliases,
        boolean_optional=dests(lambda e: e["kind"] in ("BooleanOptionalAction", "EnableDisableAction")),
        store_true=dests(lambda e: e["kind"] == "_StoreTrueAction"),
        store_boolean=dests(lambda e: e["kind"] == "StoreBoolean"),
        nargs=dests(lambda e: e.get("nargs") in ("+", "*")),
        append=dests(lambda e: e["kind"] == "_AppendAction"),
        optional_value=dests(lambda e: e.get("nargs") == "?"),
        human_int=dests(lambda e: "human_readable_int" in str(e.get("type"))),
        human_int_or_auto=dests(lambda e: e.get("type") == "human_readable_int_or_auto"),
        takes_value=dests(lambda e: e.get("takes_value") and e.get("nargs") not in ("?", "*")),
        number_types={d: str(e["type"]) for d, e in kind.items()
                      if str(e.get("type")) in ("int", "float", "human_readable_int", "human_readable_int_or_auto")},
        secret_dests=secret,
        secret_options=tuple(sorted(secret_opts)),
    )
