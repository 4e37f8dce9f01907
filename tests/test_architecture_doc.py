"""ARCHITECTURE.md stays true to the tree: every module of the runtime packages is named in it (in backticks, by
its module name), so a new module cannot arrive without saying where it belongs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("scoring", "vision", "pipeline", "tables", "api")


def modules() -> list[Path]:
    """The runtime packages' modules; package markers and Alembic's numbered migrations (named together as
    ``migrations``) aside."""
    found = []
    for package in RUNTIME:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name in ("__init__.py", "__main__.py") or "migrations" in path.parts:
                continue
            found.append(path)
    return found


def named_in(text: str, path: Path) -> bool:
    """``vision/layout.py`` is named by `layout`, `vision.layout` or a backticked phrase with the word layout."""
    return re.search(rf"`[^`\n]*\b{re.escape(path.stem)}\b[^`\n]*`", text) is not None


def test_every_runtime_module_is_named_in_the_architecture() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [str(p.relative_to(ROOT)) for p in modules() if not named_in(text, p)]
    assert not missing, f"ARCHITECTURE.md does not name these modules: {', '.join(missing)}"


def test_the_check_sees_a_module_left_out() -> None:
    assert named_in("the stages `layout` and `vision.reading`", Path("vision/reading.py"))
    assert not named_in("the layouts of a hand", Path("vision/layout.py"))
