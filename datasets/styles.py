"""Tile face styles for synthetic scenes: procedural faces drawn from parameters, plus the artwork sets.

A physical set's art decides how well the detector reads it, so scenes need many looks. Each style has a name;
``faces(name)`` gives its glyphs in the synthetic builder's format (BGRA uint8, ``TEX_H`` x ``TEX_W``, transparent
where the ivory face shows through), keyed by face name: ``1m``..``9s`` and ``other/<style>/<wind or dragon>``.

Procedural styles (``PROCEDURAL``) vary what differs between real sets:

* 万 (characters, ``m``): the Chinese numeral 一..九 above 萬 or 万, written in one of several CJK fonts from
  Debian's font packages (sans, serif/明体, brush/楷体, handwriting), in varied ink colours and proportions;
  some sets add a small corner index (an Arabic numeral).
* 筒 (dots, ``p``): the classic layouts, each dot a ring design (rings, solid, petals) in a palette of three
  colours, with varied sizes and stroke widths.
* 条 (bamboo, ``s``): sticks with joints in varied colours, widths and lengths; the 1s is the 幺鸡 bird (the
  tile this game turns on) in one of several drawings (peacock, sparrow on a twig, rooster, bird on a stick).
* honours (东南西北中发, winds and dragons): labelled ``other``.

Random styles (``rand-N``, training only): every look parameter drawn from seed ``N``: any training font (two
weights of Noto besides the others), thicker or thinner and slanted glyphs, any ink and dot palette, any bird
drawing but the held-out one. Many of them teach the detector what varies between sets rather than a few sets.
``randx-N`` draw their font from ``MORE_FONTS`` too (18 more Chinese and Japanese fonts: 楷 brush, 明 serif,
黑 sans, 仿宋, Japanese brush and longhand). ``randw-N`` are ``randx-N`` with more drawings: dots as cash coins,
flowers, thick rings or plain discs (``MORE_DOTS``), bamboo sticks plain, split or beaded (``STICKS_DRAWN``), dots
and sticks packed tighter or looser, and in half of them a 1s bird put together at random (body, wing, head,
beak, tail, crest, legs and perch each drawn; ``bird="drawn"``). Each family keeps its styles as they were made.

Artwork styles (from ``datasets/synth/``): ``fluffy`` (CC0, always there) and the KMahjongg sets ``default`` and
``traditional`` (GPL, Debian's kdegames-mahjongg-data-kf5; training images only, never shipped).

``HELD_OUT`` names the styles kept out of training, to measure cross-style accuracy: every builder of training
data refuses them (``training_styles``), and the views benchmark renders only them. Fonts needed:

    apt-get install -y fonts-noto-cjk fonts-arphic-ukai fonts-arphic-uming fonts-wqy-zenhei fonts-wqy-microhei \\
        fonts-lxgw-wenkai
    # for randx-N styles (training data only):
    apt-get install -y fonts-arphic-bkai00mp fonts-arphic-bsmi00lp fonts-cwtex-fs fonts-cwtex-heib fonts-cwtex-kai \\
        fonts-cwtex-ming fonts-cwtex-yen fonts-cns11643-kai fonts-cns11643-sung \\
        fonts-aoyagi-soseki fonts-kouzan-mouhitsu fonts-kiloji fonts-hanazono fonts-horai-umefont \\
        fonts-ipafont-mincho fonts-ipafont-gothic

A style whose font is missing is simply not available (``available()``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import cv2
import numpy as np

TEX_W, TEX_H = 192, 256  # the synthetic builder's face texture size (datasets/synth/artwork.py)
SS = 2  # draw at twice the size, then shrink: anti-aliased strokes

FONTS: dict[str, tuple[str, int]] = {  # name -> (file, index in a .ttc)
    "noto-sans": ("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc", 2),
    "noto-serif": ("/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc", 2),
    "noto-sans-regular": ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2),
    "noto-serif-regular": ("/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc", 2),
    "ukai": ("/usr/share/fonts/truetype/arphic/ukai.ttc", 0),  # brush (楷体)
    "uming": ("/usr/share/fonts/truetype/arphic/uming.ttc", 0),  # serif (明体)
    "zenhei": ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0),
    "microhei": ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0),
    "wenkai": ("/usr/share/fonts/truetype/lxgw-wenkai/LXGWWenKai-Bold.ttf", 0),  # handwriting
}

# More fonts for random styles of the ``randx-N`` family only (so that ``rand-N`` keeps its look): other Chinese
# 楷/明/黑/仿宋 fonts and Japanese brush, longhand, mincho and gothic fonts, all with 一..九, 萬, 万 and the honours.
# Not Klee One: LXGW WenKai, the held-out handwriting font, is drawn from it.
MORE_FONTS: dict[str, tuple[str, int]] = {
    "bkai": ("/usr/share/fonts/truetype/arphic-bkai00mp/bkai00mp.ttf", 0),
    "bsmi": ("/usr/share/fonts/truetype/arphic-bsmi00lp/bsmi00lp.ttf", 0),
    "cwfs": ("/usr/share/fonts/truetype/cwtex/cwfs.ttf", 0),
    "cwheib": ("/usr/share/fonts/truetype/cwtex/cwheib.ttf", 0),
    "cwkai": ("/usr/share/fonts/truetype/cwtex/cwkai.ttf", 0),
    "cwming": ("/usr/share/fonts/truetype/cwtex/cwming.ttf", 0),
    "cwyen": ("/usr/share/fonts/truetype/cwtex/cwyen.ttf", 0),
    "tw-kai": ("/usr/share/fonts/truetype/cns11643/TW-Kai-98_1.ttf", 0),
    "tw-sung": ("/usr/share/fonts/truetype/cns11643/TW-Sung-98_1.ttf", 0),
    "soseki": ("/usr/share/fonts/truetype/aoyagi-soseki/aoyagi-soseki.ttf", 0),
    "mouhitsu": ("/usr/share/fonts/truetype/kouzan-mouhitsu/kouzan-mouhitsu.ttf", 0),
    "gyosho": ("/usr/share/fonts/truetype/kouzan-mouhitsu/kouzan-mouhitsu-gyosho.ttf", 0),
    "kiloji": ("/usr/share/fonts/truetype/kiloji/kiloji.ttf", 0),
    "hanamin": ("/usr/share/fonts/truetype/hanazono/HanaMinA.ttf", 0),
    "ume-gothic": ("/usr/share/fonts/truetype/horai-umefont/ume-tgo4.ttf", 0),
    "ume-mincho": ("/usr/share/fonts/truetype/horai-umefont/ume-tmo3.ttf", 0),
    "ipa-mincho": ("/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf", 0),
    "ipa-gothic": ("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf", 0),
}
# Strokes too thin to be thinned further (a random style only thickens them).
THIN_FONTS = frozenset({"ukai", "uming", "bkai", "bsmi", "cwfs", "cwkai", "cwming", "tw-kai", "tw-sung", "hanamin",
                        "ume-mincho", "ipa-mincho"})

NUMERALS = "一二三四五六七八九"
HONOURS = {"east": "東", "south": "南", "west": "西", "north": "北", "red": "中", "green": "發"}
BIRDS = ("peacock", "sparrow", "rooster", "stick", "crane", "duck")
DOT_DRAWINGS = ("rings", "solid", "petals")  # every style's dots; randw adds MORE_DOTS
MORE_DOTS = ("coin", "flower", "double", "plain")
STICKS_DRAWN = ("joints", "plain", "split", "beads")

# BGR inks
BLUE, GREEN, RED, BLACK = (150, 60, 20), (60, 120, 20), (30, 30, 190), (30, 30, 30)


@dataclass(frozen=True)
class Style:
    """Parameters of one procedural style (every field is a look real sets differ in)."""

    name: str
    font: str  # key of FONTS
    wan: str  # "萬" or "万"
    numeral_ink: tuple[int, int, int]
    wan_ink: tuple[int, int, int]
    numeral_share: float  # share of the face height the numeral takes (the rest is 萬)
    palette: tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]  # dots: (a, b, c) as blue/green/red
    dot: str  # one of DOT_DRAWINGS (or, in randw styles, MORE_DOTS)
    dot_scale: float
    stroke: float  # line width multiplier
    bamboo_ink: tuple[int, int, int]
    bamboo_red: tuple[int, int, int]
    bamboo_width: float  # stick width, share of the face width
    bird: str  # one of BIRDS, or "drawn": a bird put together from ``bird_seed`` (see _drawn_bird)
    corner_index: bool  # a small Arabic numeral in the top-left corner
    weight: float = 0.0  # glyph strokes grown (> 0) or thinned (< 0), in texture pixels
    slant: float = 0.0  # glyph shear (x shift per unit of height), as brush and handwriting faces lean
    stick: str = "joints"  # bamboo stick drawing: "joints", "plain", "split", "beads"
    spread: float = 1.0  # dots and sticks spread about the face centre (sets pack them tighter or looser)
    bird_seed: int = 0


def _style(name: str, font: str, seed: int, bird: str, wan: str = "萬", corner: bool = False) -> Style:
    """A style whose colours and proportions come from ``seed`` (fixed: a name always means the same look)."""
    rng = np.random.default_rng(seed)

    def jit(c: tuple[int, int, int], a: float = 0.25) -> tuple[int, int, int]:
        return tuple(int(np.clip(v * rng.uniform(1 - a, 1 + a), 0, 255)) for v in c)  # type: ignore[return-value]

    base = [BLUE, GREEN, RED]
    order = [0, 1, 2] if rng.random() < 0.6 else list(rng.permutation(3))
    palette = tuple(jit(base[i]) for i in order)
    return Style(name=name, font=font, wan=wan, numeral_ink=jit(BLUE if rng.random() < 0.5 else BLACK),
                 wan_ink=jit(RED, 0.2), numeral_share=float(rng.uniform(0.36, 0.48)),
                 palette=palette, dot=str(rng.choice(DOT_DRAWINGS)),  # type: ignore[arg-type]
                 dot_scale=float(rng.uniform(0.85, 1.1)), stroke=float(rng.uniform(0.7, 1.5)),
                 bamboo_ink=jit(GREEN if rng.random() < 0.7 else BLUE), bamboo_red=jit(RED, 0.2),
                 bamboo_width=float(rng.uniform(0.07, 0.13)), bird=bird, corner_index=corner)


# The fixed list of procedural styles. Names never change meaning: scenes and benchmarks refer to them.
PROCEDURAL: dict[str, Style] = {s.name: s for s in (
    _style("noto-sans-a", "noto-sans", 1, "sparrow"),
    _style("noto-sans-b", "noto-sans", 2, "stick", wan="万", corner=True),
    _style("noto-serif-a", "noto-serif", 3, "peacock"),
    _style("noto-serif-b", "noto-serif", 4, "sparrow", corner=True),
    _style("ukai-a", "ukai", 5, "peacock"),
    _style("ukai-b", "ukai", 6, "stick", wan="万"),
    _style("uming-a", "uming", 7, "sparrow"),
    _style("uming-b", "uming", 8, "rooster", corner=True),
    _style("zenhei-a", "zenhei", 9, "peacock", wan="万"),
    _style("zenhei-b", "zenhei", 10, "rooster"),
    _style("microhei-a", "microhei", 11, "stick"),
    _style("microhei-b", "microhei", 12, "rooster", wan="万", corner=True),
    _style("wenkai-a", "wenkai", 13, "rooster"),
    _style("wenkai-b", "wenkai", 14, "peacock", wan="万", corner=True),
)}

# Kept out of training, to measure cross-style accuracy: the handwriting font (never seen in training at all),
# one more font's look each for serif and sans, and the rooster bird (only these styles draw it besides
# uming-b and zenhei-b, which are also held out: the rooster is never trained on).
HELD_OUT: tuple[str, ...] = ("wenkai-a", "wenkai-b", "uming-b", "zenhei-b", "microhei-b")

ARTWORK = ("fluffy", "default", "traditional")  # the synthetic builder's artwork sets


# What the held-out styles have that no training style may: the handwriting font and the rooster.
HELD_OUT_FONTS: tuple[str, ...] = ("wenkai",)
HELD_OUT_BIRDS: tuple[str, ...] = ("rooster",)


def font_file(font: str) -> tuple[str, int]:
    """(path, index in a .ttc) of a font of ``FONTS`` or ``MORE_FONTS``."""
    return FONTS[font] if font in FONTS else MORE_FONTS[font]


# The random style families: name -> (rng salt, fonts of MORE_FONTS too, more drawings). A family's styles never
# change once made (scenes refer to them by name), so each new way of drawing comes with a family of its own.
RANDOM_FAMILIES: dict[str, tuple[int, bool, bool]] = {
    "rand": (31337, False, False), "randx": (31338, True, False), "randw": (31339, True, True)}


def random_style(seed: int, more_fonts: bool = False, family: str | None = None) -> Style:
    """Style ``rand-<seed>``: every parameter drawn from ``seed``, from the training fonts and birds only;
    ``more_fonts``: style ``randx-<seed>``, its font drawn from ``MORE_FONTS`` as well (those installed);
    ``family="randw"``: as ``randx`` and with more drawings — dots (``MORE_DOTS``), bamboo sticks
    (``STICKS_DRAWN``), spread, and birds put together at random (``bird="drawn"``)."""
    family = family or ("randx" if more_fonts else "rand")
    salt, extra_fonts, more_drawings = RANDOM_FAMILIES[family]
    rng = np.random.default_rng([seed, salt])
    pool = {**FONTS, **MORE_FONTS} if extra_fonts else FONTS
    fonts = sorted(f for f, (path, _) in pool.items() if f not in HELD_OUT_FONTS and Path(path).exists())
    birds = [b for b in BIRDS if b not in HELD_OUT_BIRDS]

    def ink(base: tuple[int, int, int], a: float = 0.35) -> tuple[int, int, int]:
        return tuple(int(np.clip(v * rng.uniform(1 - a, 1 + a) + rng.normal(0, 12), 0, 235)) for v in base)  # type: ignore[return-value]

    base = [BLUE, GREEN, RED, BLACK]
    palette = tuple(ink(base[i]) for i in rng.permutation(4)[:3]) if rng.random() < 0.4 else \
        tuple(ink(c) for c in (BLUE, GREEN, RED))
    font = fonts[int(rng.integers(len(fonts)))]
    thin = font.endswith("-regular") or font in THIN_FONTS  # thin strokes break when thinned more
    style = Style(name=f"{family}-{seed}", font=font,
                 wan="萬" if rng.random() < 0.6 else "万",
                 numeral_ink=ink((BLUE, BLACK, GREEN, RED)[int(rng.choice(4, p=[0.4, 0.4, 0.1, 0.1]))]),
                 wan_ink=ink(RED if rng.random() < 0.85 else BLACK, 0.25),
                 numeral_share=float(rng.uniform(0.33, 0.5)), palette=palette,  # type: ignore[arg-type]
                 dot=str(rng.choice(DOT_DRAWINGS)), dot_scale=float(rng.uniform(0.8, 1.15)),
                 stroke=float(rng.uniform(0.6, 1.7)), bamboo_ink=ink(GREEN if rng.random() < 0.7 else BLUE),
                 bamboo_red=ink(RED, 0.25), bamboo_width=float(rng.uniform(0.06, 0.14)),
                 bird=birds[int(rng.integers(len(birds)))], corner_index=bool(rng.random() < 0.3),
                 weight=float(rng.uniform(0.0 if thin else -0.6, 2.5)), slant=float(rng.uniform(-0.12, 0.12)))
    if not more_drawings:
        return style
    # drawn after the rest, so a randw style shares its other draws' logic with randx (not their values)
    return replace(style, dot=str(rng.choice(DOT_DRAWINGS + MORE_DOTS)), stick=str(rng.choice(STICKS_DRAWN)),
                   spread=float(rng.uniform(0.88, 1.06)),
                   bird="drawn" if rng.random() < 0.5 else style.bird, bird_seed=int(rng.integers(1 << 30)))


def get(name: str) -> Style:
    """A style by name: one of ``PROCEDURAL`` or of a random family (``RANDOM_FAMILIES``), e.g. ``randx-<seed>``."""
    if name in PROCEDURAL:
        return PROCEDURAL[name]
    if is_random(name):
        family, _, seed = name.partition("-")
        return random_style(int(seed), family=family)
    raise KeyError(f"no procedural style {name!r}")


def is_procedural(name: str) -> bool:
    return name in PROCEDURAL or is_random(name)


def is_random(name: str) -> bool:
    """A style of a random family (``rand-N``, ``randx-N``, ``randw-N``; training only)."""
    head, _, seed = name.partition("-")
    return head in RANDOM_FAMILIES and seed.isdigit()


def available() -> list[str]:
    """Procedural styles whose font is installed here."""
    return [n for n, s in PROCEDURAL.items() if Path(FONTS[s.font][0]).exists()]


def training_styles(names: list[str]) -> list[str]:
    """``names`` without the held-out ones."""
    return [n for n in names if n not in HELD_OUT]


# --------------------------------------------------------------------------------------------------------------
# Drawing. Canvas: float32 BGR ink layer + alpha, at SS x the texture size; positions in units of the face width
# (x in 0..1, y in 0..TEX_H/TEX_W).
# --------------------------------------------------------------------------------------------------------------


class Canvas:
    def __init__(self) -> None:
        self.w, self.h = TEX_W * SS, TEX_H * SS
        self.bgr = np.zeros((self.h, self.w, 3), np.float32)
        self.alpha = np.zeros((self.h, self.w), np.float32)

    def px(self, x: float, y: float) -> tuple[int, int]:
        """Unit coordinates (y measured in face widths too) to pixels, with 4 bits of sub-pixel precision."""
        return round(x * self.w * 16), round(y * self.w * 16)

    def paint(self, mask: np.ndarray, colour: tuple[int, int, int]) -> None:
        """Lay ink of ``colour`` where ``mask`` (0..1) is, over what is there."""
        # only inside the mask's bounding box: a dot or a stick covers a small share of the face, and blending
        # the whole canvas for each made drawing a style take seconds (outside it the blend changes nothing)
        x, y, w, h = cv2.boundingRect((mask > 0).view(np.uint8))
        if w == 0 or h == 0:
            return
        box = (slice(y, y + h), slice(x, x + w))
        m = mask[box][..., None]
        self.bgr[box] = self.bgr[box] * (1 - m) + np.array(colour, np.float32) * m
        self.alpha[box] = np.maximum(self.alpha[box], mask[box])

    def mask(self) -> np.ndarray:
        return np.zeros((self.h, self.w), np.float32)

    def circle(self, x: float, y: float, r: float, colour, thickness: float = -1) -> None:
        m = self.mask()
        t = -1 if thickness < 0 else max(1, round(thickness * self.w))
        cv2.circle(m, self.px(x, y), max(1, round(r * self.w * 16)), 1.0, t, cv2.LINE_AA, 4)
        self.paint(m, colour)

    def ellipse(self, x: float, y: float, ax: float, ay: float, angle: float, colour, thickness: float = -1) -> None:
        m = self.mask()
        t = -1 if thickness < 0 else max(1, round(thickness * self.w))
        axes = (max(1, round(ax * self.w * 16)), max(1, round(ay * self.w * 16)))
        cv2.ellipse(m, self.px(x, y), axes, angle, 0, 360, 1.0, t, cv2.LINE_AA, 4)
        self.paint(m, colour)

    def line(self, pts: list[tuple[float, float]], colour, width: float) -> None:
        m = self.mask()
        cv2.polylines(m, [np.array([self.px(*p) for p in pts], np.int32)], False, 1.0,
                      max(1, round(width * self.w)), cv2.LINE_AA, 4)
        self.paint(m, colour)

    def poly(self, pts: list[tuple[float, float]], colour) -> None:
        m = self.mask()
        cv2.fillPoly(m, [np.array([self.px(*p) for p in pts], np.int32)], 1.0, cv2.LINE_AA, 4)
        self.paint(m, colour)

    def text(self, s: str, font: str, box: tuple[float, float, float, float], colour, weight: float = 0.0,
             slant: float = 0.0) -> None:
        """``s`` fitted into ``box`` (x0, y0, x1, y1 in units), keeping the glyph's aspect within 0.75..1.35;
        ``weight`` grows (thins) strokes by that many texture pixels, ``slant`` shears the glyph."""
        mask = _glyph_mask(s, font, round(weight * 4) / 4, round(slant * 50) / 50)
        x0, y0, x1, y1 = (round(v * self.w) for v in box)
        bw, bh = x1 - x0, y1 - y0
        gh, gw = mask.shape
        aspect = np.clip((bw / bh) / (gw / gh), 0.75, 1.35)  # stretch a little, as set makers do, not more
        scale = min(bw / (gw * aspect), bh / gh)
        nw, nh = max(1, round(gw * aspect * scale)), max(1, round(gh * scale))
        small = cv2.resize(mask, (nw, nh), interpolation=cv2.INTER_AREA)
        m = self.mask()
        ox, oy = x0 + (bw - nw) // 2, y0 + (bh - nh) // 2
        m[oy:oy + nh, ox:ox + nw] = small[: self.h - oy, : self.w - ox]
        self.paint(m, colour)

    def finish(self) -> np.ndarray:
        """BGRA uint8 at the texture size."""
        bgra = np.dstack([self.bgr, self.alpha * 255])
        return np.clip(cv2.resize(bgra, (TEX_W, TEX_H), interpolation=cv2.INTER_AREA), 0, 255).astype(np.uint8)


@cache
def _glyph_mask(s: str, font: str, weight: float = 0.0, slant: float = 0.0) -> np.ndarray:
    """A text's ink (float32 0..1) cropped to its bounds, rendered at 200 px with the font; strokes grown by
    ``weight`` texture pixels (thinned when negative) and sheared by ``slant``."""
    from PIL import Image, ImageDraw, ImageFont  # only the data builders need Pillow

    path, index = font_file(font)
    f = ImageFont.truetype(path, 200, index=index)
    x0, y0, x1, y1 = f.getbbox(s)
    img = Image.new("L", (x1 - x0 + 4, y1 - y0 + 4), 0)
    ImageDraw.Draw(img).text((2 - x0, 2 - y0), s, font=f, fill=255)
    a = np.asarray(img, np.float32) / 255
    if weight or slant:
        pad = 24
        a = cv2.copyMakeBorder(a, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        if slant:
            h, w = a.shape
            shear = np.float32([[1, -slant, slant * h / 2], [0, 1, 0]])
            a = cv2.warpAffine(a, shear, (w, h), flags=cv2.INTER_LINEAR)
        if weight:  # a texture pixel is about 200 / 90 glyph pixels (a numeral fills some 90 of the 192 px)
            k = max(1, round(abs(weight) * 200 / 90))
            kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1))
            a = cv2.dilate(a, kernel) if weight > 0 else cv2.erode(a, kernel)
            if weight < 0 and a.max() < 0.5:  # thinned away: keep the font's own strokes
                return _glyph_mask(s, font, 0.0, slant)
    ys, xs = np.nonzero(a > 0.05)
    return a[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


H = TEX_H / TEX_W  # face height in face widths

DOTS = {  # rank -> dot centres (x, y in 0..1 of the face) and radius (of the face width)
    1: ([(0.5, 0.5)], 0.36),
    2: ([(0.5, 0.27), (0.5, 0.73)], 0.2),
    3: ([(0.24, 0.2), (0.5, 0.5), (0.76, 0.8)], 0.16),
    4: ([(0.28, 0.28), (0.72, 0.28), (0.28, 0.72), (0.72, 0.72)], 0.18),
    5: ([(0.25, 0.24), (0.75, 0.24), (0.5, 0.5), (0.25, 0.76), (0.75, 0.76)], 0.15),
    6: ([(0.3, 0.18), (0.7, 0.18), (0.3, 0.55), (0.7, 0.55), (0.3, 0.84), (0.7, 0.84)], 0.14),
    7: ([(0.2, 0.12), (0.5, 0.23), (0.8, 0.34), (0.3, 0.6), (0.7, 0.6), (0.3, 0.86), (0.7, 0.86)], 0.12),
    8: ([(x, y) for y in (0.13, 0.38, 0.62, 0.87) for x in (0.3, 0.7)], 0.12),
    9: ([(x, y) for y in (0.18, 0.5, 0.82) for x in (0.2, 0.5, 0.8)], 0.13),
}
# which palette colour (0 = a, 1 = b, 2 = c) each dot gets, as traditional sets colour them
DOT_COLOURS = {1: [0], 2: [1, 0], 3: [0, 2, 1], 4: [0, 1, 1, 0], 5: [0, 1, 2, 1, 0], 6: [1, 1, 2, 2, 2, 2],
               7: [1, 1, 1, 2, 2, 2, 2], 8: [0] * 8, 9: [0, 0, 0, 2, 2, 2, 1, 1, 1]}


def _dot(c: Canvas, st: Style, x: float, y: float, r: float, colour) -> None:
    w = 0.018 * st.stroke
    if st.dot == "solid":
        c.circle(x, y, r, colour)
        c.circle(x, y, r * 0.35, (235, 240, 245))
        c.circle(x, y, r * 0.18, colour)
    elif st.dot == "petals":
        c.circle(x, y, r, colour, w)
        for k in range(8):
            a = k * math.pi / 4
            c.circle(x + 0.62 * r * math.cos(a), y + 0.62 * r * math.sin(a), 0.2 * r, colour)
        c.circle(x, y, r * 0.3, colour)
    elif st.dot == "coin":  # the old cash coin 筒 is named for: a ring round a square hole
        c.circle(x, y, r, colour, w * 1.4)
        c.circle(x, y, r * 0.72, colour, w * 0.7)
        h = r * 0.28
        c.poly([(x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)], colour)
        c.poly([(x - h * 0.5, y - h * 0.5), (x + h * 0.5, y - h * 0.5), (x + h * 0.5, y + h * 0.5),
                (x - h * 0.5, y + h * 0.5)], (235, 240, 245))
    elif st.dot == "flower":
        for k in range(6):
            a = k * math.pi / 3
            c.ellipse(x + 0.5 * r * math.cos(a), y + 0.5 * r * math.sin(a), 0.45 * r, 0.25 * r, math.degrees(a), colour)
        c.circle(x, y, r * 0.25, (235, 240, 245))
        c.circle(x, y, r * 0.14, colour)
    elif st.dot == "double":  # a thick outer ring and a solid centre
        c.circle(x, y, r * 0.88, colour, w * 2.6)
        c.circle(x, y, r * 0.42, colour)
    elif st.dot == "plain":  # a plain disc with a light rim inside
        c.circle(x, y, r, colour)
        c.circle(x, y, r * 0.7, (235, 240, 245), w * 0.7)
    else:  # rings
        c.circle(x, y, r, colour, w)
        c.circle(x, y, r * 0.68, colour, w * 0.8)
        c.circle(x, y, r * 0.3, colour)


def _spread(st: Style, x: float, y: float) -> tuple[float, float]:
    """A position (y in 0..1 of the face height) moved about the face centre by the style's spread."""
    return 0.5 + (x - 0.5) * st.spread, (0.5 + (y - 0.5) * st.spread) * H


