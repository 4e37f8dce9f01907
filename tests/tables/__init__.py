"""Tests of the tables package: table logic, store, API, CLI, crash."""
