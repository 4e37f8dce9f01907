"""Typed values of the tables that keep score (``/v1/tables``, ``/v1/profiles`` and ``zhuoji table``): what the page
and the command line send and get, the same models on both sides.

A round is the ``/v1/settle`` body without ``rules``, ``dealer``, ``streak`` and ``base``: the table decides
those (its rules; the dealer 庄家 and 连庄 streak carried from the rounds before).

The store (``tables``) takes and gives rounds, settlements and calibrations as these models; its records (frozen
dataclasses) become answers by ``.of(record)``, which reads the record's attributes (the pipeline does not import
the store, which sits beside the shells).
"""

from __future__ import annotations

from typing import Annotated, Any, Protocol, Self, TypeVar

from pydantic import Field, GetJsonSchemaHandler, PlainSerializer, StrictInt, StrictStr
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from pipeline.model_base import OutModel, StrictModel
from pipeline.models import (
    CalibrationFile,
    DisagreedTile,
    ErrorBody,
    HandEnd,
    Preset,
    RulesSpec,
    RuleValue,
    Seat,
    SettleRequest,
    SettleResponse,
)

Name = StrictStr


class KeyedTableLike(Protocol):
    """What an answer needs of ``tables.KeyedTable``: the table, its edit key and the links to it."""

    table: object
    edit_key: str

    def edit_url(self, base_url: str = "") -> str: ...

    def view_url(self, base_url: str = "") -> str: ...


class RoundIn(HandEnd):
    """One hand as it ended (docs/rules.md#engine-input), without the keys the table decides (rules, dealer, streak, base)."""

    def entered(self) -> dict[str, Any]:
        """The round's JSON as entered: the keys the client gave, no defaults added (what a table keeps in its
        ``rounds.round`` column and shows back)."""
        return _as_entered(self)


RequestModel = TypeVar("RequestModel", bound=StrictModel)


def _as_entered(request: StrictModel) -> dict[str, Any]:
    return request.model_dump(mode="json", by_alias=True, exclude_unset=True)


