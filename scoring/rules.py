"""Rule presets and config switches (docs/rules.md#switches).

Every ⚠ choice of the specification is a field of :class:`Rules`; a preset is a complete set of values.
``get_rules("gy-normal")`` or ``get_rules({"preset": "liupanshui", "dealer_bonus": False})`` returns one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Hand-type keys, smallest to largest base shape; "qing_" = 清 (one suit incl. melds).
HAND_TYPES: dict[str, tuple[str, str]] = {
    "pinghu": ("平胡", "plain win"),
    "daduizi": ("大对子", "all triplets"),
    "qidui": ("小七对", "seven pairs"),
    "longqidui": ("龙七对", "seven pairs with a concealed four"),
    "shuanglong": ("双龙七对", "seven pairs with two concealed fours"),
    "qingyise": ("清一色", "one suit"),
    "qingdadui": ("清大对", "one suit, all triplets"),
    "qingqidui": ("清七对", "one suit, seven pairs"),
    "qinglongbei": ("清龙七对", "one suit, seven pairs with a concealed four"),
    "qingshuanglong": ("清双龙七对", "one suit, seven pairs with two concealed fours"),
    # House rule (docs/rules.md#dadiaoche), scored only when ``Rules.dadiaoche`` > 0; no row in the fan tables.
    "dadiaoche": ("大吊车", "four melds laid, won on a single wait for the pair"),
}

FAN_TABLES: dict[str, dict[str, int]] = {
    # S0 table, 7/17 for 七对/清七对 (docs/rules.md#hand-types, conflict 1); 双龙 scores as 龙七对 in Guiyang.
    "gy_normal": {"pinghu": 1, "daduizi": 5, "qidui": 7, "longqidui": 10, "shuanglong": 10, "qingyise": 10,
                  "qingdadui": 15, "qingqidui": 17, "qinglongbei": 20, "qingshuanglong": 20},
    "gy_reduced": {"pinghu": 1, "daduizi": 3, "qidui": 4, "longqidui": 5, "shuanglong": 5, "qingyise": 5,
                   "qingdadui": 8, "qingqidui": 9, "qinglongbei": 10, "qingshuanglong": 10},
    # Liupanshui: Guiyang values (INF) plus 双龙七对 20 / 清双龙七对 30 (INF).
    "lps": {"pinghu": 1, "daduizi": 5, "qidui": 7, "longqidui": 10, "shuanglong": 20, "qingyise": 10,
            "qingdadui": 15, "qingqidui": 17, "qinglongbei": 20, "qingshuanglong": 30},
    # App platforms (P3, P4): a bigger table; not a preset.
    "app": {"pinghu": 1, "daduizi": 5, "qidui": 10, "longqidui": 20, "shuanglong": 20, "qingyise": 10,
            "qingdadui": 15, "qingqidui": 20, "qinglongbei": 30, "qingshuanglong": 30},
}

# 独山 (docs/rules.md#dushan), read under ``settlement="dushan"`` instead of ``fan_table``: hand types add up —
# 清一色 10 on top of 大对子 5, 七对 10, 龙七对 (``dushan_longqidui``); a 平胡 adds nothing to the win's own 3.
DUSHAN_FANS: dict[str, int] = {"pinghu": 0, "daduizi": 5, "qidui": 10, "qingyise": 10, "qingdadui": 15,
                               "qingqidui": 20}


# 独山's 龙七对 rows: the switch value, plus 清一色 for the one-suit ones (types add up).
_DUSHAN_LONG = {"longqidui": 0, "shuanglong": 0, "qinglongbei": 1, "qingshuanglong": 1}


@dataclass(frozen=True)
class DouValues:
    """豆 (kong) values in fan: 闷豆 concealed, 转弯豆 added, 点豆 exposed."""

    concealed: int = 3  # 闷豆, paid by each of the 3 others
    added: int = 3  # 转弯豆 / 爬坡豆, paid by each of the 3 others
    exposed: int = 3  # 点豆, paid by the feeder only


@dataclass(frozen=True)
class Rules:
    preset: str = "gy-normal"
    fan_table: str = "gy_normal"
    zimo_bonus: str = "pinghu_only"  # pinghu_only | none | all_plus1 | all_plus2 | double
    gangkai_bonus: int = 1
    dou_values: DouValues = field(default_factory=DouValues)
    dou_not_ting: str = "void"  # void | reverse
    hanbao_dou_scores: bool = True
    chicken_scope: str = "mantang"  # mantang | shoushang
    chicken_requires_ting: bool = True
    bao_ji: bool = True
    chicken_payers: str = "all_others"  # all_others | non_ting_only
    chongfeng_mode: str = "replace"  # replace (2/4) | additive (3/6)
    zeren_extra: int = 1  # 金鸡: doubled
    wuguji: bool = False
    wuguji_value: int = 2  # 乌骨鸡 8p worth this (P3 2, P1 1); doubled when F = 7p
    repao_extra: int = 1
    repao_burn: bool = True
    qianggang_burn: bool = False
    baoting_win: str = "max"  # max | add | replace
    baoting_q: int = 10
    yipao_reverse: bool = False
    yipao_dealer: str = "gy"  # 一炮多响 next dealer: gy (S0/S2) | lps (S4, from the discarder's 下家)
    dealer_bonus: bool = False
    huang_dealer: str = "s2"  # s2 | qq | stay
    long_needs_win_tile: bool = False
    dead_wait_counts: bool = True
    pass_lock: str = "penalty"  # penalty | forbid
    base: int = 1  # 底分, 1..MAX_BASE
    # 一炮多响 on a chicken: the one shared winning tile counts for the first winner from the discarder's 下家
    # (first) or, as before, for every winner (each).
    yipao_chicken: str = "first"
    zeren_scope: str = "first"  # 责任鸡: only the first claimed 1s (first) or every claimed 1s (all)
    # House rules (docs/rules.md#switches), all off by default.
    dadiaoche: int = 0  # 大吊车 / 单吊 fan (P1 17, app tables 10); 0 = off
    tianhu: int = 0  # 天胡 (dealer wins on his dealt 14) fan; 0 = off
    dihu: int = 0  # 地胡 (a non-dealer self-draws on his first draw) fan; 0 = off
    tiandi_mode: str = "max"  # 天胡/地胡 replace a smaller type (max, P1) or add to it (add, P3 +20)
    genzhuang: int = 0  # 跟庄 (开局跟): the dealer pays each other player this much; 0 = off
    wuguji_chongfeng: bool = False  # the first discarded 8p is a 冲锋鸡 too (needs wuguji)
    bao_ji_shared: bool = False  # a fixed chicken in a non-叫牌 river is paid by every non-叫牌 player
    chongfeng_moves: bool = False  # a claimed 冲锋鸡 moves to a 叫牌 claimer, else stays with the discarder
    # Regional variants (docs/rules.md, issue 54), all off by default.
    shangxia_ji: bool = False  # 上下鸡 / 摇摆鸡: F-1 and F+1 are both 翻鸡
    ben_ji: bool = False  # 本鸡: the flipped tile F itself is a chicken too
    ben_ji_gold: str = "either"  # 本鸡's 金: F or F+1 is 1s (either, P3 gui_yang) | F is 1s (flip_only, P3 mygy)
    xingqi_ji: str | None = None  # 星期鸡: rank = the round's weekday; Sunday 7 (sunday7) or none (sunday_none)
    chuifeng_ji: str | None = None  # 吹风鸡 (F = 5p): no chickens (chickens) or the round void (hand)
    mantang_all: str | None = None  # all four have a paid chicken: chicken payments doubled (double) or cancel
    tongsan: bool = False  # 通三: W + 3 on every win, 热炮 extra 3, 冲锋鸡 3 (金 6)
    qingyise_bonus: int = 0  # 清一色奖励: + this on a one-suit win; 0 = off (FW 六盘水: 3)
    heavy_chickens: bool = False  # heavier values (P3 gy/): 冲锋 3/6, 幺鸡 金 3, 乌骨 金 ×3, 责任 2
    shabao_pinghu: bool = False  # 杀报 on a 平胡: Q - 1 extra (9), not added to the 平胡's own 1
    yin_ji: bool = False  # 银鸡: a flip-derived 1m or 1p is worth 2
    yiwai_ji: bool = False  # 意外鸡: 7p and 9m are always chickens (like 幺鸡)
    zhan_ji: str | None = None  # 站鸡: a fixed chicken still concealed scores double (double) or + 1 (plus1)
    qianhou_ji: str | None = None  # 前后鸡 (last) / 滚筒鸡 (all): the extra indicator tiles' +1 are chickens
    lianzhuang: bool = False  # 连庄 as a dealer's win bonus: a winning dealer collects + k from each payer
    # 独山 (docs/rules.md#dushan): its own settlement (scoring/dushan.py), pairwise chickens; the values where
    # P2's tutorial and DushanMajiang disagree are switches (P2 first).
    settlement: str = "guiyang"  # guiyang | dushan
    dushan_baojiao: int = 13  # 报叫 (declared ready) winner's bonus: P2 13, DushanMajiang 10
    dushan_longqidui: int = 20  # 龙七对: P2 20, DushanMajiang 23 (清龙七对 = this + 清一色)
    dushan_gangkai: int = 5  # 杠上开花 instead of 自摸's 3: P2 5, DushanMajiang 3
    dushan_repao: int = 5  # 热炮 instead of 点炮's 3: P2 5, DushanMajiang 3
    dushan_dandiao: int = 10  # 单吊 (four melds laid, the pair won alone); adds to 清一色, replaces 大对子
    dushan_fanji: str = "both"  # 翻鸡 after the win: F+1 and F-1 (both, 上下鸡), F+1 (up, 上鸡) or F-1 (down, 下鸡)

    def fan(self, hand_type: str) -> int:
        """Fan of a hand-type key under this rule set's table (大吊车: the house-rule value)."""
        if hand_type == "dadiaoche":
            return self.dushan_dandiao if self.settlement == "dushan" else self.dadiaoche
        if self.settlement == "dushan":
            if hand_type in _DUSHAN_LONG:
                return self.dushan_longqidui + _DUSHAN_LONG[hand_type] * DUSHAN_FANS["qingyise"]
            return DUSHAN_FANS[hand_type]
        return FAN_TABLES[self.fan_table][hand_type]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PRESETS: dict[str, Rules] = {
    "gy-normal": Rules(),
    "gy-reduced": Rules(preset="gy-reduced", fan_table="gy_reduced", dou_values=DouValues(2, 3, 1), baoting_q=5),
    "liupanshui": Rules(preset="liupanshui", fan_table="lps", zimo_bonus="none", dou_values=DouValues(2, 3, 1),
                        hanbao_dou_scores=False, qianggang_burn=True, baoting_win="add", dealer_bonus=True,
                        huang_dealer="stay", yipao_dealer="lps"),
    # 独山: settled by scoring/dushan.py with its own fan table (DUSHAN_FANS); the shared switches it reads are
    # 龙七对 on the winning tile and 底分; its 上下鸡 is dushan_fanji, its 单吊 dushan_dandiao (docs/rules.md#dushan).
    "dushan": Rules(preset="dushan", settlement="dushan", long_needs_win_tile=True),
}

