"""Importing a module does no work: no environment set, no app built. The programs do what must happen at
start-up themselves (``zhuoji`` caps OpenCV's decoded pixels before anything loads OpenCV)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vision.pixels import MAX_PIXELS

ROOT = Path(__file__).resolve().parents[1]
CAP = "OPENCV_IO_MAX_IMAGE_PIXELS"


def python(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != CAP}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_importing_the_image_loader_or_the_service_does_nothing() -> None:
    code = (f"import os, vision.images, api.service.app as app; "
            f"print({CAP!r} in os.environ, hasattr(app, 'app'))")
    assert python(code) == "False False"


def test_zhuoji_caps_decoded_pixels_before_opencv_loads() -> None:
    code = (f"import os, sys; from api.cli import main; loaded = 'cv2' in sys.modules; "
            f"main(['hand', '1112345678999m']); print(loaded, os.environ[{CAP!r}])")
    last = python(code).splitlines()[-1]
    assert last == f"False {MAX_PIXELS}"
