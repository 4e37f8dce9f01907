"""How the pipeline says no: :class:`Refused` carries a machine-readable code and a message in plain words.

The shells turn it into their own shape (HTTP 422 ``{"error": {"code", "message"}}``, a CLI line and exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError


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


def field_path(loc: tuple[Any, ...]) -> str:
    """Where a request model found a problem: ``("body", "players", 2, "concealed")`` → ``players[2].concealed``
    (the "body" prefix says nothing to a client)."""
    parts = [p for p in loc if p not in ("body", "query", "path", "header", "cookie")] or list(loc)
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "request"


def problem_message(error: Any) -> str:
    """A pydantic error's message without pydantic's "Value error, " prefix (the engine's words stay)."""
    return str(error.get("msg", "")).removeprefix("Value error, ")


def validation_line(exc: ValidationError) -> str:
    """A request model's refusal in one line, as the HTTP service words it: the first problem, and how many more."""
    errors = exc.errors()
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{field_path(tuple(errors[0].get('loc', ())))}: {problem_message(errors[0])}{more}"
