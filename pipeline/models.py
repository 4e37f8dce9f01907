"""The pipeline's typed values, which are also the contract of the HTTP API (shown at ``/docs``).

Request models are strict (no "1" → 1 coercion, unknown keys refused) so the engine sees exactly what the
client sent; tiles and rules are checked with the engine's own validators (``scoring.tiles.tile_index``,
``scoring.rules.get_rules``), so the messages are the engine's. Tile notation is MPSZ: ``123m456p789s``
(m = 万 characters, p = 筒 dots, s = 条 bamboo); a single tile is rank + suit, ``5p``. The two base classes are in
``pipeline.model_base``, the detector's answer in ``pipeline.detection_models`` (a detection loads no engine).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    create_model,
)

from pipeline.detection_models import Alternative, ImageInfo
from pipeline.model_base import OutModel, StrictModel
from scoring.hand import WIN_FLAGS
from scoring.ledger import Transfer
from scoring.melds import Meld
from scoring.results import SeatResult, Settlement
from scoring.rules import MAX_BASE, Rules, get_rules
from scoring.table import (
    Draw,
    FalseWin,
    FirstOneS,
    PassLockPenalty,
    Player,
    Table,
    Told,
    Win,
    check_table,
    parse_discard_order,
)
from scoring.tiles import parse_tiles, tile_index

if TYPE_CHECKING:  # the vision values the answers are made from; importing them would load OpenCV for text answers
    from vision.layout import Layout, MeldGroup, PlacedTile
    from vision.reading import Doubt, TileChange


def _tile(value: str) -> str:
    tile_index(value)  # ValueError with the engine's message, e.g. "not a tile of the 108-tile set: '1z'"
    return value


def _rules(value: Any, shape: ValidatorFunctionWrapHandler) -> Any:
    # The engine's words first (an unknown preset, key or value: ValueError): where the value is also of the wrong
    # shape, pydantic's own error would name a branch of the union ("rules.literal[...]: Input should be ...").
    if value is None:  # the engine reads None as its default preset; a field that may be null says so itself
        raise ValueError("rules must be a preset name or an object {'preset': ..., <overrides>}")
    get_rules(value)
    return shape(value)


Tile = Annotated[str, Field(max_length=4, description="one tile: rank + suit, e.g. 5p", examples=["5p"]),
                 AfterValidator(_tile)]
Seat = Annotated[int, Field(ge=0, le=3, description="seat 0..3 in turn order (下家 of p is p+1)")]
Mpsz = Annotated[str, Field(max_length=120, description="tiles in MPSZ, e.g. 123m456p789s")]
Preset = Literal["gy-normal", "gy-reduced", "liupanshui", "dushan"]
# Rule overrides keep to JSON scalars, short int lists and int maps (dou_values): no floats, no nesting.
RuleValue = StrictBool | StrictInt | StrictStr | list[StrictInt] | dict[str, StrictInt] | None  # null: a choice off
RulesSpec = Annotated[
    Preset | dict[str, RuleValue],
    Field(description="rules preset (gy-normal 贵阳正常番, gy-reduced 贵阳缩小番, liupanshui 六盘水, dushan 独山) or "
                      "{\"preset\": ..., <switch, docs/rules.md#switches>: value}"),
    WrapValidator(_rules)]


def _engine(model: BaseModel, kind: type, **computed: Any) -> Any:
    """The engine's frozen value ``kind`` (a dataclass) from a validated model: every field of ``kind`` the model
    has under the same name (lists become tuples), then ``computed``, the fields that need more than a copy. New
    fields named alike on both sides are carried without code here."""
    names = {f.name for f in dataclasses.fields(kind)} - set(computed)
    copied = {n: getattr(model, n) for n in type(model).model_fields if n in names}
    return kind(**{n: tuple(v) if isinstance(v, list) else v for n, v in copied.items()}, **computed)


def _tiles(value: str | list[str]) -> tuple[str, ...]:
    """MPSZ text (order lost) or a list of tiles (order kept), both validated already."""
    return tuple(parse_tiles(value)) if isinstance(value, str) else tuple(value)


# ---------------------------------------------------------------------------------------------- errors


class ErrorDetail(BaseModel):
    field: str
    message: str
    type: str


class ErrorBody(BaseModel):
    code: str = Field(description="machine-readable: invalid_hand, invalid_image, payload_too_large, ...")
    message: str = Field(description="what is wrong, in plain words")
    details: list[ErrorDetail] | None = None


# ------------------------------------------------------------------------------------------ scoring in


class MeldIn(StrictModel):
    """A laid meld (副露): 碰 pong, 点豆 exposed kong, 转弯豆 added kong, 闷豆 concealed kong."""

    type: Literal["pong", "kong", "added_kong", "concealed_kong"]
    tile: Tile
    from_: Seat | None = Field(None, alias="from", description="seat that fed the pong / exposed kong")
    late: StrictBool = Field(False, description="LPS 憨包豆: declared a round later than first possible")

    def to_meld(self) -> Meld:
        """The engine's meld (already validated here, so not parsed again)."""
        return Meld(self.type, self.tile, self.from_, self.late)


