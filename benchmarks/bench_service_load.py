"""Load benchmark of the whole service, bounded in time and count, on the loopback interface only.

    python benchmarks/bench_service_load.py [--seconds 20] [--max-requests 20000] [--json]
                                            [--scenarios hand score overload]

Starts ``zhuoji serve`` (one worker, the default limits) in a subprocess on a free port of 127.0.0.1, then runs
three scenarios one after the other, each for ``--seconds`` or ``--max-requests`` requests, whichever comes first:

- ``hand``: 32 clients posting hands to ``/v1/hand`` (text: no model runs);
- ``score``: 8 clients posting the sample photos to ``/v1/score`` (two looks and the crop classifier per photo);
- ``overload``: 100 clients posting photos to ``/v1/score`` at once: more than the photo queue holds, so the
  service must answer the excess 503 ``busy`` at once and keep serving the rest.

For each: requests per second answered 200, latency p50/p95/p99 of those (and of the refusals), answers by status,
transport errors, and the server's resident memory sampled every ``--sample`` seconds (min, max, the series).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))
HOST = "127.0.0.1"  # loopback only, never another address

HANDS = [{"concealed": "123m456p789s1155p"}, {"concealed": "1112345678999m"},
         {"concealed": "2m3m4m5s6s7s8p8p8p3m3m6m7m", "win_tile": "5m", "self_drawn": True},
         {"concealed": "1p2p3p4p5p6p7p8p9p2p2p5p6p", "win_tile": "7p", "rules": "liupanshui"}]
SCENARIOS = {"hand": ("/v1/hand", 32), "score": ("/v1/score", 8), "overload": ("/v1/score", 100)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class MemorySampler(threading.Thread):
    """The server's RSS every ``every`` seconds, while running."""

    def __init__(self, pid: int, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.samples = pid, every, []
        self.stopped = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stopped.is_set():
            try:
                self.samples.append((round(time.monotonic() - start, 1), round(rss_mb(self.pid), 1)))
            except OSError:
                return
            self.stopped.wait(self.every)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


async def scenario(url: str, path: str, clients: int, seconds: float, max_requests: int,
                   photos: list[tuple[str, bytes]]) -> dict:
    ok: list[float] = []
    refused: list[float] = []
    statuses: Counter[str] = Counter()
    sent = itertools.count()
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def client(k: int, http: httpx.AsyncClient) -> None:
        for i in itertools.count(k):
            if time.monotonic() >= deadline or next(sent) >= max_requests:
                return
            t0 = time.perf_counter()
            try:
                if path == "/v1/hand":
                    r = await http.post(url + path, json=HANDS[i % len(HANDS)])
                else:
                    name, data = photos[i % len(photos)]
                    r = await http.post(url + path, files={"image": (name, data, "image/jpeg")})
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
                continue
            took = time.perf_counter() - t0
            statuses[str(r.status_code)] += 1
            (ok if r.status_code == 200 else refused).append(took)
            if r.status_code == 503:  # as a polite client would: wait what Retry-After says (capped)
                await asyncio.sleep(min(float(r.headers.get("Retry-After", "1")), max(0.0, deadline - time.monotonic())))

    start = time.monotonic()
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=limits) as http:
        tasks = [asyncio.create_task(client(k, http)) for k in range(clients)]
        _, pending = await asyncio.wait(tasks, timeout=seconds + 30)
        for t in pending:  # still waiting 30 s past the end: a stuck answer, reported apart
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    elapsed = time.monotonic() - start
    return {"path": path, "clients": clients, "seconds": round(elapsed, 1), "answered_200": len(ok),
            "req_per_s": round(len(ok) / elapsed, 1), "p50_ms": percentile(ok, 0.5), "p95_ms": percentile(ok, 0.95),
            "p99_ms": percentile(ok, 0.99), "refused_p50_ms": percentile(refused, 0.5),
            "refused_p99_ms": percentile(refused, 0.99), "statuses": dict(statuses),
            "unanswered_at_end": len(pending)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=20.0, help="per scenario (at most 300)")
    p.add_argument("--max-requests", type=int, default=20_000, help="per scenario")
    p.add_argument("--sample", type=float, default=1.0, help="seconds between memory samples")
    p.add_argument("--scenarios", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not 0 < args.seconds <= 300 or not 0 < args.max_requests <= 1_000_000:
        raise SystemExit("--seconds up to 300 and --max-requests up to 1,000,000 keep the run bounded")
    photos = [(path.name, path.read_bytes()) for path in SAMPLES]
    port = free_port()
    url = f"http://{HOST}:{port}"
    server = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port),
                               "--log-level", "error"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    results = []
    try:
        started = time.monotonic()
        while True:
            if server.poll() is not None or time.monotonic() - started > 120:
                raise SystemExit("the server did not start")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
        for name in args.scenarios:
            path, clients = SCENARIOS[name]
            sampler = MemorySampler(server.pid, args.sample)
            sampler.start()
            result = asyncio.run(scenario(url, path, clients, args.seconds, args.max_requests, photos))
            sampler.stopped.set()
            sampler.join()
            rss = [mb for _, mb in sampler.samples]
            result.update(scenario=name, rss_min_mb=min(rss), rss_max_mb=max(rss), rss_series=sampler.samples)
            result["ready_after"] = httpx.get(f"{url}/readyz", timeout=5).status_code
            results.append(result)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    meta = {"cpus": os.cpu_count(), "load_avg_1m_at_end": round(os.getloadavg()[0], 2)}
    if args.json:
        print(json.dumps({"results": results, **meta}))
        return 0
    print(f"{'scenario':<9} {'clients':>7} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'RSS MB min-max':>15}  answers")
    for r in results:
        print(f"{r['scenario']:<9} {r['clients']:>7} {r['req_per_s']:>7} {r['p50_ms']!s:>8} {r['p95_ms']!s:>8} "
              f"{r['p99_ms']!s:>8} {r['rss_min_mb']:>7.0f}-{r['rss_max_mb']:<7.0f}  {r['statuses']}"
              + (f" (refusals p50 {r['refused_p50_ms']} ms, p99 {r['refused_p99_ms']} ms)" if r["refused_p50_ms"] else "")
              + f"; /readyz after: {r['ready_after']}")
    for r in results:
        series = " ".join(f"{t:g}s:{mb:.0f}" for t, mb in r["rss_series"][:: max(1, len(r["rss_series"]) // 10)])
        print(f"RSS over time, {r['scenario']}: {series}")
    print(f"cpus {meta['cpus']}, load average (1 min) at the end {meta['load_avg_1m_at_end']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
