"""The reader's error."""

from __future__ import annotations

from unisim_core.contract.errors import InvalidInputError

__all__ = ["MjcfLiteError"]


class MjcfLiteError(InvalidInputError):
    """The MJCF file uses something outside the reader's subset.

    ``feature`` names the unsupported scene feature (e.g. ``"frictionloss"``) where the file is
    valid MJCF that the subset does not model; ``None`` for malformed input.
    """

    def __init__(self, message: str, feature: str | None = None) -> None:
        super().__init__(message)
        self.feature = feature