CHOICES: dict[str, tuple[str | None, ...]] = {
    "fan_table": tuple(FAN_TABLES),
    "zimo_bonus": ("pinghu_only", "none", "all_plus1", "all_plus2", "double"),
    "dou_not_ting": ("void", "reverse"),
    "chicken_scope": ("mantang", "shoushang"),
    "chicken_payers": ("all_others", "non_ting_only"),
    "chongfeng_mode": ("replace", "additive"),
    "baoting_win": ("max", "add", "replace"),
    "huang_dealer": ("s2", "qq", "stay"),
    "yipao_dealer": ("gy", "lps"),
    "pass_lock": ("penalty", "forbid"),
    "yipao_chicken": ("first", "each"),
    "zeren_scope": ("first", "all"),
    "tiandi_mode": ("max", "add"),
    "ben_ji_gold": ("either", "flip_only"),
    "xingqi_ji": (None, "sunday7", "sunday_none"),
    "chuifeng_ji": (None, "chickens", "hand"),
    "mantang_all": (None, "double", "cancel"),
    "zhan_ji": (None, "double", "plus1"),
    "qianhou_ji": (None, "last", "all"),
    "settlement": ("guiyang", "dushan"),
    "dushan_fanji": ("both", "up", "down"),
}

# The switches 独山 reads (scoring/dushan.py); any other one changed under it would be silently ignored.
DUSHAN_SWITCHES = frozenset({"dushan_dandiao", "long_needs_win_tile", "base", "settlement", "dushan_baojiao",
                             "dushan_longqidui", "dushan_gangkai", "dushan_repao", "dushan_fanji"})

