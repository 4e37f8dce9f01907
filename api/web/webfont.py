"""The page's CJK webfont: a subset of Noto Sans CJK SC (SIL Open Font License) holding only the characters the
page and the API's explanation lines can show, so Chinese reads the same on a machine without CJK fonts.

Run ``python -m api.web.webfont`` after adding Chinese text to ``api/web/*`` or to a string of ``scoring/``,
``pipeline/``, ``tables/``, ``api/`` or ``vision/``: it rescans them and rewrites ``api/web/zhuoji-cjk.woff2``. Needs the dev extra
(fontTools, brotli) and a Noto Sans CJK file (Debian ``fonts-noto-cjk``); the service itself only serves the file.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "api" / "web"
FONT_FILE = WEB / "zhuoji-cjk.woff2"
SOURCES = ("scoring", "pipeline", "tables", "api", "vision")
DEFAULT_SOURCE_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
FAMILY_IN_COLLECTION = "Noto Sans CJK SC"
# CJK ideographs, CJK punctuation, full-width forms: what a Latin system font may lack.
CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")


def _strings(path: Path) -> list[str]:
    """String constants of a Python file that can reach a user: every literal except docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def page_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character the page (api/web/*) or a string of the packages in SOURCES can show."""
    chars: set[str] = set()
    for path in sorted((root / "api" / "web").iterdir()):
        if path.suffix in {".html", ".js", ".css"}:
            chars |= set(CJK.findall(path.read_text(encoding="utf-8")))
    for package in SOURCES:
        for path in sorted((root / package).rglob("*.py")):
            for text in _strings(path):
                chars |= set(CJK.findall(text))
    return chars


def font_characters(path: Path = FONT_FILE) -> set[str]:
    """The characters a font file maps (needs fontTools; brotli for woff2)."""
    from fontTools.ttLib import TTFont

    with TTFont(str(path)) as font:
        return {chr(code) for code in font.getBestCmap()}


def build(source: Path, out: Path = FONT_FILE) -> int:
    """Write the woff2 subset of ``source`` (a .ttc/.otf Noto Sans CJK) for the page's characters."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() == ".ttc":
        fonts = TTCollection(str(source)).fonts
        font = next((f for f in fonts if f["name"].getDebugName(4) == FAMILY_IN_COLLECTION), None)
        if font is None:
            raise SystemExit(f"{source}: no face named {FAMILY_IN_COLLECTION!r}")
    else:
        font = TTFont(str(source))
    chars = page_characters()
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]  # keep the copyright and licence entries the OFL asks to keep
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    font.flavor = "woff2"
    font.save(str(out))
    return len(chars)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m api.web.webfont", description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE_FONT,
                        help=f"Noto Sans CJK .ttc or SC .otf (default {DEFAULT_SOURCE_FONT})")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"error: {args.source} not found (apt-get install fonts-noto-cjk, or --source FILE)", file=sys.stderr)
        return 2
    count = build(args.source)
    print(f"{FONT_FILE.relative_to(ROOT)}: {count} characters, {FONT_FILE.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
