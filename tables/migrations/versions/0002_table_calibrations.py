"""A table's calibration of its own tile set ("teach it your set").

Revision ID: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_calibrations",
        sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("calibration", sa.JSON, nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("agreement", sa.Float, nullable=False),
        sa.Column("disagreed", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("table_calibrations")
