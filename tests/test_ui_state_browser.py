"""Issue 23 in Chromium: sequences the state machine (tests/test_ui_state_machine.py) found
defects with, replayed through the real UI; after every step the rendered page must be one
configuration -- each field shows what the server's state holds, and the Review step's exported
command parses back (wizard/io/argv.py) to the configuration the panel checked.

The same sequences run in-process in tests/test_ui_state_machine.py (``SEQUENCES``); here the
browser's own events (typing, picking, Apply, Undo) drive them. Waits are on the page reaching
the expected values (a safety-net timeout), never fixed sleeps.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]

SPEC = "speculative_config."
EAGLE_WITH_EAGLE3 = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                     "'{\"method\":\"eagle\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
TARGET_AS_HEAD = ("vllm serve Qwen/Qwen3-0.6B --speculative-config "
                  "'{\"method\":\"eagle3\",\"model\":\"Qwen/Qwen3-0.6B\",\"num_speculative_tokens\":2}'")

#: name -> steps, as :func:`ui_state_model.replay` runs them
SEQUENCES: dict[str, list[tuple[str, object]]] = {
    # eagle3 -> ngram dropped draft_tensor_parallel_size, its box kept showing 1
    "method_change_clears_dropped_fields": [("preset", "llama31-8b-eagle3-h100"), ("edit", (SPEC + "method", "ngram")),
                                            ("undo", None)],
    # an explicit eagle with an EAGLE-3 checkpoint passed silently (SD237), its fix is Apply-able
    "eagle_with_an_eagle3_checkpoint": [("import", EAGLE_WITH_EAGLE3), ("fix", "SD237"),
                                        ("edit", ("max_model_len", "32k"))],
    # the target named as its own EAGLE-3 head passed (SD238); the fix brings the catalog head
    "target_as_its_own_head": [("import", TARGET_AS_HEAD), ("fix", "SD238"), ("edit", ("kv_cache_dtype", "fp8"))],
}

#: fields read back from the page after each step
READ_BACK = ("model", SPEC + "method", SPEC + "model", SPEC + "num_speculative_tokens", SPEC + "draft_tensor_parallel_size",
             "max_model_len", "kv_cache_dtype", "tensor_parallel_size")


def _elem(path: str) -> str:
    return "f-" + path.replace(".", "-")


def _do(page, demo, act: str, arg) -> None:
    from ui_helpers import choose, fill, import_command, seq, tab, wait_seq_above

    ui = demo.wizard_ui
    if act == "preset":
        from wizard.ui import services

        label = next(lab for lab, name in services.presets() if name == arg)
        n = seq(page)
        page.locator("#sw-preset input").first.click()
        page.locator("[role=option]", has_text=label[:40]).first.click()
        wait_seq_above(page, n)
    elif act == "import":
        import_command(page, arg)
    elif act == "fix":
        n = seq(page)
        page.locator(f'.sw-card[data-rule="{arg}"] button.sw-fix').first.click()
        wait_seq_above(page, n)
    elif act == "undo":
        n = seq(page)
        page.locator("#sw-undo").first.click()
        wait_seq_above(page, n)
    elif act == "edit":
        path, value = arg
        step = {"model": "target", "max_model_len": "target", "kv_cache_dtype": "kv"}.get(path, "speculation")
        tab(page, step)
        if type(ui.fields[path]).__name__ == "Dropdown":
            choose(page, _elem(path), str(value))
        else:
            fill(page, _elem(path), str(value))
            page.locator(f"#{_elem(path)} textarea, #{_elem(path)} input").first.press("Tab")
    else:
        raise ValueError(act)


def _newest(demo) -> dict:
    states = list(demo.wizard_ui._latest.values())
    assert states, "no state committed yet"
    return states[-1]


def _shown(page, path: str) -> str:
    return page.evaluate("id => { const e = document.querySelector('#' + id + ' textarea, #' + id + ' input');"
                         " return e ? e.value : null; }", _elem(path))


def _page_agrees(page, demo) -> list[str]:
    """The disagreements between the rendered page and the server's state (empty: one configuration)."""
    from ui_state_model import _comparable

    from wizard.io.argv import parse_command
    from wizard.ui.state import coerce, field_value

    ui = demo.wizard_ui
    st = _newest(demo)
    out = []
    for path in READ_BACK:
        want = ui.form_value(st, path)
        want = "" if want is None else str(want)
        got = _shown(page, path)
        if got is None:
            continue  # not rendered (a hidden group)
        dropdown = type(ui.fields[path]).__name__ == "Dropdown"
        if not (got == want or (dropdown and want and want in got) or (dropdown and not want and got in ("", "none"))
                or (want and got.replace(".0", "") == want)
                # what the user typed stays shown when it reads as the state's value ('32k' = 32000),
                # the state machine's invariant: re-submitting the box changes nothing
                or (got and coerce(path, got) == field_value(st, path))):
            out.append(f"{path}: the page shows {got!r}, the state holds {want!r}")
    ev = ui.evaluate(st)
    cmd = page.evaluate("() => { const e = document.querySelector('#sw-exp-command textarea'); return e ? e.value : ''; }")
    if ev.config is not None:
        try:
            back = parse_command(cmd)
        except Exception as err:  # noqa: BLE001 - reported as a disagreement
            return out + [f"the exported command does not parse back: {err}: {cmd[:200]}"]
        if _comparable(back, ev.ctx.version) != _comparable(ev.config, ev.ctx.version):
            out.append(f"export {cmd[:300]} != the checked config {ev.config.to_dict()}")
    return out


def _settled(page, demo, timeout_s: float = 30.0) -> list[str]:
    """Wait (safety net ``timeout_s``) until the page agrees with the state; the disagreements left."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        problems = _page_agrees(page, demo)
        if not problems or time.monotonic() > deadline:
            return problems
        page.wait_for_timeout(200)


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence_in_chromium(name, tmp_path):
    from ui_helpers import browser, open_wizard, serve_app, tab

    with serve_app() as (demo, url), browser(tmp_path) as ctx:
        page = open_wizard(ctx, url)
        tab(page, "review")  # the exports render once the Review tab has been opened
        for i, (act, arg) in enumerate(SEQUENCES[name], 1):
            _do(page, demo, act, arg)
            tab(page, "review")
            problems = _settled(page, demo)
            assert not problems, f"{name} step {i} ({act} {arg!r:.80}): " + "; ".join(problems)
        if name == "method_change_clears_dropped_fields":
            assert "draft_tensor_parallel_size" in _newest(demo)["config"]["speculative_config"]  # Undo brought it back
        if name == "eagle_with_an_eagle3_checkpoint":
            st = _newest(demo)
            assert st["config"]["speculative_config"]["method"] == "eagle3" and st["config"]["max_model_len"] == 32000
        if name == "target_as_its_own_head":
            assert _newest(demo)["config"]["speculative_config"]["model"] == "AngelSlim/Qwen3-0.6B_eagle3"
