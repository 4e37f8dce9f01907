"""``zhuoji live --table --server``: the round a camera over the table proposes reaches the table screen. The command
runs on the rendered round's video (``datasets.table_video``, read by the scene's own labels) against the service in
a server thread, and posts the round once, with its frame; a server, table or key that will not do is one line and
exit 2 before any model loads."""

from __future__ import annotations

import base64
import socket

import cv2
import numpy as np
import pytest

import pipeline.settings
from api.cli import main
from tests.api.test_live_table import SceneDetector, read_seats, round_video, truth_seats  # noqa: F401 - a fixture

NAMES = ["Ann", "Bo", "Cy", "Di"]


def new_table(url: str) -> dict:
    import httpx

    made = httpx.post(f"{url}/v1/tables", json={"name": "Camera", "players": NAMES})
    assert made.status_code == 201, made.text
    return made.json()


def proposal_of(url: str, table: dict) -> dict | None:
    import httpx

    return httpx.get(f"{url}/v1/tables/{table['id']}/proposal").json()["proposal"]


@pytest.mark.slow
def test_the_proposed_round_reaches_the_table_screen_once(round_video, served, monkeypatch, capsys):  # noqa: F811
    states, shown, video = round_video
    _, url = served
    table = new_table(url)
    monkeypatch.setattr(pipeline.settings, "open_detector", lambda _settings: SceneDetector(states))
    # The edit link as the phone shows it names the table and its key.
    link = f"{url}/#table={table['id']}&key={table['edit_key']}"
    assert main(["live", "--table", "--source", str(video), "--settle", "3", "--server", link]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if "proposed on the table screen" in line]) == 1, err
    assert err[-1].endswith(f"1 round(s) proposed, 1 posted to {url}/#table={table['id']}"), err

    proposal = proposal_of(url, table)
    assert proposal is not None
    assert read_seats(proposal["table"]) == truth_seats(states.truth)
    assert proposal["table"]["flipped"] == states.truth["flipped"]
    assert proposal["table"]["winner"] == states.truth["winner"]
    # The frame it was read on, as a JPEG of at most 1280 px (the 1600 px video scaled), the boxes with it.
    frame = cv2.imdecode(np.frombuffer(base64.b64decode(proposal["frame"]), np.uint8), cv2.IMREAD_COLOR)
    assert frame.shape[:2] == (1280, 1280)
    truth_boxes = sorted(tuple(b) for b in states.laid.face_boxes.tolist())
    sent_boxes = sorted(tuple(d["box"]) for d in proposal["table"]["detections"])
    assert len(sent_boxes) == len(truth_boxes)
    assert np.allclose(np.array(sent_boxes) / 0.8, np.array(truth_boxes), atol=0.5)
    # A proposal, not a round: the table is as it was until the players save.
    import httpx

    assert httpx.get(f"{url}/v1/tables/{table['id']}").json()["rounds"] == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_table_or_key_that_will_not_do_is_one_line(served, tmp_path, monkeypatch, capsys):
    _, url = served
    table, other = new_table(url), new_table(url)
    video = tmp_path / "round.avi"
    video.write_bytes(b"not read: the service is asked first")

    def no_model(_settings: object) -> None:
        raise AssertionError("the model loaded before the service was asked")

    monkeypatch.setattr(pipeline.settings, "open_detector", no_model)
    monkeypatch.delenv("ZHUOJI_TABLE_KEY", raising=False)
    base = ["live", "--table", "--source", str(video)]
    cases = [
        (["--server", f"http://127.0.0.1:{free_port()}", "--table-id", table["id"], "--key", "k"], "cannot reach"),
        (["--server", "ftp://example.org", "--table-id", table["id"], "--key", "k"], "is no address"),
        (["--server", "http://127.0.0.1:99999", "--table-id", table["id"], "--key", "k"], "is no address"),
        (["--server", url, "--table-id", "0123456789ab", "--key", "k"], "has no table '0123456789ab'"),
        (["--server", url, "--table-id", table["id"], "--key", other["edit_key"]], "(403): "),
        (["--server", url, "--table-id", table["id"]], "edit key is needed"),
        (["--server", url, "--key", table["edit_key"]], "which table?"),
        (["--table-id", table["id"], "--key", table["edit_key"]], "go with --server"),
    ]
    for extra, said in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("zhuoji live: error: ") and said in err[0], (extra, err)
    # --server is for a camera over the whole table.
    assert main(["live", "--source", str(video), "--server", url, "--table-id", table["id"], "--key", "k"]) == 2
    assert "goes with --table" in capsys.readouterr().err
    assert proposal_of(url, table) is None  # the key checks wrote nothing


def test_a_server_that_is_not_this_service_is_one_line(tmp_path, monkeypatch, capsys):
    """An HTTP server that answers something else (here a plain file server's 404 page)."""
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_: object) -> None:  # its log is not the command's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        video = tmp_path / "round.avi"
        video.write_bytes(b"x")
        monkeypatch.setattr(pipeline.settings, "open_detector", lambda _s: None)
        port = server.server_address[1]
        assert main(["live", "--table", "--source", str(video), "--server", f"http://127.0.0.1:{port}",
                     "--table-id", "0123456789ab", "--key", "k"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"zhuoji live: error: http://127.0.0.1:{port} did not answer as a zhuoji service (HTTP 404)"]
    finally:
        server.shutdown()
        server.server_close()


def test_a_round_that_does_not_reach_the_screen_is_said_and_the_exit_is_1(served, monkeypatch, capsys):
    """The service refuses the proposal mid-run (the table was finished meanwhile): one line, the watch goes on."""
    from api.live.post import ProposalPoster, TableScreen
    from pipeline.live_table import Proposal
    from tests.tables.test_proposals import won_reading

    _, url = served
    table = new_table(url)
    poster = ProposalPoster(TableScreen.parse(url, table["id"], table["edit_key"]))
    reading = won_reading()
    poster(Proposal(7, reading), np.zeros((200, 200, 3), np.uint8))
    assert proposal_of(url, table)["table"]["seats"] == reading.model_dump(mode="json")["seats"]
    import httpx

    httpx.post(f"{url}/v1/tables/{table['id']}/finish", headers={"Authorization": f"Bearer {table['edit_key']}"})
    poster(Proposal(9, reading), np.zeros((200, 200, 3), np.uint8))
    assert (poster.posted, poster.failed) == (1, 1)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "frame 7 proposed on the table screen" in err[0]
    assert err[1].startswith("zhuoji live: the round of frame 9 did not reach the table screen: ") and "(409)" in err[1]
