"""Example house profiles: the regional defaults other 捉鸡 software ships, as rules objects a table starts from.

Each is ``{"preset": ..., <switch>: value}``, the form every surface accepts, and says where its settings come
from (docs/rules.md#profiles). The evidence is weak — one game server's coin-room defaults (FW ``fwhappy/mahjong``)
and the options one commercial server offers (P3) — so they are examples to start from, not rules of a town.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Profile:
    name: str
    title_zh: str
    title_en: str
    source: str
    rules: dict[str, Any] = field(default_factory=dict)


PROFILES: tuple[Profile, ...] = (
    Profile("zunyi", "遵义", "Zunyi",
            "FW coin rooms: 遵义 plays 满堂鸡 (discarded chickens count: our default scope). P3's 遵义 table "
            "(GameConstants_ZYZJ.java:12-24) offers 星期鸡 (Sunday none, P3 Table_GY weekday − 1), 摇摆鸡 "
            "(上下鸡), 本鸡 and 乌骨鸡; this example turns those on.",
            {"preset": "gy-normal", "chicken_scope": "mantang", "xingqi_ji": "sunday_none", "shangxia_ji": True,
             "ben_ji": True, "wuguji": True}),
    Profile("anshun", "安顺", "Anshun", "FW coin rooms: 安顺 plays 自摸翻倍 (a self-drawn win doubled).",
            {"preset": "gy-normal", "zimo_bonus": "double"}),
    Profile("xingyi", "兴义", "Xingyi",
            "FW coin rooms: 兴义 plays 站鸡 and 自摸翻倍. FW's 站鸡 value was not found; ×2 is RL's "
            "(player.py:231-268).",
            {"preset": "gy-normal", "zhan_ji": "double", "zimo_bonus": "double"}),
    Profile("duyun", "都匀", "Duyun",
            "FW coin rooms: 都匀 plays 自摸加1 and 首圈鸡; 首圈鸡 needs the turn of each discard, which a photo "
            "of the table does not show, so it is left out.",
            {"preset": "gy-normal", "zimo_bonus": "all_plus1"}),
    Profile("tongren", "铜仁", "Tongren", "FW coin rooms: 铜仁 plays 自摸加1 (+1 on every self-drawn win).",
            {"preset": "gy-normal", "zimo_bonus": "all_plus1"}),
    Profile("liupanshui-fw", "六盘水（清一色奖励）", "Liupanshui with the one-suit bonus",
            "FW coin rooms: 六盘水 pays 清一色奖励三分 (+3 on a one-suit win), on our Liupanshui preset.",
            {"preset": "liupanshui", "qingyise_bonus": 3}),
    Profile("dushan-majiang", "独山（DushanMajiang 分值）", "Dushan with DushanMajiang's values",
            "LIGF9/DushanMajiang settings.py majiang_scores: 报叫 10, 龙七对 23, 杠上开花 3 and 捉热炮 3 where P2's "
            "tutorial has 13, 20, 5 and 5; its 上下鸡 (shangxia_ji = True) is the preset's.",
            {"preset": "dushan", "dushan_baojiao": 10, "dushan_longqidui": 23, "dushan_gangkai": 3,
             "dushan_repao": 3}),
)
