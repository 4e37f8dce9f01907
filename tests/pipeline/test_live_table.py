"""Live mode for a fixed camera over the table (``pipeline.live_table``): the laid-down signal, and the watch that
reads only settled views and proposes each round once. Frames here are textures standing for the table's states
(every frame a little noisy, as a still camera gives them); a scripted detector answers each state's boxes, built
by hand (``tests/vision/table_support.py``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.table_video import camera_noise
from pipeline.live_table import RoundWatch, laid_down, same_table, shows_hand
from pipeline.table_photo import TablePhoto, TableReading, table_reading
from tests.vision.table_support import SIZE, WON, SeatTiles, TablePlan, build
from vision.classes import CLASS_NAMES
from vision.detections import Detections
from vision.table import read_table_tiles, table_layout


def answer(dets: Detections) -> TableReading:
    table = table_layout(dets)
    return table_reading(TablePhoto(np.zeros((8, 8, 3), np.uint8), dets, table, read_table_tiles(dets, table), 0.0))


def playing(plan: TablePlan) -> TablePlan:
    """The same table during play: the hands stand, so no concealed tile is seen face up; melds and rivers are."""
    return TablePlan([SeatTiles([], s.melds, s.river) for s in plan.seats], plan.wall, plan.flipped)


def next_round(plan: TablePlan) -> TablePlan:
    """Another round's table: every seat's tiles moved one seat on (a different hand at each place), a shorter wall
    (its flipped tile well inside the middle, not where a third river row of the seat beside it would lie)."""
    seats = plan.seats
    return TablePlan([copy.deepcopy(seats[(s + 1) % 4]) for s in range(4)], plan.wall - 2, "7s")


def texture(seed: int, size: int = 480) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 255, (size // 8, size // 8, 3), dtype=np.uint8)
    return cv2.resize(noise, (size, size), interpolation=cv2.INTER_CUBIC)


Alter = Callable[[Detections, int], Detections]  # a state's boxes as seen at a given look (1, 2, ...) of that state


class StateDetector:
    """Scripted detector: each state of the table is a texture; a frame shows the state whose texture it is nearest,
    and the detector reports that state's boxes (in a photo of ``SIZE`` pixels), changed by ``alter`` where given."""

    model_path = Path("scripted.onnx")

    def __init__(self, states: dict[str, tuple[np.ndarray, Detections]], alter: dict[str, Alter] | None = None) -> None:
        self.states, self.alter = states, alter or {}
        self.calls: list[str] = []

    def state_of(self, frame: np.ndarray) -> str:
        return min(self.states, key=lambda k: float(cv2.absdiff(frame, self.states[k][0]).mean()))

    def __call__(self, image: np.ndarray, **_: object) -> Detections:
        name = self.state_of(image)
        self.calls.append(name)
        dets = copy.deepcopy(self.states[name][1])
        return self.alter[name](dets, self.calls.count(name)) if name in self.alter else dets


def name_box(dets: Detections, box: int, kind: str, p: float, second: str, p_second: float) -> None:
    """Box ``box`` read as ``kind`` with ``p``, the next guess ``second``."""
    dets.class_id[box], dets.confidence[box] = CLASS_NAMES.index(kind), p
    dets.top3_class[box] = (CLASS_NAMES.index(kind), CLASS_NAMES.index(second), -1)
    dets.top3_prob[box] = (p, p_second, 0.0)


def table_states(**extra: Detections) -> dict[str, tuple[np.ndarray, Detections]]:
    states = {"play": build(playing(WON)).dets, "laid": build(WON).dets, "pushed": Detections.empty((SIZE, SIZE)),
              **extra}
    return {name: (texture(seed), dets) for seed, (name, dets) in enumerate(states.items())}


def frames(states: dict[str, tuple[np.ndarray, Detections]], script: list[tuple[str, int]], seed: int = 0
           ) -> list[np.ndarray]:
    """``script``: (state, frames); a state "arm" is a hand over the table: a new view each frame."""
    rng = np.random.default_rng(seed)
    out = []
    for name, count in script:
        for _ in range(count):
            if name == "arm":
                out.append(texture(int(rng.integers(1000, 10**6))))
            else:
                out.append(camera_noise(states[name][0], rng))
    return out


def watch(detector: StateDetector, script_frames: list[np.ndarray], settle: int = 3, looks: int = 4
          ) -> tuple[RoundWatch, list]:
    w = RoundWatch(detector, settle=settle, looks=looks)
    proposals = [p for i, f in enumerate(script_frames) if (p := w.add(i + 1, f)) is not None]
    return w, proposals


