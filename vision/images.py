"""Reading images safely: format sniffing, a decompression-bomb guard from the headers, decoding to BGR.

``load_image`` is the one way every stage and program turns a path, encoded bytes or an array into a BGR image.
``check_photo_size`` is the one cost check every surface (HTTP API, command line) applies to a photo before any
model runs, from the header when the format announces its size: the pixel cap, and shapes that cannot be a photo of
tiles (the detector's tiling makes one model run per crop, and a 1-pixel-high image would make one per column).
"""

from __future__ import annotations

import os
import struct

import cv2
import numpy as np

from vision.files import FileReadError, read_file
from vision.pixels import MAX_PIXELS

MIN_PHOTO_SIDE = 32  # a tile is ~20 px at the least: a photo shorter than this holds no readable tile
MAX_PHOTO_ASPECT = 20  # a row of 14 tiles lying side by side is about 10:1; a panorama of a table about 4:1
MAX_FILE_BYTES = 200 * 1024 * 1024  # an image file is read whole: a 50 MP uncompressed TIFF is 150 MB


class ImageError(ValueError):
    """The input is not a readable image."""


class PhotoShapeError(ImageError):
    """The image cannot be a photo of tiles: ``code`` ``image_too_large`` (too many pixels) or ``image_shape``
    (a side too short, or too thin)."""

    def __init__(self, message: str, code: str = "image_shape") -> None:
        super().__init__(message)
        self.code = code


def check_photo_size(width: int, height: int, name: str = "image") -> None:
    """Refuse, with :class:`PhotoShapeError`, a size no photo of tiles has: over ``MAX_PIXELS``, a side under
    ``MIN_PHOTO_SIDE`` or an aspect ratio beyond 1:``MAX_PHOTO_ASPECT``. Cheap: run it on the header's size before
    decoding, and again on the decoded image."""
    if width * height > MAX_PIXELS:
        raise PhotoShapeError(f"{name}: image too large ({width}×{height} pixels; at most {MAX_PIXELS:,})",
                              "image_too_large")
    if min(width, height) < MIN_PHOTO_SIDE:
        raise PhotoShapeError(f"{name}: image too small ({width}×{height} pixels; a photo of tiles needs at least "
                              f"{MIN_PHOTO_SIDE} pixels on each side)")
    if max(width, height) > MAX_PHOTO_ASPECT * min(width, height):
        raise PhotoShapeError(f"{name}: image too thin ({width}×{height} pixels; a photo of tiles is at most "
                              f"{MAX_PHOTO_ASPECT} times as long as it is high)")


def load_photo(source: str | os.PathLike | bytes, min_side: int | None = None) -> np.ndarray:
    """:func:`load_image` for a photo to detect tiles in: :func:`check_photo_size` from the header before decoding
    (when the format announces its size) and on the decoded image (``min_side``: see :func:`load_photo_reduced`)."""
    return load_photo_reduced(source, min_side)[0]


def load_photo_reduced(source: str | os.PathLike | bytes,
                       min_side: int | None) -> tuple[np.ndarray, tuple[int, int]]:
    """:func:`load_photo`, a JPEG at least twice ``min_side`` on its longer side decoded at reduced size
    (:func:`load_image_reduced`); and the photo's full (width, height)."""
    name = "uploaded data" if isinstance(source, (bytes, bytearray, memoryview)) else str(source)
    data = source if isinstance(source, (bytes, bytearray, memoryview)) else _read(source)
    head = bytes(data[:64 * 1024])
    fmt = sniff_format(head)
    size = header_size(head, fmt) if fmt else None
    if size is not None:
        check_photo_size(*size, name)
    image, full = _decode(np.frombuffer(data, np.uint8), name, min_side)
    check_photo_size(*full, name)
    return image, full


# JPEG's DCT can decode straight to 1/2, 1/4 or 1/8 of the size, several times faster than a full decode.
_REDUCED = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


def load_image(source: str | os.PathLike | bytes | np.ndarray) -> np.ndarray:
    """A BGR uint8 image from a path, encoded bytes or an array. EXIF orientation is applied (OpenCV does so).

    Raises :class:`ImageError` with a readable message for anything that is not a decodable image.
    """
    return load_image_reduced(source, None)[0]


