"""Plain-text reporting helpers shared by the command line and its reports (compare, bench, zoo)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

__all__ = ["table", "progress"]


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Left-aligned columns, a dashed rule under ``header``; cells are ``str()``-ed."""
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def progress(done: int, total: int, start: float, unit: str = "steps", label: str = "", stream=None) -> None:
    """Redraw one progress line ``[####   ] done/total unit  rate unit/s  label`` on ``stream``
    (stderr by default); ``start`` is the ``time.perf_counter()`` of the first item; a newline ends it."""
    stream = sys.stderr if stream is None else stream
    width = 30
    rate = done / max(time.perf_counter() - start, 1e-9)
    bar = "#" * int(done / max(total, 1) * width)
    stream.write(f"\r[{bar:<{width}}] {done}/{total} {unit}  {rate:,.2f} {unit}/s  {label}"[:160].ljust(100))
    if done == total:
        stream.write("\n")
    stream.flush()
