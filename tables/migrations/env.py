"""Alembic environment: migrations run on the connection ``tables.db.migrate`` hands over (no alembic.ini)."""

from __future__ import annotations

from alembic import context

from tables.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    if connection.dialect.name == "postgresql":
        # Replicas starting at once: one migrates, the others wait for it and then find nothing to do.
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock(30300301)")
    context.run_migrations()