def _win_flags(kind: Any) -> dict[str, Any]:
    """The win-context flag fields, from their one definition (``scoring.hand.WIN_FLAGS``), in its order."""
    return {name: (kind, Field(False, description=f"{term}: {meaning}")) for name, (term, meaning) in WIN_FLAGS.items()}


WinContext = create_model(
    "WinContext", __base__=StrictModel,
    __doc__="How the hand was won (ignored while the hand is only waiting, except for the win values per wait).",
    self_drawn=(StrictBool, Field(False, description="自摸: the winner drew the tile himself")),
    **_win_flags(StrictBool))


class HandRequest(WinContext):
    """One player's hand as text, e.g. after correcting the tiles read from a photo."""

    concealed: Mpsz = Field(description="concealed tiles without the winning tile", examples=["123m456p789s1155p"])
    melds: list[MeldIn] = Field(default_factory=list, max_length=4)
    win_tile: Tile | None = Field(None, description="the winning tile; omit to get the waits (听牌) instead")
    rules: RulesSpec = "gy-normal"
    flipped: Tile | None = Field(None, description="翻鸡 indicator: the flipped tile (its next rank is a chicken)")
    seen: Mpsz | list[Tile] = Field("", max_length=200, description="other tiles in view (discards, other "
                                    "melds), counted against the copies still unseen of each wait: MPSZ text, or a "
                                    "list of tiles (a list may hold misread extra copies: they become notes)")


class RulesIn(StrictModel):
    """Rules given on their own, as the command line takes them (``--rules`` of ``zhuoji table new``, ``table
    profile``, ``chajiao``, ``hand``, ``settle``): checked as every request's ``rules`` field, so refused in the
    same words as the HTTP service."""

    rules: RulesSpec


# ----------------------------------------------------------------------------------------- scoring out


class HandTypeOut(OutModel):
    key: str = Field(description="fan-table row, e.g. qingdadui")
    name_zh: str = Field(description="牌型, e.g. 清大对")
    name_en: str = Field(description="English meaning, e.g. one suit, all triplets")
    fan: int


class WaitOut(OutModel):
    """One 听牌 wait: a tile that completes the hand."""

    tile: str
    hand_type: HandTypeOut
    self_drawn_value: int = Field(description="win value W if won by 自摸 (self-draw)")
    discard_win_allowed: bool = Field(description="may win on a discard (胡牌通行证: needs a 豆, or above 平胡)")
    copies_left: int = Field(description="copies not seen in the hand, melds and the other tiles in view")


class ChickenOut(OutModel):
    tile: str
    label: str
    count: int
    value: int = Field(description="fan per copy")


class ChickensOut(OutModel):
    """鸡 (chickens) held in this hand. Who pays whom needs the whole table (/v1/settle)."""

    flipped: str | None = Field(description="翻鸡 indicator as given")
    flipped_chicken: str | None = Field(description="the chicken it makes (next rank, 9 → 1)")
    golden: bool = Field(description="金鸡: indicator 9s, every 1s worth 2")
    tiles: list[ChickenOut]
    total: int