def _dots(c: Canvas, st: Style, rank: int) -> None:
    pts, r = DOTS[rank]
    r *= st.dot_scale
    if rank == 1:  # the big ornate 1p: rings in all three colours
        x, y = 0.5, H / 2
        c.circle(x, y, r, st.palette[1], 0.03 * st.stroke)
        for k in range(12):
            a = k * math.pi / 6
            c.circle(x + 0.8 * r * math.cos(a), y + 0.8 * r * math.sin(a), 0.1 * r, st.palette[k % 2])
        c.circle(x, y, 0.55 * r, st.palette[2], 0.025 * st.stroke)
        c.circle(x, y, 0.25 * r, st.palette[0])
        return
    for (px, py), k in zip(pts, DOT_COLOURS[rank], strict=True):
        _dot(c, st, *_spread(st, px, py), r, st.palette[k])


STICKS = {  # rank -> (x, y, angle in degrees, red?) per stick, y in 0..1 of the face height
    2: [(0.5, 0.27, 0, 0), (0.5, 0.73, 0, 0)],
    3: [(0.5, 0.27, 0, 0), (0.3, 0.73, 0, 0), (0.7, 0.73, 0, 0)],
    4: [(0.3, 0.27, 0, 0), (0.7, 0.27, 0, 0), (0.3, 0.73, 0, 0), (0.7, 0.73, 0, 0)],
    5: [(0.22, 0.27, 0, 0), (0.78, 0.27, 0, 0), (0.5, 0.5, 0, 1), (0.22, 0.73, 0, 0), (0.78, 0.73, 0, 0)],
    6: [(x, y, 0, 0) for y in (0.27, 0.73) for x in (0.2, 0.5, 0.8)],
    7: [(0.5, 0.17, 0, 1)] + [(x, y, 0, 0) for y in (0.5, 0.83) for x in (0.2, 0.5, 0.8)],
    8: [(0.14, 0.27, 0, 0), (0.38, 0.27, 28, 0), (0.62, 0.27, -28, 0), (0.86, 0.27, 0, 0),
        (0.14, 0.73, 0, 0), (0.38, 0.73, -28, 0), (0.62, 0.73, 28, 0), (0.86, 0.73, 0, 0)],
    9: [(x, y, 0, int(x == 0.5)) for y in (0.17, 0.5, 0.83) for x in (0.2, 0.5, 0.8)],
}


