"""Fact: the ``--spec-*`` shorthands a release's parser reads from an abbreviation.

vLLM's ``vllm serve`` parser is argparse with ``allow_abbrev``: a unique prefix of an option is that
option. ``--spec-me ngram --spec-tok 3`` is ``--spec-method ngram --spec-tokens 3`` in every release
whose parser has the shorthands (0.22+) and no other option with those prefixes, and
``EngineArgs.create_speculative_config`` (vllm/engine/arg_utils.py, 0.22-0.33) builds the
speculative config from them. The importer is release-independent, so it keeps an abbreviation raw
(``extra_args.spec_me``); :func:`shorthand_rewrite` moves it into ``speculative_config`` for the
release checked, the way the full spelling is imported (``wizard.io.collector``), so every rule, the
plan and the advisories see the speculation that runs. SD013 still asks for the full spelling.

Mirrors the collector's reading of the full spelling: ``''`` / ``None`` for the method or the
model is left raw (``optional_type`` reads it as not given; SD017 judges it), ``--spec-tokens`` text
that is an integer becomes the integer, and a key the speculative config already sets is left raw
(vLLM refuses the pair: "... are mutually exclusive").
"""

from __future__ import annotations

from typing import Any

from wizard.config import Patch, ServeConfig, apply_patch
from wizard.vllm.cli_parse import SPEC_SHORTHANDS, option_dest

__all__ = ["shorthand_rewrite"]


def shorthand_rewrite(config: ServeConfig, version: Any) -> ServeConfig | None:
    """``config`` with the abbreviated ``--spec-*`` shorthands in ``extra_args`` that ``version``'s
    parser resolves moved into ``speculative_config``; None when there are none."""
    spec = config.speculative_config.model_dump(exclude_none=True) if config.speculative_config else {}
    moves: dict[str, Any] = {}
    gone: list[str] = []
    for k, v in config.extra_args.items():
        if not isinstance(k, str) or not k or k.startswith(("_", "-")) or "." in k or k in SPEC_SHORTHANDS:
            continue  # the full spelling was imported already (or kept raw on purpose)
        dest = option_dest("--" + k, version)
        key = SPEC_SHORTHANDS.get(dest or "")
        if key is None or key in spec or f"speculative_config.{key}" in moves:
            continue
        if isinstance(v, bool) or v is None:
            continue  # no value: argparse refuses it (expected one argument)
        if key != "num_speculative_tokens" and v in ("", "None"):
            continue
        if key == "num_speculative_tokens" and isinstance(v, str):
            try:
                v = int(v)
            except ValueError:
                pass
        moves[f"speculative_config.{key}"] = v
        gone.append(f"extra_args.{k}")
    if not moves:
        return None
    return apply_patch(config, Patch(description="--spec-* abbreviations as vLLM reads them", set=moves, unset=gone))
