from __future__ import annotations

import math
from typing import Any

from wizard.config import Patch
from wizard.rules.helpers import given_keys, import_notes
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import field_spec


_GE1 = ("draft_tensor_parallel_size", "max_model_len", "prompt_lookup_min", "prompt_lookup_max", "dspark_draft_topk")


_I64_MIN, _I64_END = -(2 ** 63), 2.0 ** 63


def _as_number(raw: Any, is_int: bool):
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        if not is_int:
            return raw
        # pydantic's lax int takes a whole float only within a 64-bit integer (1e19: int_parsing_size)
        return int(raw) if raw.is_integer() and _I64_MIN <= raw < _I64_END else None
    if isinstance(raw, str):
        if not raw.strip().isascii():  # Python's int('３') is 3; pydantic: 'unable to parse string as an integer'
            return None
        try:
            return int(raw.strip()) if is_int else float(raw.strip())
        except ValueError:
            return None
    return None


class _Written:
    """A value as the user wrote it (``false``) for the message, read as ``read`` (0)."""

    def __init__(self, text: str, read: Any):
        self.text, self.read = text, read

    def __repr__(self) -> str:
        return f"{self.text} (read as {self.read!r})"


def _type_error(raw: Any, is_int: bool) -> str:
    """pydantic's message for a value of the wrong type (vLLM 0.32 SpeculativeConfig, pydantic 2)."""
    if not is_int:
        return ("Input should be a valid number, unable to parse string as a number" if isinstance(raw, str)
                else "Input should be a valid number")
    if isinstance(raw, str):
        return "Input should be a valid integer, unable to parse string as an integer"
    if isinstance(raw, float):
        if raw != raw or raw in (float("inf"), float("-inf")):
            return "Input should be a finite number"
        if raw.is_integer():
            return "Unable to parse input string as an integer, exceeded maximum size"
        return "Input should be a valid integer, got a number with a fractional part"
    return "Input should be a valid integer"


def _whole_numbers_around(raw: Any, path: str, key: str, limit: float, strict: bool) -> list[Patch]:
    """A fractional number for an integer field (``3.5``): the whole numbers either side that
    pass the bound, rounded down first (what the user most likely meant, not the smallest k)."""
    if not isinstance(raw, float) or not math.isfinite(raw) or raw.is_integer() or abs(raw) >= 2 ** 53:
        return []
    out = []
    for n, how in ((math.floor(raw), "rounded down"), (math.ceil(raw), "rounded up")):
        if (n > limit if strict else n >= limit) and _I64_MIN <= n < _I64_END:
            out.append(Patch(description=f"Set {key} to {n} ({raw!r} {how})", set={path: n}))
    return out


