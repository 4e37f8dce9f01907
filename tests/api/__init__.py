"""Tests of api/."""