class HandAnalysis(OutModel):
    """Result of ``scoring.analyze_hand``, plus copies left per wait and the chickens held."""

    status: Literal["win", "not_a_win", "ready", "not_ready"] = Field(
        description="win: the winning tile completes the hand; not_a_win: it does not (不成牌); "
                    "ready: 叫牌, waiting on ≥1 tile; not_ready: no tile completes the hand")
    concealed: str
    melds: list[MeldIn]
    win_tile: str | None = None
    self_drawn: bool = False
    rules: str
    ready: bool = Field(description="叫牌 (ready): a winner, or a hand with ≥1 wait")
    hand_type: HandTypeOut | None = Field(None, description="牌型 of the complete hand")
    win_value: int = Field(0, description="win value W (fan paid by each payer) after 自摸/杠上花/报听")
    decompositions: list[list[str]] = Field(default_factory=list, description="readings, the scored one first")
    allowed: bool | None = Field(None, description="the win may be taken as stated (自摸 always; on a discard "
                                                   "only through the 豆 gate)")
    discard_win_allowed: bool | None = None
    discard_win_reason: str | None = None
    reason: str | None = Field(None, description="why the tiles are not a win")
    waits: list[WaitOut] = Field(default_factory=list, description="waits of the hand before the winning tile")
    best_fan: int = Field(0, description="best type fan over the waits (黄牌查叫)")
    best_hand_type: HandTypeOut | None = None
    chickens: ChickensOut | None = None
    explanation: list[str]


class TransferOut(OutModel):
    from_: int = Field(alias="from")
    to: int
    fan: int
    component: Literal["hand", "dou", "chicken"]
    reason: str

    @classmethod
    def of(cls, transfer: Transfer) -> TransferOut:
        return cls(from_=transfer.payer, to=transfer.payee, fan=transfer.fan, component=transfer.component,
                   reason=transfer.reason)


class WinOut(OutModel):
    type: str
    name: str
    name_en: str
    fan: int
    value: int


class PlayerSettlement(OutModel):
    seat: int
    ting: bool = Field(description="叫牌 (ready) at settlement")
    waits: list[str]
    hand: int = Field(description="net hand fan (牌型)")
    dou: int = Field(description="net 豆 (kongs)")
    chicken: int = Field(description="net 鸡 (chickens)")
    total: int
    burned: bool = Field(description="全烧: 热炮 discarder, 豆/鸡 income void")
    dealer: bool
    win: WinOut | None

    @classmethod
    def of(cls, seat: SeatResult) -> PlayerSettlement:
        win = None
        if seat.win is not None:
            ht = seat.win.hand_type
            win = WinOut(type=ht.key, name=ht.name_zh, name_en=ht.name_en, fan=ht.fan, value=seat.win.value)
        return cls(seat=seat.seat, ting=seat.ting, waits=list(seat.waits), hand=seat.hand, dou=seat.dou,
                   chicken=seat.chicken, total=seat.total, burned=seat.burned, dealer=seat.dealer, win=win)


# ------------------------------------------------------------------------------------------ settle in


