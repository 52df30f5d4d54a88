"""`python -m unisim_core.plugin.worker module:factory` serves `factory` (see `server.serve`)."""

from __future__ import annotations

import importlib
import sys

from unisim_core.plugin.worker.server import connect, serve


def main(argv: list[str]) -> None:
    """Connect first (so import-time prints are already redirected), then import and serve."""
    if len(argv) != 1 or ":" not in argv[0]:
        raise SystemExit("usage: python -m unisim_core.plugin.worker package.module:factory")
    chan = connect()
    module, _, attr = argv[0].partition(":")
    factory = importlib.import_module(module)
    for part in attr.split("."):
        factory = getattr(factory, part)
    serve(factory, channel=chan)


if __name__ == "__main__":
    main(sys.argv[1:])
