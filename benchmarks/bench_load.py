"""Load benchmark of the HTTP service: concurrent clients posting real photos to /v1/score.

    python benchmarks/bench_load.py [--clients 32] [--seconds 60] [--workers 1] [--model PATH]
                                    [--max-requests N] [--endpoint /v1/score] [--json]

Starts ``zhuoji serve`` in a subprocess on a free port of 127.0.0.1 (never another address), waits until
/healthz reports the model loaded, runs the clients (httpx, async) until ``--seconds`` have passed or
``--max-requests`` have been sent, then stops the server. Requests still in flight at the deadline are
cancelled and reported apart (they are not errors). Reports throughput, p50/p99 latency of the completed
requests, errors by status, and the server's peak RSS (the kernel's high-water mark, VmHWM, summed over the
server and its worker processes).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    """VmHWM (peak resident set) of ``pid`` and its child processes, in MiB."""
    total_kb = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return total_kb / 1024


def start_server(port: int, args: argparse.Namespace) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port), "--workers",
           str(args.workers), "--log-level", "warning"]
    if args.model:
        cmd += ["--model", str(args.model)]
    return subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def wait_ready(url: str, server: subprocess.Popen, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode}")
        try:
            health = httpx.get(f"{url}/healthz", timeout=2).json()
            if not health.get("model_loaded"):
                raise SystemExit(f"the server has no model: {health}")
            return health
        except httpx.HTTPError:
            time.sleep(0.25)
    raise SystemExit("the server did not start in time")


async def run_clients(url: str, args: argparse.Namespace, photos: list[tuple[str, bytes]]) -> dict:
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    sent = itertools.count()
    deadline = time.monotonic() + args.seconds
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)

    async def client(k: int, http: httpx.AsyncClient) -> None:
        for i in itertools.count(k):
            if time.monotonic() >= deadline or next(sent) >= args.max_requests:
                return
            name, data = photos[i % len(photos)]
            t0 = time.perf_counter()
            try:
                r = await http.post(f"{url}{args.endpoint}", files={"image": (name, data, "image/jpeg")})
                statuses[str(r.status_code)] += 1
                if r.status_code == 200:
                    latencies.append(time.perf_counter() - t0)
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1

    start = time.monotonic()
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), limits=limits) as http:
        tasks = [asyncio.create_task(client(k, http)) for k in range(args.clients)]
        done, pending = await asyncio.wait(tasks, timeout=args.seconds)
        for t in pending:  # in flight at the deadline: stop waiting, report them apart
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    elapsed = time.monotonic() - start
    ok = statuses.get("200", 0)
    lat = sorted(latencies)
    return {
        "completed": ok,
        "errors": {k: v for k, v in statuses.items() if k != "200"},
        "cancelled_at_deadline": len(pending),
        "seconds": round(elapsed, 2),
        "throughput_rps": round(ok / elapsed, 3) if elapsed else 0.0,
        "latency_p50_s": round(statistics.median(lat), 3) if lat else None,
        "latency_p99_s": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 3) if lat else None,
        "latency_max_s": round(lat[-1], 3) if lat else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--max-requests", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--model", type=Path, help="ONNX model (default: ZHUOJI_MODEL or models/zhuoji-tiles-int8.onnx)")
    p.add_argument("--endpoint", default="/v1/score", choices=["/v1/score", "/v1/read", "/v1/detect"])
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not SAMPLES:
        raise SystemExit("no photos in datasets/samples/")
    if not (1 <= args.clients <= 256 and 0 < args.seconds <= 600):
        raise SystemExit("--clients 1..256 and --seconds up to 600 keep the run bounded")
    photos = [(path.name, path.read_bytes()) for path in SAMPLES]
    port = free_port()
    url = f"http://{HOST}:{port}"
    server = start_server(port, args)
    try:
        health = wait_ready(url, server)
        result = asyncio.run(run_clients(url, args, photos))
        result["peak_rss_mb"] = round(peak_rss_mb(server.pid), 1)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    result.update(clients=args.clients, workers=args.workers, endpoint=args.endpoint, model=health["model"],
                  cpus=os.cpu_count(), load_avg_1m=round(os.getloadavg()[0], 2))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