def _stick(c: Canvas, st: Style, x: float, y: float, length: float, angle: float, colour) -> None:
    """One bamboo stick: a rounded bar with a joint in the middle and at both ends."""
    a = math.radians(angle)
    dx, dy = math.sin(a) * length / 2, -math.cos(a) * length / 2
    w = st.bamboo_width
    if st.stick == "beads":  # a string of round segments, as some sets draw the sticks
        n = 4
        for i in range(n):
            t = -1 + (2 * i + 1) / n
            c.ellipse(x + t * dx, y + t * dy, w * 0.55, length / n * 0.55, angle, colour)
        return
    if st.stick == "split":  # two halves with a gap at the middle joint
        for t0, t1 in ((-1.0, -0.08), (0.08, 1.0)):
            c.line([(x + t0 * dx, y + t0 * dy), (x + t1 * dx, y + t1 * dy)], colour, w)
    else:
        c.line([(x - dx, y - dy), (x + dx, y + dy)], colour, w)
    if st.stick == "plain":  # a bare bar with its ends marked
        for t in (-1.0, 1.0):
            jx, jy = x + t * dx * 0.95, y + t * dy * 0.95
            nx, ny = math.cos(a) * w * 0.7, math.sin(a) * w * 0.7
            c.line([(jx - nx, jy - ny), (jx + nx, jy + ny)], colour, 0.02 * st.stroke)
        return
    light = tuple(min(255, int(v * 0.5 + 128)) for v in colour)
    c.line([(x - dx * 0.8, y - dy * 0.8), (x + dx * 0.8, y + dy * 0.8)], light, w * 0.2)  # the highlight
    for t in (-1.0, 0.0, 1.0):  # joints
        jx, jy = x + t * dx * 0.92, y + t * dy * 0.92
        nx, ny = math.cos(a) * w * 0.75, math.sin(a) * w * 0.75
        c.line([(jx - nx, jy - ny), (jx + nx, jy + ny)], colour, 0.025 * st.stroke)


