"""Issue 20, end to end with the real CPU vLLM: a model folder whose ``config.json`` has an
``auto_map`` into its own ``configuration_*.py``, and ``--trust-remote`` (an abbreviation vLLM's
parser expands to ``--trust-remote-code``).

* Through the UI's HTTP API (import the command, press Launch): refused, no process started, the
  folder's Python never imported.
* With the opt-in (``policy=PathPolicy(allow_unsafe_options=True)``), the same configuration is
  launched by the real vLLM, and the folder's Python *is* imported: the marker file appears. So
  the refusal above is what kept the code from running, not a launch that could not have
  loaded it anyway.

The marker is the event waited on (a generous cap, never a schedule).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psutil
import pytest

from factory import make_tiny_llama
from wizard.io.argv import parse_command
from wizard.launch import launch
from wizard.security import PathPolicy

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1800)]
CAP = 600.0

CONFIGURATION = '''
import pathlib
pathlib.Path({marker!r}).write_text("imported")
from transformers import LlamaConfig


class EvilConfig(LlamaConfig):
    model_type = "llama"
'''


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "imported.txt"
    model = make_tiny_llama(tmp_path / "remote-code-model",
                            extra_config={"auto_map": {"AutoConfig": "configuration_evil.EvilConfig"}})
    (model / "configuration_evil.py").write_text(CONFIGURATION.format(marker=str(marker)))
    return model, marker


def _reapers() -> list[int]:
    out = []
    for c in psutil.Process().children(recursive=True):
        try:
            if any("reaper.py" in a or "api_server" in a or a == "serve" for a in c.cmdline()):
                out.append(c.pid)
        except psutil.Error:
            pass
    return out


def test_abbreviated_trust_remote_code_from_the_ui_is_refused_and_runs_nothing(tmp_path):
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from hostile import UiServer

    model, marker = _folder(tmp_path)
    cmd = f"vllm serve {model} --trust-remote --enforce-eager --max-model-len 512"
    srv = UiServer(allow_model_dirs=[str(tmp_path)])
    try:
        sess = "e2e-trust-remote"
        n = len(srv.endpoints["do_import_cmd"])
        event, _ = srv.call("do_import_cmd", [None] * (n - 1) + [cmd], session=sess)
        assert event == "complete"
        ui = srv.demo.wizard_ui
        cfg = ui.newest(sess)["config"]
        assert cfg["model"] == str(model), cfg
        event, text = srv.call("do_launch", [True], session=sess)
        assert event == "complete" and "Not launched" in text, text[:800]
        assert "--trust-remote-code" in text and "--allow-unsafe-options" in text
        assert "server" not in ui.newest(sess)
        assert _reapers() == []  # nothing was started
        assert not marker.exists()  # and the folder's Python never ran
    finally:
        srv.close()


def test_with_the_opt_in_the_real_vllm_does_import_the_folders_code(tmp_path):
    model, marker = _folder(tmp_path)
    cfg = parse_command(f"vllm serve {model} --trust-remote --enforce-eager --max-model-len 512")
    assert cfg.extra_args.get("trust_remote") is True or cfg.extra_args.get("trust_remote_code") is True, cfg.extra_args
    h = launch(cfg, kv_cache_space_gib=1, log_dir=tmp_path / "logs", allow_hub=False, force=True,
               policy=PathPolicy(model_dirs=[str(tmp_path)], allow_unsafe_options=True))
    try:
        deadline = time.monotonic() + CAP
        while not marker.exists() and time.monotonic() < deadline and h.state in ("starting", "healthy"):
            time.sleep(0.2)
        assert marker.exists(), ("vLLM never imported the folder's configuration_evil.py", h.logs(30))
        assert marker.read_text() == "imported"
    finally:
        h.stop(grace=10)
    assert h.remaining_processes() == []
    json.dumps(h.status())  # the handle's summary stays JSON-able
