"""Speed on real-sized photos: whole process vs the mahjong-detector pipeline, per-stage times, the service, live mode.

    python benchmarks/make_inputs.py                 # once: builds benchmarks/inputs/ (about 15 s)
    python benchmarks/bench_speed.py [--inputs benchmarks/inputs] [--rounds 3] [--skip process,stages,service,live]

Parts, all on the inputs ``make_inputs.py`` writes:

* ``process``: the whole process, start-up and decoding included, over a folder of photos: ``zhuoji detect --json
  FOLDER/*.jpg`` against one Python process calling mahjong-detector's ``detect_tiles`` on each file (what its
  own command line does per photo). Ours and the peer alternate, ``--rounds`` times each; the medians and their
  ratio. On ``mixed/`` (25 photos of 0.4–12 MP) and each of the other photo folders. ``--before DIR``: another
  checkout's ``zhuoji detect`` in the same rounds (the code before a change, in the same load).
* ``looks``: where a photo's time goes: the detector's passes and the crop classifier's crops (first look, turned
  looks, stretched look), each with its ms.
* ``stages``: per photo, median ms of each stage run the way the detector runs them: decode (``load_image``, at
  reduced size where the detector would ask for it), detect (the network's passes and the boxes, ``closer=False``),
  classify (the crop classifier), back check, layout, reading; and the whole ``Detector`` call and
  ``Detector(turned="auto")`` as ``read`` runs it. On ``phone/`` (12 MP, one hand), ``catalogue/`` (8 MP, 150
  tiles) and ``frames/`` (640 px).
* ``service``: ``POST /v1/detect`` and ``/v1/score`` on the 12 MP photos, in process (FastAPI's test client), p50.
* ``live``: ``zhuoji live`` on ``live_720p.mp4`` (10 s at 30 frames/s): processed frames/s and changes of reading.
* ``accuracy``: mAP50 on the catalogue photos (labelled by make_inputs.py) with one pass, adaptive tiling and
  windows over the whole photo.
* ``sessions``: onnxruntime session options (threads, spinning, graph optimizations, memory arena) on the detector
  and the crop classifier.

The machine's load changes the absolute times: run it on a quiet machine, and read the ratios first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PEER = ("import sys\nfrom mahjong_detector import detect_tiles\n"
        "for p in sys.argv[1:]:\n    print(p, ' '.join(detect_tiles(p)))\n")


def run_process(cmd: list[str], root: Path = ROOT) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, all threads) of one process: on a shared machine the wall time
    swings with the others' load, the CPU time much less. Python may write its bytecode caches (an environment
    that sets PYTHONDONTWRITEBYTECODE would otherwise compile every module of a source checkout in every process,
    0.07–0.1 s CPU here, which an installed package and the peer's never pay)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if root != ROOT:
        env["PYTHONPATH"] = str(root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed: {out.stderr.strip()[-400:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def process(folder: Path, rounds: int, before: Path | None = None) -> None:
    photos = [str(p) for p in sorted(folder.glob("*.jpg"))]
    ours_cmd = [str(Path(sys.executable).parent / "zhuoji"), "detect", "--json", *photos]
    runs: dict[str, tuple[list[str], Path]] = {"ours": (ours_cmd, ROOT),
                                               "peer": ([sys.executable, "-c", PEER, *photos], ROOT)}
    if before is not None:  # another checkout's zhuoji detect, on the same photos (its own code first on the path)
        runs["before"] = ([sys.executable, "-c", "import sys; from api.cli import main; sys.exit(main())", "detect",
                           "--json", *photos], before)
    times: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    order = list(runs)
    for k in order:  # untimed: bytecode compiled, models and photos in the page cache, for every pipeline alike
        run_process(*runs[k])
    for r in range(rounds):  # alternate, the first of each round turning, so that all see the same load
        for k in order[r % len(order):] + order[:r % len(order)]:
            wall, used = run_process(*runs[k])
            times[k].append(wall)
            cpu[k].append(used)
    med = {k: statistics.median(v) for k, v in times.items()}
    o, p = med["ours"], med["peer"]
    extra = f" {med['before']:.2f} s | {med['before'] / p:.2f} |" if before is not None else ""
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"| {folder.name} ({len(photos)} photos) | {o:.2f} s | {p:.2f} s | {o / p:.2f} |{extra} "
          f"{' / '.join(' '.join(f'{t:.2f}' for t in times[k]) for k in runs)} | "
          + " / ".join(f"{cpu_med[k]:.2f}" for k in runs) + f" | {cpu_med['ours'] / cpu_med['peer']:.2f} |")


def looks(folder: Path, repeats: int) -> None:
    """Per photo (warm, the photo decoded as the detector asks): decode ms, the detector's passes and their ms, the
    crop classifier's crops and ms for its first look, its turned looks and its stretched look, the rest of
    ``Detector()`` and all of it, each in wall and CPU ms: where a photo's time goes."""
    from collections import defaultdict

    from pipeline.settings import Settings, open_detector
    from vision.images import load_image_reduced

    detector = open_detector(Settings.from_env())
    classifier, acc = detector.classifier, defaultdict(float)
    if classifier is None:
        raise SystemExit("part looks: no crop classifier")
    look, raw = classifier.looks, detector.raw

    def timed(key, count, run):
        """Run ``run()`` and add its wall and CPU ms (process time: all threads) to ``key``'s totals."""
        acc[key] += count
        t, c = time.perf_counter(), time.process_time()
        out = run()
        acc[key + " ms"] += 1000 * (time.perf_counter() - t)
        acc[key + " cpu"] += 1000 * (time.process_time() - c)
        return out

    def counted(img, xyxy, turns=(0,), aspect=None):
        key = "stretched" if aspect else "first" if turns == (0,) else "turned"
        return timed(key, len(xyxy) * len(turns), lambda: look(img, xyxy, turns, aspect))

    def passes(canvas):
        return timed("passes", 1, lambda: raw(canvas))

    classifier.looks, detector.raw = counted, passes  # instance attributes: the process's detector only
    photos = sorted(folder.glob("*.jpg"))
    detector(str(photos[0]))  # warm
    acc.clear()
    decode = whole = whole_cpu = 0.0
    for _ in range(repeats):
        for path in photos:
            data = path.read_bytes()
            t0 = time.perf_counter()
            img = load_image_reduced(data, detector.min_side)[0]
            t1, c1 = time.perf_counter(), time.process_time()
            detector(img)
            decode, whole = decode + t1 - t0, whole + time.perf_counter() - t1
            whole_cpu += time.process_time() - c1
    n = repeats * len(photos)
    per = {k: v / n for k, v in acc.items()}
    rest = 1000 * whole / n - sum(v for k, v in per.items() if k.endswith(" ms"))
    rest_cpu = 1000 * whole_cpu / n - sum(v for k, v in per.items() if k.endswith(" cpu"))
    print(f"| {folder.name} | {1000 * decode / n:.0f} | "
          + " | ".join(f"{per.get(k, 0):.{1 if k == 'passes' else 0}f} → {per.get(k + ' ms', 0):.0f} "
                       f"({per.get(k + ' cpu', 0):.0f})" for k in ("passes", "first", "turned", "stretched"))
          + f" | {rest:.0f} ({rest_cpu:.0f}) | {1000 * whole / n:.0f} ({1000 * whole_cpu / n:.0f}) |")


