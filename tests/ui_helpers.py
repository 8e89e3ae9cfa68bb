"""Helpers for the UI browser tests and benchmarks/ui_latency.py: serve the app in-process on a
free loopback port, drive Debian chromium with Playwright."""

from __future__ import annotations

import socket
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(**kw):
    from wizard.ui import build_app

    demo = build_app(**kw)
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True, show_error=True)
    try:
        yield demo, f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@contextmanager
def browser(tmp_dir: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_dir), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                   headless=True, viewport={"width": 1500, "height": 1000},
                                                   accept_downloads=True)
        try:
            yield ctx
        finally:
            ctx.close()


def open_wizard(ctx, url: str):
    page = ctx.new_page()
    page.set_default_timeout(60000)  # a safety net for loaded CI machines, never the thing under test
    page.goto(url)
    page.wait_for_selector("#sw-summary-inner", timeout=30000)
    wait_seq_above(page, 0, timeout=30000)  # the restore-on-load check has run
    page.wait_for_timeout(300)
    return page


def seq(page) -> int:
    return int(page.locator("#sw-summary-inner").get_attribute("data-seq") or 0)


def wait_seq_above(page, n: int, timeout: float = 60000) -> None:
    page.wait_for_function(
        "n => { const e = document.querySelector('#sw-summary-inner'); return e && +e.dataset.seq > n; }",
        arg=n, timeout=timeout)


_STATE_KEY = "specwizard-state"
_SECRET_JS = ("k => { const c = (window.gradio_config || {}).components || [];"
              " const b = c.find(x => x.props && x.props.storage_key === k);"
              " return [b ? b.props.secret : null, localStorage.getItem(k)]; }")


def _cryptojs_decrypt(stored: str, secret: str) -> str:
    """Gradio's BrowserState stores ``b64(iv):CryptoJS.AES.encrypt(json, sha256hex(secret))``; a
    string key makes CryptoJS derive key and IV from the passphrase (OpenSSL ``Salted__`` format,
    EVP_BytesToKey with MD5), so the first part is not used."""
    import base64
    import hashlib

    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    blob = base64.b64decode(stored.split(":", 1)[1])
    assert blob[:8] == b"Salted__"
    salt, data = blob[8:16], blob[16:]
    passphrase = hashlib.sha256(secret.encode()).hexdigest().encode()
    derived, block = b"", b""
    while len(derived) < 48:
        block = hashlib.md5(block + passphrase + salt).digest()
        derived += block
    dec = Cipher(algorithms.AES(derived[:32]), modes.CBC(derived[32:48])).decryptor()
    unpad = padding.PKCS7(128).unpadder()
    return (unpad.update(dec.update(data) + dec.finalize()) + unpad.finalize()).decode()


def saved_state(page):
    """The wizard's state as the browser saved it (localStorage), decrypted; None before a save."""
    import json

    secret, stored = page.evaluate(_SECRET_JS, _STATE_KEY)
    if not secret or not stored:
        return None
    return json.loads(_cryptojs_decrypt(stored, secret))


def wait_saved(page, predicate, timeout: float = 60.0) -> dict:
    """Wait until the browser's saved copy of the state satisfies ``predicate`` (before a
    reload: the copy is written after the panel update, asynchronously). The timeout is a
    safety net; the test waits on the saved value itself."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        st = saved_state(page)
        if st is not None and predicate(st):
            return st
        assert time.monotonic() < deadline, f"the browser never saved the expected state: {st}"
        page.wait_for_timeout(100)


def tab(page, step_id: str) -> None:
    page.locator(f"button[role=tab][id*='{step_id}'], button[role=tab]:has-text('{_LABELS[step_id]}')").first.click()
    page.wait_for_timeout(400)


_LABELS = {"hardware": "Hardware", "target": "Target", "speculation": "Speculation", "kv": "KV cache",
           "plan": "Plan", "review": "Review", "launch": "Launch"}


def fill(page, elem_id: str, text: str) -> None:
    """Type into a Textbox (fires .input) and wait for the findings panel to update."""
    n = seq(page)
    box = page.locator(f"#{elem_id} textarea, #{elem_id} input").first
    box.fill(text[:-1])  # fill() alone does not fire Gradio's input event: type the last key
    box.press_sequentially(text[-1:])
    wait_seq_above(page, n)


def choose(page, elem_id: str, value: str) -> None:
    """Pick ``value`` in a Dropdown (by its option text) and wait for the panel update."""
    inp = page.locator(f"#{elem_id} input").first
    if inp.input_value() == value:  # nothing changes, so no check runs: nothing to wait for
        return
    n = seq(page)
    inp.click()
    inp.fill(value)
    opt = page.locator("[role=option]", has_text=value).first
    if opt.count():
        opt.click()
    else:
        inp.press("Enter")
    wait_seq_above(page, n)


def type_text(page, selector: str, text: str) -> None:
    """Replace a text field's value as a user does: keys (Playwright's ``fill()`` alone does not
    reach Gradio's value, so a button pressed next may send the old one), then Tab (blur)."""
    box = page.locator(selector).first
    box.click()
    box.fill(text[:-1])
    box.press_sequentially(text[-1:])
    box.press("Tab")
    page.wait_for_function("([s, v]) => document.querySelector(s).value === v", arg=[selector, text])


def import_command(page, text: str, timeout: float = 120000) -> None:
    """Open the import row, type ``text`` (the last key pressed, so Gradio sees an edit) and press
    Enter (the UI imports only on Enter or the Import button, never while typing); wait for the
    panel to show the imported configuration."""
    page.locator("#sw-import-acc").click()
    box = page.locator("#sw-import-cmd textarea")
    box.wait_for(state="visible")
    n = seq(page)
    box.fill(text[:-1])
    box.press_sequentially(text[-1])
    box.press("Enter")
    wait_seq_above(page, n, timeout=timeout)


def check(page, elem_id: str, on: bool = True) -> None:
    n = seq(page)
    box = page.locator(f"#{elem_id} input[type=checkbox]").first
    box.check() if on else box.uncheck()
    wait_seq_above(page, n)


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    p = SHOTS / f"{name}.png"
    page.screenshot(path=str(p), full_page=True)
    return p


@contextmanager
def handler_log():
    """Records of the wizard's handler guard (``wizard.ui``: a handler that failed and was
    answered with a skip) and of Gradio's own loggers, while the block runs."""
    import logging

    records: list[logging.LogRecord] = []

    class _Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    h = _Keep(level=logging.WARNING)
    loggers = [logging.getLogger(n) for n in ("wizard.ui", "gradio", "uvicorn.error")]
    for lg in loggers:
        lg.addHandler(h)
    try:
        yield records
    finally:
        for lg in loggers:
            lg.removeHandler(h)


def assert_no_traceback(capfd, records) -> None:
    """The server (served in this process) wrote no traceback and no handler failed."""
    out, err = capfd.readouterr()
    text = out + err
    assert "Traceback (most recent call last)" not in text, text[-4000:]
    assert "Exception in ASGI application" not in text, text[-4000:]
    bad = [r.getMessage() for r in records if r.exc_info or r.name == "wizard.ui"]
    assert not bad, bad