def _bamboo(c: Canvas, st: Style, rank: int) -> None:
    sticks = STICKS[rank]
    rows = len({y for _, y, _, _ in sticks})
    length = H * (0.38 if rows == 2 else 0.26)
    for x, y, angle, red in sticks:
        _stick(c, st, *_spread(st, x, y), length * st.spread, angle, st.bamboo_red if red else st.bamboo_ink)


def _bird(c: Canvas, st: Style) -> None:
    """The 1s: 幺鸡, a bird, in one of several drawings."""
    g, r, b = st.bamboo_ink, st.bamboo_red, st.palette[0]
    cy = H / 2
    if st.bird == "drawn":
        _drawn_bird(c, st)
    elif st.bird == "peacock":
        for k in range(7):  # the fanned tail with eye spots
            a = math.radians(-150 + 20 * k)
            tx, ty = 0.58 + 0.34 * math.cos(a), cy - 0.05 + 0.34 * math.sin(a)
            c.line([(0.55, cy + 0.05), (tx, ty)], g, 0.02 * st.stroke)
            c.circle(tx, ty, 0.055, g)
            c.circle(tx, ty, 0.028, b)
        c.ellipse(0.45, cy + 0.12, 0.17, 0.11, -20, b)  # body
        c.circle(0.3, cy - 0.05, 0.07, b)  # head
        c.poly([(0.24, cy - 0.06), (0.14, cy - 0.02), (0.25, cy - 0.01)], r)  # beak
        c.circle(0.29, cy - 0.07, 0.012, (245, 245, 245))
        c.line([(0.42, cy + 0.22), (0.4, cy + 0.38)], r, 0.02)
        c.line([(0.5, cy + 0.22), (0.52, cy + 0.38)], r, 0.02)
    elif st.bird == "sparrow":
        c.line([(0.1, cy + 0.3), (0.9, cy + 0.18)], g, 0.05)  # the twig
        c.ellipse(0.5, cy, 0.22, 0.15, -15, r)  # body
        c.ellipse(0.55, cy + 0.03, 0.15, 0.08, -25, g)  # wing
        c.circle(0.3, cy - 0.15, 0.1, r)  # head
        c.poly([(0.21, cy - 0.17), (0.08, cy - 0.12), (0.22, cy - 0.1)], BLACK)
        c.circle(0.28, cy - 0.17, 0.018, BLACK)
        c.poly([(0.68, cy + 0.02), (0.92, cy - 0.2), (0.88, cy + 0.08)], b)  # tail
    elif st.bird == "rooster":
        c.poly([(0.25, cy - 0.3), (0.3, cy - 0.38), (0.35, cy - 0.31), (0.4, cy - 0.38), (0.42, cy - 0.27)], r)
        c.ellipse(0.5, cy + 0.08, 0.24, 0.17, 10, g)  # body
        c.ellipse(0.33, cy - 0.18, 0.09, 0.12, 0, g)  # head and neck
        c.poly([(0.25, cy - 0.19), (0.13, cy - 0.15), (0.25, cy - 0.12)], (40, 160, 220))
        c.ellipse(0.27, cy - 0.07, 0.03, 0.05, 0, r)  # wattle
        for k in range(4):  # the arched tail feathers
            c.ellipse(0.72, cy - 0.05, 0.12 + 0.03 * k, 0.22 + 0.03 * k, 20, (b, r, g, b)[k], 0.02 * st.stroke)
        c.line([(0.45, cy + 0.24), (0.43, cy + 0.42)], (40, 160, 220), 0.025)
        c.line([(0.57, cy + 0.24), (0.6, cy + 0.42)], (40, 160, 220), 0.025)
    elif st.bird == "crane":  # standing on long legs, red crown, dark neck
        c.line([(0.46, cy + 0.12), (0.42, cy + 0.44)], BLACK, 0.018)
        c.line([(0.56, cy + 0.12), (0.6, cy + 0.44)], BLACK, 0.018)
        c.ellipse(0.52, cy + 0.02, 0.22, 0.12, -8, (235, 235, 230))  # white body
        c.ellipse(0.52, cy + 0.02, 0.22, 0.12, -8, b, 0.012 * st.stroke)
        c.poly([(0.62, cy - 0.04), (0.86, cy + 0.1), (0.64, cy + 0.1)], BLACK)  # tail
        c.line([(0.38, cy - 0.02), (0.3, cy - 0.2), (0.32, cy - 0.34)], BLACK, 0.035)  # neck
        c.circle(0.32, cy - 0.36, 0.045, (235, 235, 230))
        c.circle(0.32, cy - 0.39, 0.022, r)  # crown
        c.poly([(0.29, cy - 0.36), (0.12, cy - 0.3), (0.29, cy - 0.33)], g)  # beak
    elif st.bird == "duck":  # sitting on water
        for k in range(3):
            c.line([(0.1, cy + 0.28 + 0.06 * k), (0.9, cy + 0.28 + 0.06 * k)], b, 0.012 * st.stroke)
        c.ellipse(0.55, cy + 0.12, 0.26, 0.13, 0, g)  # body
        c.ellipse(0.6, cy + 0.1, 0.14, 0.07, -10, r)  # wing
        c.circle(0.3, cy - 0.08, 0.09, g)  # head
        c.poly([(0.23, cy - 0.09), (0.08, cy - 0.05), (0.23, cy - 0.03)], (40, 160, 220))  # flat bill
        c.circle(0.29, cy - 0.11, 0.015, BLACK)
    else:  # a single big bamboo stick with a little bird on top
        _stick(c, st, 0.5, cy + 0.12, H * 0.62, 0, g)
        c.ellipse(0.55, cy - 0.3, 0.12, 0.07, -10, r)
        c.circle(0.43, cy - 0.35, 0.055, r)
        c.poly([(0.39, cy - 0.36), (0.31, cy - 0.33), (0.39, cy - 0.32)], BLACK)


