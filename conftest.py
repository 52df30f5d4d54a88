"""This repository's pytest settings (the session guards and the CI no-skip rule are the kit's plugin,
``unisim_conformance.guards``, and hold wherever pytest starts).

``-n 2 --dist loadfile`` (the README's suite command) hands out test files in ``testpaths`` order,
heaviest distributions first, so that the two workers finish together; pytest-xdist would otherwise
send the files with the most tests first and the long kit runs (two tests each) last.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "loadscopereorder", None):
        config.option.loadscopereorder = False
