"""Shared by the dataset tests: load a builder of datasets/ as a module of its own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_dataset_script(name: str) -> ModuleType:
    """Import datasets/<name>.py by path under a name of its own, so a test may change the module's state without
    touching the ``datasets.<name>`` that other tests import."""
    spec = importlib.util.spec_from_file_location(f"zhuoji_datasets_{name}", ROOT / "datasets" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