class PlayerIn(StrictModel):
    """A seat's tiles; a seat that did not win may be told instead (a quick round): ``{"ready": true, "holds":
    "1s1s", "melds", "river"}`` or ``{"not_ready": true, …}`` (at 黄牌 only not_ready; see scoring.table)."""

    concealed: Mpsz | list[Tile] = Field(None, validate_default=False,
                                         description="13 tiles counting 3 per meld; a winner's exclude the win "
                                                     "tile. Required unless ready or not_ready")
    melds: list[MeldIn] = Field(default_factory=list, max_length=4)
    river: Mpsz | list[Tile] = Field("", description="discards still in front of the player (a list keeps order)")
    bao_ting: StrictBool = False
    not_ready: StrictBool = Field(False, description="hand not shown: this player did not win and is not 叫牌 "
                                                     "(not ready); give no concealed tiles with it")
    ready: StrictBool = Field(False, description="hand not shown at a win: this player did not win and is 叫牌 "
                                                 "(ready); give no concealed tiles, only holds")
    holds: Mpsz | list[Tile] = Field(None, validate_default=False,
                                     description="with ready/not_ready: the concealed tiles it holds that may be "
                                                 "鸡 (chickens); only those that are chickens under the rules and "
                                                 "the flipped tile count")

    def to_player(self, seat: int) -> Player:
        """The engine's player: its hand shown (``concealed``) or told (``ready`` / ``not_ready`` with the chicken
        tiles it ``holds``: a quick round); ``ValueError`` in the engine's words for a mix of the two."""
        where = f"P{seat}"
        told = None
        if self.ready and self.not_ready:
            raise ValueError(f"{where} is marked both ready and not_ready: either ready (叫牌) or not_ready")
        if self.ready or self.not_ready:
            mark = "ready" if self.ready else "not_ready"
            if self.concealed is not None:
                raise ValueError(f"{where} is marked {mark} (hand not shown), so give no concealed: either the "
                                 f"tiles or {mark} with the chicken tiles it holds (holds)")
            told = Told(ready=self.ready, holds=_tiles(self.holds or ""))
        elif self.holds is not None:
            raise ValueError(f"{where} gives holds (the chicken tiles of a hand not shown) without ready or "
                             f"not_ready: give either the tiles (concealed) or ready/not_ready with holds")
        elif self.concealed is None:
            raise ValueError(f"{where} lacks 'concealed' (the tiles); a hand not shown is {{\"ready\": true, "
                             f"\"holds\": …}} or {{\"not_ready\": true}}")
        return Player(concealed=() if told else _tiles(self.concealed), melds=tuple(m.to_meld() for m in self.melds),
                      river=_tiles(self.river), bao_ting=self.bao_ting, told=told)


class WinOutcome(StrictModel):
    type: Literal["win"]
    winners: list[Seat] = Field(min_length=1, max_length=3)
    win_tile: Tile
    self_drawn: StrictBool | None = Field(None, description="自摸; default: no discarder given")
    discarder: Seat | None = Field(None, description="who discarded the tile (the robbed player on 抢杠)")
    kong_draw: StrictBool = False
    hot_discard: StrictBool = False
    robbed_kong: StrictBool = False
    first_draw: StrictBool = Field(False, description="天胡/地胡: self-drawn on the winner's first draw (the dealer: "
                                                      "his dealt 14); scores under the house rules tianhu/dihu")

    def to_outcome(self) -> Win:
        return _engine(self, Win, self_drawn=self.discarder is None if self.self_drawn is None else self.self_drawn)


class DrawOutcome(StrictModel):
    type: Literal["draw"]

    def to_outcome(self) -> Draw:
        return Draw()


class PassLockOutcome(StrictModel):
    type: Literal["pass_lock_penalty"]
    player: Seat
    win_tile: Tile

    def to_outcome(self) -> PassLockPenalty:
        return _engine(self, PassLockPenalty)


class FalseWinOutcome(StrictModel):
    type: Literal["false_win"]
    player: Seat

    def to_outcome(self) -> FalseWin:
        return _engine(self, FalseWin)


Outcome = Annotated[WinOutcome | DrawOutcome | PassLockOutcome | FalseWinOutcome, Field(discriminator="type")]


class FirstOneSIn(StrictModel):
    discarder: Seat
    claimed_by: Seat | None = None

    def to_first(self) -> FirstOneS:
        return _engine(self, FirstOneS)


