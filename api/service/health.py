"""``GET /healthz`` (liveness: the process answers) and ``GET /readyz`` (readiness: send it traffic).

Readiness is a small list of named checks, ``app.state.readiness_checks``: each takes the app and returns
``(ok, detail)``, plain or awaited (await anything slow: each check has ``CHECK_TIMEOUT_S``). Another part of the
service adds its own, e.g. ``app.state.readiness_checks["database"] = database_answers``. Neither endpoint shows
paths of the server's files: models are named by file name only.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from importlib import metadata

import anyio
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from api.service.responses import Health, Readiness, ReadinessCheckResult
from pipeline.photo import CLASS_NAMES

CHECK_TIMEOUT_S = 2.0
# A photo job checks its deadline between model runs, each well under a second: running much past the deadline
# means a worker is stuck (a model run that never returns), and every photo queued behind it waits.
STUCK_GRACE_S = 5.0

ReadinessCheck = Callable[[FastAPI], "tuple[bool, str] | Awaitable[tuple[bool, str]]"]
router = APIRouter(tags=["service"])


def version() -> str:
    try:
        return metadata.version("zhuoji")
    except metadata.PackageNotFoundError:  # running from a source tree without `pip install -e .`
        return "0.0.0+source"


def _name(component: object | None) -> str | None:
    return component.model_path.name if component is not None else None


def model_loaded(app: FastAPI) -> tuple[bool, str]:
    detector = getattr(app.state, "detector", None)
    if detector is None:
        return False, "no tile model: photo endpoints answer 503 (text endpoints work)"
    return True, _name(detector)


def photo_queue_moves(app: FastAPI) -> tuple[bool, str]:
    runner = getattr(app.state, "runner", None)
    if runner is None:
        return False, "not started"
    oldest = runner.oldest_running_s()
    bound = (runner.deadline_s or 0) + STUCK_GRACE_S
    if runner.deadline_s is not None and oldest > bound:
        return False, f"a photo job has run {oldest:.0f} s (deadline {runner.deadline_s:g} s): the queue is stuck"
    return True, f"{runner.pending} photo job(s) running or queued of {runner.capacity}"


DEFAULT_CHECKS: dict[str, ReadinessCheck] = {"model": model_loaded, "photo_queue": photo_queue_moves}


@router.get("/healthz", response_model=Health, summary="Liveness and model status")
def healthz(request: Request) -> Health:
    """The process answers (200 whenever it can answer at all), and which models it loaded (file names)."""
    detector = getattr(request.app.state, "detector", None)
    return Health(status="ok" if detector else "no_model", model_loaded=detector is not None, model=_name(detector),
                  classifier=_name(getattr(detector, "classifier", None)),
                  back_check=_name(getattr(detector, "back_check", None)), version=version(), classes=len(CLASS_NAMES))


@router.get("/readyz", response_model=Readiness, summary="Readiness: send this process traffic?",
            responses={503: {"model": Readiness, "description": "a check failed"}})
async def readyz(request: Request) -> JSONResponse:
    """200 when every readiness check passes (the model is loaded, the photo queue moves, ...), else 503; each
    check with its detail."""
    app = request.app
    results: dict[str, ReadinessCheckResult] = {}
    for name, check in getattr(app.state, "readiness_checks", DEFAULT_CHECKS).items():
        ok, detail = False, f"no answer within {CHECK_TIMEOUT_S:g} s"
        with anyio.move_on_after(CHECK_TIMEOUT_S):
            try:
                answer = check(app)
                ok, detail = await answer if inspect.isawaitable(answer) else answer
            except Exception as exc:  # a failing check means "not ready", never a 500
                ok, detail = False, f"{type(exc).__name__}: {exc}"
        results[name] = ReadinessCheckResult(ok=ok, detail=detail)
    ready = all(r.ok for r in results.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=results)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)
