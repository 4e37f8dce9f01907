"""Checks of the command line's output paths, made before any work: a path that cannot be written is one line
and exit 2 at the start, not a traceback after the photos were read."""

from __future__ import annotations

import os
from pathlib import Path

# What cv2.imwrite writes by the name's extension (OpenCV raises for any other).
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")
JPEG_EXTENSIONS = (".jpg", ".jpeg")


class OutputPathError(ValueError):
    """An output path that cannot be written; the message says why."""


def annotation_target(out: Path, folder: bool, extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> Path | None:
    """Check ``--annotate OUT`` before any work. ``folder``: several photos, so OUT is a folder (made if missing);
    an existing folder is one anyway. Returns the folder to write ``<photo name>.jpg`` files into, or None when
    OUT is the file to write. :class:`OutputPathError` when OUT cannot be written."""
    if folder or out.is_dir():
        if out.exists() and not out.is_dir():
            raise OutputPathError(f"--annotate {out}: several photos need a folder, and this is a file")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(f"--annotate {out}: cannot make this folder ({exc.strerror or exc})") from None
        _writable(out, out)
        return out
    if out.suffix.lower() not in extensions:
        raise OutputPathError(f"--annotate {out}: the name must end in {', '.join(extensions)}")
    parent = out.parent
    if parent.exists() and not parent.is_dir():
        raise OutputPathError(f"--annotate {out}: {parent} is a file, not a folder")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"--annotate {out}: cannot make the folder {parent} ({exc.strerror or exc})") from None
    if out.exists() and not out.is_file():
        raise OutputPathError(f"--annotate {out}: exists and is not a regular file")
    _writable(out, out if out.exists() else parent)
    return None


def _writable(out: Path, path: Path) -> None:
    if not os.access(path, os.W_OK):
        raise OutputPathError(f"--annotate {out}: no permission to write {path}")
