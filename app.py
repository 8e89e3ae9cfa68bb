"""`python app.py`: serve the SpecWizard UI on http://127.0.0.1:7860.

    python app.py [--port 7860] [--host 127.0.0.1] [--share] [--auth user:pass | --auth-file FILE]
                  [--allow-model-dir DIR ...] [--allow-unsafe-options]

Binds loopback by default. Reaching beyond loopback (--host other than 127.0.0.1/localhost/::1,
or --share) needs Gradio auth, because the UI can launch servers on this machine: without
--auth/--auth-file it refuses to start (exit code 2). The app checks the same itself at every
launch, however it is started (wizard/ui/guard.py). Without TLS (a reverse proxy with HTTPS), the
password crosses the network in clear text: prefer an SSH tunnel to a loopback-bound UI.

--allow-model-dir DIR (repeatable): local folders the UI may read and launch models from
(default: the current folder and the Hugging Face cache). --allow-unsafe-options: let the Launch
step start options that import code, read other files or widen the server's API
(--trust-remote-code, --tool-parser-plugin, --chat-template...). See docs/security.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def parse_auth(args: argparse.Namespace) -> list[tuple[str, str]] | None:
    """Credentials from --auth user:pass and/or --auth-file (one user:pass per line).

    Raises:
        SystemExit(2): malformed entry or unreadable file (message names the flag).
    """
    pairs: list[tuple[str, str]] = []
    items: list[tuple[str, str]] = []
    if args.auth:
        items.append(("--auth", args.auth))
    if args.auth_file:
        from wizard.io.safeio import InputRefused, read_text_file

        try:
            # a regular file of at most 64 KiB: a FIFO or /dev/zero is refused, not read forever
            text = read_text_file(args.auth_file, limit=AUTH_FILE_MAX_BYTES, what="--auth-file")
        except InputRefused as err:
            print(f"app.py: {err}", file=sys.stderr)
            sys.exit(2)
        except (OSError, ValueError) as err:
            print(f"app.py: --auth-file {args.auth_file}: cannot read ({getattr(err, 'strerror', None) or err})", file=sys.stderr)
            sys.exit(2)
        items += [(f"--auth-file line {i}", ln.strip()) for i, ln in enumerate(text.splitlines(), 1)
                  if ln.strip() and not ln.strip().startswith("#")]
    for flag, item in items:
        user, sep, pw = item.partition(":")
        if not sep or not user or not pw:
            print(f"app.py: {flag}: expected user:password (the password is not shown)", file=sys.stderr)
            sys.exit(2)
        pairs.append((user, pw))
    return pairs or None


AUTH_FILE_MAX_BYTES = 64 * 1024


def _port(text: str) -> int:
    """--port: a TCP port 1..65535 (Gradio/uvicorn would fail later with OverflowError)."""
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 6 or not 0 < int(t) < 65536:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a port number in 1..65535")
    return int(t)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python app.py", description="SpecWizard web UI")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1; others need --auth)")
    p.add_argument("--port", type=_port, default=7860)
    p.add_argument("--share", action="store_true", help="Gradio share link (needs --auth)")
    p.add_argument("--auth", metavar="USER:PASS", help="require this login")
    p.add_argument("--auth-file", metavar="FILE", help="file of user:password lines")
    p.add_argument("--allow-model-dir", metavar="DIR", action="append", default=None,
                   help="local folder the UI may read and launch models from (repeatable; default: the current "
                        "folder and the Hugging Face cache)")
    p.add_argument("--allow-unsafe-options", action="store_true",
                   help="let the Launch step start options that import code, read other files or widen the API "
                        "(--trust-remote-code, --tool-parser-plugin, --chat-template...)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    auth = parse_auth(args)
    exposed = args.share or args.host not in LOOPBACK
    if exposed and not auth:
        print("app.py: refusing to serve beyond loopback (--host %s%s) without authentication: the wizard can launch "
              "vLLM servers on this machine. Add --auth user:pass or --auth-file FILE." % (args.host, ", --share" if args.share else ""),
              file=sys.stderr)
        return 2
    from wizard.ui import build_app

    dirs = None
    if args.allow_model_dir:
        dirs = [str(Path(d).expanduser().resolve()) for d in args.allow_model_dir]
        missing = [d for d in dirs if not Path(d).is_dir()]
        if missing:
            print(f"app.py: --allow-model-dir {missing[0]}: not a folder", file=sys.stderr)
            return 2
    demo = build_app(allow_launch=True, allow_model_dirs=dirs, allow_unsafe_options=args.allow_unsafe_options)
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, auth=auth)
    return 0


if __name__ == "__main__":
    sys.exit(main())
