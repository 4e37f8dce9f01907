"""``zhuoji table …`` and ``zhuoji chajiao``: the same store and checks as the API; bad input is one line, exit 2."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main
from tables import TableStore
from tests.tables.support import draw_round, impossible_round, win_round

NAMES = "Ann,Bo,Cy,Di"
E1 = {0: "56m23344556788s", 1: "123456s234p789m5p", 2: "224567m2468p799s", 3: "3467889m7p11247s"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, round_ in [("win1", win_round(1)), ("win3", win_round(3)), ("draw", draw_round()),
                         ("bad", impossible_round()), ("dealer", {**win_round(1), "dealer": 2})]:
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(round_))
    return paths


def new_table(capsys, db, *extra):
    code, out, _ = run(capsys, "table", "new", "Friday", "--players", NAMES, "--db", db, "--json", *extra)
    assert code == 0
    return json.loads(out)


def test_a_table_from_the_command_line(capsys, db_url, files, tmp_path):
    table = new_table(capsys, db_url, "--rules", '{"preset": "gy-reduced", "base": 2}', "--dealer", "1")
    tid = table["id"]
    assert table["rules"] == {"preset": "gy-reduced", "base": 2} and table["dealer"] == 1
    for name in ("win1", "win1", "draw"):
        code, out, _ = run(capsys, "table", "round", tid, str(files[name]), "--db", db_url)
        assert code == 0 and "added" in out
    code, out, _ = run(capsys, "table", "edit", tid, "1", str(files["win3"]), "--db", db_url)
    assert code == 0 and "round 1 replaced" in out
    code, out, _ = run(capsys, "table", "undo", tid, "--db", db_url, "--json")  # the last round
    assert code == 0 and json.loads(out)["table"]["rounds"] == 2
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url, "--json")
    shown = json.loads(out)
    assert [r["dealer"] for r in shown["rounds"]] == [1, 3] and sum(shown["table"]["totals"]) == 0
    assert shown["table"]["totals"] == shown["rounds"][-1]["totals_after"]
    # The same rows through the store directly: the CLI is a shell over it.
    store = TableStore.open(db_url)
    assert [r.round.entered() for r in store.list_rounds(tid)] == [win_round(3), win_round(1)]
    store.close()
    code, out, _ = run(capsys, "table", "show", tid, "--db", db_url)
    assert "Bo wins on 5p" in out and "Di wins on 5p" in out
    out_file = tmp_path / "friday.csv"
    code, _, _ = run(capsys, "table", "export", tid, "--format", "csv", "-o", str(out_file), "--db", db_url)
    rows = list(csv.reader(io.StringIO(out_file.read_text(encoding="utf-8-sig"))))
    assert rows[0][:9] == ["number", "dealer", "outcome", "hand type", "fan", "Ann", "Bo", "Cy", "Di"]
    assert len(rows) == 4 and rows[3][0] == "total"
    assert [int(v) for v in rows[2][5:9]] == shown["rounds"][1]["deltas"]
    assert [int(v) for v in rows[3][9:]] == shown["table"]["totals"]
    code, out, _ = run(capsys, "table", "list", "--db", db_url)
    assert code == 0 and tid in out and "database:" in out


def test_round_from_stdin_with_a_key_stores_once(capsys, sqlite_url, files, monkeypatch):
    tid = new_table(capsys, sqlite_url)["id"]
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO(files["win1"].read_text()))
        code, out, _ = run(capsys, "table", "round", tid, "-", "--key", "r1", "--db", sqlite_url)
        assert code == 0
    assert "nothing added" in out
    code, out, _ = run(capsys, "table", "show", tid, "--db", sqlite_url, "--json")
    assert json.loads(out)["table"]["rounds"] == 1


def test_profiles_from_the_command_line(capsys, sqlite_url):
    src = new_table(capsys, sqlite_url, "--rules", '{"preset": "liupanshui", "wuguji": true}')
    code, out, _ = run(capsys, "table", "profile", "home", "--from-table", src["id"], "--db", sqlite_url)
    assert code == 0 and "home" in out
    copy = new_table(capsys, sqlite_url, "--profile", "home")
    assert copy["rules"] == {"preset": "liupanshui", "wuguji": True}
    code, out, _ = run(capsys, "table", "profiles", "--db", sqlite_url, "--json")
    assert [p["name"] for p in json.loads(out)["profiles"]] == ["home"]


@pytest.mark.parametrize("argv", [
    ["table", "new", "x", "--players", "Ann,Bo,Cy"],
    ["table", "new", "x", "--players", NAMES, "--rules", "nanjing"],
    ["table", "new", "x", "--players", NAMES, "--rules", "{broken"],
    ["table", "new", "x", "--players", NAMES, "--profile", "nobody"],
    ["table", "show", "nope"],
    ["table", "round", "{tid}", "{bad}"],
    ["table", "round", "{tid}", "{dealer}"],
    ["table", "round", "{tid}", "/nonexistent/round.json"],
    ["table", "round", "{tid}", "{win1}", "--expected-version", "7"],
    ["table", "undo", "{tid}"],
    ["table", "undo", "{tid}", "3"],
    ["table", "edit", "{tid}", "1", "{win1}"],
    ["table", "list", "--limit", "0"],
    ["table", "profile", "p"],
    ["chajiao", "--hand", "0", E1[0]],
    ["chajiao", "--hand", "0", E1[0], "--hand", "0", E1[1]],
    ["chajiao", "--hand", "4", E1[0], "--hand", "1", E1[1]],
    ["chajiao", "--hand", "0", E1[0], "--hand", "1", "12345"],
    ["chajiao", "--hand", "0", E1[0], "--photo", "1", "/nonexistent.jpg"],
    ["chajiao", "--hand", "0", E1[0], "--photo", "1", "{bad}"],  # not an image
])
def test_bad_input_is_one_line_and_exit_2(capsys, sqlite_url, files, argv):
    tid = new_table(capsys, sqlite_url)["id"]
    names = {"tid": tid, **{k: str(v) for k, v in files.items()}}
    argv = [a.format(**names) if a.startswith("{") and a.endswith("}") else a for a in argv]
    if argv[0] == "table":
        argv += ["--db", sqlite_url]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"zhuoji {argv[0]}: error: "), err
    code, out, _ = run(capsys, "table", "show", tid, "--db", sqlite_url, "--json")
    assert json.loads(out)["table"]["version"] == 1  # nothing was written


def test_chajiao_text_hands(capsys):
    code, out, _ = run(capsys, "chajiao", "--hand", "0", E1[0], "--hand", "1", E1[1], "--hand", "2", E1[2])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("P0 (text)") and "叫牌 (ready), waits 4m×3 7m×2" in lines[0]
    assert "not 叫牌" in lines[2]
    assert "P2 → P0 1" in out and "P2 → P1 1" in out
    code, out, _ = run(capsys, "chajiao", "--hand", "0", E1[0], "--hand", "2", E1[2], "--json")
    result = json.loads(out)
    assert [t["from"] for t in result["ledger"]] == [2] and result["next_dealer"] is None


@pytest.mark.slow
def test_where_and_no_traceback_in_a_real_process(tmp_path):
    db = tmp_path / "x" / "t.sqlite3"
    zhuoji = str(Path(sys.executable).parent / "zhuoji")
    env_run = subprocess.run([zhuoji, "table", "where"], capture_output=True, text=True,
                             env={"ZHUOJI_DATABASE_URL": str(db), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert env_run.returncode == 0 and env_run.stdout.strip() == str(db)
    bad = subprocess.run([zhuoji, "table", "show", "x", "--db",
                          "postgresql://nobody@/none?host=/nonexistent-dir&port=1"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


class _ScriptedDetector:
    """Stands in for the tile detector: the same row of tiles whatever the photo shows."""

    def __init__(self, tiles: list[str]) -> None:
        self.tiles, self.model_path, self.classifier = tiles, Path("scripted.onnx"), None

    def __call__(self, image, **_):
        import numpy as np

        from vision.classes import CLASS_NAMES
        from vision.detections import Detections

        xyxy = np.array([[20 + 42 * i, 100, 60 + 42 * i, 155] for i in range(len(self.tiles))], float)
        return Detections(xyxy, np.full(len(self.tiles), 0.95), [CLASS_NAMES.index(t) for t in self.tiles],
                          image_size=(image.shape[1], image.shape[0]))


def test_chajiao_photo_and_text(capsys, tmp_path, monkeypatch):
    import cv2
    import numpy as np

    import pipeline.settings

    photo = tmp_path / "p0.jpg"
    cv2.imwrite(str(photo), np.full((300, 640, 3), 90, np.uint8))
    # 123m 456p 789s 11p 55p: 叫牌 on 1p and 5p; seat 2's hand waits on nothing.
    tiles = ["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "1p", "1p", "5p", "5p"]
    monkeypatch.setattr(pipeline.settings, "open_detector", lambda settings: _ScriptedDetector(tiles))
    code, out, _ = run(capsys, "chajiao", "--photo", "0", str(photo), "--hand", "2", "11m123p22346799s", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["players"][0]["source"] == "photo" and result["players"][0]["ting"] is True
    assert {w["tile"] for w in result["players"][0]["waits"]} == {"1p", "5p"}
    assert result["players"][2]["source"] == "text" and result["players"][2]["total"] < 0
    assert [(t["from"], t["to"]) for t in result["ledger"]] == [(2, 0)]
