"""The store takes and gives typed rounds (``RoundIn`` as entered, ``SettleResponse``) over JSON columns: a database
written before the values were typed, at any migration, reads back to the same answers, and the stored JSON is
exactly what the client entered."""

from __future__ import annotations

import copy

import pytest
import sqlalchemy as sa

from pipeline.table_models import RoundOut
from scoring.scorebook import Carry, play_round
from tables import TableStore
from tables.db import downgrade
from tables.export import to_json
from tables.schema import rounds as rounds_table
from tests.scoring.settle_tables import EXAMPLES
from tests.tables.support import draw_round, entered, impossible_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]


def quick_round() -> dict:
    """A quick round as the page enters one: the winner shown, the others told (叫牌 with chicken tiles held, or
    not), a river as a list (its order kept), an explicit null."""
    r = win_round(1)
    r["players"][0] = {"ready": True, "holds": "1s", "melds": [], "river": ["9m", "1p"]}
    r["players"][3] = {"not_ready": True}
    r["first_1s"] = None
    return r


def answers(store: TableStore, table_id: str) -> list[dict]:
    return [RoundOut.of(r).model_dump(mode="json") for r in store.list_rounds(table_id)]


@pytest.mark.parametrize("release", ["0001", "0003"])
def test_rounds_stored_by_an_older_release_read_back_the_same(db_url, release):
    """Rounds (and an idempotency key's answer) written, the schema taken back to ``release`` (as that release
    left the database), then opened by this one: every round's answer, the history and the retry are unchanged."""
    store = TableStore.open(db_url)
    table = store.create_table("Friday", NAMES, {"preset": "gy-reduced", "base": 2}).table
    given = [win_round(1), draw_round(), quick_round(), win_round(3)]
    first, _ = store.add_round(table.id, entered(given[0]), 1, idempotency_key="phone-1")
    for n, r in enumerate(given[1:], start=2):
        store.add_round(table.id, entered(r), n)
    before = answers(store, table.id)
    history = to_json(store.get_table(table.id), store.list_rounds(table.id)).model_dump(mode="json")
    with store.engine.connect() as conn:
        stored = conn.execute(sa.select(rounds_table.c.round, rounds_table.c.settlement)
                              .where(rounds_table.c.table_id == table.id).order_by(rounds_table.c.number)).all()
    assert [r.round for r in stored] == given  # the column holds the round exactly as entered
    downgrade(store.engine, release)
    store.close()

    store = TableStore.open(db_url)  # upgrades to the newest
    try:
        assert answers(store, table.id) == before
        now = store.get_table(table.id)
        again = to_json(now, store.list_rounds(table.id)).model_dump(mode="json")
        assert again["rounds"] == history["rounds"]
        assert {k: v for k, v in again["table"].items() if k != "view_id"} == \
            {k: v for k, v in history["table"].items() if k != "view_id"}  # a new view id at 0004, nothing else
        retried, replayed = store.add_round(table.id, entered(copy.deepcopy(given[0])), 1, idempotency_key="phone-1")
        assert replayed and retried.number == 1 and retried.settlement == first.settlement
        assert now.totals == before[-1]["totals_after"] and sum(now.totals) == 0
    finally:
        store.close()


def test_a_round_reads_back_as_entered_not_as_the_model_fills_it(db_url):
    """Defaults the client left out stay out (no ``bao_ting``, ``kong_draw`` … added), what it gave stays as
    given (a river as a list, a null first_1s), in the answer and in the export."""
    store = TableStore.open(db_url)
    try:
        table = store.create_table("Quick", NAMES).table
        store.add_round(table.id, entered(quick_round()), None)
        (record,) = store.list_rounds(table.id)
        assert record.round.entered() == quick_round()
        assert RoundOut.of(record).model_dump(mode="json")["round"] == quick_round()
        exported = to_json(store.get_table(table.id), [record]).model_dump(mode="json")["rounds"][0]
        assert exported["round"] == quick_round()
        assert exported["state"] == {**quick_round(), "rules": "gy-normal", "dealer": 0, "streak": 1}
        with store.engine.connect() as conn:  # the export's state is what the engine saw, as the column keeps it
            state = conn.execute(sa.select(rounds_table.c.state).where(rounds_table.c.table_id == table.id)).scalar_one()
        assert exported["state"] == state
    finally:
        store.close()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_checked_round_settles_as_its_json_does(name):
    """The store settles a round as the checked value it was given (``RoundIn.to_table``, not parsed again); a script's
    JSON round goes through the engine's JSON adapter. Both give the same settlement, state and totals, on every
    worked example (docs/rules.md#examples) dealt as it says."""
    state = copy.deepcopy(EXAMPLES[name])
    rules, carry = state.pop("rules"), Carry(state.pop("dealer"), state.pop("streak"), (0, 0, 0, 0))
    by_json = play_round(rules, 1, state, carry, NAMES)
    checked = play_round(rules, 1, entered(state), carry, NAMES)
    assert checked == by_json


def test_a_checked_round_is_refused_in_the_same_words():
    state = impossible_round()
    carry = Carry(0, 1, (0, 0, 0, 0))
    with pytest.raises(ValueError) as by_json:
        play_round("gy-normal", 3, state, carry, NAMES)
    with pytest.raises(ValueError) as checked:
        play_round("gy-normal", 3, entered(state), carry, NAMES)
    assert str(checked.value) == str(by_json.value) and str(by_json.value).startswith("round 3: ")