def _drawn_bird(c: Canvas, st: Style) -> None:
    """A bird put together from ``st.bird_seed``: body, wing, head, beak, tail, maybe crest, legs and a perch,
    each part's size, angle and colour drawn; facing left or right. Real sets draw the 幺鸡 in countless ways,
    and the held-out rooster must be recognised from birds that are not it."""
    rng = np.random.default_rng([st.bird_seed, 7])
    inks = [st.bamboo_ink, st.bamboo_red, st.palette[0], st.palette[1], BLACK]

    def ink() -> tuple[int, int, int]:
        return inks[int(rng.integers(len(inks)))]

    side = 1.0 if rng.random() < 0.5 else -1.0  # +1: the head on the left

    def at(x: float, y: float) -> tuple[float, float]:
        return 0.5 - side * (0.5 - x), y

    cy = H / 2 + float(rng.uniform(-0.06, 0.08))
    size = float(rng.uniform(0.8, 1.15))
    bx, by = at(0.52, cy + 0.06 * size)
    bw, bh = 0.22 * size * float(rng.uniform(0.8, 1.2)), 0.13 * size * float(rng.uniform(0.8, 1.3))
    tilt = float(rng.uniform(-30, 20)) * side
    if rng.random() < 0.5:  # a perch under it: a twig, grass or water lines
        for k in range(int(rng.integers(1, 4))):
            y = cy + 0.3 * size + 0.06 * k
            c.line([(0.1, y + float(rng.normal(0, 0.03))), (0.9, y + float(rng.normal(0, 0.03)))], ink(),
                   0.015 * st.stroke * float(rng.uniform(1, 3)))
    n_tail = int(rng.integers(2, 8))
    tail_ink = [ink() for _ in range(2)]
    spread = float(rng.uniform(15, 35))
    base = float(rng.uniform(-60, 10))  # the tail's mean angle up from the horizontal, away from the head
    tx, ty = at(0.52 + bw * 0.8, by)
    tail_len = 0.3 * size * float(rng.uniform(0.7, 1.3))
    feather = rng.random()
    for k in range(n_tail):
        a = math.radians(base + spread * (k - (n_tail - 1) / 2))
        ex, ey = tx + side * tail_len * math.cos(a), ty + tail_len * math.sin(a)
        colour = tail_ink[k % 2]
        if feather < 0.4:
            c.line([(tx, ty), (ex, ey)], colour, 0.02 * st.stroke)
            c.circle(ex, ey, 0.04 * size, colour)
        elif feather < 0.7:
            c.ellipse((tx + ex) / 2, (ty + ey) / 2, tail_len / 2, 0.035 * size, math.degrees(a) * side, colour)
        else:
            c.line([(tx, ty), ((tx + ex) / 2 + side * 0.03, (ty + ey) / 2 - 0.05), (ex, ey)], colour,
                   0.025 * st.stroke)
    if rng.random() < 0.7:  # legs
        leg = ink()
        for dx in (-0.05, 0.05):
            x0 = bx + dx
            c.line([(x0, by + bh * 0.8), (x0 + float(rng.normal(0, 0.02)), by + bh + 0.14 * size)], leg, 0.02)
    c.ellipse(bx, by, bw, bh, tilt, ink())  # body
    if rng.random() < 0.8:  # wing
        wx, _ = at(0.56, 0)
        c.ellipse(wx, by - bh * 0.1, bw * 0.6, bh * 0.55, tilt - side * 15, ink())
    hx, hy = at(0.52 - bw * 0.95, by - bh - 0.06 * size)
    hr = 0.07 * size * float(rng.uniform(0.8, 1.3))
    if rng.random() < 0.5:  # a neck
        c.line([(bx - side * bw * 0.6, by - bh * 0.3), (hx, hy)], ink(), hr * 1.1)
    head = ink()
    c.circle(hx, hy, hr, head)
    if rng.random() < 0.5:  # crest or comb
        crest = ink()
        for k in range(int(rng.integers(1, 4))):
            c.circle(hx + side * (0.03 * k - 0.02), hy - hr - 0.01 - 0.015 * k, 0.025 * size, crest)
    beak_len = float(rng.uniform(0.06, 0.14))
    c.poly([(hx - side * hr * 0.8, hy - hr * 0.3), (hx - side * (hr + beak_len), hy + float(rng.uniform(-0.02, 0.04))),
            (hx - side * hr * 0.8, hy + hr * 0.3)], ink())
    c.circle(hx - side * hr * 0.3, hy - hr * 0.25, 0.014, (245, 245, 245) if head == BLACK else BLACK)


