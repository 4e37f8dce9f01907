"""The two kinds of typed value of the HTTP contract: requests, read strictly, and answers.

Request models are strict (no "1" → 1 coercion, unknown keys refused) so the engine sees exactly what the client
sent. Both are built on first use (``defer_build``), not at import: a process uses a few of the 70-odd models
(``zhuoji detect`` one answer), and building all of them took 20–25 ms CPU of its start.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True, defer_build=True)


class OutModel(BaseModel):
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True, defer_build=True)
