"""The documented causes of ``unisim zoo``'s ``deviates`` cells: ``{(backend, model label): cause}``.

Each cause was measured (the deviation vanishes or shrinks with contacts disabled, with another
solver setting, ...) and is written up with its figures in the engine's page under ``docs/``;
the zoo's markdown shows it beside the cell, and a deviating cell without an entry is shown as
undocumented.
"""

from __future__ import annotations

__all__ = ["CAUSES"]

CAUSES: dict[tuple[str, str], str] = {}
