"""Guards for what clients send: body size, declared type, magic bytes, image dimensions.

Order of the checks, cheapest first, so a hostile upload costs as little as possible:

1. :class:`BodyLimitMiddleware` refuses a body over the limit from its ``Content-Length`` before reading it,
   and stops reading a body without one (chunked) as soon as it passes the limit.
2. :func:`check_image` refuses a declared type that is not an image, bytes that are no JPEG/PNG/WebP/BMP/TIFF
   (HEIC gets its own hint), and a WebP/BMP/TIFF header that announces more pixels than we decode.
   ``vision.detect.load_image`` does the same for PNG and JPEG headers.
3. :func:`decode_image` decodes with ``load_image`` and caps the decoded pixel count as a last line.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ApiError, error_response
from vision.detect import MAX_PIXELS, ImageError, load_image

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


def body_limit(path: str) -> int:
    """Image routes take a photo; everything else is small JSON."""
    return MAX_IMAGE_BYTES if path.startswith(("/v1/detect", "/v1/read", "/v1/score", "/v1/chajiao/photos")) \
        else MAX_JSON_BYTES


# ------------------------------------------------------------------------------------------ image checks


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


def _unsupported_hint(data: bytes) -> str:
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1", b"avif"):
        return ("HEIC/AVIF photos are not supported: set the camera to JPEG ('Most Compatible') or upload a "
                "screenshot")
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "GIF is not supported"
    if data.startswith(b"%PDF"):
        return "this is a PDF, not a photo"
    return "these bytes are not an image"


def header_size(data: bytes, fmt: str) -> tuple[int, int] | None:
    """(width, height) announced by a WebP, BMP or TIFF header, ``None`` when unknown or unreadable.

    PNG and JPEG headers are read by ``vision.detect.load_image``; these three formats can also announce a
    huge canvas in a few bytes (WebP up to 16383², BMP and TIFF up to 2³¹), so they are checked here.
    """
    try:
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
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ApiError(422, "image_too_large", f"{field}: image too large ({size[0]}×{size[1]} pixels; at most "
                                               f"{MAX_PIXELS:,})")
    return fmt


def decode_image(data: bytes, field: str = "image") -> np.ndarray:
    """Decode checked bytes to a BGR array; ``ApiError`` 422 for corrupt, truncated or oversized images."""
    try:
        image = load_image(data)
    except ImageError as exc:
        raise ApiError(422, "invalid_image", f"{field}: {exc}".replace("uploaded data: ", "")) from exc
    h, w = image.shape[:2]
    if h * w > MAX_PIXELS:  # a format whose header we could not read announced nothing: cap after decoding
        raise ApiError(422, "image_too_large", f"{field}: image too large ({w}×{h} pixels; at most {MAX_PIXELS:,})")
    return image