class HandEnd(StrictModel):
    """How one hand ended (docs/rules.md#engine-input): the players' tiles, the outcome and the chicken events. A table round
    is exactly this; ``/v1/settle`` adds the keys a table decides itself (rules, dealer, streak, base)."""

    players: list[PlayerIn] = Field(min_length=4, max_length=4)
    outcome: Outcome
    flipped: Tile | None = Field(None, description="翻鸡 indicator F; null when the wall was empty")
    first_1s: FirstOneSIn | None = None
    first_8p: FirstOneSIn | None = Field(None, description="the first discarded 8p: a 冲锋鸡 under the house rule "
                                                          "wuguji_chongfeng")
    gen_zhuang: StrictBool = Field(False, description="跟庄: the dealer's first discard was followed by all three; "
                                                      "paid under the house rule genzhuang")
    weekday: StrictInt | None = Field(None, ge=1, le=7, description="星期鸡: the round's day, 1..7 (7 = Sunday); "
                                                                     "needed when xingqi_ji is played")
    indicators: list[Tile] = Field(default_factory=list, max_length=8,
                                   description="前后鸡/滚筒鸡: extra indicator tiles, in the order they were turned")
    discard_order: list[Annotated[list[StrictInt | StrictStr | None], Field(min_length=2, max_length=3)]] | None = Field(
        None, max_length=108, description="独山: every discard in the order made, [seat, tile] or [seat, tile, "
                                          "claimed_by]; null: derived from the rivers (docs/rules.md#dushan)")

    def to_table(self, rules: Rules, **decided: Any) -> Table:
        """The engine's table under ``rules``, cross-checked (``scoring.table.check_table``: ``ValueError`` with the
        engine's words); ``decided``: what a table decides and this model does not carry (dealer, streak)."""
        return check_table(_engine(
            self, Table, rules=rules, players=tuple(p.to_player(seat) for seat, p in enumerate(self.players)),
            outcome=self.outcome.to_outcome(), first_1s=self.first_1s and self.first_1s.to_first(),
            first_8p=self.first_8p and self.first_8p.to_first(),
            discard_order=None if self.discard_order is None else parse_discard_order(self.discard_order), **decided))


class SettleRequest(HandEnd):
    """The table at the end of a hand (docs/rules.md#engine-input); see ``scoring/settle.py``."""

    names: list[Annotated[StrictStr, Field(min_length=1, max_length=40)]] | None = Field(
        None, min_length=4, max_length=4, description="the players' names, seats 0..3: explanations and errors "
                                                      "name them instead of P0–P3", examples=[["Ann", "Bo", "Cy", "Di"]])
    rules: RulesSpec = "gy-normal"
    dealer: Seat = 0
    streak: StrictInt = Field(1, ge=1, le=1000, description="连庄 count k, this hand included")
    base: StrictInt | None = Field(None, ge=1, le=MAX_BASE, description="底分; default (or null) the rules' base")

    def to_table(self, rules: Rules | None = None, **decided: Any) -> Table:
        """The engine's table under this request's rules and 底分 (or ``rules``), dealer and streak."""
        if rules is None:
            rules = get_rules(self.rules)
            rules = rules if self.base is None else dataclasses.replace(rules, base=self.base)
        return super().to_table(rules, **decided)


class SettleResponse(OutModel):
    rules: Rules = Field(description="the rules settled under: the preset and every switch (docs/rules.md#switches)")
    ledger: list[TransferOut]
    matrix: list[list[int]] = Field(description="matrix[i][j]: fan seat i pays seat j")
    players: list[PlayerSettlement]
    next_dealer: int
    next_streak: int
    explanation: list[str]

    @classmethod
    def of(cls, settlement: Settlement) -> SettleResponse:
        return cls(rules=settlement.rules, ledger=[TransferOut.of(t) for t in settlement.ledger],
                   matrix=settlement.matrix, players=[PlayerSettlement.of(p) for p in settlement.players],
                   next_dealer=settlement.next_dealer, next_streak=settlement.next_streak,
                   explanation=list(settlement.explanation))


class RetakeReason(OutModel):
    code: str = Field(description="no_tiles, count_mismatch, too_many_copies, low_confidence, blurry, glare, "
                                  "tiles_cut_off, ambiguous_layout; a table photo also seat_not_found, "
                                  "unplaced_tiles, river_not_separated")
    message: str = Field(description="what to do, in plain words")
    boxes: list[int] = Field(default_factory=list, description="the boxes concerned")



# -------------------------------------------------------------------------------------- 黄牌查叫 (draw)