class _SchemaOf:
    """An answer's schema of a request model shown as entered is the model's own: its keys are a subset of those."""

    def __init__(self, model: type[StrictModel]) -> None:
        self.model = model

    def __get_pydantic_json_schema__(self, _core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(self.model.__pydantic_core_schema__)


def as_entered(model: type[RequestModel]) -> Any:
    """``model`` in an answer as it was entered: the keys the client gave, no defaults added (a round reads back as
    it was written); its schema is the model's."""
    return Annotated[model, PlainSerializer(_as_entered, return_type=Any), _SchemaOf(model)]


EnteredRound = as_entered(RoundIn)
EnteredState = as_entered(SettleRequest)


class RecordOut(OutModel):
    """An answer made field by field from one of the store's records: a table (``tables.TableRecord``; a view leaves
    out its id), a round added (``AddedRound``) or stored (``RoundRecord``), 结账 (``tables.payments.SettleUp``), a
    house profile (``Profile``)."""

    @classmethod
    def of(cls, record: object) -> Self:
        return cls.model_validate(record, from_attributes=True)


class TableCreate(StrictModel):
    name: Name = Field(min_length=1, max_length=100, examples=["Friday at Ann's"])
    players: list[Name] = Field(min_length=4, max_length=4, description="four names, seats 0..3 in turn order",
                                examples=[["Ann", "Bo", "Cy", "Di"]])
    rules: RulesSpec | None = Field(None, description="preset or {\"preset\", …overrides}; default gy-normal")
    profile: Name | None = Field(None, max_length=60, description="start from a saved house profile instead of rules")
    dealer: Seat = Field(0, description="who deals the first hand (庄家)")


class TableView(RecordOut):
    """A table as its view link reads it: everything but its id, which is what writes name."""

    view_id: str = Field(description="reads the table and its history at /v1/views/{view_id} and /t/{view_id}; "
                                     "cannot write")
    name: str
    players: list[str]
    rules: Preset | dict[str, RuleValue] = Field(description="preset or {\"preset\", …overrides}, as given")
    dealer: int = Field(description="who deals the next hand (庄家)")
    streak: int = Field(description="连庄 count of the next hand: hands in a row this dealer deals, it included")
    rounds: int = Field(description="rounds played")
    totals: list[int] = Field(description="running totals per seat (fan × 底分), summing to zero")
    version: int = Field(description="bumped by every write; send it back as expected_version")
    created_at: str
    updated_at: str
    finished: bool = Field(False, description="finished (结账): rounds can no longer be added, edited or undone")


class TableOut(TableView):
    id: str


class TableCreated(TableOut):
    """The new table with its edit key: shown in this answer only (the service keeps its hash)."""

    edit_key: str = Field(description="every write to the table needs it: Authorization: Bearer <edit_key>")
    edit_url: str = Field(description="the page with the table open for writing (the key in the fragment, which "
                                      "browsers never send): /#table={id}&key={edit_key}")
    view_url: str = Field(description="the page showing the table, read only: /t/{view_id}")

    @classmethod
    def of_keyed(cls, keyed: KeyedTableLike, base_url: str = "") -> TableCreated:
        """A table with its edit key (``tables.KeyedTable``) and its links, relative to the page's address unless
        ``base_url`` is given."""
        return cls(**TableOut.of(keyed.table).model_dump(), edit_key=keyed.edit_key,
                   edit_url=keyed.edit_url(base_url), view_url=keyed.view_url(base_url))


class TableList(OutModel):
    tables: list[TableOut] = Field(description="newest first")
    total: int
    limit: int
    offset: int


class RoundPost(StrictModel):
    round: RoundIn
    expected_version: StrictInt = Field(ge=1, description="the table version this round was entered against")


class RoundAdded(RecordOut):
    number: int = Field(description="1-based round number")
    settlement: SettleResponse
    table: TableOut


class HandTypeNameOut(OutModel):
    zh: str = Field(description="the hand type in Chinese, e.g. 平胡")
    en: str = Field(description="its English meaning, e.g. plain win")


class WinSummaryOut(OutModel):
    seat: int
    hand_type: HandTypeNameOut
    fan: int = Field(description="the hand type's fan")


class RoundSummaryOut(OutModel):
    """What the history shows of a round."""

    kind: str = Field(description="win, draw (黄牌), pass_lock_penalty (包牌) or false_win (诈胡)")
    winner: list[int] = Field(description="the winning seats (several on 一炮多响)")
    hand_type: HandTypeNameOut | None = Field(description="the first winner's hand type; null without a win")
    fan: int | None = Field(description="the first winner's hand-type fan; null without a win")
    payer: int | None = Field(description="who paid alone: the 点炮 discarder (the robbed player of a 抢杠) or the "
                                          "penalized player; null for 自摸 (everyone pays) and a draw")
    wins: list[WinSummaryOut] = Field(description="every winner's hand type and fan")


class RoundOut(RecordOut):
    number: int
    round: EnteredRound = Field(description="as entered")
    settlement: SettleResponse
    dealer: int = Field(description="who dealt this round")
    streak: int = Field(description="连庄 count of this round")
    deltas: list[int] = Field(description="what each seat won or paid this round")
    totals_after: list[int]
    engine_version: str
    created_at: str
    updated_at: str
    summary: RoundSummaryOut


class RoundList(OutModel):
    rounds: list[RoundOut]


class ExportedRound(RoundOut):
    state: EnteredState = Field(description="what the engine saw: the round as entered with the table's rules, "
                                            "this round's dealer and streak")
    outcome: str = Field(description="the outcome in plain words, the players named")


class TableExport(OutModel):
    """A table's history as one JSON file (``GET …/export?format=json``, ``zhuoji table export --format json``)."""

    table: TableOut | TableView = Field(description="the table; by its view id without its id")
    rounds: list[ExportedRound]


class PaymentOut(OutModel):
    payer: int = Field(alias="from", description="the seat that pays")
    payee: int = Field(alias="to", description="the seat that is paid")
    points: int
    amount: float = Field(description="points × per_point, to the cent")


class Payments(RecordOut):
    """结账 (settling up): the fewest transfers that leave each seat with its total."""

    payments: list[PaymentOut] = Field(description="at most one fewer than the players with a balance")
    per_point: float = Field(description="the money one point is worth")
    totals: list[int] = Field(description="each seat's points, as the table stands")
    amounts: list[float] = Field(description="each seat's money: received minus paid, summing to zero")


class TableUpdated(OutModel):
    table: TableOut


class StaleTable(OutModel):
    """409: someone else wrote first. ``table`` is the table as it is now."""

    error: ErrorBody
    table: TableOut


class ProfileIn(StrictModel):
    rules: RulesSpec | None = Field(None, description="preset or {\"preset\", …overrides}")
    table: StrictStr | None = Field(None, max_length=16, description="copy the rules of this table instead")


class ProfileOut(RecordOut):
    name: str
    rules: Preset | dict[str, RuleValue]
    created_at: str
    updated_at: str


class ProfileList(OutModel):
    profiles: list[ProfileOut]


class CalibrationOut(OutModel):
    """A table's calibration of its own tile set ("teach it your set"), without its references unless asked."""

    model: str = Field(description="the crop classifier it was made with: a retrained one needs a new photo")
    model_sha256: str | None = Field(None, description="the SHA-256 of that classifier's file (null: made before "
                                                       "it was recorded, so it fits no classifier now)")
    kind: str = Field(description="features or probs: which output of the classifier the references are")
    agreement: float = Field(description="share of the 27 tiles the networks named as their place says")
    disagreed: list[DisagreedTile] = Field(description="the tiles they named otherwise")
    created_at: str
    recalibrate: str | None = Field(None, description="why it no longer fits the service's crop classifier (the "
                                                      "models were retrained): photos are read without it")
    calibration: CalibrationFile | None = Field(None, description="the calibration JSON itself (?full=true)")

    @classmethod
    def of(cls, kept: object, recalibrate: str | None) -> CalibrationOut:
        """A table's kept calibration (``tables.CalibrationRecord``) and why it no longer fits, if it does not."""
        return cls.model_validate(kept, from_attributes=True).model_copy(update={"recalibrate": recalibrate})


class TableCalibration(OutModel):
    calibration: CalibrationOut | None = Field(description="null when the table has none")
    table: TableOut


class TableShown(OutModel):
    """``zhuoji table show --json``: the bodies of ``GET /v1/tables/{id}``, ``…/rounds`` and ``…/calibration``."""

    table: TableOut
    rounds: list[RoundOut]
    calibration: CalibrationOut | None