def seats_of(reading: TableReading) -> list[tuple[list[str], list[tuple[str, str | None]], list[str]]]:
    return [(s.concealed, [(m.type, m.tile) for m in s.melds], s.river) for s in reading.seats]


def plan_seats(plan: TablePlan) -> list[tuple[list[str], list[tuple[str, str | None]], list[str]]]:
    return [(s.concealed, [(k, t) for k, t in s.melds], s.river) for s in plan.seats]


def test_laid_down_needs_three_seats_showing_a_hand() -> None:
    assert laid_down(answer(build(WON).dets))
    assert not laid_down(answer(build(playing(WON)).dets))  # during play: melds and rivers only
    assert not laid_down(answer(Detections.empty((SIZE, SIZE))))
    two = TablePlan([s if i < 2 else SeatTiles([], s.melds, s.river) for i, s in enumerate(WON.seats)])
    read = answer(build(two).dets)
    assert [shows_hand(s) for s in read.seats] == [True, True, False, False] and not laid_down(read)


def test_same_table_tells_a_round_from_the_next() -> None:
    a, b = answer(build(WON).dets), answer(build(next_round(WON)).dets)
    assert same_table(a, a) == 1.0
    assert same_table(a, b) < 0.5


def test_one_proposal_when_the_hands_are_laid_down_and_none_after_the_push() -> None:
    states = table_states()
    detector = StateDetector(states)
    script = [("arm", 6), ("play", 6), ("arm", 3), ("laid", 10), ("arm", 2), ("laid", 6), ("arm", 3), ("pushed", 8)]
    w, proposals = watch(detector, frames(states, script))
    assert len(proposals) == 1
    assert seats_of(proposals[0].reading) == plan_seats(WON)
    assert proposals[0].reading.flipped == WON.flipped and proposals[0].reading.winner == 0
    # The laid table's second settled frame (6 + 6 + 3 frames before it, then the reference and settle = 3 frames
    # unchanged after it): the first look on frame 15 + 1 + 3, the agreeing one on the next.
    assert proposals[0].frame == 15 + 1 + 3 + 1
    # Read only on settled views, once per still spell (twice where the hands lie): play, laid ×2, laid again after
    # the arm (the table already proposed), pushed.
    assert detector.calls == ["play", "laid", "laid", "laid", "pushed"]
    assert w.stats.looks == 5 and w.stats.frames == sum(n for _, n in script)


def test_the_next_round_is_proposed_after_the_push() -> None:
    states = table_states(second=build(next_round(WON)).dets)
    script = [("laid", 8), ("arm", 3), ("pushed", 6), ("arm", 2), ("play", 6), ("arm", 2), ("second", 8)]
    _, proposals = watch(StateDetector(states), frames(states, script))
    assert [seats_of(p.reading) for p in proposals] == [plan_seats(WON), plan_seats(next_round(WON))]


def test_a_hand_missed_by_one_look_is_kept() -> None:
    """The second look of a laid-down table misses seats 2 and 3's hands: the spell's tracks keep a box one look
    unseen, so the second look still reads the table as the first did, and the round is proposed on it."""
    placed = build(WON)
    seen = np.ones(len(placed.dets), bool)
    seen[placed.concealed[2] + placed.concealed[3]] = False
    assert not laid_down(answer(placed.dets[seen]))

    def miss_two_hands(dets: Detections, look: int) -> Detections:
        return dets[seen] if look == 2 else dets

    states = table_states()
    detector = StateDetector(states, {"laid": miss_two_hands})
    _, proposals = watch(detector, frames(states, [("laid", 10)]))
    assert detector.calls == ["laid"] * 2 and len(proposals) == 1
    assert seats_of(proposals[0].reading) == plan_seats(WON)


def test_a_reading_without_hands_after_a_laid_one_is_looked_past() -> None:
    """Readings of one still spell: laid down, then two hands missing (e.g. boxes gone from two looks running),
    then laid down twice: the spell looks past the miss, neither ending nor arming, and proposes on the fourth."""
    laid = answer(build(WON).dets)
    two = TablePlan([s if i < 2 else SeatTiles([], s.melds, s.river) for i, s in enumerate(WON.seats)])
    readings = iter([laid, answer(build(two).dets), laid, laid])
    states = table_states()
    w = RoundWatch(StateDetector(states), settle=3, read=lambda *_: next(readings))
    proposals = [p for i, f in enumerate(frames(states, [("laid", 10)])) if (p := w.add(i + 1, f))]
    assert w.stats.looks == 4 and len(proposals) == 1 and proposals[0].reading is laid