class ChajiaoPlayer(StrictModel):
    seat: Seat | None = Field(None, description="default: position in the list")
    concealed: Mpsz = Field(description="13 tiles counting 3 per meld")
    melds: list[MeldIn] = Field(default_factory=list, max_length=4)
    bao_ting: StrictBool = False


class ChajiaoRequest(StrictModel):
    """2–4 hands shown at an exhaustive draw (黄牌). Seats not given are left out of the check."""

    rules: RulesSpec = "gy-normal"
    dealer: Seat = 0
    streak: StrictInt = Field(1, ge=1, le=1000)
    players: list[ChajiaoPlayer] = Field(min_length=2, max_length=4)


class ChajiaoWait(OutModel):
    tile: str
    copies_left: int = Field(description="copies not among the hands shown")


class ChajiaoPlayerResult(OutModel):
    seat: int
    given: bool = Field(description="whether this seat's hand was shown")
    source: Literal["text", "photo", "absent"]
    concealed: str | None = None
    melds: list[MeldIn] = Field(default_factory=list)
    bao_ting: bool = False
    ting: bool = Field(False, description="叫牌 (ready)")
    waits: list[ChajiaoWait] = Field(default_factory=list)
    best_fan: int = Field(0, description="best type fan T over the waits (no 自摸/杠上花/报听 modifiers)")
    best_hand_type: HandTypeOut | None = None
    total: int = Field(0, description="net fan of the draw check")
    retake: list[RetakeReason] = Field(default_factory=list, description="for a photo: why it may be misread")


class ChajiaoResponse(OutModel):
    rules: str
    players: list[ChajiaoPlayerResult]
    ledger: list[TransferOut] = Field(description="each non-叫牌 player pays each 叫牌 player his best fan T")
    next_dealer: int | None = Field(description="next dealer (all four seats given), else null")
    explanation: list[str]


# ---------------------------------------------------------------------------------------- photo scoring


def _blank_to_none(value: Any) -> Any:
    # An HTML form sends "" for an empty <select>: it means "not given".
    return None if value == "" else value


OptionalTile = Annotated[Tile | None, BeforeValidator(_blank_to_none)]


ScoreContext = create_model(
    "ScoreContext",
    __doc__="The context of a photographed hand: rules and how it was won (form fields of /v1/score, beside the\n"
            "``image`` file; unknown fields are refused by the route).",
    rules=(Preset, "gy-normal"),
    win_tile=(OptionalTile, Field(None, description="the winning tile; default: the last tile of a 14-tile hand")),
    flipped=(OptionalTile, Field(None, description="翻鸡 indicator; default: the tile lying apart in the photo")),
    self_drawn=(bool, Field(False, description="自摸 (self-drawn); false: 点炮 (won on a discard)")),
    **_win_flags(bool),
    annotate=(bool, Field(True, description="include the annotated photo (base64 JPEG)")))


def win_flags(ctx: BaseModel) -> dict[str, bool]:
    """The win-context flags of a :data:`WinContext` or :data:`ScoreContext` (self_drawn apart), as keywords."""
    return {name: getattr(ctx, name) for name in WIN_FLAGS}


class ReadTile(OutModel):
    """One box: what the detector saw, what the reading made of it, and where it lies."""

    index: int
    tile: str = Field(description="as read (after the rules' corrections): a tile, back, other or ? (unreadable)")
    detected: str = Field(description="the detector's top-1 class")
    box: list[float] = Field(description="x1, y1, x2, y2 in image pixels")
    confidence: float
    alternatives: list[Alternative]
    role: Literal["concealed", "meld", "river", "indicator", "unassigned"]
    group: int | None = Field(None, description="meld index for role meld")
    order: int = Field(0, description="position within its role (left to right for the player)")
    changed: bool = Field(False, description="the rules changed the detector's reading")
    doubtful: bool = Field(False, description="still uncertain: worth a look")


class MeldRead(OutModel):
    type: str
    tile: str | None = Field(description="None: a face-down 闷豆 whose tile is not visible")
    boxes: list[int]
    missing: int = Field(0, description="tiles of the meld without a box")