MAX_BASE = 1_000_000  # 底分 bound: totals stay exact integers in a browser (below 2**53)


def get_rules(spec: str | dict[str, Any] | Rules | None = "gy-normal") -> Rules:
    """A :class:`Rules` from a preset name, ``{"preset": name, <overrides>}``, or a Rules (returned as is).

    Raises ``ValueError`` for an unknown preset, key, choice or a value of the wrong type.
    """
    if spec is None:
        spec = "gy-normal"
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, str):
        spec = {"preset": spec}
    if not isinstance(spec, dict):
        raise ValueError("rules must be a preset name or an object {'preset': ..., <overrides>}")
    overrides = dict(spec)
    name = overrides.pop("preset", "gy-normal")
    if not isinstance(name, str) or name not in PRESETS:
        raise ValueError(f"unknown rules preset {name!r}; choose one of {', '.join(PRESETS)}")
    rules = PRESETS[name]
    fields = {f.name: f for f in dataclasses.fields(Rules)}
    clean: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in fields or key == "preset":
            raise ValueError(f"unknown rules key {key!r}; known keys: {', '.join(k for k in fields if k != 'preset')}")
        current = getattr(rules, key)
        if key == "dou_values":
            value = _dou_values(value)
        elif isinstance(current, bool):
            if not isinstance(value, bool):
                raise ValueError(f"rules key {key!r} takes true or false, not {value!r}")
        elif key == "base":
            value = check_base(value, "rules key 'base' (底分)")
        elif isinstance(current, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"rules key {key!r} takes a whole number ≥ 0, not {value!r}")
        elif key in CHOICES and value not in CHOICES[key]:
            names = ", ".join("null" if c is None else c for c in CHOICES[key])
            raise ValueError(f"rules key {key!r} takes one of {names}, not {value!r}")
        clean[key] = value
    result = dataclasses.replace(rules, **clean)
    _check_dushan(result)
    if result.wuguji_chongfeng and not result.wuguji:
        raise ValueError("rules key 'wuguji_chongfeng' (the first 8p as a 冲锋鸡) needs 'wuguji' (乌骨鸡) on")
    return result


