"""Rules engine for Guiyang 捉鸡 mahjong: tiles, win shapes and waits, hand types, settlement."""

# Note: the package attribute ``scoring.settle`` is the function; reach the module's other names with
# ``from scoring.settle import ...``.
from scoring.hand import analyze_hand
from scoring.settle import settle
from scoring.shapes import waits
from scoring.tiles import parse_tiles

__all__ = ["analyze_hand", "parse_tiles", "settle", "waits"]