class HandRead(OutModel):
    concealed: str = Field(description="concealed tiles, MPSZ")
    concealed_tiles: list[str] = Field(description="the same in layout order; ? = unreadable, or no tile of the 108-tile set")
    melds: list[MeldRead]
    river: list[str]
    indicator: str | None = Field(description="the tile lying apart (翻鸡 indicator)")
    count: int = Field(description="concealed + 3 per meld: 13 waiting, 14 with the winning tile")
    complete: bool | None = Field(description="the 14 tiles form a complete hand (成牌); null unless 14")


class DisagreedTile(OutModel):
    tile: str = Field(description="the tile at this place of the calibration photo")
    read_as: str = Field(description="what the networks named it without the calibration")


class CalibrationFile(OutModel):
    """A set's calibration ("teach it your set"): what ``POST /v1/calibrate`` answers and ``zhuoji calibrate``
    writes, to send back as the ``calibration`` form field or keep with a table."""

    version: int
    tiles: list[str] = Field(description="the 27 suited tiles 1m … 9s, the references' order")
    kind: Literal["features", "probs"] = Field(description="which output of the crop classifier the references are")
    model: str = Field(description="the crop classifier it was made with: a retrained one needs a new photo")
    model_sha256: str | None = Field(None, description="the SHA-256 of that classifier's file")
    shape: list[int] = Field(description="[27, quarter turns, length of one reference]")
    agreement: float = Field(description="share of the 27 tiles the networks named as their place says")
    references_f16: str = Field(description="the references as float16 numbers, base64")
    disagreed: list[DisagreedTile] = Field(default_factory=list, description="the tiles the networks named otherwise")


class DisagreedTileIn(StrictModel):
    tile: str = Field(max_length=8, description="the tile at this place of the calibration photo")
    read_as: str = Field(max_length=8, description="what the networks named it without the calibration")


class CalibrationIn(CalibrationFile):
    """A calibration sent to keep with a table (``PUT /v1/tables/{id}/calibration``, ``zhuoji table calibrate
    set.json``): the :class:`CalibrationFile` ``POST /v1/calibrate`` answers and ``zhuoji calibrate`` writes, read
    strictly (unknown keys and wrong types refused); its references are checked by
    ``pipeline.calibration.check_calibration``."""

    model_config = StrictModel.model_config

    model: str = Field(min_length=1, max_length=200, description="the crop classifier it was made with")
    model_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$", description="the SHA-256 of that "
                                                                                "classifier's file")
    agreement: float = Field(ge=0, le=1, description="share of the 27 tiles the networks named as their place "
                                                     "says")
    disagreed: list[DisagreedTileIn] = Field(default_factory=list, max_length=27,
                                             description="the tiles the networks named otherwise")


class CalibrationNote(OutModel):
    """Whether a set's calibration ("teach it your set") named the tiles of this photo, and if not, why."""

    applied: bool = Field(description="the tiles were named with the set's references too")
    source: Literal["request", "table"] = Field(description="the calibration form field, or the table's own")
    message: str = Field(description="in plain words; starts with 'recalibrate:' when the table's calibration no "
                                     "longer fits the crop classifier (the photo was read without it)")


class ChangeOut(OutModel):
    """A box whose reading the rules changed."""

    box: int
    from_: str = Field(alias="from", description="the detector's name")
    to: str = Field(description="the name the rules gave it")
    p_from: float
    p_to: float
    reason: str

    @classmethod
    def of(cls, change: TileChange) -> ChangeOut:
        return cls(box=change.box, from_=change.old, to=change.new, p_from=round(change.p_old, 3),
                   p_to=round(change.p_new, 3), reason=change.reason)


class DoubtOut(OutModel):
    """A reading still uncertain: the boxes, the tile chosen (null: unknown) and the alternatives."""

    boxes: list[int]
    tile: str | None
    alternatives: list[Alternative]
    reason: str

    @classmethod
    def of(cls, doubt: Doubt) -> DoubtOut:
        return cls(boxes=list(doubt.boxes), tile=doubt.tile, reason=doubt.reason,
                   alternatives=[Alternative(tile=t, p=round(p, 3)) for t, p in doubt.alternatives])


