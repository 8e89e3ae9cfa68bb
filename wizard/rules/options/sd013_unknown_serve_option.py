from __future__ import annotations

import json

import difflib
import functools
from typing import Any

from wizard.config import Patch, SERVE_FIELDS, ServeConfig
from wizard.io.collector import POSITIONAL_KEY
from wizard.io.spec_json import human_readable_int
from wizard.rules.helpers import remove_extra_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import options as vllm_options
from wizard.vllm.cli_parse import SPEC_SHORTHANDS


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


_MAX_SUGGEST = 64


@functools.lru_cache(maxsize=32)
def _candidates(release: str, long_only: bool, polarity: str) -> list[str]:
    """Option names of ``release`` with the same polarity to suggest from (computed once per kind)."""
    options = vllm_options.serve_options(release)["options"]
    return [o for o in options if (o.startswith("--") or not long_only) and _polarity(o) == polarity]


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


def _spec_object(value: Any) -> dict | None:
    """The speculative config a misspelt --speculative-config carries: a JSON object (command) or
    a mapping (YAML); None for anything else (nothing to rename, SD002 judges the full spelling)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return dict(value) if isinstance(value, dict) and value else None


def _full_value(given: dict[str, Any], dest: str) -> Any:
    """The value the command gives ``dest`` in its full spelling (a ServeConfig field or kept in
    extra_args), None when it does not."""
    if dest in given and dest not in ("extra_args", "env", "invalid_values", "import_notes"):
        return given[dest]
    return (given.get("extra_args") or {}).get(dest)


def _same(a: Any, b: Any) -> bool:
    """Whether two written values are the same setting (4096 and '4096', JSON text and its object)."""
    if a == b:
        return True
    try:
        return json.loads(b) == a if isinstance(b, str) else str(a) == str(b)
    except ValueError:
        return str(a).strip() == str(b).strip()


def _by_fit(opt: str, value: Any, hits: list[str], options: dict[str, Any]) -> list[str]:
    """The options an ambiguous prefix could mean, the one its value fits first (a JSON object:
    --speculative-config; a whole number: --spec-tokens), then by closeness of spelling."""
    def fits(h: str) -> bool:
        dest = options[h]["dest"]
        if dest == "speculative_config":
            return _spec_object(value) is not None
        if dest == "spec_tokens":
            return isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())
        return False

    close = difflib.get_close_matches(opt, hits, n=len(hits), cutoff=0)
    return sorted(close, key=lambda h: not fits(h))


def _rename_patch(key: str, value: Any, opt: str, options: dict[str, Any], given: dict[str, Any]) -> Patch | None:
    dest = options[opt]["dest"]
    if dest == "speculative_config":  # --speculative-conf '{...}' / a YAML speculativ_config: {...}
        obj = _spec_object(value)
        if obj is None or given.get("speculative_config"):
            return None
        return Patch(description=f"Rename to {opt}", set={"speculative_config": obj}, unset=[f"extra_args.{key}"])
    if dest in ("model", "config", "model_tag"):
        return None
    if dest in SPEC_SHORTHANDS:  # the key the full spelling sets (wizard.engine.abbreviations)
        spec_key = SPEC_SHORTHANDS[dest]
        if spec_key in (given.get("speculative_config") or {}) or _spec_object(value) is not None:
            return None  # a JSON object is a whole speculative config, never a method, model or k
        if dest == "spec_tokens" and isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        return Patch(description=f"Rename to {opt}", set={f"speculative_config.{spec_key}": value},
                     unset=[f"extra_args.{key}"])
    neg = opt.startswith("--no-") and options[opt]["kind"] == "BooleanOptionalAction"
    if neg and value is True:
        value = False
    if dest in SERVE_FIELDS:
        if dest in given:
            return None
        if isinstance(value, str) and dest in ("max_model_len", "max_num_batched_tokens"):
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
    """Option not known to `vllm serve`

    ## What it does

    Checks every option kept in ``extra_args`` (options SpecWizard does not
    model) against the real option list of ``vllm serve`` of the checked release
    (``wizard/data/vllm/<X.Y>/serve_options.json``, dumped from that release's parser). Unknown -> error with the
    closest real option ("did you mean --max-num-seqs") and a fix renaming it. vLLM's parser has
    argparse's ``allow_abbrev``: a *unique* prefix (``--max-num-seq``) is accepted as the full
    option, so that is a warning (spell it out so every tool reads it the same); an ambiguous
    prefix is an error ("ambiguous option"). ``--no-X`` (``X: false`` in YAML) for an unknown X
    is a warning: the command line rejects it, vLLM's ``--config`` loader silently drops it.
    Dotted options (``--compilation-config.mode``) are checked by their head.

    Each release with a generated list (0.15, 0.17-0.33) is checked against its own; an older or unknown
    release is not judged by this rule (SD403 says the release has no tables of its own).

    ## Why it matters

    argparse exits with code 2 ("unrecognized arguments: --frobnicate")
    before anything else happens; and an option the wizard mistakes for unknown is also not
    checked by any rule.

    ## Example

    ``--max-num-seq 64`` (missing ``s``), ``--disable-log-requests`` (removed
    in 0.32), options copied from SGLang (``--speculative-algorithm``).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqz 64
    ```

    ## Use instead

    ``vllm serve --help=all`` for the installed version; full option names.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64 --port 8001
    ```

    ## Fix safety

    The rename keeps the value; removing an option vLLM rejects changes nothing
    that could run.

    ## Source

    vllm/entrypoints/cli/serve.py ``ServeSubcommand.subparser_init`` +
    vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (each release 0.15, 0.17-0.33), dumped by
    scripts/dump_vllm_serve_options.py into wizard/data/vllm/<X.Y>/serve_options.json; Python argparse ``allow_abbrev``.
    """

    id = "SD013"
    severity = Severity.ERROR
    tables = ("serve_options.json",)  # every release with its own parser table (0.15, 0.17 ... 0.33)
    fields = ("extra_args",)
    phase = "parse"

    def check(self, ctx):
        data = vllm_options.serve_options(ctx.version)
        options: dict[str, Any] = data["options"]
        # as written: an abbreviated --spec-* shorthand is in ctx.config's speculative_config already
        written = ctx.written_config or ctx.config
        given = written.model_dump(exclude_none=True)
        if written.speculative_config is not None:
            given["speculative_config"] = written.speculative_config.model_dump(exclude_none=True)
        suggested = 0
        for key, value in written.extra_args.items():
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
            remove = remove_extra_patch(ctx, key, f"Remove {shown}")
            # a dotted --X.KEY is turned into --X '{"KEY": ...}' before argparse (FlexibleArgumentParser),
            # so its head is prefix-matched like any option
            hits = _prefix_matches(opt, options) if data.get("allow_abbrev", True) else []
            if len(hits) == 1:
                dest = options[hits[0]]["dest"]
                both = None if "." in key else _full_value(given, dest)
                if both is not None:
                    # the full spelling is given too: argparse stores both into one dest, the last one on
                    # the command line wins, and the order of the two is not known here
                    yield self.finding(
                        f"{shown} is vLLM's abbreviation of {hits[0]}, which the command also gives in full "
                        f"({hits[0]} {both!r}): both set {dest} and vLLM keeps whichever comes last on the command "
                        f"line. The check judged the full spelling; if {shown} {value!r} comes last, vLLM runs that "
                        "instead. Keep one of the two.",
                        fields=[path, dest],
                        fixes=[remove] + [f for f in (_rename_patch(key, value, hits[0], options,
                                                                    {k: v for k, v in given.items() if k != dest}),) if f],
                        severity=Severity.WARNING if _same(both, value) else Severity.ERROR,
                        title="Option given twice: in full and abbreviated",
                    )
                    continue
                if "." in key:
                    rest = key.split(".", 1)[1]
                    fix = (Patch(description=f"Rename to {hits[0]}.{rest}", set={f"speculative_config.{rest}": value},
                                 unset=[path]) if dest == "speculative_config" and "speculative_config" not in given
                           else None)
                    said = (f"{shown} is not a `vllm serve` option, but vLLM's parser reads it as {hits[0]}.{rest} "
                            f"(dotted keys become a JSON object, then argparse prefix-matches {_long_name(head)} to "
                            f"{hits[0]}). Spell it out: other tools do not expand abbreviations.")
                else:
                    fix = _rename_patch(key, value, hits[0], options, given)
                    said = (f"{shown} is not a `vllm serve` option, but vLLM's parser accepts it as an abbreviation of "
                            f"{hits[0]} (argparse prefix matching). Spell it out: other tools (and SpecWizard's rules) "
                            "do not expand abbreviations, and a new option with the same prefix would make it ambiguous.")
                yield self.finding(said, fields=[path], fixes=[f for f in (fix,) if f] or [remove],
                                   severity=Severity.WARNING, title="Abbreviated `vllm serve` option")
                continue
            if len(hits) > 1:
                yield self.finding(
                    f"{shown} is ambiguous for vLLM's parser: it could match {', '.join(hits[:6])}"
                    f"{' ...' if len(hits) > 6 else ''}; argparse exits with 'ambiguous option' (code 2).",
                    fields=[path],
                    fixes=[f for f in (_rename_patch(key, value, h, options, given)
                                       for h in _by_fit(opt, value, hits, options)) if f][:1] + [remove],
                )
                continue
            # never suggest the opposite switch (--disable-log-requests -> --enable-log-requests);
            # suggestions for the first _MAX_SUGGEST unknown options only (each costs ~2 ms)
            suggested += 1
            names = _candidates(data.get("vllm_version", str(ctx.version)), opt.startswith("--"), _polarity(opt)) if suggested <= _MAX_SUGGEST else []
            near = difflib.get_close_matches(opt, names, n=1, cutoff=0.75) if names else []
            short = "-" + opt[2:] if opt.startswith("--") else None  # --tp (a YAML tp:) for the alias -tp
            if short in options and options[short]["dest"] not in ("model", "config", "model_tag"):
                near = [next((o for o in options if o.startswith("--") and options[o]["dest"] == options[short]["dest"]),
                             short)]
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
                f"'unrecognized arguments: {shown}' (code 2). (Option list: vLLM {data.get('vllm_version', ctx.version)}'s "
                "parser.)",
                fields=[path],
                fixes=fixes,
            )
