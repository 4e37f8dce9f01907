"""The most pixels a photo may have, and OpenCV's own cap on decoded pixels set from it.

A module without cv2: OpenCV reads ``OPENCV_IO_MAX_IMAGE_PIXELS`` once, when its library loads, so a program calls
:func:`cap_decoded_pixels` at start-up before anything imports cv2 (``zhuoji`` does, first thing in ``main``). It is
a last line for headers nobody parsed: ``vision.images`` refuses oversized photos from their headers itself.
"""

from __future__ import annotations

import os

MAX_PIXELS = 50_000_000  # refuse decompression bombs before decoding them in full


def cap_decoded_pixels() -> None:
    """Set OpenCV's decoder cap to :data:`MAX_PIXELS` (unless the environment already sets one)."""
    os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))