class PlacedOut(OutModel):
    box: int
    tile: str = Field(description="the detector's top-1 name")
    turned: bool = Field(False, description="lies sideways (turned 90°, e.g. the claimed tile of a 碰 pong)")

    @classmethod
    def of(cls, placed: PlacedTile) -> PlacedOut:
        return cls(box=placed.box, tile=placed.tile, turned=placed.turned)


class MeldGroupOut(OutModel):
    type: str
    tile: str | None = Field(description="null: every tile face down (an unidentified 闷豆)")
    tiles: list[PlacedOut]
    missing: int = Field(description="tiles of the meld without a box")
    confidence: float

    @classmethod
    def of(cls, group: MeldGroup) -> MeldGroupOut:
        return cls(type=group.type, tile=group.tile, tiles=[PlacedOut.of(t) for t in group.tiles],
                   missing=group.missing, confidence=round(group.confidence, 3))


class UnassignedOut(OutModel):
    box: int
    reason: str


class LayoutOut(OutModel):
    """``vision.layout``'s grouping of the boxes in front of one player."""

    concealed: list[PlacedOut] = Field(description="the 手牌 concealed hand, left to right for the player")
    melds: list[MeldGroupOut]
    river: list[PlacedOut] = Field(description="牌河 discards in reading order")
    indicator: PlacedOut | None = Field(description="the 翻鸡 tile lying apart")
    unassigned: list[UnassignedOut]
    tile_size: list[float] = Field(description="width along the row, depth across it, in pixels")
    angle: float = Field(description="direction of the rows in degrees (x right, y down; clockwise positive)")
    holes: int = Field(description="tile-sized gaps inside the concealed row")
    confidence: dict[str, float] = Field(description="per part, 0..1 (concealed, river, indicator, orientation, "
                                                     "hand)")
    notes: list[str]

    @classmethod
    def of(cls, lay: Layout) -> LayoutOut:
        return cls(concealed=[PlacedOut.of(t) for t in lay.concealed],
                   melds=[MeldGroupOut.of(m) for m in lay.melds], river=[PlacedOut.of(t) for t in lay.river],
                   indicator=PlacedOut.of(lay.indicator) if lay.indicator else None,
                   unassigned=[UnassignedOut(box=u.box, reason=u.reason) for u in lay.unassigned],
                   tile_size=[round(lay.tile_size[0], 1), round(lay.tile_size[1], 1)], angle=round(lay.angle, 1),
                   holes=lay.holes, confidence={k: round(v, 3) for k, v in lay.confidence.items()},
                   notes=list(lay.notes))


class ReadResponse(OutModel):
    image: ImageInfo
    tiles: list[ReadTile]
    hand: HandRead
    ok: bool = Field(description="no retake needed")
    retake: list[RetakeReason] = Field(description="why a new photo would help, in plain words")
    changes: list[ChangeOut] = Field(description="boxes whose reading the rules changed")
    doubtful: list[DoubtOut] = Field(description="readings still uncertain, with alternatives")
    layout: LayoutOut = Field(description="vision.layout's grouping: concealed, melds, river, indicator")
    model: str
    seconds: float
    calibration: CalibrationNote | None = Field(None, description="the set's calibration, when one was asked for")


class ScoreResponse(ReadResponse):
    context: ScoreContext
    hand_request: HandRequest | None = Field(description="the /v1/hand request this photo stands for: send it "
                                                         "again with corrected tiles to re-score")
    assumptions: list[str] = Field(description="defaults taken for what the context left out")
    analysis: HandAnalysis | None = Field(description="the score; null when the tiles cannot be scored yet")
    score_error: ErrorBody | None = Field(description="why there is no score (e.g. 11 tiles read)")
    annotated_jpeg: str | None = Field(description="the photo with labelled boxes, base64 JPEG")
