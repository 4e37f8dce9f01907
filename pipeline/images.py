"""Photo bytes → image: the one place where the shells' photos (an HTTP upload, a file named on the command line)
are checked and decoded, so every shell refuses the same photos with the same words.

The checks, cheapest first: the magic bytes name a format we decode (JPEG, PNG, WebP, BMP, TIFF); the header's size
is one a photo of tiles can have (``vision.images.check_photo_size``); the decoded image is checked again. Every
refusal is :class:`~pipeline.errors.Refused` (``unsupported_media_type``, ``invalid_image``, ``image_too_large``,
``image_shape``) naming the form field or file.
"""

from __future__ import annotations

from typing import BinaryIO

import numpy as np

from pipeline.errors import Refused
from vision.images import (
    ImageError,
    PhotoShapeError,
    check_photo_size,
    header_size,
    load_image_reduced,
    sniff_format,
)


def _unsupported_hint(data: bytes) -> str:
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1", b"avif"):
        return ("HEIC/AVIF photos are not supported: set the camera to JPEG ('Most Compatible') or upload a "
                "screenshot")
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "GIF is not supported"
    if data.startswith(b"%PDF"):
        return "this is a PDF, not a photo"
    return "these bytes are not an image"


def check_size(width: int, height: int, field: str = "image") -> None:
    """:class:`Refused` for a size no photo of tiles has (too many pixels, a side too short, too thin)."""
    try:
        check_photo_size(width, height, field)
    except PhotoShapeError as exc:
        raise Refused(exc.code, str(exc)) from None


def photo_format(head: bytes, field: str = "image") -> str:
    """The format the first bytes of a photo announce (jpeg, png, webp, bmp, tiff), its header's size checked;
    :class:`Refused` for an empty file, bytes that are no image we decode, or a size no photo of tiles has."""
    if not head:
        raise Refused("invalid_image", f"{field}: empty file")
    fmt = sniff_format(head)
    if fmt is None:
        raise Refused("unsupported_media_type",
                      f"{field}: {_unsupported_hint(head)} (JPEG, PNG, WebP, BMP or TIFF expected)")
    size = header_size(head, fmt)
    if size is not None:
        check_size(*size, field)
    return fmt


def decode_photo(data: bytes | BinaryIO, field: str = "image",
                 min_side: int | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """Decode a photo's bytes (or a file of them, read here: in the worker) to a BGR array, a large JPEG at reduced
    size when ``min_side`` is given (its longer side kept ≥ ``min_side``: ``vision.images.load_image_reduced``); and
    the photo's full (width, height), to which answers map the boxes. :class:`Refused` for corrupt, truncated or
    oversized images, and for shapes no photo of tiles has."""
    if not isinstance(data, bytes | bytearray):
        data = data.read()
    try:
        image, full_size = load_image_reduced(data, min_side)
    except ImageError as exc:
        raise Refused("invalid_image", f"{field}: {exc}".replace("uploaded data: ", "")) from exc
    check_size(*full_size, field)  # a header we could not read announced nothing
    return image, full_size
