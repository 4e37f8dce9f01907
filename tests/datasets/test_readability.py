"""The blind readability check of difficult synthetic labels (datasets/readability.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.readability import draw, labels, main, read_answers, read_key, score
from vision.classes import CLASS_NAMES


@pytest.fixture
def tiny_set(tmp_path: Path) -> Path:
    """Three 160×120 scenes, each with a plain 5p, a blurred 7s and a `back` (never difficult)."""
    root = tmp_path / "synth"
    for kind in ("images", "labels", "difficult"):
        (root / kind / "val").mkdir(parents=True)
    rng = np.random.default_rng(0)
    for k in range(3):
        cv2.imwrite(str(root / "images" / "val" / f"{k:02d}.jpg"), rng.integers(0, 255, (120, 160, 3), np.uint8))
        rows = [(CLASS_NAMES.index("5p"), 0.2, 0.5), (CLASS_NAMES.index("7s"), 0.5, 0.5),
                (CLASS_NAMES.index("back"), 0.8, 0.5)]
        (root / "labels" / "val" / f"{k:02d}.txt").write_text(
            "".join(f"{c} {x} {y} 0.15 0.3\n" for c, x, y in rows))
        (root / "difficult" / "val" / f"{k:02d}.txt").write_text("-\nblurred\n-\n")
    return root


def test_the_sheets_mix_difficult_and_plain_suited_labels_and_hide_their_names(tiny_set: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "sheets"
    assert main(["sheets", str(tiny_set), "--difficult", "2", "--plain", "5", "--out", str(out)]) == 0
    key = json.loads((out / "key.json").read_text())["items"]
    assert sorted(row["reason"] for row in key) == ["blurred"] * 2 + ["plain"] * 3  # only 3 plain suited exist
    assert {row["tile"] for row in key} == {"5p", "7s"}  # `back` is never drawn
    assert {(row["tile"], row["index"]) for row in key} == {("5p", 0), ("7s", 1)}
    sheets = sorted(out.glob("sheet_*.png"))
    assert len(sheets) == 1 and cv2.imread(str(sheets[0])) is not None
    assert "5 tiles (blurred 2, plain 3)" in capsys.readouterr().out


def test_the_draw_is_seeded_and_shuffled(tiny_set: Path) -> None:
    items = labels(tiny_set, "val")
    assert len(items) == 6
    assert draw(items, 3, 3, 1) == draw(items, 3, 3, 1)
    orders = {tuple(i.reason for i in draw(items, 3, 3, seed)) for seed in range(10)}
    assert len(orders) > 1  # not difficult first, plain after


def test_answers_are_scored_by_reason(tiny_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "sheets"
    main(["sheets", str(tiny_set), "--difficult", "3", "--plain", "3", "--out", str(out)])
    key = json.loads((out / "key.json").read_text())["items"]
    lines = []
    for k, row in enumerate(key):
        if row["reason"] == "plain":
            lines.append(f"{k} {row['tile']}")  # named for sure
        elif k == next(j for j, r in enumerate(key) if r["reason"] != "plain"):
            lines.append(f"{k} {row['tile']}?")  # one blurred tile guessed right
        else:
            lines.append(f"{k} ?")
    answers = tmp_path / "answers.txt"
    answers.write_text("# one line per tile\n" + "\n".join(lines) + "\n")
    table = score(read_key(out)[1], read_answers(answers, len(key)))
    assert table["plain"]["sure right"] == 3 and table["blurred"]["guessed right"] == 1
    assert table["blurred"]["not named"] == 2
    capsys.readouterr()
    assert main(["score", str(out), str(answers)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1].split() == ["plain", "3", "0", "0", "0", "3"]
    assert printed[2].split() == ["blurred", "0", "1", "0", "2", "3"]


def test_apply_makes_the_labels_named_for_sure_plain(tiny_set: Path, tmp_path: Path) -> None:
    out, checked = tmp_path / "sheets", tmp_path / "checked"
    main(["sheets", str(tiny_set), "--difficult", "all", "--plain", "0", "--only", "blurred", "--out", str(out)])
    split, items = read_key(out)
    assert split == "val" and len(items) == 3 and all(i.reason == "blurred" for i in items)
    answers = tmp_path / "answers.txt"
    answers.write_text(f"0 {items[0].tile}\n1 5p\n2 {items[2].tile}?\n")  # sure right, sure wrong, a guess
    assert main(["apply", str(tiny_set), str(out), str(answers), "--to", str(checked)]) == 0
    words = {f.stem: f.read_text().split() for f in checked.glob("*.txt")}
    assert len(words) == 3 and all(w[0] == "-" and w[2] == "-" for w in words.values())  # others unchanged
    assert words[items[0].scene][1] == "-" and words[items[1].scene][1] == "-"  # named for sure: readable
    assert words[items[2].scene][1] == "blurred"  # a guess: still difficult
    assert sorted(w[1] for w in words.values()) == ["-", "-", "blurred"]


@pytest.mark.parametrize(("text", "message"), [
    ("0 5p\n1 5p\n", "no answer for tile(s) 2"),
    ("0 5p\n0 7s\n1 ?\n2 ?\n", "answered twice"),
    ("0 east\n1 ?\n2 ?\n", "not a suited tile"),
    ("0 5p 7s\n", "expected 'N TILE'"),
    ("0 5p\n1 ?\n7 ?\n", "no tile number 7"),
])
def test_bad_answers_are_a_clear_error(tiny_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                       text: str, message: str) -> None:
    out = tmp_path / "sheets"
    main(["sheets", str(tiny_set), "--difficult", "1", "--plain", "2", "--out", str(out)])
    answers = tmp_path / "answers.txt"
    answers.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["score", str(out), str(answers)])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_a_folder_that_is_no_dataset_is_a_clear_error(tiny_set: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["sheets", str(tmp_path), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "no labels/val/ folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["score", str(tmp_path), str(tmp_path / "answers.txt")])
    assert exc.value.code == 2 and "run `sheets` first" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["sheets", str(tiny_set), "--only", "smudged", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "reasons are blurred, hidden, truncated" in capsys.readouterr().err


@pytest.mark.parametrize("check", sorted(p.name for p in (Path(__file__).parents[2] / "datasets" /
                                                         "readability_checks").iterdir()))
def test_the_committed_checks_answer_every_tile_of_their_key(check: str) -> None:
    folder = Path(__file__).parents[2] / "datasets" / "readability_checks" / check
    split, items = read_key(folder)
    answers = read_answers(folder / "answers.txt", len(items))
    table = score(items, answers)
    assert split == "val" and sum(sum(c.values()) for c in table.values()) == len(items)
    assert "plain" in table and table["plain"]["sure right"] > 0  # every check mixes in plain tiles
