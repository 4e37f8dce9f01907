"""Data builders: synthetic scenes, crops, the real photo set, mixes and audits (run as scripts)."""
