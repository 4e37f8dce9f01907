"""Tables that keep score: a four-player table's rounds, running totals and history in a database.

``TableStore.open(url)`` connects (a SQLite file by default, PostgreSQL for several service replicas) and
migrates the schema; the table logic itself is pure and lives in ``scoring.scorebook``.
"""

from scoring.scorebook import DuplicatePlayers
from tables.db import StoreUnavailable, default_database_url, describe
from tables.repository import (
    AddedRound,
    CalibrationRecord,
    IdempotencyKeyReused,
    InvalidProfile,
    KeyedTable,
    Profile,
    ProfileNotFound,
    ProposalRecord,
    RoundNotFound,
    RoundRecord,
    StaleVersion,
    TableFinished,
    TableNotFound,
    TableRecord,
    TableStore,
    WrongEditKey,
)

__all__ = ["AddedRound", "CalibrationRecord", "DuplicatePlayers", "IdempotencyKeyReused", "InvalidProfile", "KeyedTable", "Profile",
           "ProfileNotFound", "ProposalRecord", "RoundNotFound", "RoundRecord", "StaleVersion", "StoreUnavailable", "TableFinished",
           "TableNotFound", "TableRecord", "TableStore", "WrongEditKey", "default_database_url", "describe"]
