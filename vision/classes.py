"""The detector's classes, in the fixed order stored in the ONNX metadata."""

# The 27 suited tiles in MPSZ, in scoring.tiles.TILES's order (a test checks they agree). Written out here rather
# than imported: importing scoring builds the rules engine's tables (~0.3 s), which ``zhuoji detect`` never needs.
SUITED_TILES: tuple[str, ...] = tuple(f"{r}{s}" for s in "mps" for r in range(1, 10))
CLASS_NAMES: tuple[str, ...] = (*SUITED_TILES, "back", "other")
BACK = CLASS_NAMES.index("back")  # a face-down tile (e.g. in a 闷豆)
OTHER = CLASS_NAMES.index("other")  # a tile not in the 108-tile set: winds, dragons, flowers, jokers
NUM_CLASSES = len(CLASS_NAMES)
