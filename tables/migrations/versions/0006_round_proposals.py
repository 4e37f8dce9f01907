"""The round a camera over the table proposes, kept until the players save a round or dismiss it.

Revision ID: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "round_proposals",
        sa.Column("table_id", sa.String(16), sa.ForeignKey("score_tables.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("id", sa.String(16), nullable=False),
        sa.Column("reading", sa.JSON, nullable=False),
        sa.Column("frame", sa.LargeBinary, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("round_proposals")
