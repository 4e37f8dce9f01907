"""``zhuoji serve`` and ``zhuoji live``: CLI shells over the HTTP service (api.app) and live mode (api.live)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

PRESETS = ["gy-normal", "gy-reduced", "liupanshui"]


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the HTTP service and web page (http://127.0.0.1:8000/)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=1, help="processes, each with its own model copy (default 1)")
    p.add_argument("--model", type=Path, help="ONNX model (default: ZHUOJI_MODEL or models/zhuoji-tiles-int8.onnx)")
    p.add_argument("--threads", type=int, help="onnxruntime threads per process (default: all cores; with "
                                                "several workers, cores ÷ workers)")
    p.add_argument("--db", metavar="URL", help="where the tables live: a SQLite file or postgresql+psycopg://… "
                                               "(default: ZHUOJI_DATABASE_URL or a file in your data directory)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, not {args.port}")
    if args.workers < 1 or (args.threads is not None and args.threads < 1):
        raise ValueError("--workers and --threads take a whole number ≥ 1")
    if args.model is not None:
        if not args.model.is_file():
            raise FileNotFoundError(f"model not found: {args.model}")
        # Workers are fresh processes: the environment is how the model path reaches them.
        os.environ["ZHUOJI_MODEL"] = str(args.model.resolve())
    if args.db:
        os.environ["ZHUOJI_DATABASE_URL"] = args.db  # as for the model: the environment reaches every worker
    threads = args.threads or (max(1, (os.cpu_count() or 1) // args.workers) if args.workers > 1 else None)
    if threads:
        os.environ["ZHUOJI_THREADS"] = str(threads)
    uvicorn.run("api.app:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                log_level=args.log_level, timeout_graceful_shutdown=10)
    return 0


def add_live(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("live", help="live table mode: read a camera or video and print the score when it changes")
    p.add_argument("--source", default="0", help="camera index (0), stream URL, or a video file (default 0)")
    p.add_argument("--out", type=Path, help="write the processed frames, annotated, to this video (.mp4 or .avi)")
    p.add_argument("--every", type=int, default=1, metavar="N",
                   help="video files: process every N-th frame (cameras drop frames by themselves)")
    p.add_argument("--window", type=int, default=5, help="frames voted over (default 5)")
    p.add_argument("--rules", default="gy-normal", choices=PRESETS)
    p.add_argument("--self-drawn", action="store_true", help="score wins as 自摸 (self-drawn)")
    p.add_argument("--model", type=Path, help="ONNX model (default: ZHUOJI_MODEL or models/zhuoji-tiles-int8.onnx)")
    p.add_argument("--max-frames", type=int, help="stop after processing this many frames")
    p.add_argument("--seconds", type=float, help="stop after this many seconds")
    p.add_argument("--json", action="store_true", help="one JSON line per change, and a summary line")
    p.set_defaults(func=run_live)


def run_live(args: argparse.Namespace) -> int:
    from api.live import live
    from api.schemas import ScoreContext
    from vision.detect import get_detector

    if args.every < 1 or args.window < 1:
        raise ValueError("--every and --window take a whole number ≥ 1")
    detector = get_detector(args.model)
    ctx = ScoreContext(rules=args.rules, self_drawn=args.self_drawn, annotate=False)
    stats = live(args.source, detector, every=args.every, window=args.window, ctx=ctx, out=args.out,
                 max_frames=args.max_frames, seconds=args.seconds, as_json=args.json)
    summary = stats.to_json()
    if args.json:
        print(json.dumps({"summary": summary}))
    else:
        print(f"processed {summary['frames_processed']} of {summary['frames_read']} frames in {summary['seconds']} s: "
              f"{summary['fps']} fps ({summary['ms_per_frame']} ms per frame), {summary['changes']} change(s)",
              file=sys.stderr)
    return 0
