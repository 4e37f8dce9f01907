"""A table's history as CSV (one row per round, one column per player) or JSON; used by the API and the CLI."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from scoring.scorebook import outcome_words
from tables.repository import RoundRecord, TableRecord


def _cell(text: str) -> str:
    # A name such as "=SUM(A1)" would run as a formula in a spreadsheet; a leading quote keeps it text.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(table: TableRecord, rounds: Sequence[RoundRecord]) -> str:
    """``number, dealer, outcome, <player 0>, …, <player 3>``: each round's delta per player."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["number", "dealer", "outcome", *(_cell(p) for p in table.players)])
    for r in rounds:
        writer.writerow([r.number, _cell(table.players[r.dealer]), _cell(outcome_words(r.round, table.players)),
                         *r.deltas])
    return out.getvalue()


def to_json(table: TableRecord, rounds: Sequence[RoundRecord], by_view: bool = False) -> dict[str, Any]:
    """The table and its rounds; ``by_view``: as its view link shows it, without the table's id."""
    return {"table": table.view_dict() if by_view else table.to_dict(),
            "rounds": [{**r.to_dict(), "outcome": outcome_words(r.round, table.players)} for r in rounds]}