def _check_dushan(rules: Rules) -> None:
    """独山 settles by its own rules: refuse a Guiyang switch changed under it, which it would not read."""
    if rules.settlement != "dushan":
        return
    plain = PRESETS["gy-normal"]
    changed = sorted(f.name for f in dataclasses.fields(Rules)
                     if f.name not in DUSHAN_SWITCHES and f.name != "preset"
                     and getattr(rules, f.name) != getattr(plain, f.name))
    if changed:
        raise ValueError(f"独山 (dushan) settles by its own rules and does not read {', '.join(map(repr, changed))}; "
                         f"its switches are {', '.join(sorted(DUSHAN_SWITCHES - {'settlement'}))}")


def check_base(value: Any, where: str = "base (底分)") -> int:
    """底分 (base stake): a whole number 1..MAX_BASE; 0 would zero every payment, a huge one lose precision."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BASE:
        raise ValueError(f"{where} must be a whole number from 1 to {MAX_BASE:,}, not {value!r}")
    return value


def _whole(v: Any) -> int:
    """A whole number from an int or a digit string; anything else (1.5, inf, True) is refused."""
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise ValueError(v)


def _dou_values(value: Any) -> DouValues:
    """Accept ``[3, 3, 3]``, ``"2/3/1"`` or ``{"concealed": 2, "added": 3, "exposed": 1}``."""
    if isinstance(value, DouValues):
        return value
    try:
        if isinstance(value, str):
            value = value.split("/")
        if isinstance(value, dict):
            dou = DouValues(**{k: _whole(v) for k, v in value.items()})
        else:
            a, b, c = (_whole(v) for v in value)
            dou = DouValues(a, b, c)
    except (TypeError, ValueError):
        raise ValueError(f"dou_values takes three whole numbers '闷/转弯/点' such as '2/3/1', not {value!r}") from None
    if min(dou.concealed, dou.added, dou.exposed) < 0:
        raise ValueError(f"dou_values must not be negative: {value!r}")
    return dou
