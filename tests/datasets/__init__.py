"""Tests of datasets/."""
