"""Reading a named file with bounds: one plain message for every way a path can be unreadable.

Shared by the image loader and the command line (table JSON). Special files are refused before they are opened:
a FIFO would block until a writer comes, ``/dev/zero`` never ends.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class FileReadError(ValueError):
    """The path cannot be read as a file of the expected size; the message names the path and why."""


def read_file(source: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; :class:`FileReadError` for a missing file, a folder,
    a device or pipe, a file too large, or one that cannot be read (permissions)."""
    path = Path(source)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise FileReadError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileReadError(f"{path} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise FileReadError(f"{path} is not a regular file (a device, pipe or socket)")
    if info.st_size > limit:
        raise FileReadError(f"{path} is too large ({_mb(info.st_size)}; at most {_mb(limit)})")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)  # bounded, should the file have grown since stat
    except OSError as exc:
        raise FileReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileReadError(f"{path} is too large (at most {_mb(limit)})")
    return data


def _mb(size: int) -> str:
    return f"{size / 2**20:.1f} MB" if size >= 2**20 else f"{size:,} bytes"
