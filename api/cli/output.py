"""How every ``zhuoji`` command prints its typed answer with ``--json`` (a module of its own, so the command
modules import it instead of each other)."""

from __future__ import annotations

import json

from pydantic import BaseModel


def print_model(answer: BaseModel) -> None:
    """A typed answer as one JSON line: exactly the body the HTTP service answers for the same question (both
    come from the same pipeline function and the same ``model_dump(mode="json")``)."""
    print(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
