"""Tests of scoring/."""
