"""Edit keys and view ids: a table is written with its key (kept as its SHA-256) and read by its view id.

Tables stored before get a view id and the hash of a key made here and thrown away, so nobody knows it: their
owner (whoever holds the database) issues a new one with ``zhuoji table key ID``.

Revision ID: 0004
"""

from __future__ import annotations

import hashlib
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("score_tables") as batch:
        batch.add_column(sa.Column("edit_key_hash", sa.String(64), nullable=True))
        batch.add_column(sa.Column("view_id", sa.String(32), nullable=True))
    score_tables = sa.table("score_tables", sa.column("id", sa.String), sa.column("edit_key_hash", sa.String),
                            sa.column("view_id", sa.String))
    connection = op.get_bind()
    for table_id in connection.execute(sa.select(score_tables.c.id)).scalars().all():
        unknown_key = secrets.token_urlsafe(32)  # as tables.keys.new_edit_key; never shown, never kept
        connection.execute(score_tables.update().where(score_tables.c.id == table_id).values(
            edit_key_hash=hashlib.sha256(unknown_key.encode()).hexdigest(), view_id=secrets.token_urlsafe(16)))
    with op.batch_alter_table("score_tables") as batch:
        batch.alter_column("edit_key_hash", existing_type=sa.String(64), nullable=False)
        batch.alter_column("view_id", existing_type=sa.String(32), nullable=False)
        batch.create_index("ix_score_tables_view_id", ["view_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("score_tables") as batch:
        batch.drop_index("ix_score_tables_view_id")
        batch.drop_column("view_id")
        batch.drop_column("edit_key_hash")
