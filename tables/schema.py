"""The database tables (SQLAlchemy Core). Changes here need a new migration in ``tables/migrations/versions``."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

# A table of four players and what replaying its rounds gives: the next dealer, 连庄 streak and totals.
score_tables = sa.Table(
    "score_tables", metadata,
    sa.Column("id", sa.String(16), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("players", sa.JSON, nullable=False),
    sa.Column("rules", sa.JSON, nullable=False),
    sa.Column("first_dealer", sa.Integer, nullable=False),
    sa.Column("dealer", sa.Integer, nullable=False),
    sa.Column("streak", sa.Integer, nullable=False),
    sa.Column("round_count", sa.Integer, nullable=False),
    sa.Column("totals", sa.JSON, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    # Migration 0004: who may write (the SHA-256 of the edit key, ``tables.keys``) and the id that only reads.
    sa.Column("edit_key_hash", sa.String(64), nullable=False),
    sa.Column("view_id", sa.String(32), nullable=False),
    # migration 0005: finished at the end of the evening, no more round writes
    sa.Column("finished", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_score_tables_created", "created_at"),
    sa.Index("ix_score_tables_view_id", "view_id", unique=True),
)

# One row per round: the input as entered, the state the engine saw, its settlement and engine version.
rounds = sa.Table(
    "rounds", metadata,
    sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("number", sa.Integer, primary_key=True),
    sa.Column("round", sa.JSON, nullable=False),
    sa.Column("state", sa.JSON, nullable=False),
    sa.Column("settlement", sa.JSON, nullable=False),
    sa.Column("dealer", sa.Integer, nullable=False),
    sa.Column("streak", sa.Integer, nullable=False),
    sa.Column("deltas", sa.JSON, nullable=False),
    sa.Column("totals_after", sa.JSON, nullable=False),
    sa.Column("engine_version", sa.String(40), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

# The answer given to a round POST with an Idempotency-Key, so a retry gets it again instead of a second round.
idempotency_keys = sa.Table(
    "idempotency_keys", metadata,
    sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("request_hash", sa.String(64), nullable=False),
    sa.Column("response", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

# Named house rules (a preset plus overrides) that a new table can start from.
house_profiles = sa.Table(
    "house_profiles", metadata,
    sa.Column("name", sa.String(60), primary_key=True),
    sa.Column("rules", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

# A table's own tile set as photographed once ("teach it your set"): the calibration JSON made by the crop
# classifier ``model``, and what the page shows of it. One per table; replaced by a new photo.
table_calibrations = sa.Table(
    "table_calibrations", metadata,
    sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("calibration", sa.JSON, nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("model_sha256", sa.String(64), nullable=True),  # migration 0003; null: made before it was kept
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("agreement", sa.Float, nullable=False),
    sa.Column("disagreed", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

# The round a camera over the table proposes (``zhuoji live --table --server``), waiting for the players to confirm
# it on the table screen: the latest one per table, gone once a round is saved or it is dismissed. Never a round
# by itself. ``reading`` is the read-table answer's JSON, ``frame`` the camera's frame (a JPEG) it was read on.
round_proposals = sa.Table(
    "round_proposals", metadata,
    sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("id", sa.String(16), nullable=False),
    sa.Column("reading", sa.JSON, nullable=False),
    sa.Column("frame", sa.LargeBinary, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
