"""How the pipeline says no: :class:`Refused` carries a machine-readable code and a message in plain words.

The shells turn it into their own shape (HTTP 422 ``{"error": {"code", "message"}}``, a CLI line and exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Refused(ValueError):
    """Input that makes an impossible hand or table (``code`` e.g. invalid_hand, invalid_table)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@contextmanager
def refusing(code: str = "invalid_hand") -> Iterator[None]:
    """Turn the ``ValueError`` an engine stage raises for malformed input into :class:`Refused` with ``code``,
    keeping the engine's wording."""
    try:
        yield
    except Refused:
        raise
    except ValueError as exc:
        raise Refused(code, str(exc)) from exc
