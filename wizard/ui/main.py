"""The UI's launcher: ``python app.py`` (a checkout), ``python -m wizard ui`` or ``specwizard-ui``
(an installed wheel) serve the SpecWizard UI on http://127.0.0.1:7860.

    python app.py [--port 7860] [--host 127.0.0.1] [--share] [--auth USER] [--auth-file FILE]
                  [--allow-model-dir DIR ...] [--allow-unsafe-options]

Binds loopback by default. Reaching beyond loopback (--host other than a loopback address:
127.0.0.0/8 in any form the OS reads, such as 127.1, ::1 or localhost; or --share) needs Gradio auth, because the UI can launch servers on this machine: without
--auth/--auth-file it refuses to start (exit code 2). The app checks the same itself at every
launch, however it is started (wizard/ui/guard.py). Without TLS (a reverse proxy with HTTPS), the
password crosses the network in clear text: prefer an SSH tunnel to a loopback-bound UI.

The password is never taken from the command line (every local user sees it in ``ps``):
``--auth USER`` asks for USER's password (hidden, on the terminal) unless USER's password is in
``--auth-file FILE`` (``user:password`` lines) or in ``SPECWIZARD_AUTH=user:password`` (an
environment variable; set alone, it is a login too). ``--auth user:pass`` is refused (exit 2).

--allow-model-dir DIR (repeatable): local folders the UI may read and launch models from
(default: the current folder and the Hugging Face cache). --allow-unsafe-options: let the Launch
step start options that import code, read other files or widen the server's API
(--trust-remote-code, --tool-parser-plugin, --chat-template...). See docs/security.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard.io.safeio import InputRefused, read_text_file
from wizard.launch.errors import PortInUse
from wizard.launch.ports import check_port_free
from wizard.ui import build_app  # light: gradio is imported when the app is built
from wizard.ui.guard import bind_is_loopback

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


AUTH_ENV = "SPECWIZARD_AUTH"
"""Environment variable with one ``user:password`` login (read once, then removed from the
wizard's environment so the servers it launches do not inherit it)."""


#: how error lines start: the launcher as the user typed it (app.py, or wizard ui)
_PROG = "app.py"


def _fail(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def parse_auth(args: argparse.Namespace, environ=None, ask=None) -> list[tuple[str, str]] | None:
    """Logins from ``--auth-file`` (one user:password per line), ``$SPECWIZARD_AUTH``
    (user:password) and ``--auth USER`` (USER's password from those, else asked with ``ask``,
    :func:`getpass.getpass` on an interactive terminal). ``environ`` defaults to ``os.environ``.

    Raises:
        SystemExit(2): ``--auth`` with a password in it, a malformed entry, an unreadable file,
        or ``--auth USER`` with no password to be found and no terminal to ask on (the message
        names the flag, never the password).
    """
    import os

    environ = os.environ if environ is None else environ
    items: list[tuple[str, str]] = []
    if args.auth is not None and ":" in args.auth:
        _fail("--auth takes a user name only: a password on the command line is visible to every local user "
              "(ps, /proc). Use --auth USER (the password is asked for), SPECWIZARD_AUTH=user:password in the "
              "environment, or --auth-file FILE (user:password lines, chmod 600).")
    if args.auth is not None and not args.auth.strip():
        _fail("--auth: expected a user name")
    if args.auth_file:
        try:
            # a regular file of at most 64 KiB: a FIFO or /dev/zero is refused, not read forever
            text = read_text_file(args.auth_file, limit=AUTH_FILE_MAX_BYTES, what="--auth-file")
        except InputRefused as err:
            _fail(str(err))
        except (OSError, ValueError) as err:
            _fail(f"--auth-file {args.auth_file}: cannot read ({getattr(err, 'strerror', None) or err})")
        items += [(f"--auth-file line {i}", ln.strip()) for i, ln in enumerate(text.splitlines(), 1)
                  if ln.strip() and not ln.strip().startswith("#")]
    env_value = environ.pop(AUTH_ENV, None)  # the servers the wizard launches must not inherit it
    if env_value is not None:
        items.append((AUTH_ENV, env_value.strip("\r\n")))
    pairs: list[tuple[str, str]] = []
    for flag, item in items:
        user, sep, pw = item.partition(":")
        if not sep or not user or not pw:
            _fail(f"{flag}: expected user:password (the password is not shown)")
        pairs.append((user, pw))
    if args.auth is not None:
        user = args.auth.strip()
        if not any(u == user for u, _ in pairs):
            pw = _ask_password(user, ask)
            pairs.append((user, pw))
    return pairs or None


def _ask_password(user: str, ask=None) -> str:
    """USER's password from the terminal (not echoed); exit 2 without one."""
    if ask is None:
        if not (sys.stdin is not None and sys.stdin.isatty()):
            _fail(f"--auth {user}: no terminal to ask for the password on; put {user}:PASSWORD in "
                  f"SPECWIZARD_AUTH or in an --auth-file FILE (chmod 600)")
        import getpass

        ask = getpass.getpass
    try:
        pw = ask(f"Password for {user}: ")
    except (EOFError, KeyboardInterrupt):
        pw = ""
    if not pw:
        _fail(f"--auth {user}: no password given")
    return pw


AUTH_FILE_MAX_BYTES = 64 * 1024


def _port(text: str) -> int:
    """--port: a TCP port 1..65535 (Gradio/uvicorn would fail later with OverflowError)."""
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 6 or not 0 < int(t) < 65536:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a port number in 1..65535")
    return int(t)


def build_parser(prog: str = "python app.py") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="SpecWizard web UI")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1; others need --auth)")
    p.add_argument("--port", type=_port, default=7860)
    p.add_argument("--share", action="store_true", help="Gradio share link (needs --auth)")
    p.add_argument("--auth", metavar="USER", help="require a login as USER; the password is asked for on the terminal "
                   "(or taken from --auth-file / $SPECWIZARD_AUTH), never given here")
    p.add_argument("--auth-file", metavar="FILE", help="file of user:password lines (chmod 600)")
    p.add_argument("--allow-model-dir", metavar="DIR", action="append", default=None,
                   help="local folder the UI may read and launch models from (repeatable; default: the current "
                        "folder and the Hugging Face cache)")
    p.add_argument("--allow-unsafe-options", action="store_true",
                   help="let the Launch step start options that import code, read other files or widen the API "
                        "(--trust-remote-code, --tool-parser-plugin, --chat-template...)")
    return p


