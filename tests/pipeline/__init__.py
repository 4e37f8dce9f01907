"""Tests of pipeline/."""
