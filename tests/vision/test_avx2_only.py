"""benchmarks/avx2_only: a process run with the shim sees no AVX-512 or VNNI, and still dies of a real segfault."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("zhuoji_avx2_only", ROOT / "benchmarks" / "avx2_only.py")
assert spec and spec.loader
avx2_only = importlib.util.module_from_spec(spec)
spec.loader.exec_module(avx2_only)

FEATURES = "from numpy._core._multiarray_umath import __cpu_features__ as f; print(f['AVX2'], f['AVX512F'], f['AVX512VNNI'])"


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    try:
        return avx2_only.build(tmp_path_factory.mktemp("shim") / "avx2_only.so")
    except avx2_only.Unavailable as e:
        pytest.skip(str(e))


def run(code: str, library: Path | None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, LD_PRELOAD=str(library)) if library else dict(os.environ)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=cwd)


def test_hides_avx512_and_vnni_keeps_avx2(library):
    native = run(FEATURES, None).stdout.split()
    hidden = run(FEATURES, library)
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout.split() == [native[0], "False", "False"]


def test_a_real_segfault_still_kills(library):
    done = run("import ctypes; ctypes.string_at(0)", library)
    assert done.returncode == -11  # SIGSEGV, not caught as if it were CPUID


def test_the_shipped_models_read_a_photo_alike(library):
    """The int8 models' 7-bit weights never saturate the int16 sums of the kernels without VNNI: the same tiles."""
    photo = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))[0]
    code = (f"import json; from vision.detect import detect; "
            f"d = detect({str(photo)!r}); print(json.dumps([d.names, d.xyxy.round(1).tolist()]))")
    native, hidden = run(code, None), run(code, library)
    assert native.returncode == 0 and hidden.returncode == 0, native.stderr + hidden.stderr
    (names, boxes), (names_hidden, boxes_hidden) = json.loads(native.stdout), json.loads(hidden.stdout)
    assert len(names) >= 10
    assert names_hidden == names
    assert np.abs(np.array(boxes_hidden) - np.array(boxes)).max() < 2.0  # pixels


def test_a_missing_compiler_is_a_clear_error(library, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(avx2_only.Unavailable, match="cannot run the C compiler"):
        avx2_only.build(tmp_path / "shim.so")


def test_the_benchmark_prints_what_it_hid(library):
    # `python -c` puts its working directory first on sys.path: the benchmark's folder makes it importable
    line = run("import avx2_only; print(avx2_only.machine())", library, cwd=ROOT / "benchmarks").stdout
    assert "AVX2 yes" in line and "AVX-512 no" in line and "AVX-512 VNNI no" in line
