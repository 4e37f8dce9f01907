"""Run a benchmark as on an x86-64 CPU with AVX2 but without AVX-512, VNNI or AMX (see avx2_only.c): the int8
models' speed depends on VNNI, and no such CPU may be at hand.

``restart_avx2_only()`` builds the shim with the C compiler (into build/, once) and starts this Python script
again with it preloaded; the restarted process finds it loaded and goes on. Linux on x86-64 only, with CPUID
faulting (``cpuid_fault`` in /proc/cpuinfo).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path(__file__).with_suffix(".c")
LIBRARY = ROOT / "build" / "avx2_only.so"
MARK = "ZHUOJI_AVX2_ONLY"  # set in the restarted process


class Unavailable(RuntimeError):
    """This machine cannot hide its CPU features (not x86-64 Linux, no CPUID faulting or no C compiler)."""


def build(library: Path = LIBRARY) -> Path:
    """The shim's shared library at ``library``, compiled when missing or older than its source."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"needs Linux on x86-64 (this is {platform.system()} on {platform.machine()})")
    flags = Path("/proc/cpuinfo").read_text().split()
    if "cpuid_fault" not in flags:
        raise Unavailable("this CPU or its hypervisor offers no CPUID faulting (no cpuid_fault in /proc/cpuinfo)")
    if library.is_file() and library.stat().st_mtime >= SOURCE.stat().st_mtime:
        return library
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise Unavailable("no C compiler found (cc or gcc) to build benchmarks/avx2_only.c")
    library.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(library), str(SOURCE)], capture_output=True,
                              text=True)
    except OSError as e:
        raise Unavailable(f"cannot run the C compiler {cc}: {e.strerror}") from None
    if done.returncode != 0:
        raise Unavailable(f"building {SOURCE.name} failed: {done.stderr.strip()}")
    return library


def active() -> bool:
    return os.environ.get(MARK) == "1"


def restart_avx2_only() -> None:
    """Start this script again with the shim preloaded (returns only in the restarted process)."""
    if active():
        return
    library = build()
    env = dict(os.environ, **{MARK: "1"})
    env.pop("PYTHONFAULTHANDLER", None)  # its SIGSEGV handler would replace the shim's and turn CPUID into a crash
    env["LD_PRELOAD"] = " ".join(filter(None, [str(library), env.get("LD_PRELOAD", "")]))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def machine() -> str:
    """A line for reports: the CPU, its cores and the instruction sets this process sees (numpy's detection, from
    CPUID as onnxruntime's)."""
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.is_file():
        names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if line.startswith("model name")]
        cpu = names[0] if names else cpu
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as seen
    except ImportError:
        seen = None
    line = f"CPU: {cpu}, {os.cpu_count()} cores"
    if seen is not None:
        sets = {"AVX2": "AVX2", "AVX512F": "AVX-512", "AVX512VNNI": "AVX-512 VNNI"}
        line += "; instruction sets seen: " + ", ".join(f"{v} {'yes' if seen.get(k) else 'no'}" for k, v in sets.items())
    return line + (" (AVX-512, VNNI and AMX hidden by --avx2-only)" if active() else "")
