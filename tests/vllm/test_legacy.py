"""wizard.vllm.legacy: the one list of legacy spec-decode spellings, generated from vLLM 0.8.2.

The importer (wizard.io.collector) and rule SD020 used to keep two hand-written lists that
disagreed (``speculative_disable_by_batch_size``: renamed by one, "no equivalent" for the other;
``draft_model``, which no vLLM release ever read). Both now read wizard/data/vllm/0.8/legacy_spec.json
(scripts/dump_vllm_legacy_spec.py over the vLLM 0.8.2 sdist).
"""

from __future__ import annotations

import json
from pathlib import Path

from wizard import api
from wizard.io.argv import parse_command
from wizard.vllm import legacy
from wizard.vllm.options import cli_vocabulary
from wizard.vllm.versions import parse_version, spec_fields

DATA = Path(__file__).resolve().parents[2] / "wizard" / "data" / "vllm" / "0.8" / "legacy_spec.json"


def test_generated_from_vllm_0_8_2():
    d = json.loads(DATA.read_text())
    assert d["vllm_version"] == "0.8.2" and d["generator"] == "scripts/dump_vllm_legacy_spec.py"
    # vllm 0.8.2 vllm/engine/arg_utils.py L1233: spec_config_dict = {"model": self.speculative_model, ...}
    assert len(legacy.SPEC_FLAGS) == 13
    assert legacy.SPEC_FLAGS["speculative_model"] == "model"
    assert legacy.SPEC_FLAGS["ngram_prompt_lookup_max"] == "prompt_lookup_max"
    assert legacy.SPEC_FLAGS["speculative_disable_by_batch_size"] == "disable_by_batch_size"
    assert legacy.SPEC_FLAGS["disable_logprobs_during_spec_decoding"] == "disable_logprobs"
    # vllm 0.8.2 vllm/config.py L2290: SpeculativeConfig.num_lookahead_slots returns num_speculative_tokens
    assert legacy.SPEC_KEY_RENAMES["num_lookahead_slots"] == "num_speculative_tokens"
    assert "draft_model" not in legacy.SPEC_KEY_RENAMES  # no vLLM release read a draft_model key
    # vllm 0.8.2 vllm/config.py L1930: disable_by_batch_size was a SpeculativeConfig field; 0.28+ dropped it
    assert "disable_by_batch_size" in legacy.SPEC_FIELDS_0_8
    assert "disable_by_batch_size" not in spec_fields(parse_version("0.32"))


def test_modern_key_follows_the_release():
    f32 = spec_fields(parse_version("0.32"))
    assert legacy.modern_spec_key("speculative_model", f32) == "model"
    assert legacy.modern_spec_key("speculative_disable_by_batch_size", f32) is None
    assert legacy.modern_spec_key("acceptance_method", f32) is None
    assert legacy.is_legacy_spec_key("acceptance_method") and not legacy.is_legacy_spec_key("num_speculative_tokenz")


def test_removed_store_true_flags_come_from_the_0_8_parser():
    cli = cli_vocabulary()
    # vllm 0.8.2 arg_utils.py L482 --use-v2-block-manager, L1837 --disable-log-requests (store_true)
    assert {"use_v2_block_manager", "enable_reasoning"} <= cli.store_true
    # --disable-log-requests: store_true in 0.8, a BooleanOptionalAction in 0.10-0.16 (their own
    # tables); the newest definition wins and still reads no value
    assert "disable_log_requests" in cli.boolean_optional
    assert "speculative_disable_mqa_scorer" in cli.store_true
    # vllm 0.8.2 arg_utils.py L888: --disable-logprobs-during-spec-decoding is a StoreBoolean (nargs='?')
    assert "disable_logprobs_during_spec_decoding" in cli.store_boolean
    # a dest newer releases define differently is read as the newest defines it
    assert "enable_chunked_prefill" in cli.boolean_optional and "enable_chunked_prefill" not in cli.store_boolean
    cfg = parse_command("vllm serve m --disable-log-requests org/stray --use-v2-block-manager")
    assert cfg.extra_args["disable_log_requests"] is True and cfg.extra_args["_positional"] == ["org/stray"]


def test_importer_and_sd020_agree_on_a_json_legacy_key():
    cfg = parse_command("vllm serve m --speculative-config "
                        "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4,"
                        "\"speculative_disable_by_batch_size\":8}'")
    assert cfg.speculative_config.model_extra == {"disable_by_batch_size": 8}
    (note,) = [n for n in cfg.import_notes if n.kind == "deprecated_flag"]
    assert note.detail["old"] == "speculative_config.speculative_disable_by_batch_size"
    report = api.check(cfg, vllm_version="0.32", allow_hub=False)
    (f,) = [f for f in report.findings if f.rule == "SD020"]
    assert f.fields == ["speculative_config.disable_by_batch_size"]
    # the release tables 0.10-0.16 know the key itself: the message names them
    assert "0.10-0.16 only" in f.message and "0.32 does not know it" in f.message
    assert [p.description for p in f.fixes] == ["Remove disable_by_batch_size"]
