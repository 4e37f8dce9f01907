"""Players by name in the engine's words: explanations, ledger reasons and error messages say ``P0``–``P3``
(seats in turn order); at a table with names, :func:`name_seats` puts each player's name in their place."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from scoring.results import Settlement

_SEAT = re.compile(r"\bP([0-3])\b")  # a seat as the engine writes it; rule sources in docstrings never reach text


def name_seats(text: str, names: Sequence[str] | None) -> str:
    """``"P1 has 0 concealed tiles"`` → ``"Bo has 0 concealed tiles"``; unchanged without names."""
    if not names:
        return text
    return _SEAT.sub(lambda m: names[int(m.group(1))], text)


def named_settlement(settlement: Settlement, names: Sequence[str] | None) -> Settlement:
    """The settlement with players named in its explanation and ledger reasons (seats stay numbers)."""
    if not names:
        return settlement
    ledger = tuple(dataclasses.replace(t, reason=name_seats(t.reason, names)) for t in settlement.ledger)
    return dataclasses.replace(settlement, ledger=ledger,
                               explanation=tuple(name_seats(line, names) for line in settlement.explanation))
