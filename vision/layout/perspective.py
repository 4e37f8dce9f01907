"""A table photo taken at an angle, mapped to a top view of the table plane before it is laid out.

From a seat (25–45° from straight down) the far seat's tiles are small and the side seats' rows converge, so
seat sides, row gaps and river grids measured in the photo break. The tiles are all one size on the table, so
their sizes in the photo give the plane's homography: a plane's image scale grows linearly with the distance
from its vanishing line (the horizon), the foreshortened depth with its square, so a tile's box area grows with
its cube. Fitting the cube root of the box areas as a linear function of the box centres gives the vanishing
line; sending it to infinity (an affine rectification) makes every tile the same size and parallel rows
parallel again. What is left is a squeeze along the direction of view (depth looks shorter than width by the
tilt's cosine): undone by making the tiles turned one way and those turned the other have reciprocal shapes.
"""

from __future__ import annotations

import numpy as np

from vision.detections import Detections

MIN_BOXES = 40  # a whole table shows 100-150 tiles: fewer boxes (a photo of one hand, a row) are left as they are
MIN_GRADIENT = 0.12  # tile size changing by under this share across the boxes' spread: seen from above, left alone
TRIM = 2.5  # boxes whose size is off the fit by this many median deviations are left out of the refit
MIN_SCALE = 0.25  # ...and no corner may come out this much closer to the horizon than the centre
MAX_SQUEEZE = 2.0  # the depth squeeze undone, at most (a tilt of 60°)


def fit_scale_plane(xyxy: np.ndarray) -> tuple[np.ndarray, float, np.ndarray] | None:
    """(centre, size at the centre, gradient): the boxes' size (cube root of the area) as a linear function of
    the offset of their centres from ``centre``; None with too few boxes."""
    if len(xyxy) < MIN_BOXES:
        return None
    wh = np.maximum(xyxy[:, 2:] - xyxy[:, :2], 1e-6)
    size = np.cbrt(wh[:, 0] * wh[:, 1])
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    centre = np.median(centres, 0)
    design = np.column_stack([np.ones(len(xyxy)), centres - centre])
    keep = np.ones(len(xyxy), dtype=bool)
    coef = np.zeros(3)
    for _ in range(3):  # a few boxes of two tiles, or the wall's stacked backs, are not one tile's size
        coef = np.linalg.lstsq(design[keep], size[keep], rcond=None)[0]
        resid = size - design @ coef
        spread = float(np.median(np.abs(resid[keep]))) * 1.4826 + 1e-9
        keep = np.abs(resid) < TRIM * spread
        if keep.sum() < MIN_BOXES:
            return None
    return centre, float(coef[0]), coef[1:]


def top_view_boxes(xyxy: np.ndarray) -> np.ndarray | None:
    """The boxes mapped to a top view of the table plane (the bounding boxes of their mapped corners, the size
    at the boxes' median centre kept); None when the photo looks straight down already (or cannot be fitted)."""
    xyxy = np.asarray(xyxy, dtype=np.float64)
    fit = fit_scale_plane(xyxy)
    if fit is None:
        return None
    centre, s0, grad = fit
    if s0 <= 0:
        return None
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    spread = centres - centre
    change = np.abs(spread @ grad).max() / s0  # the share the size changes by across the boxes
    if change < MIN_GRADIENT:
        return None
    corners = np.stack([xyxy[:, [0, 1]], xyxy[:, [2, 1]], xyxy[:, [2, 3]], xyxy[:, [0, 3]]], 1) - centre  # (n, 4, 2)
    scale = 1 + corners @ (grad / s0)  # the local size over the centre's
    if scale.min() < MIN_SCALE:
        return None
    mapped = corners / scale[..., None]
    # The squeeze along the direction of view: tiles lie along both table axes, so their log aspect ratios
    # (depth along the view over width across it) fall in two groups whose mean is the squeeze's log.
    view = grad / np.linalg.norm(grad)
    across = np.array([-view[1], view[0]])
    extent_view = np.ptp(mapped @ view, 1)
    extent_across = np.ptp(mapped @ across, 1)
    aspect = np.log(np.maximum(extent_view, 1e-6) / np.maximum(extent_across, 1e-6))
    squeeze = 1.0
    lo, hi = float(aspect.min()), float(aspect.max())
    if hi - lo > 0.3:  # both turns present
        for _ in range(20):  # two means in one dimension
            split = (lo + hi) / 2
            low, high = aspect[aspect < split], aspect[aspect >= split]
            if not len(low) or not len(high):
                break
            lo, hi = float(np.median(low)), float(np.median(high))
        squeeze = float(np.clip(np.exp(-(lo + hi) / 2), 1.0, MAX_SQUEEZE))
    stretched = mapped + (squeeze - 1) * (mapped @ view)[..., None] * view
    top = stretched + centre
    return np.concatenate([top.min(1), top.max(1)], 1)


def top_view(dets: Detections) -> Detections:
    """``dets`` with its boxes in the top view of the table (:func:`top_view_boxes`), or ``dets`` itself when the
    photo looks straight down; everything but the boxes kept."""
    boxes = top_view_boxes(dets.xyxy)
    if boxes is None:
        return dets
    return Detections(boxes, dets.confidence, dets.class_id, dets.top3_class, dets.top3_prob, dets.image_size,
                      dets.probs, dets.facing, dets.features)
