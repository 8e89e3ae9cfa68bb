"""The engine view: every fact vLLM derives from one configuration before it loads weights,
defined once and read by rules, advisories, planner and mechanisms as ``ctx.view``.

    view = ctx.view                      # built once per CheckContext, facts computed on first read
    view.budget.tokens                   # max_num_batched_tokens vLLM schedules with
    view.served_max_model_len            # ModelConfig.max_model_len

Facts and where each is defined (one module per fact, each citing the vLLM function it mirrors):

* ``options`` / ``option(name)`` -- the options the user set, as config classes receive them: :mod:`.options`;
* ``batch_defaults``, ``budget``, ``world_size`` -- ``get_batch_defaults`` and the default
  token budget: :mod:`.batch`;
* ``served_max_model_len``, ``drafter_max_len`` -- ``_get_and_verify_max_len`` per release: :mod:`.max_len`;
* ``mtp_layers`` (and ``mtp_rewrite``) -- ``hf_config_override``'s n_predict: :mod:`.mtp`;
* KV bytes per element of each dtype -- :mod:`.kv_bytes`; the default block size -- :mod:`.block_size`;
* ``device_kv`` -- which KV-cache dtypes the release's attention backends serve on the hardware
  (backend selection over the generated ``backends.json``,
  :func:`wizard.mechanisms.attention_backend.kv_support`; the hardware catalog holds no KV column);
* ``memory_utilization`` -- the fraction of device memory vLLM budgets with, and whether the
  extensible KV cache (0.34+) is on: :mod:`.memory_utilization`;
* ``layout`` -- TP x PP x DP over ``--nnodes``, this node's GPUs, refused launch options: :mod:`.layout`;
* ``drafter`` -- which ModelInfo vLLM builds as the draft model: :mod:`.drafter`;
* ``model_dtype``, ``drafter_dtype`` -- the dtype the target and the draft model run in (the
  drafter runs in the target's): :mod:`.dtype`;
* ``prefix_caching``, ``mamba_cache_mode`` -- the prefix-caching default per release and attention
  kind, and the Mamba cache mode it implies: :mod:`.prefix_cache`.

Adding a fact: write ``wizard/engine/<fact>.py`` with a pure function of plain inputs (ServeConfig
fields, ModelInfo, Hardware, the release; data from ``wizard/data/``), add a ``cached_property``
to :class:`EngineView` that calls it, point every reader at ``ctx.view.<fact>``,
delete the old copies, and add ``tests/engine/test_<fact>.py`` comparing with vLLM's own value
(``tests/engine/test_single_definition.py`` fails on a second definition). Direction: this
package imports ``wizard.models``, ``wizard.vllm``, ``wizard.hardware``, ``wizard.config`` and
backend selection (``wizard.mechanisms.attention_backend``, which imports only ``wizard.vllm``)
only; rules, plan and mechanisms import it, never the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from wizard.engine.batch import BatchDefaults, Budget, batch_defaults, token_budget, world_size
from wizard.engine.block_size import block_size
from wizard.engine.drafter import drafter_info
from wizard.engine.layout import Layout, layout_of
from wizard.engine.dtype import drafter_dtype, model_dtype
from wizard.engine.max_len import model_max_len, served_max_model_len
from wizard.engine.memory_utilization import MemoryUtilization, memory_utilization
from wizard.engine.mtp import mtp_layers
from wizard.engine.options import coerced, option_names, truthy, user_options
from wizard.engine.prefix_cache import mamba_cache_mode, prefix_caching
from wizard.vllm.releases import nearest_release
from wizard.mechanisms.attention_backend import fp8_kv_support, kv_support
from wizard.models.info import ModelInfo

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = ["EngineView", "DeviceKv", "build_view"]


@dataclass(frozen=True, eq=False)
class DeviceKv:
    """What a device's attention backends accept for the KV cache in one release (backend
    selection over that release's backends.json, :func:`kv_support`). Each fact is computed when
    first read: ``fp8`` needs one selection, ``dtypes`` one per KV dtype of the release."""

    version: Any
    hardware: Any

    @cached_property
    def dtypes(self) -> tuple[str, ...]:
        """Every KV-cache dtype some backend serves ('auto' first)."""
        return tuple(kv_support(self.version, self.hardware)["kv_cache_dtypes"])

    @cached_property
    def fp8(self) -> bool:
        """An fp8 KV cache works with causal attention."""
        return fp8_kv_support(self.version, self.hardware)

    @cached_property
    def fp8_noncausal(self) -> bool:
        """An fp8 KV cache works with non-causal attention (DFlash/DSpark drafters)."""
        return fp8_kv_support(self.version, self.hardware, non_causal=True)

    @cached_property
    def release(self) -> str:
        """The release whose backends.json decided (the nearest one that has a table)."""
        return str(kv_support(self.version, self.hardware)["release"])


@dataclass(frozen=True, eq=False)
class EngineView:
    """What vLLM computes from this configuration before it loads weights. Read it as
    ``ctx.view``; every attribute is typed, computed once, never written by a reader."""

    ctx: "CheckContext"

    # ---- options ---------------------------------------------------------------------------
    @cached_property
    def options(self) -> dict[str, Any]:
        """EngineArgs name -> value of every option the user set (:mod:`wizard.engine.options`)."""
        return user_options(self.ctx.config, self.ctx.version)

    @cached_property
    def option_names(self) -> dict[str, str]:
        """``extra_args`` key -> the option the release's parser reads it as, where the user
        spelled an alias or an abbreviation (:func:`.options.option_names`)."""
        return option_names(self.ctx.config, nearest_release(self.ctx.version))

    def option(self, name: str, default: Any = None) -> Any:
        """One option as vLLM's config class receives it (:func:`.options.coerced`)."""
        return coerced(self.options, self.ctx.version, name, default)

    # ---- drafter -----------------------------------------------------------------------------
    @cached_property
    def drafter(self) -> ModelInfo | None:
        """The drafter's ModelInfo as vLLM builds it (:mod:`.drafter`)."""
        c = self.ctx
        return drafter_info(c.method, c.target, c.drafter)

    @cached_property
    def model_dtype(self) -> str | None:
        """The dtype vLLM runs the target in (:func:`.dtype.model_dtype`); None when --dtype is
        auto and the target is unknown."""
        c = self.ctx
        return model_dtype(c.config.dtype if isinstance(c.config.dtype, str) else None, c.target, c.hardware)

    @cached_property
    def drafter_dtype(self) -> str | None:
        """The dtype vLLM builds the draft model with: the target's (:func:`.dtype.drafter_dtype`,
        vllm/config/speculative.py 0.32 L1301), never the drafter checkpoint's own; None without a
        draft model or when the target's dtype is unknown."""
        c = self.ctx
        return drafter_dtype(c.method, c.config.dtype if isinstance(c.config.dtype, str) else None, c.target, c.hardware)

    @cached_property
    def mtp_layers(self) -> int | None:
        """n_predict of the drafter's MTP layers (:mod:`.mtp`); None = unknown / not MTP."""
        return mtp_layers(self.drafter, self.ctx.version)

    # ---- lengths -----------------------------------------------------------------------------
    @cached_property
    def served_max_model_len(self) -> int | None:
        """The target's ``max_model_len`` as ModelConfig settles on it (:mod:`.max_len`)."""
        c = self.ctx
        return served_max_model_len(c.config.max_model_len, c.target, c.version, self.option("hf_overrides"),
                                         truthy(self.option("disable_sliding_window", False)))

    @cached_property
    def drafter_max_len(self) -> int | None:
        """The draft ModelConfig's derived length (:mod:`.max_len`); None = unknown / no drafter."""
        return model_max_len(self.drafter, self.ctx.version)

    # ---- parallel layout ---------------------------------------------------------------------
    @cached_property
    def layout(self) -> Layout:
        """TP/PP/DP over nodes and the launch options vLLM refuses (:mod:`.layout`)."""
        return layout_of(self.options)

    # ---- scheduler ---------------------------------------------------------------------------
    @cached_property
    def world_size(self) -> int:
        return world_size(self.ctx.config.tensor_parallel_size, self.ctx.config.pipeline_parallel_size)

    @cached_property
    def batch_defaults(self) -> BatchDefaults:
        """``get_batch_defaults`` for ``vllm serve`` on this hardware (:mod:`.batch`)."""
        return batch_defaults(self.ctx.hardware, self.world_size, self.ctx.version)

    @cached_property
    def budget(self) -> Budget | None:
        """The scheduler budget vLLM resolves (:mod:`.batch`); None when a given value is invalid."""
        throughput = str(self.option("performance_mode", "") or "") == "throughput"
        return token_budget(self.ctx.config, self.batch_defaults, self.served_max_model_len, throughput)

    # ---- KV cache ----------------------------------------------------------------------------
    @cached_property
    def device_kv(self) -> DeviceKv | None:
        """KV-cache dtypes some attention backend of this release serves on the hardware, and
        whether fp8 KV works with causal / non-causal attention; None without hardware."""
        hw = self.ctx.hardware
        if hw is None:
            return None
        return DeviceKv(self.ctx.version, hw)

    @cached_property
    def prefix_caching(self) -> bool | None:
        """Whether vLLM caches prefixes: --enable-prefix-caching, else the release's default for
        the target's attention kind (:mod:`.prefix_cache`); None when neither is known."""
        return prefix_caching(self.ctx.config.enable_prefix_caching, self.ctx.target, self.ctx.version)

    @cached_property
    def mamba_cache_mode(self) -> str | None:
        """The Mamba cache mode vLLM runs for a target with recurrent layers ('none' / 'align' /
        'all'; :mod:`.prefix_cache`); None for other targets or when unknown."""
        c = self.ctx
        return mamba_cache_mode(self.option("mamba_cache_mode"), self.prefix_caching, c.target, c.version,
                                speculating=c.spec is not None and c.method is not None)

    @cached_property
    def memory_utilization(self) -> MemoryUtilization:
        """``gpu_memory_utilization`` as vLLM resolves it (:mod:`.memory_utilization`)."""
        c = self.ctx
        return memory_utilization(c.config.gpu_memory_utilization, self.options, c.hardware, c.version)

    @cached_property
    def block_size(self) -> int:
        """The target's KV block size (:mod:`.block_size`)."""
        c = self.ctx
        return block_size(c.config.block_size, c.hardware, c.target, c.version)


def build_view(ctx: "CheckContext") -> EngineView:
    """The view of ``ctx`` (facts are computed when first read)."""
    return EngineView(ctx)