def _characters(c: Canvas, st: Style, rank: int) -> None:
    split = st.numeral_share * H
    top = 0.1 if st.corner_index else 0.04
    c.text(NUMERALS[rank - 1], st.font, (0.12, top, 0.88, split - 0.02), st.numeral_ink, st.weight, st.slant)
    c.text(st.wan, st.font, (0.08, split + 0.03, 0.92, H - 0.04), st.wan_ink, st.weight, st.slant)


def render(style: str, face: str) -> np.ndarray:
    """One face of a procedural style (BGRA uint8, TEX_H x TEX_W); ``face`` is ``1m``..``9s`` or a honour's name
    (a key of HONOURS)."""
    st = get(style)
    c = Canvas()
    if face in HONOURS:
        ink = {"red": st.wan_ink, "green": st.bamboo_ink}.get(face, BLACK)
        c.text(HONOURS[face], st.font, (0.1, 0.12, 0.9, H - 0.12), ink, st.weight, st.slant)
        return c.finish()
    rank, suit = int(face[0]), face[1]
    if suit == "m":
        _characters(c, st, rank)
    elif suit == "p":
        _dots(c, st, rank)
    elif rank == 1:
        _bird(c, st)
    else:
        _bamboo(c, st, rank)
    if st.corner_index:
        c.text(str(rank), "noto-sans", (0.03, 0.02, 0.17, 0.2), st.wan_ink if suit == "m" else BLACK)
    return c.finish()


