"""Guards for what clients send: body size, declared type, magic bytes, image dimensions.

Order of the checks, cheapest first, so a hostile upload costs as little as possible:

1. :class:`BodyLimitMiddleware` refuses a body over the limit from its ``Content-Length`` before reading it,
   and stops reading a body without one (chunked) as soon as it passes the limit.
2. :func:`check_image` refuses a declared type that is not an image, bytes that are no JPEG/PNG/WebP/BMP/TIFF
   (HEIC gets its own hint), and a header that announces a size no photo of tiles has: more pixels than we
   decode, a side under 32 px, thinner than 1:20 (``vision.images.check_photo_size``).
3. :func:`decode_image` / :func:`decode_image_reduced` decode with ``load_image_reduced`` (a large JPEG at reduced
   size when asked) and check the decoded size the same way as a last line.

Admission (the busy check, bytes in flight, body-read timeouts) comes before all of these: ``api.service.admission``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

import numpy as np
from fastapi import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.service.errors import ApiError, error_response
from vision.images import (
    ImageError,
    PhotoShapeError,
    check_photo_size,
    header_size,
    load_image_reduced,
    sniff_format,
)

MB = 1024 * 1024
MAX_IMAGE_BYTES = 20 * MB  # one phone photo is 2–8 MB; the web page sends ≤ 1600 px JPEGs of ~0.3 MB
MAX_JSON_BYTES = 1 * MB  # a whole table state is a few kB

# Declared types we take. application/octet-stream is what generic uploaders send when they do not know:
# the magic bytes decide then.
IMAGE_TYPES = {"image/jpeg", "image/jpg", "image/pjpeg", "image/png", "image/webp", "image/bmp",
               "image/x-bmp", "image/x-ms-bmp", "image/tiff", "image/tif", "application/octet-stream"}


class BodyTooLarge(StarletteHTTPException):
    """Raised from ``receive`` when a body grows past the limit. An HTTPException, so FastAPI's body parsing
    lets it through unchanged (it wraps other exceptions into a 400)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body too large: at most {limit // MB} MB")


class BodyLimitMiddleware:
    """Pure ASGI middleware: a body-size limit per path, checked before and while reading the body."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await error_response(400, "bad_request", "invalid Content-Length header")(scope, receive, send)
                return
            if int(declared) > limit:
                response = error_response(413, "payload_too_large",
                                          f"request body too large: {int(declared) / MB:.1f} MB, at most "
                                          f"{limit // MB} MB", headers={"Connection": "close"})
                await response(scope, receive, send)
                return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, limited_receive, send)


PHOTO_PATHS = ("/v1/detect", "/v1/read", "/v1/score", "/v1/chajiao/photos", "/v1/calibrate")
TABLE_PHOTO = re.compile(r"/v1/tables/[^/]+/calibrate")  # a table's calibration photo


def is_photo_path(path: str) -> bool:
    return path.startswith(PHOTO_PATHS) or TABLE_PHOTO.fullmatch(path) is not None


def body_limit(path: str) -> int:
    """Image routes take a photo; everything else is small JSON."""
    return MAX_IMAGE_BYTES if is_photo_path(path) else MAX_JSON_BYTES


# ------------------------------------------------------------------------------------------ image checks


def _unsupported_hint(data: bytes) -> str:
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1", b"avif"):
        return ("HEIC/AVIF photos are not supported: set the camera to JPEG ('Most Compatible') or upload a "
                "screenshot")
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "GIF is not supported"
    if data.startswith(b"%PDF"):
        return "this is a PDF, not a photo"
    return "these bytes are not an image"


def check_image(data: bytes, content_type: str | None, field: str = "image") -> str:
    """Refuse what is not a photo we can decode; return the format sniffed from the magic bytes."""
    declared = (content_type or "application/octet-stream").split(";")[0].strip().lower()
    if declared not in IMAGE_TYPES:
        raise ApiError(415, "unsupported_media_type",
                       f"{field}: content type {declared!r} is not an image; send a JPEG, PNG, WebP, BMP or TIFF photo")
    if not data:
        raise ApiError(422, "invalid_image", f"{field}: empty file")
    fmt = sniff_format(data)
    if fmt is None:
        raise ApiError(415, "unsupported_media_type",
                       f"{field}: {_unsupported_hint(data)} (JPEG, PNG, WebP, BMP or TIFF expected)")
    size = header_size(data, fmt)
    if size is not None:
        _check_size(*size, field)
    return fmt


def _check_size(width: int, height: int, field: str) -> None:
    try:
        check_photo_size(width, height, field)
    except PhotoShapeError as exc:
        raise ApiError(422, exc.code, str(exc)) from None


HEAD_BYTES = 128 * 1024  # enough for the magic bytes and the size of every format (a JPEG's after its EXIF)


async def checked_upload(upload: UploadFile, field: str = "image") -> BinaryIO:
    """:func:`check_image` on the first bytes of an uploaded file; the file itself, rewound, for the worker to
    read: uploads wait for their turn spooled to disk (Starlette keeps at most 1 MB of each in memory), not as
    bytes."""
    head = await upload.read(HEAD_BYTES)
    check_image(head, upload.content_type, field)
    await upload.seek(0)
    return upload.file


def decode_image(data: bytes | BinaryIO, field: str = "image") -> np.ndarray:
    """Decode checked bytes (or a file of them, read here: in the worker) to a BGR array; ``ApiError`` 422 for
    corrupt, truncated or oversized images, and for shapes no photo of tiles has."""
    return decode_image_reduced(data, field)[0]


def decode_image_reduced(data: bytes | BinaryIO, field: str = "image",
                         min_side: int | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """:func:`decode_image`, a large JPEG decoded at reduced size when ``min_side`` is given (its longer side kept
    ≥ ``min_side``: ``vision.images.load_image_reduced``); and the photo's full (width, height), to which answers
    map the boxes."""
    if not isinstance(data, bytes | bytearray):
        data = data.read()
    try:
        image, full_size = load_image_reduced(data, min_side)
    except ImageError as exc:
        raise ApiError(422, "invalid_image", f"{field}: {exc}".replace("uploaded data: ", "")) from exc
    _check_size(*full_size, field)  # a header we could not read announced nothing
    return image, full_size
