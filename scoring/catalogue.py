"""What every rules switch means, for people: titles, one-line explanations and choice labels, grouped.

The data behind ``GET /v1/rules`` and ``zhuoji rules`` (``pipeline.rules.catalogue``) and behind docs/rules.md,
whose sections carry the switch names as anchors. Every field of :class:`scoring.rules.Rules` except ``preset``
has exactly one entry (a test holds the two together), so a new switch cannot ship undescribed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    name: str
    title_zh: str
    title_en: str


@dataclass(frozen=True)
class Choice:
    value: str | None  # None: the switch is off
    label_zh: str
    label_en: str


@dataclass(frozen=True)
class SwitchInfo:
    name: str
    group: str
    title_zh: str
    title_en: str
    explanation_zh: str
    explanation_en: str
    choices: tuple[Choice, ...] = ()


@dataclass(frozen=True)
class RoundField:
    """An input of the round (beside the tiles) that a switch needs."""

    name: str
    kind: str  # int | tile_list | discard_list
    explanation_zh: str
    explanation_en: str
    needed_when: dict[str, tuple[str, ...]]
    minimum: int | None = None
    maximum: int | None = None


GROUPS: tuple[Group, ...] = (
    Group("hand", "牌型", "Hand types"),
    Group("win", "胡牌", "Win value and payments"),
    Group("dou", "豆", "Kongs"),
    Group("chickens", "鸡", "Chickens"),
    Group("chicken_values", "鸡的分值", "Chicken values"),
    Group("dealer", "庄家", "Dealer"),
    Group("draw", "黄牌与罚则", "Draws and penalties"),
    Group("table", "底分", "Stake"),
    Group("dushan", "独山", "Dushan"),
)

C = Choice
SWITCHES: tuple[SwitchInfo, ...] = (
    # ---- hand types
    SwitchInfo("fan_table", "hand", "番表", "Fan table",
               "牌型的番数表：贵阳正常番、缩小番、六盘水或 App 大表。",
               "Which fan table scores the hand types: Guiyang normal, reduced, Liupanshui or the app table.",
               (C("gy_normal", "贵阳正常番", "Guiyang normal"), C("gy_reduced", "贵阳缩小番", "Guiyang reduced"),
                C("lps", "六盘水", "Liupanshui"), C("app", "App 大表", "App platforms' bigger table"))),
    SwitchInfo("long_needs_win_tile", "hand", "龙七对须胡张成四", "龙七对 needs the winning tile",
               "只有胡的那张凑成四张才算龙七对。",
               "A 龙七对 (seven pairs with a four) counts only when the winning tile makes the four."),
    SwitchInfo("dadiaoche", "hand", "大吊车（单吊）", "Big crane (single wait)",
               "四副露后单吊将牌胡的番数，0 为不算。",
               "Fan of a win on the lone pair tile after four melds; 0 = not played."),
    SwitchInfo("tianhu", "hand", "天胡", "Heavenly win", "庄家起手 14 张即胡的番数，0 为不算。",
               "Fan of the dealer winning on his dealt 14 tiles; 0 = not played."),
    SwitchInfo("dihu", "hand", "地胡", "Earthly win", "闲家第一次摸牌自摸的番数，0 为不算。",
               "Fan of a non-dealer self-drawing on his first draw; 0 = not played."),
    SwitchInfo("tiandi_mode", "hand", "天胡地胡计法", "Heavenly/earthly win scoring",
               "天胡地胡取代较小牌型，或加在牌型上。",
               "天胡/地胡 replaces a smaller hand type, or adds to it.",
               (C("max", "取大", "the larger of the two"), C("add", "相加", "added to the type"))),
    # ---- win value and payments
    SwitchInfo("zimo_bonus", "win", "自摸加分", "Self-draw bonus",
               "自摸的奖励：只平胡 +1、无、每次 +1、每次 +2 或翻倍。",
               "What a self-drawn win adds: +1 on a 平胡 only, nothing, +1 always, +2 always, or double.",
               (C("pinghu_only", "平胡自摸 +1", "+1 on a plain win only"), C("none", "不加", "no bonus"),
                C("all_plus1", "自摸 +1", "+1 on every self-draw"), C("all_plus2", "自摸 +2", "+2 on every self-draw"),
                C("double", "自摸翻倍", "doubled"))),
    SwitchInfo("gangkai_bonus", "win", "杠上花加番", "Kong-replacement win bonus",
               "杠上开花在胡牌番上加的番数。", "Fan added to a win on a kong replacement draw (杠上花)."),
    SwitchInfo("baoting_win", "win", "报听胡牌", "Declared-ready winner",
               "报听者胡牌：与 Q 取大、加 Q 或按 Q 计。",
               "A 报听 (declared ready) winner's value: the larger of W and Q, W + Q, or Q flat.",
               (C("max", "取大", "max(W, Q)"), C("add", "相加", "W + Q"), C("replace", "按 Q", "Q"))),
    SwitchInfo("baoting_q", "win", "报听番 Q", "Declared-ready value Q",
               "报听、杀报、诈胡用的番数（活一色）。",
               "The fan Q used by 报听 wins, the 杀报 extra and the 诈胡 penalty (one-suit fan)."),
    SwitchInfo("repao_extra", "win", "热炮加番", "Hot-discard extra",
               "杠后第一张打出点炮，放炮者多付的番。",
               "What a discarder pays extra when his first discard after a kong feeds a win (热炮)."),
    SwitchInfo("repao_burn", "win", "热炮全烧", "Hot discard burns",
               "放热炮者的豆和鸡收入作废。", "The 热炮 discarder's kong and chicken income is void (全烧)."),
    SwitchInfo("qianggang_burn", "win", "抢杠全烧", "Robbed kong burns",
               "被抢杠者的豆和鸡收入作废。", "The robbed player's kong and chicken income is void."),
    SwitchInfo("yipao_reverse", "win", "一炮多响反付", "Several winners pay the discarder",
               "一炮多响时赢家付给放炮者（S0 字面）。",
               "With several winners on one discard the winners pay the discarder (S0 read literally)."),
    SwitchInfo("tongsan", "win", "通三", "Three on every win",
               "每次胡牌 +3，热炮多付 3，冲锋鸡 3（金 6）。",
               "Every win +3, the hot-discard extra 3, a charging chicken 3 (gold 6)."),
    SwitchInfo("qingyise_bonus", "win", "清一色奖励", "One-suit bonus",
               "清一色类牌型胡牌另加的番，0 为不算。", "Fan added to a one-suit (清) win; 0 = not played."),
    SwitchInfo("shabao_pinghu", "win", "杀报平胡加 9", "杀报 on a plain win: 9",
               "报听者点炮平胡时多付 Q−1（9），不与平胡的 1 叠加。",
               "On a 平胡 the 报听 player's extra is Q − 1 (9), not added to the plain win's 1."),
    # ---- kongs
    SwitchInfo("dou_values", "dou", "豆的番数", "Kong values",
               "闷豆、转弯豆、点豆各值多少番。", "Fan of a concealed, an added and an exposed kong (闷/转弯/点)."),
    SwitchInfo("dou_not_ting", "dou", "未叫牌的豆", "Kongs of a hand not ready",
               "未叫牌者的豆作废，或反赔给叫牌者。",
               "Kongs of a player not 叫牌 are void, or he pays them to the ready players.",
               (C("void", "作废", "void"), C("reverse", "反赔", "paid back"))),
    SwitchInfo("hanbao_dou_scores", "dou", "憨包豆计分", "Late kongs score",
               "晚一轮才开的闷豆、转弯豆照常计分。", "A concealed or added kong declared a round late still scores."),
    # ---- chickens
    SwitchInfo("chicken_scope", "chickens", "鸡的范围", "Chicken scope",
               "满堂鸡：打出的翻鸡也算；手上鸡：只算手上和副露的翻鸡。",
               "满堂鸡: discarded flipped chickens count too; 手上鸡: only those in hand and melds.",
               (C("mantang", "满堂鸡", "hand, melds and river"), C("shoushang", "手上鸡", "hand and melds"))),
    SwitchInfo("chicken_requires_ting", "chickens", "叫牌才算鸡", "Chickens need a ready hand",
               "只有叫牌的人收鸡。", "Only 叫牌 (ready) players collect for their chickens."),
    SwitchInfo("bao_ji", "chickens", "包鸡", "Chicken liability",
               "未叫牌者打出的幺鸡赔给每个叫牌者。",
               "A player not ready pays the fixed chickens in his river to every ready player."),
    SwitchInfo("chicken_payers", "chickens", "谁付鸡", "Who pays chickens",
               "其他三家都付，或只有未叫牌者付。", "All three others pay a player's chickens, or only those not ready.",
               (C("all_others", "其他三家", "all three others"), C("non_ting_only", "未叫牌者", "only those not ready"))),
    SwitchInfo("wuguji", "chickens", "乌骨鸡", "Black-bone chicken (8p)",
               "八筒也是固定鸡。", "8p is a fixed chicken too."),
    SwitchInfo("yipao_chicken", "chickens", "一炮多响的鸡", "Shared winning tile",
               "一炮多响时那张牌只算第一个赢家的鸡，或每个赢家都算。",
               "With several winners the one winning tile counts for the first winner only, or for each.",
               (C("first", "只算一次", "once"), C("each", "每家都算", "for every winner"))),
    SwitchInfo("shangxia_ji", "chickens", "上下鸡（摇摆鸡）", "Both neighbours of the flipped tile",
               "翻牌的上一张和下一张都是翻鸡；翻二条或九条时幺鸡为金。",
               "F − 1 and F + 1 are both flipped chickens; F = 2s or 9s makes every 1s golden."),
    SwitchInfo("ben_ji", "chickens", "本鸡", "The flipped tile itself",
               "翻出的那张牌本身也是鸡。", "The flipped tile F is a chicken too, besides F + 1."),
    SwitchInfo("ben_ji_gold", "chickens", "本鸡的金鸡", "本鸡's golden trigger",
               "本鸡时何时金鸡：翻牌或其下一张是幺鸡，或只有翻出幺鸡。",
               "Under 本鸡 the 1s is golden when F or F + 1 is 1s, or only when F is 1s.",
               (C("either", "翻牌或下一张", "F or F + 1 is 1s"), C("flip_only", "只翻幺鸡", "only F = 1s"))),
    SwitchInfo("xingqi_ji", "chickens", "星期鸡", "Weekday chickens",
               "点数等于当天星期几的三门牌都是鸡；星期日算七或不算。",
               "Tiles whose rank is the round's weekday, in all three suits, are chickens; Sunday is 7 or none.",
               (C(None, "不玩", "off"), C("sunday7", "星期日算七", "Sunday counts as 7"),
                C("sunday_none", "星期日无", "no weekday chicken on Sunday"))),
    SwitchInfo("chuifeng_ji", "chickens", "吹风鸡", "Wind-blown chickens (F = 5p)",
               "翻出五筒时不算鸡，或整局作废由庄家重打。",
               "A flipped 5p cancels every chicken, or voids the whole round and the dealer deals again.",
               (C(None, "不玩", "off"), C("chickens", "不算鸡", "no chickens"),
                C("hand", "整局作废", "the round is void"))),
    SwitchInfo("yin_ji", "chickens", "银鸡", "Silver chicken",
               "翻出的鸡是一万或一筒时每张值 2。", "A flip-derived 1m or 1p is worth 2."),
    SwitchInfo("yiwai_ji", "chickens", "意外鸡", "Surprise chickens",
               "七筒和九万永远是鸡（像幺鸡）。", "7p and 9m are always chickens, like 幺鸡."),
    SwitchInfo("qianhou_ji", "chickens", "前后鸡 / 滚筒鸡", "Extra indicator chickens",
               "杠后从牌尾另翻的指示牌下一张也是鸡：只算最后一张或每张都算。",
               "Each extra indicator turned from the wall's end makes its next tile a chicken: the last one or all.",
               (C(None, "不玩", "off"), C("last", "前后鸡（只算最后一张）", "前后鸡: the last indicator"),
                C("all", "滚筒鸡（都算）", "滚筒鸡: every indicator"))),
    SwitchInfo("bao_ji_shared", "chickens", "包鸡共赔", "Shared chicken liability",
               "未叫牌者河里的幺鸡由每个未叫牌者赔。",
               "A fixed chicken in a not-ready river is paid by every player not ready."),
    # ---- chicken values
    SwitchInfo("chongfeng_mode", "chicken_values", "冲锋鸡计法", "Charging chicken value",
               "第一张打出的幺鸡值 2（加倍）或 3（另加 2）。",
               "The first discarded 1s is worth 2 (doubled) or 3 (base + 2).",
               (C("replace", "加倍 2/4", "2 (gold 4)"), C("additive", "另加 3/6", "3 (gold 6)"))),
    SwitchInfo("zeren_extra", "chicken_values", "责任鸡", "Responsibility chicken",
               "第一张幺鸡被碰杠，打出者多付碰杠者的番。",
               "What the discarder of a claimed first 1s pays the claimer extra."),
    SwitchInfo("zeren_scope", "chicken_values", "责任鸡范围", "Responsibility scope",
               "只算第一张被碰杠的幺鸡，或每张。", "Only the first claimed 1s, or every claimed 1s.",
               (C("first", "第一张", "the first"), C("all", "每张", "every one"))),
    SwitchInfo("wuguji_value", "chicken_values", "乌骨鸡分值", "Black-bone chicken value",
               "乌骨鸡每张的番。", "What one 8p is worth under 乌骨鸡."),
    SwitchInfo("wuguji_chongfeng", "chicken_values", "乌骨冲锋鸡", "Charging black-bone chicken",
               "第一张打出的八筒也是冲锋鸡（须开乌骨鸡）。",
               "The first discarded 8p is a charging chicken too (needs 乌骨鸡 wuguji on)."),
    SwitchInfo("chongfeng_moves", "chicken_values", "冲锋鸡转移", "The claimed charging chicken moves",
               "被碰走的冲锋鸡归叫牌的碰杠者。", "A claimed first 1s is a charging chicken of a ready claimer."),
    SwitchInfo("heavy_chickens", "chicken_values", "加重鸡分", "Heavier chicken values",
               "冲锋 3/6，金幺鸡 3，金乌骨 ×3，责任鸡 2。",
               "Charging chicken 3 (gold 6), golden 1s 3, golden 8p ×3, responsibility chicken 2."),
    SwitchInfo("zhan_ji", "chicken_values", "站鸡", "Standing chickens",
               "从未亮出的固定鸡翻倍或 +1。",
               "A fixed chicken never shown (in hand, self-drawn, concealed kong) scores double or + 1.",
               (C(None, "不玩", "off"), C("double", "翻倍", "double"), C("plus1", "+1", "+1"))),
    SwitchInfo("mantang_all", "chicken_values", "四家都有鸡", "All four have chickens",
               "四家都有被付的鸡时，所有鸡分翻倍或全部抵消。",
               "When all four players have a chicken paid, every chicken payment doubles or all cancel.",
               (C(None, "不玩", "off"), C("double", "翻倍", "doubled"), C("cancel", "抵消", "cancelled"))),
    # ---- dealer
    SwitchInfo("dealer_bonus", "dealer", "连庄加番（六盘水）", "Dealer streak term (Liupanshui)",
               "庄家与闲家之间每笔牌型番加连庄数 k。",
               "Every hand-fan payment between the dealer and another player adds the streak k."),
    SwitchInfo("lianzhuang", "dealer", "连庄奖励", "Dealer's win bonus",
               "庄家胡牌时每个付款人多付连庄数 k。", "A winning dealer collects the streak k more from each payer."),
    SwitchInfo("yipao_dealer", "dealer", "一炮多响下庄", "Next dealer after several winners",
               "一炮多响后谁坐庄：贵阳规则或六盘水规则。",
               "Who deals after several winners: the Guiyang rule or the Liupanshui rule.",
               (C("gy", "贵阳", "Guiyang"), C("lps", "六盘水", "Liupanshui"))),
    SwitchInfo("huang_dealer", "dealer", "黄牌下庄", "Next dealer after a draw",
               "黄牌后谁坐庄。", "Who deals after an exhaustive draw.",
               (C("s2", "离庄最近的叫牌者", "the ready player nearest the dealer"),
                C("qq", "唯一未叫牌者", "the only player not ready"), C("stay", "庄家不动", "the dealer stays"))),
    SwitchInfo("genzhuang", "dealer", "跟庄", "Following the dealer",
               "庄家第一张被三家跟打时，庄家付每家的番，0 为不算。",
               "When all three follow the dealer's first discard he pays each this much; 0 = not played."),
    # ---- draws and penalties
    SwitchInfo("dead_wait_counts", "draw", "死叫算叫牌", "Dead waits count",
               "所等的牌四张都已见光仍算叫牌。", "A wait whose four copies are all in view still makes a hand ready."),
    SwitchInfo("pass_lock", "draw", "过水", "Passing a win",
               "过水后又点炮胡：罚赔，或不许胡。",
               "A player who passed a win and then wins on a discard before drawing: penalty, or refused.",
               (C("penalty", "包牌罚赔", "penalty"), C("forbid", "不许胡", "forbidden"))),
    # ---- stake
    SwitchInfo("base", "table", "底分", "Base stake", "每番的底分。", "Money per fan (底分)."),
    # ---- 独山 (docs/rules.md#dushan)
    SwitchInfo("settlement", "dushan", "结算方式", "Settlement",
               "贵阳捉鸡，或独山：鸡两两互减、冲锋鸡/横鸡按出牌顺序、牌型叠加。",
               "Guiyang, or 独山: chickens settled pairwise, 冲锋鸡/横鸡 from the order of discards, "
               "hand types adding up.",
               (C("guiyang", "贵阳", "Guiyang"), C("dushan", "独山", "Dushan"))),
    SwitchInfo("dushan_baojiao", "dushan", "报叫分", "Declared-ready bonus",
               "独山：报叫者胡牌另加的分（教程 13，DushanMajiang 10）。",
               "独山: what a winner who declared ready (报叫) adds (P2 13, DushanMajiang 10)."),
    SwitchInfo("dushan_longqidui", "dushan", "龙七对", "Seven pairs with a four",
               "独山：龙七对的分（教程 20，DushanMajiang 23）。", "独山: the value of 龙七对 (P2 20, DushanMajiang 23)."),
    SwitchInfo("dushan_dandiao", "dushan", "单吊", "Single wait after four melds",
               "独山：四副露单吊将牌胡的分，可与清一色叠加。",
               "独山: a win on the lone pair tile after four melds; adds to 清一色."),
    SwitchInfo("dushan_gangkai", "dushan", "杠上开花", "Win on a kong replacement",
               "独山：杠上开花代替自摸 3 的分（教程 5，DushanMajiang 3）。",
               "独山: a self-draw on a kong replacement, instead of 自摸's 3 (P2 5, DushanMajiang 3)."),
    SwitchInfo("dushan_repao", "dushan", "热炮", "Hot discard",
               "独山：热炮代替点炮 3 的分（教程 5，DushanMajiang 3）。",
               "独山: a win on the discard after a kong, instead of 点炮's 3 (P2 5, DushanMajiang 3)."),
    SwitchInfo("dushan_fanji", "dushan", "翻鸡", "Flipped chickens",
               "独山：胡牌后翻牌定鸡：上下鸡（F±1）、上鸡（F+1）或下鸡（F−1）。",
               "独山: the chickens the flipped tile F makes: F+1 and F−1 (上下鸡), F+1 or F−1.",
               (C("both", "上下鸡", "F+1 and F−1"), C("up", "上鸡", "F+1"), C("down", "下鸡", "F−1"))),
)

ROUND_FIELDS: tuple[RoundField, ...] = (
    RoundField("weekday", "int", "星期鸡：1..7，7 为星期日", "星期鸡: 1..7, 7 = Sunday",
               {"xingqi_ji": ("sunday7", "sunday_none")}, 1, 7),
    RoundField("indicators", "tile_list", "前后鸡/滚筒鸡：牌尾另翻的指示牌，按翻出顺序",
               "前后鸡/滚筒鸡: the extra indicator tiles turned from the wall's end, in order",
               {"qianhou_ji": ("last", "all")}),
    RoundField("discard_order", "discard_list", "独山：全部出牌的顺序 [座位, 牌] 或 [座位, 牌, 碰杠者]；不给则由牌河推出",
               "独山: every discard in the order made, [seat, tile] or [seat, tile, claimed_by]; without it the "
               "order is derived from the rivers", {"settlement": ("dushan",)}),
)
