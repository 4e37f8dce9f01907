"""``zhuoji serve`` and ``zhuoji live``: CLI shells over the HTTP service (api.service.app) and live mode (api.live.loop)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from api.live.post import TableScreen

PRESETS = ["gy-normal", "gy-reduced", "liupanshui", "dushan"]


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the HTTP service and web page (http://127.0.0.1:8000/)")
    p.add_argument("--host", help="address to listen on (default ZHUOJI_HOST or 127.0.0.1; 0.0.0.0: every "
                                  "interface)")
    p.add_argument("--port", type=int, help="default ZHUOJI_PORT or 8000")
    p.add_argument("--workers", type=int, help="processes, each with its own model copy (default ZHUOJI_WORKERS "
                                               "or 1)")
    p.add_argument("--model", type=Path, help="ONNX model (default: ZHUOJI_MODEL or models/zhuoji-tiles-int8.onnx)")
    p.add_argument("--threads", type=int, help="onnxruntime threads per process (default: all cores; with "
                                                "several workers, cores ÷ workers)")
    p.add_argument("--db", metavar="URL", help="where the tables live: a SQLite file or postgresql+psycopg://… "
                                               "(default: ZHUOJI_DATABASE_URL or a file in your data directory)")
    p.add_argument("--admin-key", metavar="KEY", help="the key that lists every table (GET /v1/tables) and saves "
                                                      "house profiles (default ZHUOJI_ADMIN_KEY, which keeps it out "
                                                      "of the process list; without one, nobody may)")
    p.add_argument("--allowed-host", action="append", metavar="NAME",
                   help="a Host name the service answers to beyond its own (loopback, this machine's names, any IP "
                        "address), repeatable; e.g. the proxy's public name; '*.example.com' patterns, '*' for any "
                        "(also ZHUOJI_ALLOWED_HOSTS, comma-separated)")
    p.add_argument("--forwarded-allow-ips", metavar="ADDRESSES",
                   help="the reverse proxies whose X-Forwarded-For names the client (quotas, connection share), "
                        "comma-separated addresses or networks (default ZHUOJI_FORWARDED_ALLOW_IPS or "
                        "127.0.0.1,::1)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="change one of the service's bounds, repeatable (pipeline/limits.py): photo_deadline_s "
                        "(10), queue_wait_s (10), header_timeout_s (10), body_timeout_s (120), body_idle_s (20), "
                        "keep_alive_s (5), max_connections (1000), connections_per_client (250), upload_bytes_in_flight "
                        "(160 MB), retry_after_s (1), tables_per_hour (120), round_writes_per_minute (120)")
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from api.service.server import serve
    from pipeline.limits import parse_limit
    from pipeline.settings import Settings

    if args.model is not None and not args.model.is_file():
        raise FileNotFoundError(f"model not found: {args.model}")
    settings = Settings.from_env(model=args.model.resolve() if args.model else None, host=args.host,
                                 port=args.port, workers=args.workers, threads=args.threads, database_url=args.db,
                                 admin_key=args.admin_key or None,
                                 allowed_hosts=args.allowed_host, forwarded_allow_ips=args.forwarded_allow_ips)
    if args.limit:
        settings = settings.replace(limits=settings.limits.replace(**dict(parse_limit(t) for t in args.limit)))
    if not 1 <= settings.port <= 65535:
        raise ValueError(f"--port must be 1..65535, not {settings.port}")
    if settings.workers < 1 or (settings.threads is not None and settings.threads < 1):
        raise ValueError("--workers and --threads take a whole number ≥ 1")
    if settings.threads is None and settings.workers > 1:
        settings = settings.replace(threads=max(1, (os.cpu_count() or 1) // settings.workers))
    serve(settings, args.log_level)
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
    p.add_argument("--table", action="store_true",
                   help="a camera fixed over the whole table: propose each round when its hands are laid down (the "
                        "read-table answer), once per round")
    p.add_argument("--settle", type=int, default=5, metavar="N",
                   help="--table: frames the view must stay still before the table is read (default 5)")
    p.add_argument("--server", metavar="URL",
                   help="--table: post each proposed round to this service's table screen (http://host:8000, or "
                        "the table's edit link, which names the table and its key)")
    p.add_argument("--table-id", metavar="ID", help="--server: the table to post to (else the edit link's)")
    p.add_argument("--key", metavar="KEY", help="--server: the table's edit key (else ZHUOJI_TABLE_KEY, else the "
                                                "edit link's)")
    p.set_defaults(func=run_live)


def run_live(args: argparse.Namespace) -> int:
    from api.live.loop import check_source, live, live_table
    from api.live.post import ProposalPoster
    from pipeline.models import ScoreContext
    from pipeline.settings import Settings, open_detector

    if args.every < 1 or args.window < 1 or args.settle < 1:
        raise ValueError("--every, --window and --settle take a whole number ≥ 1")
    check_source(args.source)  # before the model loads
    screen = table_screen(args)  # and the service asked: a bad address, table or key is refused before it too
    if args.out is not None and args.out.suffix.lower() not in (".mp4", ".avi"):
        raise ValueError(f"cannot write video {args.out} (use a .mp4 or .avi name)")
    detector = open_detector(Settings.from_env(model=args.model))
    poster = ProposalPoster(screen) if screen is not None else None
    if args.table:
        stats = live_table(args.source, detector, every=args.every, settle=args.settle, out=args.out,
                           max_frames=args.max_frames, seconds=args.seconds, as_json=args.json,
                           on_proposal=poster)
    else:
        ctx = ScoreContext(rules=args.rules, self_drawn=args.self_drawn, annotate=False)
        stats = live(args.source, detector, every=args.every, window=args.window, ctx=ctx, out=args.out,
                     max_frames=args.max_frames, seconds=args.seconds, as_json=args.json)
    summary = stats.to_json()
    if args.json:
        print(json.dumps({"summary": summary}))
    elif args.table:
        print(f"watched {summary['frames_processed']} of {summary['frames_read']} frames in {summary['seconds']} s "
              f"({summary['ms_per_frame']} ms per frame): {summary['detector_runs']} table reading(s), "
              f"{summary['changes']} round(s) proposed"
              + (f", {poster.posted} posted to {poster.screen.page}" if poster is not None else ""), file=sys.stderr)
    else:
        print(f"processed {summary['frames_processed']} of {summary['frames_read']} frames in {summary['seconds']} s: "
              f"{summary['fps']} fps ({summary['ms_per_frame']} ms per frame), {summary['changes']} change(s)",
              file=sys.stderr)
    return 1 if poster is not None and poster.failed else 0  # a round that did not reach the screen


def table_screen(args: argparse.Namespace) -> TableScreen | None:
    """``--server``'s table screen, checked with the service (one line for what is wrong); None without it."""
    from api.live.post import TableScreen

    if args.server is None:
        if args.table_id or args.key:
            raise ValueError("--table-id and --key go with --server URL (the service to post proposed rounds to)")
        return None
    if not args.table:
        raise ValueError("--server posts proposed rounds: it goes with --table (a camera over the whole table)")
    screen = TableScreen.parse(args.server, args.table_id, args.key)
    screen.check()
    return screen
