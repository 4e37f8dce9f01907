"""``pipeline/photo.py`` and ``pipeline/images.py`` with a scripted detector: a photo's bytes → the typed answers
every shell prints (no HTTP, no command line)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.detection import detect_bytes
from pipeline.errors import Refused
from pipeline.hand import analyze
from pipeline.images import decode_photo, photo_format
from pipeline.models import ScoreContext
from pipeline.photo import (
    hand_request,
    photo_hand,
    read_bytes,
    read_photo,
    read_response,
    score_bytes,
)
from tests.api.support import WIN_ROW, ScriptedDetector, blank_photo, encode, row_detections

PHOTO = blank_photo(640, 300)


class NoLook(ScriptedDetector):
    """A detector that must not be asked to look (the caller brings the detections)."""

    def __call__(self, image: np.ndarray, **_: object):
        raise AssertionError("the detector ran although the detections were given")


# ------------------------------------------------------------------------------------------ bytes → image


def test_a_photo_is_decoded_with_its_full_size():
    image, full_size = decode_photo(PHOTO)
    assert image.shape[:2] == (300, 640) and full_size == (640, 300)


@pytest.mark.parametrize(("data", "code", "words"), [
    (b"", "invalid_image", "image: empty file"),
    (b"%PDF-1.4 not a photo", "unsupported_media_type", "this is a PDF"),
    (b"GIF89a" + bytes(100), "unsupported_media_type", "GIF is not supported"),
    (encode(np.zeros((2000, 40, 3), np.uint8), ".png"), "image_shape", "too thin"),
    (encode(np.zeros((20, 200, 3), np.uint8), ".png"), "image_shape", "too small"),
])
def test_what_is_no_photo_of_tiles_is_refused_before_decoding(data, code, words):
    with pytest.raises(Refused) as refused:
        photo_format(data[:128 * 1024])
    assert refused.value.code == code and words in refused.value.message


def test_a_corrupt_photo_is_refused_naming_its_field():
    broken = PHOTO[:200]  # a JPEG cut short: the magic bytes pass, decoding does not
    with pytest.raises(Refused) as refused:
        decode_photo(broken, "photo2")
    assert refused.value.code == "invalid_image" and refused.value.message.startswith("photo2: ")


# ---------------------------------------------------------------------------------------- the photo stages


def test_detect_bytes_names_every_box_in_the_photos_pixels():
    answer = detect_bytes(ScriptedDetector(WIN_ROW), PHOTO)
    assert answer.count == len(WIN_ROW) and [t.tile for t in answer.tiles] == WIN_ROW
    assert (answer.image.width, answer.image.height) == (640, 300) and answer.model == "scripted.onnx"
    expected = row_detections(WIN_ROW, (640, 300)).xyxy
    assert np.allclose([t.box for t in answer.tiles], expected, atol=0.01)


def test_read_bytes_lays_out_and_reads_the_row():
    photo = read_bytes(ScriptedDetector(WIN_ROW), PHOTO)
    reading = photo.reading
    # the row is laid left to right in the order given: 123m 456p 789s 11p 555p, 14 tiles that complete a hand
    assert reading.concealed_tiles == WIN_ROW and reading.count == 14 and reading.complete is True
    answer = read_response(photo, "scripted.onnx")
    assert [t.role for t in answer.tiles] == ["concealed"] * 14
    assert sorted(p.box for p in answer.layout.concealed) == list(range(14))
    assert answer.hand.concealed_tiles == WIN_ROW and answer.hand.count == 14


def test_read_photo_reads_given_detections_without_looking_again():
    image, _ = decode_photo(PHOTO)
    given = row_detections(WIN_ROW, (640, 300))
    photo = read_photo(NoLook(WIN_ROW), image, found=given)
    assert photo.reading.concealed_tiles == WIN_ROW


def test_score_bytes_takes_the_last_tile_of_14_as_the_win_and_scores_through_the_hand_stage():
    photo, answer = score_bytes(ScriptedDetector(WIN_ROW), PHOTO, ScoreContext(annotate=False, self_drawn=True))
    assert answer.assumptions == ["winning tile not given: took the last tile of the hand, 5p"]
    req = answer.hand_request
    assert req is not None and req.win_tile == "5p" and req.self_drawn is True
    assert answer.analysis == analyze(req)  # one path: the photo's score is the /v1/hand answer for its tiles
    assert answer.analysis.status == "win" and answer.score_error is None
    assert photo.reading.concealed_tiles == WIN_ROW and answer.annotated_jpeg is None


def test_a_hand_that_cannot_be_scored_says_why():
    _, answer = score_bytes(ScriptedDetector(WIN_ROW[:12]), PHOTO, ScoreContext(annotate=False))
    assert answer.analysis is None and answer.score_error is not None
    assert answer.score_error.code == "count_mismatch" and "shows 12 tiles" in answer.score_error.message


def test_an_unreadable_tile_stops_the_score_and_the_draw_check():
    reading = read_bytes(ScriptedDetector(WIN_ROW), PHOTO).reading
    reading.concealed_tiles[3] = "?"
    req, _, problem = hand_request(reading, ScoreContext())
    assert req is None and problem is not None and problem.code == "unreadable_tile"
    with pytest.raises(Refused) as refused:
        photo_hand(reading, 1)
    assert refused.value.code == "unreadable_tile" and refused.value.message.startswith("photo1: ")
