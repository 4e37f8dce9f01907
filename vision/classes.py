"""The detector's classes, in the fixed order stored in the ONNX metadata."""

from scoring.tiles import TILES

CLASS_NAMES: tuple[str, ...] = (*TILES, "back", "other")
BACK = CLASS_NAMES.index("back")  # a face-down tile (e.g. in a 闷豆)
OTHER = CLASS_NAMES.index("other")  # a tile not in the 108-tile set: winds, dragons, flowers, jokers
NUM_CLASSES = len(CLASS_NAMES)
