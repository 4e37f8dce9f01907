"""Which crop classifier a table's calibration was made with, by the file's SHA-256: a retrained classifier keeps
its file name. Calibrations kept before (null) fit no classifier and ask for a new photo.

Revision ID: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("table_calibrations") as batch:
        batch.add_column(sa.Column("model_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("table_calibrations") as batch:
        batch.drop_column("model_sha256")
