"""Issue #25: the drafter catalog (presets/models/drafters*.yaml) -- every dedicated drafter names
its source, covers the methods the catalog can model from readable configs, resolves offline, is
offered by `wizard suggest` for the target it was trained for, and passes `wizard check` with it.

Not reached: the issue asks for >= 60 drafters; only configs read from public files may enter
(no field is invented), so the floor below is the count of entries with a readable source.
Medusa, MLP speculators and the Gemma 4 MTP assistants are absent: no readable config.json of such
a checkpoint (or of its target) was found in the indexed public sources."""

from __future__ import annotations

import json
import re

import pytest

from wizard import suggest
from wizard.cli import main
from wizard.models import catalog

DEDICATED = [e for e in catalog.entries() if e.role == "drafter"]
#: a source names a repository file at a commit, a public URL, an issue/PR, a code-index id or a fixture
_CITED = re.compile(r"(@ [0-9a-f]{7,40}|https?://|#\d+|read_file id \d+|tests/data/hf/|speculators format)")


def test_drafter_count_and_methods():
    assert catalog.load_errors() == []
    assert len(DEDICATED) >= 28  # floor: the readable-source entries (issue #25 asks for 60; see the module doc)
    methods = {m for e in DEDICATED for m in e.methods}
    assert methods >= {"eagle", "eagle3", "dflash", "dspark"}
    # draft_model: small same-family targets that declare draft_for
    assert any(e.draft_for for e in catalog.entries("drafter") if e.role == "target")
    # the block drafters live in their own file, after drafters.yaml (catalog order = suggestion order)
    files = [e.file for e in DEDICATED]
    assert files.index("drafters_block.yaml") > max(i for i, f in enumerate(files) if f == "drafters.yaml")


@pytest.mark.parametrize("entry", DEDICATED, ids=lambda e: e.id)
def test_every_drafter_names_its_source_and_verifier(entry):
    assert entry.source and _CITED.search(entry.source), entry.source
    assert entry.verifier and catalog.get_entry(entry.verifier) is not None, entry.verifier
    assert len(entry.methods) == 1
    if entry.acceptance:
        assert entry.acceptance.get("source"), "per-position acceptance needs the card/report it comes from"
    cfg = entry.raw["config"]
    assert isinstance(cfg, dict) and cfg.get("architectures")


@pytest.mark.parametrize("entry", DEDICATED, ids=lambda e: e.id)
def test_suggest_offers_each_drafter_for_its_target(entry):
    method = entry.methods[0]
    offered = [d.id for d in suggest.drafters_for(entry.verifier, method)]
    assert entry.id in offered, (entry.verifier, method, offered)
    # the verifier's own id and an alias-free lower-case spelling find it too
    assert entry.id in [d.id for d in suggest.drafters_for(entry.verifier.lower(), method)]


def test_block_drafter_facts():
    df = catalog.lookup("z-lab/Qwen3-8B-DFlash-b16")
    assert (df.hidden_size, df.num_hidden_layers, df.vocab_size, df.head_dim) == (4096, 5, 151936, 128)
    assert df.raw_config["dflash_config"] == {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]}
    assert df.tensors["fc.weight"].shape == [4096, 5 * 4096] and df.has_lm_head is False
    ds = catalog.lookup("deepseek-ai/dspark_qwen3_8b_block7")
    assert ds.architectures == ["Qwen3DSparkModel"] and ds.raw_config["block_size"] == 7
    assert ds.raw_config["markov_rank"] == 256 and ds.num_hidden_layers == 5


@pytest.mark.parametrize("entry", [e for e in DEDICATED if e.file == "drafters_block.yaml"], ids=lambda e: e.id)
def test_block_drafters_check_with_their_block_size(entry, capsys):
    """k = the drafter's block (DSpark) or block - 1 (DFlash, as the speculators converter sets it)."""
    block = entry.raw["config"]["block_size"]
    k = block if entry.methods[0] == "dspark" else block - 1
    spec = json.dumps({"method": entry.methods[0], "model": entry.id, "num_speculative_tokens": k})
    rc = main(["check", "--offline", "--vllm-version", "0.32.0", "--format", "json", "--", "vllm", "serve",
               entry.verifier, "--speculative-config", spec])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["verdict"] in ("ok", "warning"), data["findings"]
