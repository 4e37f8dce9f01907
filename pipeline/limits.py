"""The service's bounds in one place: how much work, time and memory one request may take.

Every knob has a default here; ``zhuoji serve --limit NAME=VALUE`` changes one. They travel in the
:class:`~pipeline.settings.Settings` (its ``limits``); in the environment, for worker processes, as
``ZHUOJI_LIMITS`` (JSON of the changed ones: :func:`limits_from_env`, :func:`limits_env`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

# OpenCV's cap on decoded pixels, for the programs to set at start-up: this module loads no cv2, so it is early enough.
from vision.pixels import cap_decoded_pixels as cap_decoded_pixels

ENV = "ZHUOJI_LIMITS"
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Bounds of the HTTP service (seconds, counts, bytes)."""

    photo_deadline_s: float = 10.0  # work one photo request may take; past it 503 + Retry-After, the worker free
    queue_wait_s: float = 10.0  # a photo waits at most this for a worker (overload), else 503 busy + Retry-After
    header_timeout_s: float = 10.0  # a request's headers must arrive within this (from connect or the last answer)
    body_timeout_s: float = 120.0  # a whole body: 20 MB at ~170 kB/s; slower clients belong behind a proxy
    body_idle_s: float = 20.0  # longest pause between two pieces of a body
    keep_alive_s: float = 5.0  # an idle keep-alive connection is closed after this
    max_connections: int = 1000  # open connections per process; more are closed at once
    connections_per_client: int = 250  # of those, from one client address (trusted proxies excepted)
    upload_bytes_in_flight: int = 160 * MB  # photo bodies being received at once (declared, or 20 MB each if not)
    retry_after_s: int = 1  # what a 503 busy asks the client to wait
    tables_per_hour: int = 120  # tables one client address may create per hour (429 beyond, per process)
    round_writes_per_minute: int = 120  # round adds, edits and undos one client address may make per minute

    def replace(self, **changes: object) -> Limits:
        return dataclasses.replace(self, **changes)


def parse_limit(text: str) -> tuple[str, float | int]:
    """``"photo_deadline_s=5"`` → ``("photo_deadline_s", 5.0)``; ``ValueError`` naming the known limits."""
    name, sep, value = text.partition("=")
    fields = {f.name: f.type for f in dataclasses.fields(Limits)}
    if not sep or name not in fields:
        raise ValueError(f"--limit {text!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
    try:
        number = int(value) if fields[name] == "int" else float(value)
    except ValueError:
        raise ValueError(f"--limit {text!r}: {value!r} is not a number") from None
    if not number > 0:
        raise ValueError(f"--limit {text!r}: must be greater than 0")
    return name, number


def limits_from_env(environ: Mapping[str, str] = os.environ) -> Limits:
    """The defaults with the changes ``ZHUOJI_LIMITS`` holds."""
    text = environ.get(ENV)
    if not text:
        return Limits()
    changes = json.loads(text)
    return Limits(**{name: value for name, value in (parse_limit(f"{k}={v}") for k, v in changes.items())})


def limits_env(limits: Limits) -> str:
    """``ZHUOJI_LIMITS`` for ``limits``: the values that differ from the defaults, as JSON."""
    return json.dumps({f.name: getattr(limits, f.name) for f in dataclasses.fields(Limits)
                       if getattr(limits, f.name) != f.default})