def main(argv: list[str] | None = None, prog: str = "python app.py") -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), build the app and serve it until stopped."""
    global _PROG
    _PROG = "app.py" if prog == "python app.py" else prog
    args = build_parser(prog).parse_args(argv)
    auth = parse_auth(args)
    exposed = args.share or not bind_is_loopback(args.host)  # 127.1, 127.0.0.2, ::1 ... as the OS reads them
    if exposed and not auth:
        print(f"{_PROG}: refusing to serve beyond loopback (--host %s%s) without authentication: the wizard can launch "
              "vLLM servers on this machine. Add --auth USER (asks for the password), --auth-file FILE or "
              "SPECWIZARD_AUTH=user:password." % (args.host, ", --share" if args.share else ""),
              file=sys.stderr)
        return 2
    dirs = None
    if args.allow_model_dir:
        dirs = [str(Path(d).expanduser().resolve()) for d in args.allow_model_dir]
        missing = [d for d in dirs if not Path(d).is_dir()]
        if missing:
            print(f"{_PROG}: --allow-model-dir {missing[0]}: not a folder", file=sys.stderr)
            return 2
    busy = _port_in_use(args.host, args.port)  # before Gradio, whose own error is a traceback naming its internals
    if busy:
        print(f"{_PROG}: {busy}", file=sys.stderr)
        return 2
    demo = build_app(allow_launch=True, allow_model_dirs=dirs, allow_unsafe_options=args.allow_unsafe_options)
    try:
        demo.launch(server_name=args.host, server_port=args.port, share=args.share, auth=auth)
    except OSError as err:  # taken between the test above and Gradio's bind, or refused by the OS
        print(f"{_PROG}: cannot serve on {args.host}:{args.port} ({_one_line(err)}); pass --port N with a free port",
              file=sys.stderr)
        return 2
    return 0


def _port_in_use(host: str, port: int) -> str | None:
    """The one-line refusal when ``host:port`` is already bound (another UI, a vLLM server), naming
    a free port; None when it is free or the test cannot tell (Gradio then reports it)."""
    try:
        check_port_free(host, port)
    except PortInUse as err:
        alt = f" (port {err.free_port} is free)" if err.free_port else ""
        return f"port {port} on {host} is already in use; pass --port N to serve on another port{alt}"
    except Exception:  # an address the bind test cannot use ('[::1]'): leave the verdict to Gradio
        return None
    return None


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]



def cli() -> int:
    """``specwizard-ui`` (``[project.scripts]``)."""
    return main(prog="specwizard-ui")


if __name__ == "__main__":
    sys.exit(main(prog="python -m wizard.ui"))
