"""One :class:`Settings` value, read once at start-up from the environment and the command line, then passed
explicitly: to the service (``api.service.app.create_app``), to its worker processes (as their environment), and to
:func:`open_detector`, the one place the detector's ONNX sessions (detector, crop classifier, back check) are
opened from settings.

Environment variables: ``ZHUOJI_MODEL``, ``ZHUOJI_CLASSIFIER`` and ``ZHUOJI_BACK_CHECK`` (a path, or ``none``
to go without), ``ZHUOJI_THREADS``, ``ZHUOJI_CONCURRENCY``, ``ZHUOJI_MAX_WAITING``, ``ZHUOJI_HOST``,
``ZHUOJI_PORT``, ``ZHUOJI_WORKERS``, ``ZHUOJI_DATABASE_URL``, ``ZHUOJI_ADMIN_KEY``, ``ZHUOJI_LIMITS`` (the service's bounds,
``pipeline.limits``), ``ZHUOJI_ALLOWED_HOSTS`` (more names the service answers to, comma-separated) and
``ZHUOJI_FORWARDED_ALLOW_IPS`` (the proxies whose ``X-Forwarded-For`` names the client, comma-separated).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.limits import ENV as LIMITS_ENV
from pipeline.limits import Limits, limits_env, limits_from_env
from vision.detect import DEFAULT_MODEL, Detector, get_detector

DEFAULT = "default"  # the shipped crop classifier / back check, when present


def _choice(value: str | os.PathLike | None) -> str | None:
    """A model choice as written (env or flag): a path, ``none`` → None, empty → the shipped one."""
    text = "" if value is None else str(value)
    return None if text.lower() == "none" else (text or DEFAULT)


def _names(text: str | None) -> tuple[str, ...]:
    """``"a.example, b.example"`` → ``("a.example", "b.example")``."""
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


@dataclass(frozen=True)
class Settings:
    model: Path = DEFAULT_MODEL
    classifier: str | None = DEFAULT  # a path, None: detector alone, "default": the shipped one when present
    back_check: str | None = DEFAULT
    threads: int | None = None  # onnxruntime threads per inference; None: all cores
    concurrency: int = 1  # photos processed at once (one inference already uses every core)
    max_waiting: int = 64  # photos queued beyond that before answering 503 busy
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    database_url: str | None = None
    # Lists every table and saves house profiles; None: nobody may. Kept out of repr (logs, tracebacks).
    admin_key: str | None = dataclasses.field(default=None, repr=False)
    limits: Limits = Limits()  # deadlines, timeouts, upload and connection caps of the HTTP service
    allowed_hosts: tuple[str, ...] = ()  # Host names answered beyond the machine's own (api.service.hosts)
    forwarded_allow_ips: str = "127.0.0.1,::1"  # trusted proxies (uvicorn's option): addresses, networks or *

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **flags: Any) -> Settings:
        """Settings from ``env`` (default: this process's environment), then the command-line ``flags`` that
        were given (None: not given)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {
            "model": Path(env.get("ZHUOJI_MODEL") or DEFAULT_MODEL),
            "classifier": _choice(env.get("ZHUOJI_CLASSIFIER")),
            "back_check": _choice(env.get("ZHUOJI_BACK_CHECK")),
            "threads": int(env.get("ZHUOJI_THREADS", "0")) or None,
            "concurrency": int(env.get("ZHUOJI_CONCURRENCY", "1")),
            "max_waiting": int(env.get("ZHUOJI_MAX_WAITING", "64")),
            "host": env.get("ZHUOJI_HOST", "127.0.0.1"),
            "port": int(env.get("ZHUOJI_PORT", "8000")),
            "workers": int(env.get("ZHUOJI_WORKERS", "1")),
            "database_url": env.get("ZHUOJI_DATABASE_URL") or None,
            "admin_key": env.get("ZHUOJI_ADMIN_KEY") or None,
            "limits": limits_from_env(env),
            "allowed_hosts": _names(env.get("ZHUOJI_ALLOWED_HOSTS")),
            "forwarded_allow_ips": env.get("ZHUOJI_FORWARDED_ALLOW_IPS") or "127.0.0.1,::1",
        }
        given = {k: v for k, v in flags.items() if v is not None}
        for key in ("classifier", "back_check"):
            if key in given:
                given[key] = _choice(given[key])
        if "model" in given:
            given["model"] = Path(given["model"])
        if "allowed_hosts" in given:
            given["allowed_hosts"] = values["allowed_hosts"] + tuple(given["allowed_hosts"])
        return cls(**{**values, **given})

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def env(self) -> dict[str, str]:
        """The environment that makes :meth:`from_env` give these settings again (for worker processes)."""
        out = {"ZHUOJI_MODEL": str(self.model), "ZHUOJI_CLASSIFIER": self.classifier or "none",
               "ZHUOJI_BACK_CHECK": self.back_check or "none", "ZHUOJI_THREADS": str(self.threads or 0),
               "ZHUOJI_CONCURRENCY": str(self.concurrency), "ZHUOJI_MAX_WAITING": str(self.max_waiting),
               "ZHUOJI_HOST": self.host, "ZHUOJI_PORT": str(self.port), "ZHUOJI_WORKERS": str(self.workers)}
        if self.classifier == DEFAULT:
            out["ZHUOJI_CLASSIFIER"] = ""
        if self.back_check == DEFAULT:
            out["ZHUOJI_BACK_CHECK"] = ""
        if self.database_url:
            out["ZHUOJI_DATABASE_URL"] = self.database_url
        if self.admin_key:
            out["ZHUOJI_ADMIN_KEY"] = self.admin_key
        out[LIMITS_ENV] = limits_env(self.limits)
        out["ZHUOJI_ALLOWED_HOSTS"] = ",".join(self.allowed_hosts)
        out["ZHUOJI_FORWARDED_ALLOW_IPS"] = self.forwarded_allow_ips
        return out


def open_detector(settings: Settings) -> Detector:
    """The detector the settings ask for: the process-wide shared one, or with ``threads`` set a private one
    (several workers on one machine split the cores instead of each taking all of them)."""
    if settings.threads is None:
        return get_detector(settings.model, settings.classifier, settings.back_check)
    return Detector(settings.model, threads=settings.threads, classifier=settings.classifier,
                    back_check=settings.back_check)
