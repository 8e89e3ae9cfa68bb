"""Recurrent-state pages of hybrid models (Mamba, Gated-DeltaNet, short-conv, linear attention) and
vLLM's hybrid block-size alignment, per release.

vLLM gives each recurrent layer a ``MambaSpec`` whose page is the byte size of its state tensors
(``vllm/v1/kv_cache_interface.py``: ``sum(prod(shape) * dtype size)``), independent of the block
size. The shapes come from the model class: ``get_mamba_state_shape_from_config`` calls one of
``MambaStateShapeCalculator``'s formulas (``vllm/model_executor/layers/mamba/mamba_utils.py``)
with fields of the model's config.json; the conv state grows by ``num_speculative_tokens`` rows
for the classes that pass ``num_spec``. Which formula each architecture uses, and whether it
passes ``num_spec``, is read per release from the model files by
``scripts/gen_mamba_state_table.py`` (``wizard/data/vllm/<X.Y>/mamba_state.json``); the
config fields each model file feeds the formula are :data:`_FIELDS` (checked against the real
classmethods in ``tests/mechanisms/test_mamba_state.py``).

Then ``Platform._align_hybrid_block_size`` (``vllm/platforms/interface.py``, 0.20-0.33) raises the
attention block size until one attention page (target geometry) covers the state page, and pads the
state page to exactly that attention page (``mamba_page_size_padded``). Every attention layer --
the drafter's too -- then uses that block size; :func:`hybrid_alignment` mirrors the step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from wizard.engine.kv_bytes import dtype_bytes
from wizard.vllm import releases

__all__ = ["StatePage", "HybridAlignment", "state_page", "hybrid_alignment", "release_for", "KERNEL_BLOCK_ALIGNMENT"]

#: the smallest kernel block size of the CUDA attention backends a hybrid target gets
#: (FlashAttention ``MultipleOf(16)``, FlashInfer ``[16, 32, 64]``, Triton ``MultipleOf(16)``:
#: ``get_supported_kernel_block_sizes`` in vllm/v1/attention/backends/*.py, 0.28-0.33)
KERNEL_BLOCK_ALIGNMENT = 16

def release_for(version: Any) -> str:
    return releases.nearest_release(version, "mamba_state.json")


def _div(a: int, b: int) -> int:
    """vllm.distributed.utils.divide: exact division (asserts in vLLM; here the caller reports)."""
    if b <= 0 or a % b:
        raise ValueError(f"{a} is not divisible by the tensor-parallel size {b}")
    return a // b


def _extra_groups(n_groups: int, tp: int) -> int:
    """MambaStateShapeCalculator.extra_groups_for_head_shards."""
    return 0 if n_groups % tp == 0 else tp - n_groups


# -- MambaStateShapeCalculator (vllm/model_executor/layers/mamba/mamba_utils.py, 0.32) -------------

def _gdn(tp, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size, num_spec=0):
    conv_dim = head_k_dim * num_k_heads * 2 + head_v_dim * num_v_heads
    return ((_div(conv_dim, tp), conv_kernel_size - 1 + num_spec), (_div(num_v_heads, tp), head_v_dim, head_k_dim))


def _mamba2(tp, intermediate_size, n_groups, num_heads, head_dim, state_size, conv_kernel, num_spec=0):
    n_groups = n_groups + _extra_groups(n_groups, tp)
    conv_dim = intermediate_size + 2 * n_groups * state_size
    return ((_div(conv_dim, tp), conv_kernel - 1 + num_spec), (_div(num_heads, tp), head_dim, state_size))


def _mamba1(tp, intermediate_size, state_size, conv_kernel, num_spec=0):
    return ((_div(intermediate_size, tp), conv_kernel - 1), (_div(intermediate_size, tp), state_size))


def _short_conv(tp, intermediate_size, conv_kernel, num_spec=0):
    return ((_div(intermediate_size, tp), conv_kernel - 1 + num_spec),)


def _linear_attention(tp, num_heads, head_dim, num_spec=0):
    return ((num_heads // tp, head_dim, head_dim),)


CALCULATORS: dict[str, Callable[..., tuple]] = {
    "gated_delta_net_state_shape": _gdn,
    "mamba2_state_shape": _mamba2,
    "mamba1_state_shape": _mamba1,
    "short_conv_state_shape": _short_conv,
    "linear_attention_state_shape": _linear_attention,
}

#: state dtypes per calculator family: conv state = the model dtype (``mamba_cache_dtype`` auto),
#: temporal state = conv dtype unless ``mamba_ssm_cache_dtype`` is set (MambaStateDtypeCalculator)
_N_STATES = {"gated_delta_net_state_shape": 2, "mamba2_state_shape": 2, "mamba1_state_shape": 2,
             "short_conv_state_shape": 1, "linear_attention_state_shape": 1}


def _gdn_fields(c):
    return (c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"],
            c["linear_value_head_dim"], c["linear_conv_kernel_dim"])


#: module (vllm/model_executor/models/<module>.py) -> the config fields its
#: ``get_mamba_state_shape_from_config`` passes to the formula (after ``tp``; ``num_spec`` is added
#: when the release's model file passes it). 0.32 source; verified against the real classmethods.
_FIELDS: dict[str, Callable[[dict[str, Any]], tuple]] = {
    "qwen3_next": _gdn_fields,
    "qwen3_5": _gdn_fields,
    "olmo_hybrid": _gdn_fields,
    "nemotron_h": lambda c: (c["mamba_num_heads"] * c["mamba_head_dim"], c["n_groups"], c["mamba_num_heads"],
                             c["mamba_head_dim"], c["ssm_state_size"], c["conv_kernel"]),
    "granitemoehybrid": lambda c: (c["mamba_expand"] * c["hidden_size"], c["mamba_n_groups"], c["mamba_n_heads"],
                                   c["mamba_d_head"], c["mamba_d_state"], c["mamba_d_conv"]),
    "falcon_h1": lambda c: (c["mamba_d_ssm"] if c.get("mamba_d_ssm") is not None else int(c["mamba_expand"] * c["hidden_size"]),
                            c["mamba_n_groups"], c["mamba_n_heads"], c["mamba_d_head"], c["mamba_d_state"],
                            c["mamba_d_conv"]),
    "zamba2": lambda c: (c["mamba_expand"] * c["hidden_size"], c["mamba_ngroups"], c["n_mamba_heads"],
                         c["mamba_headdim"], c["mamba_d_state"], c["mamba_d_conv"]),
    "jamba": lambda c: (c["mamba_expand"] * c["hidden_size"], c["mamba_d_state"], c["mamba_d_conv"]),
    "lfm2": lambda c: (c["conv_dim"], c["conv_L_cache"]),
    "lfm2_moe": lambda c: (c["hidden_size"], c["conv_L_cache"]),
}

#: modules whose config handler defaults the temporal (SSM) state to float32 when
#: ``--mamba-ssm-cache-dtype`` is auto (NemotronHForCausalLMConfig in
#: vllm/model_executor/models/config.py), or to config.json's ``mamba_ssm_dtype`` (Qwen3.5)
_SSM_DTYPE_DEFAULT = {"nemotron_h": ("mamba_ssm_cache_dtype", "float32"), "qwen3_5": ("mamba_ssm_dtype", None)}


@dataclass(frozen=True)
class StatePage:
    """One recurrent layer's state as vLLM allocates it (per GPU).

    page_bytes: bytes of one state page (unpadded). shapes: the state tensors' shapes (elements).
    calculator: the MambaStateShapeCalculator method. error: why no page could be computed
    (unknown architecture, missing config field, TP that does not divide a dimension).
    """

    page_bytes: int | None
    shapes: tuple[tuple[int, ...], ...] = ()
    dtype_bytes: tuple[int, ...] = ()
    calculator: str | None = None
    module: str | None = None
    release: str = ""
    error: str | None = None


def _table(release: Any) -> dict[str, Any]:
    return releases.load(release_for(release), "mamba_state.json")


def state_page(model: Any, release: Any, *, tensor_parallel_size: int = 1, num_speculative_tokens: int = 0,
               model_dtype: str | None = None, mamba_cache_dtype: str = "auto",
               mamba_ssm_cache_dtype: str = "auto") -> StatePage:
    """The state page of ``model``'s recurrent layers (a ModelInfo with ``recurrent_state`` facts).

    Never raises: an architecture the release's table does not list, or a missing field, comes
    back as ``error``. ``model_dtype``: the served dtype ('bfloat16', ...; None -> config.json's).
    """
    table = _table(release)
    rel = table.get("release", "")
    archs = table.get("architectures", {})
    arch = next((a for a in (getattr(model, "architectures", None) or []) if a in archs), None)
    if arch is None:
        return StatePage(None, release=rel, error="the architecture's recurrent state is not in the release's table")
    entry = archs[arch]
    module, calc = entry.get("module"), entry.get("calculator")
    fields = dict(getattr(model, "recurrent_state", None) or {})
    fields.setdefault("hidden_size", getattr(model, "hidden_size", None))
    if module not in _FIELDS or calc not in CALCULATORS:
        return StatePage(None, calculator=calc, module=module, release=rel,
                         error=f"{module}.py's state formula ({calc}) is not mirrored")
    try:
        args = _FIELDS[module](fields)
        if any(a is None for a in args):
            raise KeyError("a field is null")
        num_spec = num_speculative_tokens if entry.get("num_spec") else 0
        shapes = CALCULATORS[calc](max(1, tensor_parallel_size), *args, num_spec=num_spec)
    except KeyError as e:
        return StatePage(None, calculator=calc, module=module, release=rel,
                         error=f"config.json lacks {e.args[0]!s} (needed by {module}.py's {calc})")
    except (ValueError, TypeError) as e:
        return StatePage(None, calculator=calc, module=module, release=rel, error=str(e))
    base = int(dtype_bytes(model_dtype or getattr(model, "torch_dtype", None) or "bfloat16", 2))
    conv = base if mamba_cache_dtype in ("auto", None) else int(dtype_bytes(mamba_cache_dtype, base))
    ssm_name = mamba_ssm_cache_dtype
    if ssm_name in ("auto", None) and module in _SSM_DTYPE_DEFAULT:
        key, default = _SSM_DTYPE_DEFAULT[module]
        ssm_name = fields.get(key) or default
    temporal = conv if ssm_name in ("auto", None) else int(dtype_bytes(str(ssm_name), conv))
    dtypes = (conv, temporal) if _N_STATES[calc] == 2 else (conv,)
    page = sum(math.prod(s) * b for s, b in zip(shapes, dtypes))
    return StatePage(page, tuple(shapes), tuple(dtypes), calc, module, rel)


@dataclass(frozen=True)
class HybridAlignment:
    """``_align_hybrid_block_size``'s outcome: the attention block size (tokens) every attention
    layer gets, the attention page of the target (bytes) and the state page padded to it."""

    block_size: int
    attn_page_bytes: int
    state_page_bytes: int
    padded_state_page_bytes: int


def hybrid_alignment(attn_bytes_per_token: int, state_bytes: int, *, block_size: int = 16,
                     kernel_alignment: int = KERNEL_BLOCK_ALIGNMENT, use_mla: bool = False) -> HybridAlignment:
    """Mirror of ``Platform._align_hybrid_block_size`` (vllm/platforms/interface.py 0.32) for the
    default ``mamba_cache_mode`` ('none' / 'align'): the smallest block size that is a multiple of
    the kernel alignment (at least ``block_size``; 128 for MLA targets) whose attention page
    (``attn_bytes_per_token``: the target's, one layer) covers ``state_bytes``; the state page is
    padded to that attention page.
    """
    align = max(kernel_alignment, block_size)
    if use_mla:
        align = max(align, 128)
    per_token = max(1, attn_bytes_per_token)
    attn_block = align * -(-state_bytes // (align * per_token))
    attn_block = kernel_alignment * -(-attn_block // kernel_alignment)
    bs = max(block_size, attn_block)
    page = bs * per_token
    return HybridAlignment(bs, page, state_bytes, max(page, state_bytes))
