"""A table's history as CSV (one row per round, one column per player) or JSON; used by the API and the CLI."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from pipeline.models import SettleRequest
from pipeline.table_models import ExportedRound, RoundOut, TableExport, TableOut, TableView
from scoring.scorebook import outcome_words
from tables.repository import RoundRecord, TableRecord

BOM = "\ufeff"  # Excel reads a CSV as UTF-8 (the players' Chinese names) only after this mark


def _cell(text: str) -> str:
    # A name such as "=SUM(A1)" would run as a formula in a spreadsheet; a leading quote keeps it text.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _hand_type(r: RoundRecord) -> tuple[str, str]:
    """(hand type, fan) of a round's winners, ``平胡 (plain win)``; empty without a win."""
    wins = r.summary.wins
    return (" / ".join(f"{w.hand_type.zh} ({w.hand_type.en})" for w in wins),
            " / ".join(str(w.fan) for w in wins))


def to_csv(table: TableRecord, rounds: Sequence[RoundRecord]) -> str:
    """``number, dealer, outcome, hand type, fan, <player 0>, …, <player 3>, <player 0> total, …``: each round's
    delta and running total per player, then a ``total`` row; UTF-8 with a byte-order mark."""
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out, lineterminator="\r\n")
    names = [_cell(p) for p in table.players]
    writer.writerow(["number", "dealer", "outcome", "hand type", "fan", *names,
                     *(_cell(f"{p} total") for p in table.players)])
    for r in rounds:
        writer.writerow([r.number, _cell(table.players[r.dealer]), _cell(outcome_words(r.round.entered(), table.players)),
                         *_hand_type(r), *r.deltas, *r.totals_after])
    writer.writerow(["total", "", "", "", "", *table.totals, *table.totals])
    return out.getvalue()


def to_json(table: TableRecord, rounds: Sequence[RoundRecord], by_view: bool = False) -> TableExport:
    """The table and its rounds; ``by_view``: as its view link shows it, without the table's id."""
    return TableExport(table=TableView.of(table) if by_view else TableOut.of(table),
                       rounds=[_exported(table, r) for r in rounds])


def _exported(table: TableRecord, r: RoundRecord) -> ExportedRound:
    entered = r.round.entered()
    # What the engine saw, as the rounds.state column keeps it: the round with the table's rules, dealer, streak.
    state = SettleRequest.model_validate({**entered, "rules": table.rules, "dealer": r.dealer, "streak": r.streak})
    return ExportedRound(**dict(RoundOut.of(r)), state=state, outcome=outcome_words(entered, table.players))
