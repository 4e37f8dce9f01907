"""Layout: one photo's detections → what lies on the table (手牌 concealed hand, 副露 melds, 牌河 river, 翻鸡 tile).

The stage works on box geometry only; it reads a box's class just to tell melds (three or four of one tile, or
face-down backs) from the concealed hand. No pixel constant appears: every length is measured in the local tile
size, estimated from the boxes themselves. By sub-concept, each a module of small functions over plain arrays:

1. ``frame``: drop broken boxes and near-duplicates; the row direction and every box in the row frame (u along
   the row, v across it) with the local tile size and the sideways (turned) tiles; pieces of one tile.
2. ``grouping``: chains of touching tiles, melds cut off the hand's chain or mended across a missed box, rows
   of groups, blocks of rows.
3. ``roles``: the hand block (concealed + melds, settled by the count rule), the river, the 翻鸡 indicator, the
   rest unassigned with a reason; the orientation (river, the faces' evidence, perspective).
4. ``build``: the :class:`Layout`, in reading order, with a confidence per part.
5. ``table``: a whole table, each box given its seat, each seat laid out in its own frame (``layout_table``).

``scene.Scene`` is the one value the stages after the frame share. ``layout(dets)`` is the entry point;
``arrange`` + ``build`` the same in two steps (orientation last), for a caller that looks at the faces in between.
"""

from vision.layout.build import Arrangement, arrange, build, layout
from vision.layout.table import layout_table
from vision.layout.values import LEGAL_COUNTS, Layout, MeldGroup, PlacedTile, Unassigned

__all__ = ["LEGAL_COUNTS", "Arrangement", "Layout", "MeldGroup", "PlacedTile", "Unassigned", "arrange", "build",
           "layout", "layout_table"]
