"""Fact: the options a release's parser reads from an abbreviation.

vLLM's ``vllm serve`` parser is argparse with ``allow_abbrev``: a unique prefix of an option is that
option. ``--kv-cache-d fp8`` is ``--kv-cache-dtype fp8`` and ``--spec-me ngram --spec-tok 3`` is
``--spec-method ngram --spec-tokens 3`` wherever the release's parser has no other option with
that prefix (the ``--spec-*`` shorthands exist from 0.22; ``EngineArgs.create_speculative_config``,
vllm/engine/arg_utils.py 0.22-0.33, builds the speculative config from them). The importer is
release-independent, so it keeps an abbreviation raw (``extra_args.kv_cache_d``);
:func:`abbreviation_rewrite` moves it where the full spelling goes for the release checked, so
every rule, the plan and the advisories see what runs. SD013 still asks for the full spelling.

The value is read by the importer's own code for the full spelling (:class:`wizard.io.collector.
Collector`): the option's argparse type for numbers, ``--no-X`` as False, and for the shorthands
``''`` / ``None`` as the method or model left raw (``optional_type`` reads it as not given; SD017
judges it), ``--spec-tokens`` text that is an integer becomes the integer. Left raw: an ambiguous
prefix (argparse refuses it; SD013 says so), a value the option's type refuses (SD010 names it), a
value-taking option given no value, and an option or speculative key the command already sets in
its full spelling (the order of the two is not kept; vLLM takes the last, or refuses a shorthand
next to the same key: "... are mutually exclusive").
"""

from __future__ import annotations

from typing import Any

from wizard.config import SERVE_FIELDS, ConfigError, Patch, ServeConfig, apply_patch
from wizard.io.collector import Collector
from wizard.vllm.cli_parse import SPEC_SHORTHANDS, option_dest

__all__ = ["abbreviation_rewrite", "written_fix"]

#: fields the importer fills itself, never from an abbreviation (speculative_config: read by
#: :func:`_read_spec`, like its full spelling)
_NOT_OPTIONS = frozenset({"model", "extra_args", "env", "invalid_values", "import_notes", "speculative_config"})


def _read(dest: str, value: Any) -> tuple[bool, Any]:
    """(ok, value) as the importer reads option ``dest`` given ``value`` in its full spelling."""
    c = Collector("command")
    try:
        c.option(dest, value, "--" + dest.replace("_", "-"))
    except ConfigError:
        return False, None
    if dest in c.top:
        return True, c.top[dest]
    if c.shorthands:
        return True, c.shorthands[0][2]
    return False, None


def abbreviation_rewrite(config: ServeConfig, version: Any) -> tuple[ServeConfig, dict[str, str]] | None:
    """(``config`` with the abbreviations in ``extra_args`` that ``version``'s parser resolves moved
    where their full spelling goes -- a ServeConfig field, or a ``speculative_config`` key for the
    ``--spec-*`` shorthands --, {path it went to: the ``extra_args`` path it was written at}); None
    when there are none. A fix that sets or removes such a path must remove the written spelling too
    (:func:`written_fix`), or vLLM reads both."""
    if not config.extra_args:
        return None
    spec = config.speculative_config.model_dump(exclude_none=True) if config.speculative_config else {}
    given = config.model_fields_set
    moves: dict[str, Any] = {}
    gone: list[str] = []
    where: dict[str, str] = {}
    for k, v in config.extra_args.items():
        if (not isinstance(k, str) or not k or k.startswith(("_", "-")) or "." in k or k in SPEC_SHORTHANDS
                or k in SERVE_FIELDS):
            continue  # the full spelling was imported already (or kept raw on purpose)
        if v is None or isinstance(v, (list, dict)):
            continue
        dest = option_dest("--" + k.replace("_", "-"), version)
        if dest is None or dest == k:
            continue
        key = SPEC_SHORTHANDS.get(dest)
        if dest == "speculative_config":
            # --speculative-conf '{...}': read as the full spelling reads it (JSON, its notes and
            # invalid values), unless the command gives the speculative config in another spelling
            if (config.speculative_config is not None or "speculative_config" in config.invalid_values
                    or "speculative_config" in moves or not isinstance(v, str)
                    or any(isinstance(x, str) and x.startswith("speculative_config.") for x in config.extra_args)):
                continue
            spec_read = _read_spec(config.model, v)
            if spec_read is None:
                continue
            moves["speculative_config"] = spec_read
            where["speculative_config"] = f"extra_args.{k}"
        elif key is not None:
            if key in spec or f"speculative_config.{key}" in moves or isinstance(v, bool):
                continue  # set in the config already, or no value (argparse: expected one argument)
            ok, value = _read(dest, v)
            if not ok:
                continue
            moves[f"speculative_config.{key}"] = value
            where[f"speculative_config.{key}"] = f"extra_args.{k}"
        elif dest in SERVE_FIELDS and dest not in _NOT_OPTIONS:
            if dest in given or dest in moves:
                continue
            ok, value = _read(dest, v)
            if not ok:
                continue
            moves[dest] = value
            where[dest] = f"extra_args.{k}"
        else:
            continue
        gone.append(f"extra_args.{k}")
    dotted = _dotted_spec_abbreviations(config, version)
    if dotted and "speculative_config" not in moves and config.speculative_config is None \
            and "speculative_config" not in config.invalid_values:
        spec_read = _read_spec(config.model, None, dotted)
        if spec_read is not None:
            moves["speculative_config"] = spec_read
            for k, _ in dotted:
                where.setdefault("speculative_config", f"extra_args.{k}")
                where[f"speculative_config.{k.split('.', 1)[1]}"] = f"extra_args.{k}"
                gone.append(f"extra_args.{k}")
    if not moves:
        return None
    read_spec = moves.pop("speculative_config", None)
    try:
        out = apply_patch(config, Patch(description="abbreviated options as vLLM's parser reads them", set=moves,
                                        unset=gone)) if moves or gone else config
    except (ConfigError, ValueError):
        return None
    if read_spec is not None:
        out = out.model_copy(update={
            "speculative_config": read_spec.speculative_config,
            "invalid_values": {**out.invalid_values, **read_spec.invalid_values},
            "import_notes": [*out.import_notes, *read_spec.import_notes]})
    return out, where


