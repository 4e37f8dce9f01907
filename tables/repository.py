"""The table store: tables, rounds and house profiles in a database, behind one small class.

Every write is one transaction that reads the table, replays what changed through ``scoring.scorebook`` and
writes the rounds and the table's new ``version`` together: a crash leaves the old table or the new one, never
half a round. Concurrency is optimistic: a write names the version it was based on and gets
:class:`StaleVersion` (with the current table) when another writer came first; the table row is locked
(``FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite) so two writers never both pass that check.
A round POST may carry an idempotency key: the first answer is stored and a retry gets it back unchanged.

Rounds, settlements and calibrations come in and go out as the typed values of the contract (``RoundIn`` as
entered, ``SettleResponse``, ``CalibrationFile`` from ``pipeline.models`` / ``pipeline.table_models``): their JSON
is what the columns hold, and this module converts once each way (``model_dump`` to write, ``model_validate`` to
read), so a round reads back exactly as it was entered and databases written before keep reading.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import sqlalchemy as sa

from pipeline.models import CalibrationFile, DisagreedTile, SettleResponse
from pipeline.table_models import RoundIn
from scoring.profiles import PROFILES
from scoring.scorebook import (
    Carry,
    PlayedRound,
    RulesSpec,
    Scorebook,
    new_scorebook,
    play_round,
    remove_round,
    replace_round,
    replay,
)
from tables.db import StoreUnavailable, create_engine, describe, migrate, one_line
from tables.keys import edit_url, is_view_id, key_hash, key_matches, new_edit_key, new_view_id, view_url
from tables.schema import (
    house_profiles,
    idempotency_keys,
    round_proposals,
    rounds,
    score_tables,
    table_calibrations,
)
from tables.summary import RoundSummary, round_summary


def engine_version() -> str:
    try:
        return metadata.version("zhuoji")
    except metadata.PackageNotFoundError:  # a source tree without `pip install -e .`
        return "0.0.0+source"


ENGINE_VERSION = engine_version()
MAX_PAGE = 100
MAX_OFFSET = 1_000_000_000  # far beyond any store's tables; bounds what reaches the database's integer
MAX_PROFILE_NAME = 60
_ID = re.compile(r"[0-9a-f]{12}")


class TableNotFound(LookupError):
    pass


class RoundNotFound(LookupError):
    pass


EXAMPLE_PROFILES = {example.name: example for example in PROFILES}


class ProfileNotFound(LookupError):
    pass


class StaleVersion(Exception):
    """The write was based on an older version; ``current`` is the table as it is now."""

    def __init__(self, expected: int, current: TableRecord) -> None:
        super().__init__(f"the table is at version {current.version}, not {expected}: someone else wrote first; "
                         "reload it and try again")
        self.current = current


class TableFinished(Exception):
    """The table was finished (结账): its rounds are kept as they are."""


class IdempotencyKeyReused(ValueError):
    """The same idempotency key came with a different round."""


class InvalidProfile(ValueError):
    """A house profile that cannot be saved: its name, or its rules missing (or both given and to be copied)."""


class WrongEditKey(PermissionError):
    """A write to a table with a key that is not its edit key."""


@dataclass(frozen=True)
class TableRecord:
    id: str
    name: str
    players: list[str]
    rules: RulesSpec  # a preset or {"preset", …overrides}, as given
    dealer: int  # who deals the next hand
    streak: int  # 连庄 count of the next hand
    rounds: int
    totals: list[int]
    version: int
    created_at: str
    updated_at: str
    view_id: str  # reads the table and its history, never writes (``tables.keys``)
    finished: bool = False  # 结账: no more round writes

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def view_dict(self) -> dict[str, Any]:
        """The table as its view link shows it: without its id, which names the table to writers."""
        return {k: v for k, v in asdict(self).items() if k != "id"}


@dataclass(frozen=True)
class KeyedTable:
    """A table with its edit key, as it is handed out once (on creation, or by ``zhuoji table key``)."""

    table: TableRecord
    edit_key: str

    def edit_url(self, base_url: str = "") -> str:
        """The page with the table open for writing (relative to the page's address unless ``base_url`` is given)."""
        return edit_url(self.table.id, self.edit_key, base_url)

    def view_url(self, base_url: str = "") -> str:
        """The page showing the table, read only."""
        return view_url(self.table.view_id, base_url)


@dataclass(frozen=True)
class RoundRecord:
    """A stored round. What the engine saw (the ``state`` column, kept for the record) is this round with the
    table's rules, ``dealer`` and ``streak``: the export rebuilds it from those."""

    number: int
    round: RoundIn  # as entered: players, outcome, flipped, first_1s (``RoundIn.entered`` is its JSON)
    settlement: SettleResponse  # as settled then, by engine ``engine_version``
    dealer: int
    streak: int
    deltas: list[int]
    totals_after: list[int]
    engine_version: str
    created_at: str
    updated_at: str
    summary: RoundSummary  # for the history: kind, winners, hand type, fan, who paid


@dataclass(frozen=True)
class AddedRound:
    """The answer to appending a round: its number, its settlement and the table after it."""

    number: int
    settlement: SettleResponse
    table: TableRecord

    def to_json(self) -> dict[str, Any]:
        """What ``idempotency_keys.response`` keeps, for a retry to get the same answer."""
        return {"number": self.number, "settlement": self.settlement.model_dump(mode="json"),
                "table": self.table.to_dict()}

    @classmethod
    def from_json(cls, kept: Mapping[str, Any], view_id: str) -> AddedRound:
        # An answer stored before migration 0004 has no view id (the table's own is the one it had), before 0005
        # no ``finished`` (the table was open: it took the round).
        return cls(kept["number"], SettleResponse.model_validate(kept["settlement"]),
                   TableRecord(**{"view_id": view_id, **kept["table"]}))


@dataclass(frozen=True)
class CalibrationRecord:
    """A table's calibration of its own tile set: made with crop classifier ``model`` (``kind`` of its output; the
    file's SHA-256 ``model_sha256``, None for one kept before it was recorded),
    ``agreement`` the share of the 27 tiles the networks named as their place says, ``disagreed`` those they did
    not; ``calibration`` the calibration itself when asked for (its JSON is ~75 kB)."""

    model: str
    kind: str
    agreement: float
    disagreed: list[DisagreedTile]
    created_at: str
    calibration: CalibrationFile | None = None
    model_sha256: str | None = None


@dataclass(frozen=True)
class ProposalRecord:
    """The round a camera over the table proposes, waiting for the players: ``reading`` the read-table answer's
    JSON (``pipeline.proposal`` types it: this package may not import the vision stages' models), ``frame`` the
    camera's frame it was read on (JPEG bytes) or None; ``id`` tells one proposal from the next."""

    id: str
    reading: dict[str, Any]
    frame: bytes | None
    created_at: str


@dataclass(frozen=True)
class Profile:
    name: str
    rules: RulesSpec  # a preset or {"preset", …overrides}, as saved
    created_at: str
    updated_at: str


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _iso(value: dt.datetime) -> str:
    # SQLite hands back naive datetimes; every stored time is UTC.
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_id() -> str:
    return secrets.token_hex(6)


def _known_id(table_id: str) -> str:
    """An id as :func:`_new_id` makes them; anything else (a NUL byte PostgreSQL would refuse, 10 kB of text)
    cannot name a table and is not sent to the database."""
    if not isinstance(table_id, str) or not _ID.fullmatch(table_id):
        raise TableNotFound(f"no table {str(table_id)[:40]!r}")
    return table_id


def _text(value: Any, what: str, longest: int) -> str:
    """A trimmed name of 1..``longest`` printable characters (PostgreSQL refuses NUL in text)."""
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > longest \
            or not value.strip().isprintable():
        raise ValueError(f"{what} is 1 to {longest} printable characters")
    return value.strip()


def _request_hash(request: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _table(row: sa.Row) -> TableRecord:
    return TableRecord(id=row.id, name=row.name, players=list(row.players), rules=row.rules, dealer=row.dealer,
                       streak=row.streak, rounds=row.round_count, totals=list(row.totals), version=row.version,
                       created_at=_iso(row.created_at), updated_at=_iso(row.updated_at), view_id=row.view_id,
                       finished=row.finished)


def _round(row: sa.Row) -> RoundRecord:
    round_, settlement = RoundIn.model_validate(row.round), SettleResponse.model_validate(row.settlement)
    return RoundRecord(number=row.number, round=round_, settlement=settlement, dealer=row.dealer,
                       streak=row.streak, deltas=list(row.deltas), totals_after=list(row.totals_after),
                       engine_version=row.engine_version, created_at=_iso(row.created_at),
                       updated_at=_iso(row.updated_at), summary=round_summary(round_, settlement))


def _round_values(table_id: str, played: PlayedRound, created: dt.datetime, now: dt.datetime) -> dict[str, Any]:
    return {"table_id": table_id, "number": played.number, "round": dict(played.round), "state": played.state,
            "settlement": played.settlement.to_dict(), "dealer": played.dealer, "streak": played.streak,
            "deltas": list(played.deltas), "totals_after": list(played.totals_after),
            "engine_version": ENGINE_VERSION, "created_at": created, "updated_at": now}


def _calibration_fields(calibration: CalibrationFile) -> dict[str, Any]:
    """The summary columns of a calibration (checked at the edge: ``pipeline.models.CalibrationIn``)."""
    return {"model": calibration.model, "model_sha256": calibration.model_sha256, "kind": calibration.kind,
            "agreement": calibration.agreement, "disagreed": [d.model_dump(mode="json") for d in calibration.disagreed]}


def _disagreed(column: Sequence[Mapping[str, str]]) -> list[DisagreedTile]:
    return [DisagreedTile.model_validate(d) for d in column]


def _stored_calibration(row: sa.Row) -> CalibrationFile:
    """A kept calibration's JSON as the typed value. Its summary columns were taken from it when it was kept, and
    fill what a calibration kept before they were required may lack (an ``agreement``)."""
    return CalibrationFile.model_validate({**row.calibration, "agreement": row.agreement})


class TableStore:
    """Tables and their rounds in one database (SQLite file or PostgreSQL); safe to share between threads."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str) -> TableStore:
        """Connect and migrate; :class:`StoreUnavailable` when the database cannot be used."""
        engine = create_engine(url)
        migrate(engine)
        return cls(engine)

    @property
    def location(self) -> str:
        return describe(str(self.engine.url))

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except sa.exc.OperationalError as exc:
            raise StoreUnavailable(f"database error: {one_line(exc.orig)}") from None

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        try:
            with self.engine.connect().execution_options(write=True) as conn, conn.begin():
                yield conn
        except sa.exc.OperationalError as exc:
            raise StoreUnavailable(f"database error: {one_line(exc.orig)}") from None

    def _locked_row(self, conn: sa.Connection, table_id: str) -> sa.Row:
        _known_id(table_id)
        row = conn.execute(sa.select(score_tables).where(score_tables.c.id == table_id).with_for_update()).first()
        if row is None:
            raise TableNotFound(f"no table {table_id!r}")
        return row

    @staticmethod
    def _check_open(row: sa.Row) -> None:
        if row.finished:
            raise TableFinished(f"table {row.id!r} is finished (结账): its rounds can no longer be changed")

    @staticmethod
    def _check_version(row: sa.Row, expected: int | None) -> None:
        if expected is not None and expected != row.version:
            raise StaleVersion(expected, _table(row))

    @staticmethod
    def _book(conn: sa.Connection, row: sa.Row) -> Scorebook:
        inputs = conn.execute(sa.select(rounds.c.round).where(rounds.c.table_id == row.id)
                              .order_by(rounds.c.number)).scalars().all()
        return Scorebook(tuple(row.players), row.rules, row.first_dealer,
                         tuple(RoundIn.model_validate(r) for r in inputs))

    # ------------------------------------------------------------------ tables

    def create_table(self, name: str, players: Sequence[str], rules: RulesSpec | None = None, dealer: int = 0,
                     profile: str | None = None) -> KeyedTable:
        """A new table and its edit key (only its hash is kept); ``rules`` is a preset or
        ``{"preset", …overrides}``, or ``profile`` names saved rules."""
        name = _text(name, "a table name", 100)
        if profile is not None and rules is not None:
            raise ValueError("give rules or a profile, not both")
        now = _now()
        with self._write() as conn:
            if profile is not None:
                rules = self._profile_rules(conn, profile)
            book = new_scorebook(players, rules, dealer)
            key = new_edit_key()
            values = {"id": _new_id(), "name": name, "players": list(book.players), "rules": book.rules,
                      "first_dealer": book.first_dealer, "dealer": book.first_dealer, "streak": 1,
                      "round_count": 0, "totals": [0] * len(book.players), "version": 1, "created_at": now,
                      "updated_at": now, "edit_key_hash": key_hash(key), "view_id": new_view_id()}
            conn.execute(score_tables.insert().values(**values))
            row = conn.execute(sa.select(score_tables).where(score_tables.c.id == values["id"])).one()
            return KeyedTable(_table(row), key)

    def check_edit_key(self, table_id: str, key: str | None) -> None:
        """Nothing when ``key`` is the table's edit key; :class:`WrongEditKey` when not, :class:`TableNotFound`
        when there is no such table."""
        _known_id(table_id)
        with self._read() as conn:
            stored = conn.execute(sa.select(score_tables.c.edit_key_hash)
                                  .where(score_tables.c.id == table_id)).scalar_one_or_none()
        if stored is None:
            raise TableNotFound(f"no table {table_id!r}")
        if not key_matches(key, stored):
            raise WrongEditKey(f"that is not the edit key of table {table_id}")

    def issue_edit_key(self, table_id: str) -> KeyedTable:
        """A new edit key for the table; the old one stops working. Not a change of the table: its version stays."""
        key = new_edit_key()
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            conn.execute(score_tables.update().where(score_tables.c.id == table_id)
                         .values(edit_key_hash=key_hash(key)))
        return KeyedTable(_table(row), key)

    def get_view(self, view_id: str) -> TableRecord:
        """The table a view id reads (:class:`TableNotFound` for any other text)."""
        if not is_view_id(view_id):
            raise TableNotFound(f"no table viewed as {str(view_id)[:40]!r}")
        with self._read() as conn:
            row = conn.execute(sa.select(score_tables).where(score_tables.c.view_id == view_id)).first()
        if row is None:
            raise TableNotFound(f"no table viewed as {view_id!r}")
        return _table(row)

    def get_table(self, table_id: str) -> TableRecord:
        _known_id(table_id)
        with self._read() as conn:
            row = conn.execute(sa.select(score_tables).where(score_tables.c.id == table_id)).first()
        if row is None:
            raise TableNotFound(f"no table {table_id!r}")
        return _table(row)

    def list_tables(self, limit: int = 20, offset: int = 0) -> tuple[list[TableRecord], int]:
        """(a page of tables newest first, how many there are in all)."""
        limit, offset = max(1, min(limit, MAX_PAGE)), max(0, min(offset, MAX_OFFSET))
        with self._read() as conn:
            total = conn.execute(sa.select(sa.func.count()).select_from(score_tables)).scalar_one()
            rows = conn.execute(sa.select(score_tables)
                                .order_by(score_tables.c.created_at.desc(), score_tables.c.id.desc())
                                .limit(limit).offset(offset)).all()
        return [_table(r) for r in rows], total

    def finish_table(self, table_id: str, expected_version: int | None = None) -> TableRecord:
        """Mark the table finished (结账, the end of the evening): later round writes raise
        :class:`TableFinished`. Finishing a finished table changes nothing."""
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            if row.finished:
                return _table(row)
            self._check_version(row, expected_version)
            conn.execute(score_tables.update().where(score_tables.c.id == row.id)
                         .values(finished=True, version=row.version + 1, updated_at=_now()))
            return _table(conn.execute(sa.select(score_tables).where(score_tables.c.id == row.id)).one())

    def delete_table(self, table_id: str) -> None:
        with self._write() as conn:
            self._locked_row(conn, table_id)
            # Children first: SQLite's foreign keys are on, but do not count on every backend cascading.
            conn.execute(idempotency_keys.delete().where(idempotency_keys.c.table_id == table_id))
            conn.execute(table_calibrations.delete().where(table_calibrations.c.table_id == table_id))
            conn.execute(rounds.delete().where(rounds.c.table_id == table_id))
            conn.execute(score_tables.delete().where(score_tables.c.id == table_id))

    # ------------------------------------------------------------------ rounds

    def list_rounds(self, table_id: str) -> list[RoundRecord]:
        _known_id(table_id)
        with self._read() as conn:
            if conn.execute(sa.select(score_tables.c.id).where(score_tables.c.id == table_id)).first() is None:
                raise TableNotFound(f"no table {table_id!r}")
            rows = conn.execute(sa.select(rounds).where(rounds.c.table_id == table_id)
                                .order_by(rounds.c.number)).all()
        return [_round(r) for r in rows]

    def add_round(self, table_id: str, round_: RoundIn, expected_version: int | None,
                  idempotency_key: str | None = None) -> tuple[AddedRound, bool]:
        """Append a round. Returns (the answer, whether it is the answer stored for an earlier request)."""
        if idempotency_key is not None:
            _text(idempotency_key, "an idempotency key", 200)
        entered = round_.entered()
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            digest = _request_hash({"round": entered, "expected_version": expected_version})
            if idempotency_key is not None:
                seen = conn.execute(sa.select(idempotency_keys).where(
                    idempotency_keys.c.table_id == table_id, idempotency_keys.c.key == idempotency_key)).first()
                if seen is not None:
                    if seen.request_hash != digest:
                        raise IdempotencyKeyReused(f"Idempotency-Key {idempotency_key!r} was used for another "
                                                   "round of this table")
                    return AddedRound.from_json(seen.response, row.view_id), True
            self._check_open(row)
            self._check_version(row, expected_version)
            # Only the new round is settled: the table row carries what the round before handed on.
            played = play_round(row.rules, row.round_count + 1, round_,
                                Carry(row.dealer, row.streak, tuple(row.totals)), row.players)
            now = _now()
            conn.execute(rounds.insert().values(**_round_values(table_id, played, now, now)))
            table = self._update_table(conn, row, played.settlement.next_dealer, played.settlement.next_streak,
                                       played.totals_after, played.number, now)
            answer = AddedRound(played.number, SettleResponse.of(played.settlement), table)
            # The round is the players' word now: a camera's proposal of it (or of an older state) is done with.
            conn.execute(round_proposals.delete().where(round_proposals.c.table_id == table_id))
            if idempotency_key is not None:
                conn.execute(idempotency_keys.insert().values(table_id=table_id, key=idempotency_key,
                                                              request_hash=digest, response=answer.to_json(),
                                                              created_at=now))
            return answer, False

    def replace_round(self, table_id: str, number: int, round_: RoundIn,
                      expected_version: int | None) -> TableRecord:
        """Edit round ``number``; it and every later round are settled again."""
        return self._rewrite(table_id, number, expected_version, lambda book: replace_round(book, number, round_))

    def remove_round(self, table_id: str, number: int, expected_version: int | None) -> TableRecord:
        """Undo round ``number`` (any round); later rounds move up one number and are settled again."""
        return self._rewrite(table_id, number, expected_version, lambda book: remove_round(book, number))

    def _rewrite(self, table_id: str, number: int, expected_version: int | None,
                 change: Callable[[Scorebook], Scorebook]) -> TableRecord:
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            self._check_open(row)
            self._check_version(row, expected_version)
            book = self._book(conn, row)
            try:
                book = change(book)
            except LookupError as exc:
                raise RoundNotFound(str(exc)) from None
            old = conn.execute(sa.select(rounds.c.number, rounds.c.created_at, rounds.c.totals_after,
                                         rounds.c.settlement)
                               .where(rounds.c.table_id == table_id, rounds.c.number >= number - 1)
                               .order_by(rounds.c.number)).all()
            by_number = {r.number: r for r in old}
            if number > 1:
                before = by_number[number - 1]
                carry = Carry(before.settlement["next_dealer"], before.settlement["next_streak"],
                              tuple(before.totals_after))
            else:
                carry = None
            standing = replay(book, start=number, carry=carry)
            now = _now()
            conn.execute(rounds.delete().where(rounds.c.table_id == table_id, rounds.c.number >= number))
            removed = len(book.rounds) < row.round_count
            values = []
            for played in standing.rounds:
                # An edited round keeps its time of entry; after an undo, later rounds keep theirs.
                source = played.number + 1 if removed else played.number
                created = by_number[source].created_at if source in by_number else now
                values.append(_round_values(table_id, played, created, now))
            if values:
                conn.execute(rounds.insert(), values)
            return self._update_table(conn, row, standing.dealer, standing.streak, standing.totals,
                                      len(book.rounds), now)

    def _update_table(self, conn: sa.Connection, row: sa.Row, dealer: int, streak: int, totals: Sequence[int],
                      count: int, now: dt.datetime) -> TableRecord:
        result = conn.execute(score_tables.update()
                              .where(score_tables.c.id == row.id, score_tables.c.version == row.version)
                              .values(dealer=dealer, streak=streak, totals=list(totals), round_count=count,
                                      version=row.version + 1, updated_at=now))
        if result.rowcount != 1:  # the row lock makes this unreachable; never write over another writer
            raise StaleVersion(row.version, self.get_table(row.id))
        return _table(conn.execute(sa.select(score_tables).where(score_tables.c.id == row.id)).one())

    # ------------------------------------------------------------------ the table's calibration

    def set_calibration(self, table_id: str, calibration: CalibrationFile,
                        expected_version: int | None = None) -> tuple[TableRecord, CalibrationRecord]:
        """Keep ``calibration`` (what ``zhuoji calibrate`` makes; its references checked by the caller) with the
        table, replacing any before; the table's version goes up like any write."""
        fields = _calibration_fields(calibration)
        now = _now()
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            self._check_version(row, expected_version)
            conn.execute(table_calibrations.delete().where(table_calibrations.c.table_id == table_id))
            conn.execute(table_calibrations.insert().values(table_id=table_id,
                                                            calibration=calibration.model_dump(mode="json"),
                                                            created_at=now, **fields))
            table = self._touch(conn, row, now)
            return table, CalibrationRecord(**{**fields, "disagreed": _disagreed(fields["disagreed"])},
                                            created_at=_iso(now))

    def get_calibration(self, table_id: str, full: bool = False) -> CalibrationRecord | None:
        """The table's calibration (the calibration itself too when ``full``), None when it has none."""
        _known_id(table_id)
        summary = ("model", "model_sha256", "kind", "agreement", "disagreed", "created_at")
        columns = [table_calibrations.c[k] for k in summary]
        if full:
            columns.append(table_calibrations.c.calibration)
        with self._read() as conn:
            if conn.execute(sa.select(score_tables.c.id).where(score_tables.c.id == table_id)).first() is None:
                raise TableNotFound(f"no table {table_id!r}")
            row = conn.execute(sa.select(*columns).where(table_calibrations.c.table_id == table_id)).first()
        if row is None:
            return None
        return CalibrationRecord(model=row.model, model_sha256=row.model_sha256, kind=row.kind,
                                 agreement=row.agreement,
                                 disagreed=_disagreed(row.disagreed),
                                 created_at=_iso(row.created_at), calibration=_stored_calibration(row) if full else None)

    def clear_calibration(self, table_id: str, expected_version: int | None = None) -> tuple[TableRecord, bool]:
        """Forget the table's calibration; (the table, whether there was one). Nothing to forget changes nothing."""
        with self._write() as conn:
            row = self._locked_row(conn, table_id)
            self._check_version(row, expected_version)
            gone = conn.execute(table_calibrations.delete().where(table_calibrations.c.table_id == table_id))
            if gone.rowcount == 0:
                return _table(row), False
            return self._touch(conn, row, _now()), True

    def _touch(self, conn: sa.Connection, row: sa.Row, now: dt.datetime) -> TableRecord:
        """The table's version bumped by a write that changes no score."""
        return self._update_table(conn, row, row.dealer, row.streak, row.totals, row.round_count, now)

    # ------------------------------------------------------------------ a camera's proposed round

    def set_proposal(self, table_id: str, reading: Mapping[str, Any], frame: bytes | None) -> ProposalRecord:
        """Keep the round a camera proposes, replacing the one before (the latest wins). Not a write of the table:
        its version stays, so a phone saving a round meanwhile is not refused as stale. A finished table takes
        none (:class:`TableFinished`)."""
        now = _now()
        with self._write() as conn:
            row = self._locked_row(conn, table_id)  # the row lock orders two cameras' writes
            self._check_open(row)
            conn.execute(round_proposals.delete().where(round_proposals.c.table_id == table_id))
            record = ProposalRecord(_new_id(), dict(reading), frame, _iso(now))
            conn.execute(round_proposals.insert().values(table_id=table_id, id=record.id, reading=record.reading,
                                                         frame=frame, created_at=now))
            return record

    def get_proposal(self, table_id: str) -> ProposalRecord | None:
        """The table's proposed round, None when there is none."""
        _known_id(table_id)
        with self._read() as conn:
            if conn.execute(sa.select(score_tables.c.id).where(score_tables.c.id == table_id)).first() is None:
                raise TableNotFound(f"no table {table_id!r}")
            row = conn.execute(sa.select(round_proposals).where(round_proposals.c.table_id == table_id)).first()
        if row is None:
            return None
        return ProposalRecord(row.id, row.reading, row.frame, _iso(row.created_at))

    def clear_proposal(self, table_id: str, proposal_id: str | None = None) -> bool:
        """Dismiss the table's proposed round (only if it is still ``proposal_id``, when given: a newer one the
        dismissing phone has not seen stays); whether one was removed."""
        with self._write() as conn:
            self._locked_row(conn, table_id)
            where = [round_proposals.c.table_id == table_id]
            if proposal_id is not None:
                where.append(round_proposals.c.id == proposal_id)
            return conn.execute(round_proposals.delete().where(*where)).rowcount > 0

    # ------------------------------------------------------------------ house profiles

    @staticmethod
    def _profile(conn: sa.Connection, name: str) -> Profile:
        try:
            name = _text(name, "a profile name", MAX_PROFILE_NAME)
        except ValueError:
            raise ProfileNotFound(f"no house profile {str(name)[:70]!r}") from None
        row = conn.execute(sa.select(house_profiles).where(house_profiles.c.name == name)).first()
        if row is None:
            raise ProfileNotFound(f"no house profile {name!r}")
        return Profile(row.name, row.rules, _iso(row.created_at), _iso(row.updated_at))

    @classmethod
    def _profile_rules(cls, conn: sa.Connection, name: str) -> RulesSpec:
        """The rules a table starts from: the house profile saved under ``name``, else the shipped example
        profile of that name (scoring/profiles.py: 遵义, 安顺 …), so a table can start from one without saving it."""
        try:
            return cls._profile(conn, name).rules
        except ProfileNotFound:
            example = EXAMPLE_PROFILES.get(name) if isinstance(name, str) else None
            if example is None:
                raise
            return dict(example.rules)

    def save_profile(self, name: str, rules: RulesSpec | None = None, from_table: str | None = None) -> Profile:
        """Save named house rules, given (checked at the edge: a request's ``rules`` field) or copied from a table;
        saving a name again replaces its rules. :class:`InvalidProfile` for a name that cannot be saved, or rules
        both given and to be copied, or neither."""
        try:
            name = _text(name, "a profile name", MAX_PROFILE_NAME)
        except ValueError as exc:
            raise InvalidProfile(str(exc)) from None
        now = _now()
        with self._write() as conn:
            if from_table is not None:
                if rules is not None:
                    raise InvalidProfile("give rules or a table to copy them from, not both")
                rules = self._locked_row(conn, from_table).rules
            if rules is None:
                raise InvalidProfile("a profile needs rules: a preset or {\"preset\", …overrides}")
            exists = conn.execute(sa.select(house_profiles.c.name).where(house_profiles.c.name == name)
                                  .with_for_update()).first()
            if exists:
                conn.execute(house_profiles.update().where(house_profiles.c.name == name)
                             .values(rules=rules, updated_at=now))
            else:
                conn.execute(house_profiles.insert().values(name=name, rules=rules, created_at=now, updated_at=now))
            return self._profile(conn, name)

    def get_profile(self, name: str) -> Profile:
        with self._read() as conn:
            return self._profile(conn, name)

    def list_profiles(self) -> list[Profile]:
        with self._read() as conn:
            rows = conn.execute(sa.select(house_profiles).order_by(house_profiles.c.name)).all()
        return [Profile(r.name, r.rules, _iso(r.created_at), _iso(r.updated_at)) for r in rows]


