"""Live mode for a fixed camera over the table (``pipeline.live_table``): the laid-down signal, and the watch that
reads only settled views and proposes each round once. Frames here are textures standing for the table's states
(every frame a little noisy, as a still camera gives them); a scripted detector answers each state's boxes, built
by hand (``tests/vision/table_support.py``)."""

from __future__ import annotations

import copy
from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.table_video import camera_noise
from pipeline.live_table import RoundWatch, laid_down, same_table, shows_hand
from pipeline.table_photo import TablePhoto, TableReading, table_reading
from tests.vision.table_support import SIZE, WON, SeatTiles, TablePlan, build
from vision.detections import Detections
from vision.table import read_table_tiles, table_layout


def answer(dets: Detections) -> TableReading:
    table = table_layout(dets)
    return table_reading(TablePhoto(np.zeros((8, 8, 3), np.uint8), dets, table, read_table_tiles(dets, table), 0.0))


def playing(plan: TablePlan) -> TablePlan:
    """The same table during play: the hands stand, so no concealed tile is seen face up; melds and rivers are."""
    return TablePlan([SeatTiles([], s.melds, s.river) for s in plan.seats], plan.wall, plan.flipped)


def next_round(plan: TablePlan) -> TablePlan:
    """Another round's table: every seat's tiles moved one seat on (a different hand at each place)."""
    seats = plan.seats
    return TablePlan([copy.deepcopy(seats[(s + 1) % 4]) for s in range(4)], plan.wall, "7s")


def texture(seed: int, size: int = 480) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 255, (size // 8, size // 8, 3), dtype=np.uint8)
    return cv2.resize(noise, (size, size), interpolation=cv2.INTER_CUBIC)


class StateDetector:
    """Scripted detector: each state of the table is a texture; a frame shows the state whose texture it is nearest,
    and the detector reports that state's boxes (in a photo of ``SIZE`` pixels). ``misread``: states whose reading
    changes one tile on every other call (a tile the detector cannot make up its mind about)."""

    model_path = Path("scripted.onnx")

    def __init__(self, states: dict[str, tuple[np.ndarray, Detections]], misread: set[str] = frozenset()) -> None:
        self.states, self.misread = states, misread
        self.calls: list[str] = []

    def state_of(self, frame: np.ndarray) -> str:
        return min(self.states, key=lambda k: float(cv2.absdiff(frame, self.states[k][0]).mean()))

    def __call__(self, image: np.ndarray, **_: object) -> Detections:
        name = self.state_of(image)
        self.calls.append(name)
        dets = copy.deepcopy(self.states[name][1])
        if name in self.misread and len(self.calls) % 2:
            first = 0  # seat 0's first concealed tile, read as the next kind
            dets.class_id[first] = (dets.class_id[first] + 1) % 27
            dets.top3_class[first, 0] = dets.class_id[first]
        return dets


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


def watch(detector: StateDetector, script_frames: list[np.ndarray], settle: int = 3) -> tuple[RoundWatch, list]:
    w = RoundWatch(detector, settle=settle)
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
    assert len(proposals) == 1 and detector.calls == ["laid", "laid", "covered", "laid", "laid"]
    assert not w.armed


def test_looks_that_disagree_propose_nothing() -> None:
    """A tile read two ways on alternate looks: two readings in a row never agree, and the still spell stops
    reading after ``looks``; the proposal comes once the tile reads steadily."""
    states = table_states()
    detector = StateDetector(states, misread={"laid"})
    w = RoundWatch(detector, settle=3, looks=4)
    assert [w.add(i, f) for i, f in enumerate(frames(states, [("laid", 12)]))] == [None] * 12
    assert w.stats.looks == 4
    detector.misread = set()
    proposals = [p for i, f in enumerate(frames(states, [("arm", 1), ("laid", 8)], seed=1)) if (p := w.add(i, f))]
    assert len(proposals) == 1 and seats_of(proposals[0].reading) == plan_seats(WON)


def test_settle_and_looks_are_checked() -> None:
    with pytest.raises(ValueError, match="settle"):
        RoundWatch(StateDetector(table_states()), settle=0)