def test_a_first_look_that_misses_one_hand_too_many_looks_again() -> None:
    """The first look of a laid-down table sees seats 0 and 1's hands only (two: one short of laid down); the spell
    looks again rather than taking the view for one without laid hands, and proposes on the third look. A still
    play view, with no hand shown, is read once."""
    placed = build(WON)
    seen = np.ones(len(placed.dets), bool)
    seen[placed.concealed[2] + placed.concealed[3]] = False

    def first_misses(dets: Detections, look: int) -> Detections:
        return dets[seen] if look == 1 else dets

    states = table_states()
    detector = StateDetector(states, {"laid": first_misses})
    _, proposals = watch(detector, frames(states, [("play", 8), ("arm", 1), ("laid", 10)]))
    assert detector.calls == ["play"] + ["laid"] * 3 and len(proposals) == 1
    assert seats_of(proposals[0].reading) == plan_seats(WON)


def test_rivers_need_not_agree() -> None:
    """A discard read two ways on alternate looks (rivers are voted, not asked to agree): the hands agree, and the
    round is proposed on the second look."""
    discard = build(WON).river[3][0]

    def flicker(dets: Detections, look: int) -> Detections:
        if look % 2:
            name_box(dets, discard, "9m", 0.9, "8m", 0.05)
        return dets

    states = table_states()
    detector = StateDetector(states, {"laid": flicker})
    _, proposals = watch(detector, frames(states, [("laid", 10)]))
    assert detector.calls == ["laid"] * 2 and len(proposals) == 1
    assert seats_of(proposals[0].reading)[:3] == plan_seats(WON)[:3]
    assert proposals[0].reading.seats[3].concealed == WON.seats[3].concealed


def test_a_new_round_is_not_proposed_without_the_hands_pushed_in_between() -> None:
    """A laid-down table read differently after an arm passed (a tile moved, or misread): the round was proposed;
    it is not proposed again until the table is seen without its hands."""
    states = table_states(second=build(next_round(WON)).dets)
    _, proposals = watch(StateDetector(states), frames(states, [("laid", 8), ("arm", 2), ("second", 8)]))
    assert len(proposals) == 1


def test_a_hand_held_over_the_table_does_not_repeat_the_proposal() -> None:
    """After the proposal a hand rests over two seats (a still view without their hands: the watch is armed again);
    when it goes, the same table is read, and it is not proposed twice."""
    covered = TablePlan([s if i < 2 else SeatTiles([], [], []) for i, s in enumerate(WON.seats)], WON.wall, WON.flipped)
    states = table_states(covered=build(covered).dets)
    script = [("laid", 8), ("arm", 2), ("covered", 6), ("arm", 2), ("laid", 8)]
    detector = StateDetector(states)
    w, proposals = watch(detector, frames(states, script))
    # two hands shown under the hand: one short of laid down, so looked at twice before the watch is armed again
    assert len(proposals) == 1 and detector.calls == ["laid", "laid", "covered", "covered", "laid", "laid"]
    assert not w.armed


def test_a_tile_misread_on_one_look_is_outvoted() -> None:
    """The first look reads seat 3's first concealed tile, 4p, as 9p (9p 0.9, 4p 0.05); the next looks read 4p
    (0.95). The looks' votes name it 4p from the second look on, so the second and third looks agree: the round is
    proposed a look later than a steady reading would be, and right."""
    tile = build(WON).concealed[3][0]

    def misread_first(dets: Detections, look: int) -> Detections:
        if look == 1:
            name_box(dets, tile, "9p", 0.9, "4p", 0.05)
        return dets

    states = table_states()
    detector = StateDetector(states, {"laid": misread_first})
    _, proposals = watch(detector, frames(states, [("laid", 10)]))
    assert detector.calls == ["laid"] * 3 and len(proposals) == 1
    assert seats_of(proposals[0].reading) == plan_seats(WON)


def test_looks_that_never_agree_propose_nothing() -> None:
    """A concealed tile named anew at each look, each time more surely: the vote follows the latest name, no two
    looks in a row agree, and the still spell stops reading after ``looks`` looks."""
    tile = build(WON).concealed[3][0]

    def renamed(dets: Detections, look: int) -> Detections:
        name_box(dets, tile, ["9p", "1m", "7m", "3s"][look % 4], 0.5 + 0.1 * look, "4p", 0.05)
        return dets

    states = table_states()
    detector = StateDetector(states, {"laid": renamed})
    w, proposals = watch(detector, frames(states, [("laid", 14)]))
    assert proposals == [] and w.stats.looks == 4 == len(detector.calls)


def test_settle_and_looks_are_checked() -> None:
    with pytest.raises(ValueError, match="settle"):
        RoundWatch(StateDetector(table_states()), settle=0)