def stages(folder: Path, repeats: int) -> None:
    import cv2  # noqa: F401  (loaded before timing)

    from pipeline.settings import Settings, open_detector
    from vision.images import load_image_reduced
    from vision.layout import layout
    from vision.reading import read

    detector = open_detector(Settings.from_env())
    photos = sorted(folder.glob("*.jpg"))
    times: dict[str, list[float]] = {k: [] for k in ("decode", "detect", "classify", "back check", "layout",
                                                      "reading", "Detector()", "Detector(turned='auto')")}
    boxes = []
    for path in photos:
        data = path.read_bytes()
        for rep in range(repeats + 1):
            t = {}
            t0 = time.perf_counter()
            img = load_image_reduced(data, detector.min_side)[0]
            t["decode"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            dets = detector(img, closer=False)
            t["detect"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            named = detector.classifier(img, dets) if detector.classifier else dets
            t["classify"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            if detector.back_check:
                detector.back_check(img, named)
            t["back check"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            lay = layout(named)
            t["layout"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            read(named, lay, img)
            t["reading"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            full = detector(img)
            t["Detector()"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            detector(img, turned="auto")
            t["Detector(turned='auto')"] = time.perf_counter() - t0
            if rep:  # the first round warms caches and sessions
                for k, v in t.items():
                    times[k].append(v)
        boxes.append(len(full))
    med = {k: 1000 * statistics.median(v) for k, v in times.items()}
    print(f"| {folder.name} ({len(photos)}, {statistics.median(boxes):.0f} boxes) | "
          + " | ".join(f"{med[k]:.1f}" for k in times) + " |")


def service(folder: Path, repeats: int) -> None:
    from fastapi.testclient import TestClient

    from api.service.app import create_app

    photos = sorted(folder.glob("*.jpg"))
    with TestClient(create_app()) as client:
        for route in ("/v1/detect", "/v1/score"):
            times = []
            for rep in range(repeats + 1):
                for p in photos:
                    t = time.perf_counter()
                    r = client.post(route, files={"image": (p.name, p.read_bytes(), "image/jpeg")},
                                    data={"annotate": "false"} if route == "/v1/score" else None)
                    if r.status_code != 200:
                        raise SystemExit(f"{route} {p.name}: {r.status_code} {r.text[:200]}")
                    if rep:
                        times.append(time.perf_counter() - t)
            print(f"{route} on {folder.name}/ ({len(photos)} photos × {repeats}): p50 "
                  f"{1000 * statistics.median(times):.0f} ms, p90 {1000 * sorted(times)[int(0.9 * len(times))]:.0f} ms")


def live(video: Path) -> None:
    cmd = [str(Path(sys.executable).parent / "zhuoji"), "live", "--source", str(video), "--json"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"zhuoji live failed: {out.stderr.strip()[-400:]}")
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    summary = lines[-1]["summary"]
    readings = [line["reading"] for line in lines[:-1]]
    print(f"zhuoji live {video.name}: {summary['frames_processed']} of {summary['frames_read']} frames in "
          f"{summary['seconds']} s: {summary['fps']} frames/s, {summary['ms_per_frame']} ms per frame, the detector on "
          f"{summary['detector_runs']} frames; "
          f"{summary['changes']} announced reading(s): {readings}")


def accuracy(inputs: Path) -> None:
    """mAP50 (27 suited classes) on the catalogue photos, whose labels make_inputs.py writes: one pass, adaptive
    tiling (the default) and windows over the whole photo; and tile accuracy and precision of the boxes returned."""
    from pipeline.settings import Settings, open_detector
    from vision.classes import OTHER
    from vision.training.evaluate import SUITED, evaluate, with_alternatives

    detector = open_detector(Settings.from_env())
    images = sorted((inputs / "catalogue").glob("*.jpg"))
    for name, tiled in (("one pass (tiled=False)", False), ("adaptive (default)", None),
                        ("whole photo in windows (tiled=True)", True)):
        result = evaluate(lambda p, t=tiled: with_alternatives(detector(p, conf=0.001, tiled=t), 1), images,
                          inputs / "catalogue_labels", {27: OTHER}, name)
        print(f"catalogue/ ({len(images)} photos), {name}: mAP50 {result.map50(SUITED):.4f}")
    # the boxes a user gets (confidence from 0.25, weak tiles in a row kept): read right and extra, not ranked
    result = evaluate(lambda p: with_alternatives(detector(p), 1), images, inputs / "catalogue_labels", {27: OTHER},
                      "as returned")
    right, precision, labels = result.tile_accuracy()
    print(f"catalogue/, the boxes returned (from 0.25): tile accuracy {right:.3f} of {labels} tiles, precision "
          f"{precision:.3f}")


def sessions(repeats: int) -> None:
    """onnxruntime session options on the detector (one 640 px canvas) and the crop classifier (32 crops): the
    fastest of ``repeats`` × 10 runs of each, the variants taken in turn so that they share the machine's load."""
    import numpy as np
    import onnxruntime as ort

    from vision.classify import DEFAULT_CLASSIFIER
    from vision.detect import DEFAULT_MODEL

    rng = np.random.default_rng(0)
    inputs = {DEFAULT_MODEL: rng.random((1, 3, 640, 640), np.float32),
              DEFAULT_CLASSIFIER: rng.random((32, 3, 64, 64), np.float32)}
    variants = {"threads=cores, no spinning (shipped)": dict(spin="0"), "threads=cores, spinning": dict(spin="1"),
                "threads=1": dict(threads=1, spin="0"), "basic graph optimizations": dict(spin="0", level="basic"),
                "no memory arena": dict(spin="0", arena=False)}
    for path, x in inputs.items():
        made = {}
        for name, v in variants.items():
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = v.get("threads", os.cpu_count() or 1)
            opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if v.get("level")
                                             else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
            opts.enable_cpu_mem_arena = v.get("arena", True)
            opts.add_session_config_entry("session.intra_op.allow_spinning", v["spin"])
            made[name] = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        feed = {next(iter(made.values())).get_inputs()[0].name: x}
        best = {name: float("inf") for name in made}
        for _ in range(repeats):
            for name, session in made.items():
                session.run(None, feed)
                for _ in range(10):
                    t = time.perf_counter()
                    session.run(None, feed)
                    best[name] = min(best[name], time.perf_counter() - t)
        print(f"{path.name}: " + "; ".join(f"{name} {1000 * t:.1f} ms" for name, t in best.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=Path, default=ROOT / "benchmarks" / "inputs")
    ap.add_argument("--rounds", type=int, default=3, help="whole-process runs of each pipeline (median)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per photo in the stage and service parts")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: process, looks, stages, service, "
                                               "live, accuracy, sessions")
    ap.add_argument("--before", type=Path, help="part process: also time this checkout's zhuoji detect (e.g. a "
                                                "`git archive` of main unpacked beside ../shared)")
    args = ap.parse_args()
    if not (args.inputs / "mixed").is_dir():
        ap.error(f"{args.inputs}: no inputs there (run benchmarks/make_inputs.py first)")
    skip = set(args.skip.split(","))
    print(f"# Speed benchmark ({os.cpu_count()} cores)")
    if "process" not in skip:
        print("\n## Whole process (start-up + decode + detect), ours `zhuoji detect --json` vs mahjong-detector\n")
        before = " before (median) | before / peer |" if args.before else ""
        runs = f"ours / peer{' / before' if args.before else ''}"
        print(f"| photos | ours (median) | mahjong-detector (median) | ours / peer |{before} runs {runs} | "
              f"CPU s (median) {runs} | CPU ours / peer |")
        print("| --- " * (9 if args.before else 7) + "|")
        for sub in ("mixed", "phone", "catalogue", "frames"):
            process(args.inputs / sub, args.rounds, args.before)
    if "looks" not in skip:
        print("\n## Where a photo's time goes, ms per photo (warm)\n")
        print("Wall ms, and CPU ms (process time, all threads) in brackets.\n")
        print("| photos | decode | detector passes → ms | first look: crops → ms | turned looks: crops → ms | "
              "stretched look: crops → ms | the rest | Detector() |")
        print("| --- " * 8 + "|")
        for sub in ("catalogue", "phone", "frames"):
            looks(args.inputs / sub, args.repeats)
    if "stages" not in skip:
        print("\n## Per stage, median ms per photo\n")
        print("| photos | decode | detect | classify | back check | layout | reading | Detector() | "
              "Detector(turned='auto') |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for sub in ("phone", "catalogue", "frames"):
            stages(args.inputs / sub, args.repeats)
    if "service" not in skip:
        print("\n## Service\n")
        service(args.inputs / "phone", args.repeats)
    if "live" not in skip:
        print("\n## Live mode\n")
        live(args.inputs / "live_720p.mp4")
    if "accuracy" not in skip:
        print("\n## Tiling and accuracy on the catalogue photos\n")
        accuracy(args.inputs)
    if "sessions" not in skip:
        print("\n## onnxruntime session options, fastest run\n")
        sessions(args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
