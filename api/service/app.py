"""The FastAPI application: ``create_app()`` wires middleware, error handlers, routes and the web page.

The tile model is loaded once per process at start-up (lifespan) and shared by every request; onnxruntime
sessions are thread-safe. Photos are processed in worker threads behind a small limiter (see
:class:`api.service.runner.InferenceRunner`), so the event loop keeps accepting requests and a burst of
uploads queues instead of oversubscribing the CPU. Every process is stateless: run several (``--workers``) or
several replicas behind any load balancer (api/README.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from api.service.admission import AdmissionMiddleware
from api.service.contract import document_contract
from api.service.errors import install_error_handlers
from api.service.headers import SecurityHeadersMiddleware
from api.service.health import DEFAULT_CHECKS, version
from api.service.health import router as health_router
from api.service.hosts import HostAllowListMiddleware, own_names
from api.service.quotas import QuotaMiddleware
from api.service.routes_calibrate import router as calibrate_router
from api.service.routes_proposals import router as proposals_router
from api.service.routes_scoring import router as scoring_router
from api.service.routes_table_calibration import router as table_calibration_router
from api.service.routes_table_photo import router as table_photo_router
from api.service.routes_tables import router as tables_router
from api.service.routes_views import router as views_router
from api.service.routes_vision import router as vision_router
from api.service.runner import InferenceRunner
from api.service.table_store import LazyStore, database_answers
from api.service.uploads import BodyLimitMiddleware, body_limit, is_photo_path
from pipeline.limits import Limits
from pipeline.settings import Settings, open_detector

log = logging.getLogger("zhuoji.api")
WEB = Path(__file__).resolve().parents[1] / "web"


def create_app(model_path: str | os.PathLike | None = None, *, settings: Settings | None = None,
               threads: int | None = None, concurrency: int | None = None, max_waiting: int | None = None,
               require_model: bool = False, limits: Limits | None = None, database: str | None = None) -> FastAPI:
    """A new application.

    settings: models, threads and queue sizes (default: ``Settings.from_env()``, read now). The keyword
    arguments replace single settings: model_path (ONNX tile model), threads (onnxruntime threads per
    inference), concurrency (photos processed at once), max_waiting (photos queued beyond that before answering
    503 busy), limits (the service's bounds: photo deadline, timeouts, upload bytes in flight; ``pipeline.limits``),
    database (where the tables live: a SQLite file or URL, default a file in the user's data directory; opened
    on the first table request). require_model: fail start-up without a model instead of serving only the text
    endpoints.
    """
    settings = (settings or Settings.from_env()).replace(**{k: v for k, v in {
        "model": None if model_path is None else Path(model_path), "threads": threads or None,
        "concurrency": concurrency or None, "max_waiting": max_waiting, "limits": limits,
        "database_url": database}.items() if v is not None})
    limits = settings.limits

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.runner = InferenceRunner(settings.concurrency, settings.max_waiting,
                                           deadline_s=limits.photo_deadline_s, retry_after_s=limits.retry_after_s,
                                           queue_wait_s=limits.queue_wait_s)
        try:
            app.state.detector = open_detector(settings)
            app.state.model_error = None
            log.info("model loaded: %s", app.state.detector.model_path)
        except (FileNotFoundError, ValueError, RuntimeError) as exc:
            if require_model:
                raise
            # The text endpoints work without a model: start, report it at /healthz, answer photos with 503.
            app.state.detector = None
            app.state.model_error = str(exc)
            log.warning("no tile model, photo endpoints answer 503: %s", exc)
        yield

    # FastAPIOffline: /docs and /redoc load Swagger UI and ReDoc from the service itself, not from a CDN.
    app = FastAPIOffline(title="zhuoji — Guiyang 捉鸡 mahjong scorer", version=version(), lifespan=lifespan,
                  description="Photo → tiles → hand type, fan, waits (听牌) and settlement for Guiyang 捉鸡 "
                              "mahjong. Tiles in MPSZ: 123m456p789s (m 万, p 筒, s 条). Errors: "
                              "`{\"error\": {\"code\", \"message\"}}`.")
    # The last added runs first: the security headers (on every answer), the Host check, the write quotas, the size limit from
    # Content-Length, then admission, all before any reading.
    app.add_middleware(AdmissionMiddleware, limits=limits, is_photo=is_photo_path, body_limit=body_limit)
    app.add_middleware(BodyLimitMiddleware, limit_for=body_limit)
    app.add_middleware(QuotaMiddleware, limits=limits)
    app.add_middleware(HostAllowListMiddleware, allowed_hosts=own_names(settings))
    app.add_middleware(SecurityHeadersMiddleware)
    install_error_handlers(app)
    app.state.readiness_checks = dict(DEFAULT_CHECKS)  # other parts add theirs (e.g. "database")
    app.include_router(health_router)
    app.include_router(vision_router)
    app.include_router(table_photo_router)
    app.include_router(calibrate_router)
    app.include_router(scoring_router)
    app.state.tables = LazyStore(settings.database_url)
    app.state.readiness_checks["database"] = database_answers
    app.include_router(tables_router)
    app.include_router(table_calibration_router)
    app.include_router(proposals_router)
    app.include_router(views_router)
    app.state.admin_key = settings.admin_key  # api.service.table_keys.require_admin_key

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(WEB / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/t/{view_id}", include_in_schema=False)
    def shared_table(view_id: str) -> FileResponse:  # noqa: ARG001 - the page reads the id from its address
        # A table's view link: the same page, which sees /t/{view_id} and shows only the totals and history.
        return FileResponse(WEB / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/manifest.webmanifest", include_in_schema=False)
    def manifest() -> FileResponse:  # at the root: the installed app's scope is the whole site
        return FileResponse(WEB / "manifest.webmanifest", media_type="application/manifest+json")

    @app.get("/sw.js", include_in_schema=False)
    def service_worker() -> FileResponse:  # at the root, so that it may serve "/" and "/t/…" offline
        return FileResponse(WEB / "sw.js", media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:  # browsers and bookmarks ask for it even when the page names its icon
        return FileResponse(WEB / "favicon.svg", media_type="image/svg+xml")

    app.mount("/web", StaticFiles(directory=WEB), name="web")
    document_contract(app)
    return app
