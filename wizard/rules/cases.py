"""Rule case files: ``tests/rules/SDNNN.yml``, one per rule (the way SQLFluff keeps
``std_rule_cases/*.yml``), and ``tests/rules/models.yml``, tiny model folders several rules share.

A case file gives the context the rule's docstring commands need and further cases::

    rule: SD201
    context:                      # every key optional
      gpu: V100                   # NAME[xN] from presets/hardware.yaml, or cpu
      vllm: "0.33"                # --vllm-version
      hardware: {used_bytes: 42949672960}   # Hardware fields set on top of the gpu's catalog entry
      models:                     # folders written (tests/factory.make_model_dir) before any case runs
        ./tiny-fp8-target:
          config: {architectures: [LlamaForCausalLM], model_type: llama, ...}   # config.json
          tensors: {lm_head.weight: [512, 128]}                                # name -> shape
    use_instead: {vllm: "0.32"}   # optional: context overrides for the docstring's Use instead
    cases:                        # beyond the docstring's Example (fails) and Use instead (passes)
      - name: fp8_e5m2_too
        fail: vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e5m2
      - pass: vllm serve Qwen/Qwen3-8B --kv-cache-dtype auto
        gpu: H100                 # a case may override gpu / vllm / hardware
      - fix: vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8
        apply: Use --kv-cache-dtype auto    # a fix description (substring); default: the first fix

``fail``: the rule reports at least one finding (``message``: a substring one of them contains;
``severity``: the severity one of them has). ``pass``: the rule reports nothing. ``fix``: applying
the named fix of the rule's first finding removes that finding without a new error.

Every file pins ``context.vllm`` (else its commands, the docstring's too, run at whatever vLLM is
installed) and has at least one case whose ``name`` starts with ``boundary``: the value just inside
or just outside the rule's condition (k equal to the layer count, a length at the limit, the first
release where the rule applies and the last where it does not, a GPU just at a compute capability).
tests/rules/test_rule_cases.py asserts both.

The loader is here, next to the rules, so that ``wizard rules`` can say which hardware and
version the examples assume (``example_gpu`` ...) when the case files are present (a checkout).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from wizard.shipped import shipped_path

__all__ = ["CASES_DIR", "ModelFolder", "Context", "Case", "RuleCases", "load_cases", "shared_models"]

#: Where the case files live (the repository's tests/rules).
CASES_DIR: Path = shipped_path("tests", "rules")  # the repo's tests/rules, or the wheel's copy


class ModelFolder(BaseModel):
    """A tiny model folder: its config.json and the tensor shapes of its safetensors header."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    config: dict[str, Any]
    tensors: dict[str, list[int]] = Field(default_factory=dict)


class Context(BaseModel):
    """What a rule's commands run with."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    gpu: str | None = None
    vllm: str | None = None
    hardware: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, ModelFolder] = Field(default_factory=dict)


class Case(BaseModel):
    """One command and what the rule must do with it (exactly one of fail / pass / fix)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    name: str | None = None
    fail: str | None = None
    pass_: str | None = Field(None, alias="pass")
    fix: str | None = None
    apply: str | None = None
    message: str | None = None
    severity: str | None = None
    gpu: str | None = None
    vllm: str | None = None
    hardware: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_command(self) -> "Case":
        given = [k for k in ("fail", "pass_", "fix") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"a case needs exactly one of fail / pass / fix, got {given or 'none'}")
        return self

    @property
    def kind(self) -> str:
        return "fail" if self.fail else ("pass" if self.pass_ else "fix")

    @property
    def command(self) -> str:
        return self.fail or self.pass_ or self.fix or ""


class RuleCases(BaseModel):
    """The contents of one ``SDNNN.yml``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    rule: str
    context: Context = Field(default_factory=Context)
    #: overrides of ``context`` (gpu, vllm, hardware) for the docstring's Use instead only, for a
    #: rule whose remedy is the context itself (SD403: a known vLLM release)
    use_instead: Context | None = None
    cases: list[Case] = Field(default_factory=list)


@functools.lru_cache(maxsize=None)
def load_cases(rule_id: str, directory: Path = CASES_DIR) -> RuleCases | None:
    """The case file of ``rule_id``, None when there is none.

    Raises:
        ValueError: the file is not valid YAML or does not follow the format (the message names
            the file and the key).
    """
    path = Path(directory) / f"{rule_id}.yml"
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text()) or {}
        cases = RuleCases.model_validate(data)
    except (yaml.YAMLError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from None
    if cases.rule != rule_id:
        raise ValueError(f"{path}: rule is {cases.rule!r}, expected {rule_id!r}")
    return cases


def shared_models(directory: Path = CASES_DIR) -> dict[str, ModelFolder]:
    """``models.yml``: folder path -> ModelFolder, for folders several rules use ({} when absent)."""
    path = Path(directory) / "models.yml"
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return {k: ModelFolder.model_validate(v) for k, v in data.items()}
