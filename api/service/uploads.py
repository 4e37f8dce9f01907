"""Guards for what clients send: body size, declared type, magic bytes, image dimensions.

Order of the checks, cheapest first, so a hostile upload costs as little as possible:

1. :class:`BodyLimitMiddleware` refuses a body over the limit from its ``Content-Length`` before reading it,
   and stops reading a body without one (chunked) as soon as it passes the limit.
2. :func:`check_image` refuses a declared type that is not an image, then ``pipeline.images.photo_format``
   bytes that are no JPEG/PNG/WebP/BMP/TIFF (HEIC gets its own hint), and a header that announces a size no photo
   of tiles has: more pixels than we decode, a side under 32 px, thinner than 1:20.
3. In the worker, ``pipeline.images.decode_photo`` decodes (a large JPEG at reduced size when asked) and checks
   the decoded size the same way as a last line; the command line decodes its photos through it too.

Admission (the busy check, bytes in flight, body-read timeouts) comes before all of these: ``api.service.admission``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

from fastapi import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.service.errors import ApiError, error_response
from pipeline.images import photo_format

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


def check_image(data: bytes, content_type: str | None, field: str = "image") -> str:
    """Refuse a declared type that is not an image (415), then what ``pipeline.images.photo_format`` refuses in
    the first bytes (:class:`~pipeline.errors.Refused`, answered 415 or 422); return the format sniffed."""
    declared = (content_type or "application/octet-stream").split(";")[0].strip().lower()
    if declared not in IMAGE_TYPES:
        raise ApiError(415, "unsupported_media_type",
                       f"{field}: content type {declared!r} is not an image; send a JPEG, PNG, WebP, BMP or TIFF photo")
    return photo_format(data, field)


HEAD_BYTES = 128 * 1024  # enough for the magic bytes and the size of every format (a JPEG's after its EXIF)


async def checked_upload(upload: UploadFile, field: str = "image") -> BinaryIO:
    """:func:`check_image` on the first bytes of an uploaded file; the file itself, rewound, for the worker to
    read and decode (``pipeline.images.decode_photo``): uploads wait for their turn spooled to disk (Starlette keeps
    at most 1 MB of each in memory), not as bytes."""
    head = await upload.read(HEAD_BYTES)
    check_image(head, upload.content_type, field)
    await upload.seek(0)
    return upload.file