@register
class SpecNumericBounds(Rule):
    r"""speculative_config number out of range

    ## What it does

    ``num_speculative_tokens`` must be an integer > 0; ``draft_tensor_parallel_size``,
    ``max_model_len``, ``prompt_lookup_min/max`` and ``dspark_draft_topk`` integers >= 1; on 0.33
    also ``fly_window_size`` >= 1, ``xpress_topc`` >= 0, ``fly_entropy_threshold`` >= 0,
    ``fly_entropy_top_k`` >= 1. A value that is not a number at all (``"three"``) is reported too;
    ``"3"`` is accepted, as pydantic coerces it. Keys the wizard does not model
    (``disable_by_batch_size``, ge=2 in 0.11-0.2x) are checked against the type and bounds of the
    checked release's own ``SpeculativeConfig`` field (``constraints.json``).

    ## Why it matters

    pydantic rejects these fields before any other check.

    ## Example

    ``"num_speculative_tokens": 0`` to "turn speculation off".

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":0}'
    ```

    ## Use instead

    Remove ``--speculative-config`` to disable speculation; use k >= 1.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":2}'
    ```

    ## Fix safety

    Setting the smallest valid value changes what is served (k=1 drafts one token).

    ## Source

    vllm/config/speculative.py field constraints (Field(gt=0) / ge=1), 0.32 and 0.33;
    ``disable_by_batch_size: int | None = Field(default=None, ge=2)`` (vllm/config/speculative.py:97,
    0.11.2; found by the schema corpus, ``benchmarks/conformance_schema.py``);
    docs/vllm-rules.md R011, R012 (E05, E07, F24, F06).
    """

    id = "SD022"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        given = given_keys(ctx)
        as_bool = {n.field: n.detail.get("value") for n in import_notes(ctx, "bool_as_number")}
        bounds: dict[str, tuple[float, bool, bool]] = {"num_speculative_tokens": (0, True, True)}  # (limit, strict, int)
        for f in _GE1:
            bounds[f] = (1, False, True)
        if ctx.version.at_least("0.33"):
            bounds.update({"fly_window_size": (1, False, True), "xpress_topc": (0, False, True),
                           "fly_entropy_threshold": (0, False, False), "fly_entropy_top_k": (1, False, True)})
        for key, (limit, strict, is_int) in bounds.items():
            if key not in given:
                continue
            raw = given[key]
            val = _as_number(raw, is_int)
            path = f"speculative_config.{key}"
            if isinstance(as_bool.get(path), bool):  # written as a JSON boolean, read as 1 / 0 (pydantic lax mode)
                raw = _Written(str(as_bool[path]).lower(), val)
            if val is None:  # not a number at all: say so, with pydantic's own words for that type
                kind = "an integer" if is_int else "a number"
                problem, title = f"{raw!r} is not {kind}", f"speculative_config value is not {kind}"
                if is_int and isinstance(raw, float) and raw.is_integer():
                    problem = f"{raw!r} is a whole number too large for the 64-bit integer vLLM reads"
                said = _type_error(raw, is_int)
            elif (val <= limit if strict else val < limit):
                problem, title = f"{raw!r} must be {'>' if strict else '>='} {limit}", None
                said = f"Input should be greater than {'' if strict else 'or equal to '}{limit}"
            else:
                continue
            fix_val: Any = 1 if limit <= 1 else limit
            if key == "xpress_topc" or key == "fly_entropy_threshold":
                fix_val = 0
            fixes = []
            if key in ("max_model_len", "draft_tensor_parallel_size", "dspark_draft_topk"):
                fixes.append(Patch(description=f"Remove {key} (vLLM derives it)", unset=[path]))
            fixes += _whole_numbers_around(raw, path, key, limit, strict) if val is None and is_int else []
            if not any(fx.set.get(path) == fix_val for fx in fixes):
                fixes.append(Patch(description=f"Set {key} to {fix_val}", set={path: fix_val}))
            yield self.finding(
                f"{path}: {problem}; vLLM rejects it at config time (pydantic: '{said}').",
                fields=[path],
                fixes=fixes,
                title=title,
            )
        for path, written in sorted(as_bool.items()):
            key = path.split(".", 1)[1]
            if written is not True or key not in given or (key in bounds and bounds[key][0] >= 1 and bounds[key][1]):
                continue  # false: read as 0, which the bounds above report; a bound 1 does not pass: reported there
            fix_val = 1.0 if key in bounds and not bounds[key][2] else 1
            yield self.finding(
                f"{path}: true is a JSON boolean, not a number; vLLM accepts it (pydantic reads true as 1 in lax mode) "
                f"and runs {key}={fix_val}. Write the number you mean.",
                fields=[path], severity=Severity.INFO, title="speculative_config number written as true",
                fixes=[Patch(description=f"Write {key} as {fix_val}",
                             set={path: fix_val}, unset=["import_notes.bool_as_number"])],
            )
        # keys the wizard does not model (``SpecConfig.model_extra``; e.g. ``disable_by_batch_size``,
        # ge=2 through 0.2x) are checked against the release's own SpeculativeConfig field
        # (constraints.json): its type and its ge/gt/le/lt bounds, as pydantic does
        for key, raw in (ctx.spec.model_extra or {}).items():
            fs = field_spec("SpeculativeConfig", str(key), ctx.version) if key not in bounds else None
            if fs is None or (raw is None and "none" in fs.kinds):
                continue
            p = fs.problem(raw)
            if p is None or p.kind not in ("type", "bound"):
                continue
            path = f"speculative_config.{key}"
            fixes = [Patch(description=f"Set {key} to {p.fix}", set={path: p.fix})] if p.fix is not None else []
            fixes.append(Patch(description=f"Remove {key} (vLLM's default applies)", unset=[path]))
            yield self.finding(
                f"{path}: {raw!r}: {p.message} (SpeculativeConfig.{key} in vLLM {ctx.version}); vLLM rejects it at "
                "config time (pydantic ValidationError).",
                fields=[path],
                fixes=fixes,
            )
