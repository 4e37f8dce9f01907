"""A table finished at the end of the evening (结账): its rounds can no longer be added, edited or undone.

Revision ID: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # In place, not a batch (which on SQLite would copy score_tables and cascade-delete its children).
    op.add_column("score_tables", sa.Column("finished", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # In place too: SQLite ≥ 3.35 and PostgreSQL drop a column without copying the table.
    op.execute("ALTER TABLE score_tables DROP COLUMN finished")