def load_image_reduced(source: str | os.PathLike | bytes | np.ndarray,
                       min_side: int | None) -> tuple[np.ndarray, tuple[int, int]]:
    """:func:`load_image`, a JPEG at least twice ``min_side`` on its longer side decoded at 1/2, 1/4 or 1/8 of
    its size (the most reduced that keeps the longer side ≥ ``min_side``); and the (width, height) of the photo at
    full size, as oriented, to map what is found back to its pixels."""
    if isinstance(source, np.ndarray):
        img = source
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        elif img.ndim == 3 and img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
        if img.ndim != 3 or img.shape[2] != 3 or img.size == 0:
            raise ImageError(f"expected an H×W×3 image array, got shape {img.shape}")
        img = np.ascontiguousarray(img, dtype=np.uint8)
        return img, (img.shape[1], img.shape[0])
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _decode(np.frombuffer(source, np.uint8), "uploaded data", min_side)
    return _decode(np.frombuffer(_read(source), np.uint8), str(source), min_side)


def _decode(data: np.ndarray, name: str, min_side: int | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    if data.size == 0:
        raise ImageError(f"{name}: empty file")
    head = data[:64 * 1024].tobytes()
    fmt = sniff_format(head)
    if fmt is None:
        raise ImageError(f"{name}: not a readable image (JPEG, PNG, WebP, BMP or TIFF expected)")
    size = header_size(head, fmt)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageError(f"{name}: image too large ({size[0]}×{size[1]} pixels; at most {MAX_PIXELS:,})")
    reduce = 1
    if fmt == "jpeg" and size is not None and min_side:
        reduce = max([k for k in _REDUCED if max(size) >= k * min_side], default=1)
    img = cv2.imdecode(data, _REDUCED[reduce] if reduce > 1 else cv2.IMREAD_COLOR)
    if img is None:
        raise ImageError(f"{name}: not a readable image (corrupt or truncated {fmt.upper()})")
    if img.shape[0] * img.shape[1] > MAX_PIXELS:  # a header we could not read announced nothing
        raise ImageError(f"{name}: image too large ({img.shape[1]}×{img.shape[0]} pixels; at most {MAX_PIXELS:,})")
    full = (img.shape[1], img.shape[0])
    if reduce > 1 and size is not None:  # the header's size, turned as EXIF turned the image
        full = size if (size[0] >= size[1]) == (img.shape[1] >= img.shape[0]) else (size[1], size[0])
    return img, full


def _read(path: str | os.PathLike) -> bytes:
    try:
        return read_file(path, MAX_FILE_BYTES)
    except FileReadError as exc:
        raise ImageError(str(exc)) from None


def sniff_format(data: bytes) -> str | None:
    """The image format from the magic bytes: jpeg, png, webp, bmp, tiff; ``None`` for anything else."""
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data.startswith(b"BM") and len(data) >= 26:
        return "bmp"
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from the first start-of-frame marker of a JPEG."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return None


def header_size(data: bytes, fmt: str) -> tuple[int, int] | None:
    """(width, height) announced by an image header, ``None`` when unknown or unreadable.

    Every format here can announce a huge canvas in a few bytes (a decompression bomb), so the size is read
    before anything is decoded.
    """
    try:
        if fmt == "png" and len(data) >= 24:
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if fmt == "jpeg":
            return _jpeg_size(data)
        if fmt == "webp":
            chunk = data[12:16]
            if chunk == b"VP8X":
                return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
            if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
                w, h = struct.unpack_from("<HH", data, 26)
                return w & 0x3FFF, h & 0x3FFF
            if chunk == b"VP8L" and data[20] == 0x2F:
                bits = int.from_bytes(data[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        elif fmt == "bmp":
            dib = int.from_bytes(data[14:18], "little")
            if dib == 12:
                return struct.unpack_from("<HH", data, 18)
            w, h = struct.unpack_from("<ii", data, 18)
            return abs(w), abs(h)
        elif fmt == "tiff":
            order = "<" if data[:2] == b"II" else ">"
            (ifd,) = struct.unpack_from(order + "I", data, 4)
            (entries,) = struct.unpack_from(order + "H", data, ifd)
            size: dict[int, int] = {}
            for k in range(min(entries, 512)):
                tag, kind = struct.unpack_from(order + "HH", data, ifd + 2 + 12 * k)
                if tag in (256, 257):  # ImageWidth, ImageLength: SHORT (3) or LONG (4)
                    fmt_code = order + ("H" if kind == 3 else "I")
                    size[tag] = struct.unpack_from(fmt_code, data, ifd + 2 + 12 * k + 8)[0]
            if 256 in size and 257 in size:
                return size[256], size[257]
    except (struct.error, IndexError):
        return None  # truncated header: the decoder will refuse the file
    return None
