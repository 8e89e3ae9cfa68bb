"""Issue 23: one state model, proven by a stateful property test.

A hypothesis ``RuleBasedStateMachine`` drives one browser tab of the wizard
(:class:`ui_state_model.Tab`: the functions the Gradio events call, their outputs applied as the
browser applies them) through random sequences of target / method / drafter / k / KV dtypes /
hardware / release / import of a ``vllm serve`` command / preset / Apply of a fix / Undo / Save
and Load session. After every step the tab must be one configuration: each field shows what
the state holds, the exported command parses back (wizard/io/argv.py) to the configuration the
panel checked, the drafter fits the method and the target unless a finding says it does not,
and no handler or step widget failed (:meth:`ui_state_model.Tab.disagreements`).

500 sequences (``derandomize``: the same ones on every run, so CI is reproducible); the step
count is a budget sized for a 2-core machine, not a timing assertion. The defects the machine
found have example-based tests below (and replays in Chromium: tests/test_ui_state_browser.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

sys.path.insert(0, str(Path(__file__).parent))

from ui_state_model import ErrorLog, Tab, app, replay  # noqa: E402

SPEC = "speculative_config."
LLAMA, QWEN, MIMO = "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B", "XiaomiMiMo/MiMo-7B-RL"
TARGETS = [LLAMA, QWEN, MIMO, "openai/gpt-oss-20b", "deepseek-ai/DeepSeek-V3", "google/gemma-3-1b-it", "Qwen/Qwen3-0.6B",
           "zai-org/GLM-4.5-Air", "", "/models/not-there"]
METHODS = ["none", "eagle", "eagle3", "ngram", "suffix", "mtp", "dflash", "dspark", "draft_model", "medusa"]
DRAFTERS = ["yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "AngelSlim/Qwen3-8B_eagle3",
            "RedHatAI/Qwen3-8B-speculator.eagle3", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", "Qwen/Qwen3-0.6B",
            "meta-llama/Llama-3.2-1B-Instruct", "/models/Qwen3-8B-DFlash-b16", "/models/my-own-eagle3", ""]
KV = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16", "nvfp4", "fp8_ds_mla"]
GPUS = ["H100-SXM", "L4", "V100-32GB", "B300", "RTX-4090", "CPU", "unknown"]
VERSIONS = ["0.28.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]
PRESETS = ["llama31-8b-eagle3-h100", "qwen3-8b-eagle3-h100", "mimo-7b-mtp-h100", "devstral-small-suffix-h100",
           "llama31-8b-ngram-l4", "gpt-oss-120b-eagle3-h100", "llama31-70b-draft-llama32-1b-h100x4"]

#: the other fields a user edits, with values typed or picked (some ill-typed: kept and reported)
OTHER = {
    "dtype": ["(default)", "auto", "bfloat16", "float16", "bf16"],
    "max_model_len": ["", "4096", "32k", "131072", "abc"],
    "gpu_memory_utilization": ["", "0.9", "0.95", "1.5"],
    "enable_prefix_caching": ["(default)", "true", "false"],
    "enforce_eager": [True, False],
    "kv_sharing_fast_prefill": [True, False],
    SPEC + "prompt_lookup_min": ["", "2", "5"],
    SPEC + "prompt_lookup_max": ["", "4", "1"],
    SPEC + "suffix_decoding_max_tree_depth": ["", "24", "x"],
    "acceptance": ["", "0.8, 0.6, 0.4", "0.7", "2"],
    "extra_args": ["{}", '{"seed": 1}', '{"nnodes": 2}', "{not json"],
}
k_values = st.one_of(st.integers(-1, 12), st.none(), st.sampled_from([2.0, 2.5, 64, 1e6]))


def command(target: str, method: str, drafter: str, k, kv: str) -> str:
    """A `vllm serve` command as a user pastes it."""
    import json

    spec: dict = {}
    if method != "none":
        spec["method"] = method
    if drafter:
        spec["model"] = drafter
    if k is not None:
        spec["num_speculative_tokens"] = k
    parts = ["vllm", "serve", target or LLAMA]
    if kv != "auto":
        parts += ["--kv-cache-dtype", kv]
    if spec:
        parts += ["--speculative-config", "'" + json.dumps(spec) + "'"]
    return " ".join(parts)


class WizardTab(RuleBasedStateMachine):
    """One tab of the wizard under random user actions."""

    def __init__(self) -> None:
        super().__init__()
        self.log = ErrorLog().__enter__()
        self.tab = Tab(app())

    def teardown(self) -> None:
        self.tab.close()
        self.log.__exit__(None, None, None)

    @initialize(model=st.sampled_from(TARGETS[:4]), gpu=st.sampled_from(GPUS[:3]))
    def start(self, model, gpu):
        self.tab.edit("gpu.name", gpu)
        self.tab.edit("model", model)

    # ---- the user's choices -------------------------------------------------------------------
    @rule(model=st.sampled_from(TARGETS), catalog=st.booleans())
    def target_model(self, model, catalog):
        if catalog and model and not model.startswith("/"):
            self.tab.pick_catalog(model)
        else:
            self.tab.edit("model", model)

    @rule(method=st.sampled_from(METHODS))
    def method(self, method):
        self.tab.edit(SPEC + "method", method)

    @rule(data=st.data())
    def drafter(self, data):
        if not self.tab.visible(SPEC + "model"):
            return  # hidden: the user cannot pick one
        offered = [c for c in self.tab.choices.get(SPEC + "model", []) if c]
        self.tab.edit(SPEC + "model", data.draw(st.sampled_from(offered + DRAFTERS) if offered else st.sampled_from(DRAFTERS)))

    @rule(k=k_values)
    def k(self, k):
        if self.tab.visible(SPEC + "num_speculative_tokens"):
            self.tab.edit(SPEC + "num_speculative_tokens", k)

    @rule(kv=st.sampled_from(KV), drafter_side=st.booleans())
    def kv_dtype(self, kv, drafter_side):
        if drafter_side:
            self.tab.edit(SPEC + "kv_cache_dtype", "inherit" if kv == "auto" else kv)
        else:
            self.tab.edit("kv_cache_dtype", kv)

    @rule(gpu=st.sampled_from(GPUS), count=st.sampled_from([1, 1, 2, 4, 8]))
    def hardware(self, gpu, count):
        self.tab.edit("gpu.name", gpu)
        self.tab.edit("gpu.count", count)

    @rule(version=st.sampled_from(VERSIONS))
    def release(self, version):
        self.tab.edit("vllm_version", version)

    @rule(tp=st.sampled_from(["", "1", "2", "4", "3"]), draft_tp=st.sampled_from(["", "1", "2"]))
    def parallel(self, tp, draft_tp):
        self.tab.edit("tensor_parallel_size", tp)
        if self.tab.visible(SPEC + "draft_tensor_parallel_size"):
            self.tab.edit(SPEC + "draft_tensor_parallel_size", draft_tp)

    @rule(data=st.data(), path=st.sampled_from(sorted(OTHER)))
    def other_field(self, data, path):
        if self.tab.visible(path):
            self.tab.edit(path, data.draw(st.sampled_from(OTHER[path])))

    # ---- whole-configuration events ------------------------------------------------------------
    @rule(model=st.sampled_from(TARGETS[:-2]), method=st.sampled_from(METHODS), drafter=st.sampled_from(DRAFTERS),
          k=st.one_of(st.none(), st.integers(1, 8)), kv=st.sampled_from(KV[:3]))
    def import_command(self, model, method, drafter, k, kv):
        self.tab.import_command(command(model, method, drafter, k, kv))

    @rule(name=st.sampled_from(PRESETS))
    def preset(self, name):
        self.tab.preset(name)

    @rule(data=st.data())
    def apply_fix(self, data):
        fixes = self.tab.fixes()
        if fixes:
            self.tab.apply_fix(*data.draw(st.sampled_from(fixes)))

    @rule()
    def new_configuration(self):
        self.tab.new()

    @rule()
    def undo(self):
        self.tab.undo()

    @rule()
    def save_and_load(self):
        self.tab.save_and_load()

    # ---- the invariant ---------------------------------------------------------------------------
    @invariant()
    def one_configuration(self):
        problems = self.tab.disagreements() + [f"a handler or step widget failed: {r}" for r in self.log.records]
        assert not problems, "\n".join(problems[:6])


WizardTab.TestCase.settings = settings(max_examples=500, stateful_step_count=6, deadline=None, derandomize=True,
                                       database=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])
test_wizard_tab_is_one_configuration = WizardTab.TestCase


# ---- the defects the machine found, one example each --------------------------------------------------

@pytest.fixture()
def tab():
    with ErrorLog() as log:
        t = Tab(app())
        yield t
        assert not log.records


def test_method_change_clears_the_fields_it_drops(tab):
    """eagle3 -> ngram dropped draft_tensor_parallel_size from the state (ngram runs no drafter)
    but its box kept showing 1: the event now sends every field the method change rewrote."""
    tab.preset("llama31-8b-eagle3-h100")
    assert tab.form[SPEC + "draft_tensor_parallel_size"] == "1"
    tab.edit(SPEC + "method", "ngram")
    assert "draft_tensor_parallel_size" not in tab.state["config"]["speculative_config"]
    assert tab.form[SPEC + "draft_tensor_parallel_size"] == ""
    assert not tab.disagreements()


def test_replayed_sequences_agree(tab):
    from test_ui_state_browser import SEQUENCES

    for name, steps in SEQUENCES.items():
        assert not replay(tab, steps), name


def test_hidden_spec_box_emptied_does_not_bring_back_the_stash(tab):
    """method none puts the speculative config aside; an emptied spec box (a change event fired by
    an update of a hidden box) brought it back while the method still showed none."""
    from wizard.ui.state import set_field

    tab.preset("mimo-7b-mtp-h100")
    tab.edit(SPEC + "method", "none")
    st = set_field(tab.state, SPEC + "draft_tensor_parallel_size", "")
    assert "speculative_config" not in st["config"] and st["stash"]["speculative_config"]["method"] == "mtp"
    tab.edit(SPEC + "method", "mtp")  # choosing a method again still brings it back
    assert tab.state["config"]["speculative_config"]["method"] == "mtp"
    assert not tab.disagreements()


def test_max_model_len_takes_what_vllm_takes(tab):
    """`--max-model-len 32k` is 32000 for vLLM (human_readable_int); the box kept '32k' as an
    ill-typed value while the exported command read back as 32000."""
    tab.preset("llama31-8b-eagle3-h100")
    tab.edit("max_model_len", "32k")
    assert tab.state["config"]["max_model_len"] == 32000
    assert "--max-model-len 32000" in tab.exports["exp_command"]
    tab.edit("max_model_len", "32K")
    assert tab.state["config"]["max_model_len"] == 32768
    tab.edit("max_model_len", "lots")  # what vLLM refuses stays as typed, reported
    from wizard.ui.state import config_of

    assert config_of(tab.state).invalid_values == {"max_model_len": "lots"}
    assert not tab.disagreements()


def test_ngram_with_a_drafter_model_says_it_is_ignored(tab):
    """An imported ngram config naming a drafter checkpoint: vLLM never loads it (SD071 now says so)."""
    tab.import_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                       "'{\"method\":\"ngram\",\"model\":\"yuhuili/EAGLE-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    ev = tab.ui.evaluate(tab.state)
    sd071 = [f for f in ev.report.findings if f.rule == "SD071"]
    assert sd071 and "speculative_config.model" in sd071[0].fields and "model" in sd071[0].message
    tab.apply_fix("SD071", sd071[0].fixes[0].description)
    assert "model" not in tab.state["config"]["speculative_config"]
    assert not tab.disagreements()


def test_sd500_on_one_gpu_states_tp_and_offers_more_gpus(tab):
    """70B on one H100: SD500 said neither that it planned with TP 1 nor how to fit; its fix now
    splits over 4 GPUs and Apply raises the GPU count with it."""
    tab.import_command("vllm serve meta-llama/Llama-3.1-70B-Instruct")
    tab.edit("gpu.name", "H100-SXM")
    tab.edit("gpu.count", 1)
    ev = tab.ui.evaluate(tab.state)
    sd500 = next(f for f in ev.report.findings if f.rule == "SD500")
    assert "tensor_parallel_size 1" in sd500.message and "one GPU holds the whole model" in sd500.message
    fix = next(p for p in sd500.fixes if "tensor_parallel_size" in p.set)
    assert fix.set == {"tensor_parallel_size": 4} and "needs 4 x H100-SXM" in fix.description
    tab.apply_fix("SD500", fix.description)
    assert tab.state["gpu"]["count"] == 4 and tab.form["gpu.count"] == 4
    assert "SD500" not in [f.rule for f in tab.ui.evaluate(tab.state).report.findings]
    assert not tab.disagreements()


def test_kv_step_shows_the_drafter_in_the_target_dtype(tab):
    """The KV step showed the EAGLE-3 head's own float16 under a bfloat16 target; vLLM builds the
    draft model with the target's dtype (vllm/config/speculative.py 0.32 L1301). The shown dtype
    comes from the core (ctx.view.drafter_dtype)."""
    from wizard.ui.steps import kv

    tab.preset("llama31-8b-eagle3-h100")
    ev = tab.ui.evaluate(tab.state)
    assert ev.ctx.drafter.torch_dtype == "float16" and ev.ctx.view.model_dtype == "bfloat16"
    assert ev.ctx.view.drafter_dtype == "bfloat16"
    md = kv.kv_md(ev)
    assert "drafter **bfloat16**" in md and "float16 is not used" in md
    drafter_backend = next(line for line in md.splitlines() if line.startswith("- Drafter"))
    assert "dtype=bfloat16" in drafter_backend and "dtype=float16" not in drafter_backend
