"""Tests of vision/."""
