"""Files named on the command line, read with bounds: one plain message (a ``ValueError`` naming the path) for a
missing file, a folder, a device or FIFO (never a hang), or a file larger than any real one of its kind."""

from __future__ import annotations

import os

from vision.files import read_file
from vision.images import MAX_FILE_BYTES


def read_bounded(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``vision.files.read_file``)."""
    return read_file(path, limit)


def read_photo_file(path: str | os.PathLike) -> bytes:
    """The bytes of a photo file, decoded afterwards by ``pipeline.images.decode_photo`` as an upload's are."""
    return read_file(path, MAX_FILE_BYTES)
