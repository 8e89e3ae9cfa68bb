"""``python -m wizard.ui [--port N] ...``: serve the UI (:func:`wizard.ui.main.main`)."""

import sys

from wizard.ui.main import main

sys.exit(main(prog="python -m wizard.ui"))