def _dotted_spec_abbreviations(config: ServeConfig, version: Any) -> list[tuple[str, Any]]:
    """``extra_args`` keys ``speculative_conf.method`` ... whose head the release's parser reads as an
    abbreviation of --speculative-config (FlexibleArgumentParser turns ``--X.KEY V`` into ``--X
    '{"KEY": V}'`` before argparse's prefix matching), in the order written."""
    out = []
    for k, v in config.extra_args.items():
        if not isinstance(k, str) or "." not in k or k.startswith(("_", "-")):
            continue
        head = k.split(".", 1)[0]
        if head != "speculative_config" and option_dest("--" + head.replace("_", "-"), version) == "speculative_config":
            out.append((k, v))
    return out


def _read_spec(model: str, value: str | None, dotted: list[tuple[str, Any]] = ()) -> ServeConfig | None:
    """The speculative part of ``vllm serve MODEL --speculative-config VALUE`` (or of its dotted
    ``--speculative-config.KEY V`` options) as the importer reads it (the config, its invalid
    values and import notes); None when it cannot be read."""
    c = Collector("command")
    c.model = model
    try:
        if value is not None:
            c.option("speculative_config", value, "--speculative-config")
        for k, v in dotted:
            rest = k.split(".", 1)[1]
            c.option(f"speculative_config.{rest}", v, f"--speculative-config.{rest}")
        built = c.build()
    except (ConfigError, ValueError):
        return None
    spec_notes = [n for n in built.import_notes if str(n.field or "").startswith("speculative_config")]
    spec_invalid = {k: v for k, v in built.invalid_values.items() if k.startswith("speculative_config")}
    return built.model_copy(update={"import_notes": spec_notes, "invalid_values": spec_invalid})


def written_fix(patch: Patch, where: dict[str, str], config: ServeConfig | None = None,
                written: ServeConfig | None = None) -> Patch:
    """``patch`` (paths of the rewritten config) for the configuration as written: every path it sets
    or removes that an abbreviation was moved to also removes that abbreviation (``where``, from
    :func:`abbreviation_rewrite`). A patch inside a speculative config read from an abbreviation
    (``--speculative-conf '{...}'``) writes the whole patched config in the full spelling
    (``config``: the rewritten configuration), so removing the abbreviation keeps the rest of it."""
    touched = [*patch.set, *patch.unset]
    spec_from = where.get("speculative_config")
    if (spec_from and config is not None
            and any(t == "speculative_config" or t.startswith("speculative_config.") for t in touched)):
        try:
            patched = apply_patch(config, patch)
        except (ConfigError, ValueError):
            patched = None
        if patched is not None:
            return _whole_speculative_config(patch, where, patched, written)
    extra = [old for new, old in where.items() if old not in patch.unset
             and any(t == new or t.startswith(new + ".") for t in touched)]
    if not extra:
        return patch
    return Patch(description=patch.description, set=dict(patch.set), unset=[*patch.unset, *extra])


def _whole_speculative_config(patch: Patch, where: dict[str, str], patched: ServeConfig,
                              written: ServeConfig | None) -> Patch:
    """The patch of :func:`written_fix` for a speculative config read from abbreviations: the
    patched config set whole under its full name, the patch's other paths kept, and each
    abbreviation removed. An abbreviation is ``extra_args.<spelling>`` (``--speculative-conf``, a
    whole JSON value) or, dotted, ``extra_args.<spelling>.<key>`` (``--speculative-conf.method``):
    a dotted one is an extra_args key holding dots, which no dotted patch path reaches, so then
    extra_args itself is rewritten without them (or removed when nothing else is left in it)."""
    rest = {p: v for p, v in patch.set.items() if not p.startswith("speculative_config")}
    unset = [p for p in patch.unset if not p.startswith("speculative_config")]
    if patched.speculative_config is not None:
        rest["speculative_config"] = patched.speculative_config.model_dump(exclude_none=True)
    spellings = sorted({v for k, v in where.items() if k == "speculative_config" or k.startswith("speculative_config.")})
    whole = [sp for sp in spellings if "." not in sp.split(".", 1)[1]]  # extra_args.--speculative-conf
    dotted = {sp.split(".", 1)[1] for sp in spellings if sp not in whole}  # '--speculative-conf.method'
    if dotted and written is not None:
        left = {k: v for k, v in written.extra_args.items() if k not in dotted
                and f"extra_args.{k}" not in whole and f"extra_args.{k}" not in unset}
        if left:
            rest["extra_args"] = left
        else:
            unset.append("extra_args")
        whole = []  # removed with extra_args, or left out of it
    if "extra_args" in rest:  # set whole: removals inside it are already applied
        unset = [u for u in unset if not u.startswith("extra_args.")]
    return Patch(description=patch.description, set=rest, unset=list(dict.fromkeys([*unset, *whole])))