SUITED_FACES = [f"{r}{s}" for s in "mps" for r in range(1, 10)]


@cache
def faces(style: str) -> dict[str, np.ndarray]:
    """Every face of a procedural style, as the synthetic builder's artwork: suited faces by name, honours as
    ``other/<style>/<name>``. Drawn once per process (about 0.3 s a style)."""
    out = {f: render(style, f) for f in SUITED_FACES}
    out |= {f"other/{style}/{h}": render(style, h) for h in HONOURS}
    return out


def contact_sheet(style: str) -> np.ndarray:
    """All of a style's faces on ivory in three rows of nine plus a row of honours (to look at)."""
    fs = faces(style)
    ivory = np.array([225, 238, 244], np.float32)
    tiles = []
    for f in [*SUITED_FACES, *(k for k in fs if k.startswith("other/"))]:
        g = fs[f].astype(np.float32)
        a = g[..., 3:] / 255
        t = ivory * (1 - a) + g[..., :3] * a
        tiles.append(cv2.copyMakeBorder(t.astype(np.uint8), 4, 4, 4, 4, cv2.BORDER_CONSTANT, value=(60, 60, 60)))
    blank = np.full_like(tiles[0], 60)
    tiles += [blank] * (-len(tiles) % 9)
    return np.vstack([np.hstack(tiles[i:i + 9]) for i in range(0, len(tiles), 9)])


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Write a contact sheet per procedural style (to look at).")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--styles", nargs="*", help="default: every available style")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.styles or available():
        path = args.out / f"{name}{' (held out)' if name in HELD_OUT else ''}.png".replace(" ", "_")
        cv2.imwrite(str(path), contact_sheet(name))
        print(path)


if __name__ == "__main__":
    main()
