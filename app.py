"""`python app.py`: serve the SpecWizard UI on http://127.0.0.1:7860 (a checkout's launcher).

    python app.py [--port 7860] [--host 127.0.0.1] [--share] [--auth USER] [--auth-file FILE]
                  [--allow-model-dir DIR ...] [--allow-unsafe-options]

The launcher itself lives in the package, :mod:`wizard.ui.main` (options, the loopback/auth
guard, how the password is read), so an installed wheel serves the same UI with
``python -m wizard ui`` or ``specwizard-ui``.
"""

from __future__ import annotations

import sys

from wizard.ui.main import AUTH_ENV, AUTH_FILE_MAX_BYTES, LOOPBACK, build_parser, main, parse_auth  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
