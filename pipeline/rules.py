"""The rules catalogue: presets, every rules switch, example house profiles and the round fields they need.

``catalogue()`` is the one answer of ``GET /v1/rules`` and ``zhuoji rules --json``, so the page renders its
house-rules panel from data and keeps no copy of the rules. Nothing is scored here: the switches are the fields
of ``scoring.rules.Rules``, described by ``scoring.catalogue``; the profiles are ``scoring.profiles``.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any, Literal

from pydantic import Field

from pipeline.model_base import OutModel
from pipeline.models import RuleValue
from scoring.catalogue import GROUPS, ROUND_FIELDS, SWITCHES, SwitchInfo
from scoring.profiles import PROFILES
from scoring.rules import CHOICES, PRESETS, DouValues, Rules

PRESET_TITLES = {"gy-normal": ("贵阳 正常番", "Guiyang, normal fan"),
                 "gy-reduced": ("贵阳 缩小番", "Guiyang, reduced fan"),
                 "liupanshui": ("六盘水", "Liupanshui"),
                 "dushan": ("独山", "Dushan")}
DOC = "docs/rules.md"


class PresetOut(OutModel):
    name: str
    title_zh: str
    title_en: str
    rules: dict[str, RuleValue] = Field(description="every switch and its value in this preset")


class GroupOut(OutModel):
    name: str
    title_zh: str
    title_en: str


class ChoiceOut(OutModel):
    value: str | None = Field(description="null: the switch is off")
    label_zh: str
    label_en: str


class SwitchOut(OutModel):
    name: str
    group: str
    title_zh: str
    title_en: str
    explanation_zh: str
    explanation_en: str
    kind: Literal["bool", "choice", "int", "int_list", "int_map"]
    choices: list[ChoiceOut] | None = Field(None, description="kind choice only")
    default: RuleValue = Field(description="the value in gy-normal")
    doc: str = Field(description="its section of the rules reference")


class ExampleProfileOut(OutModel):
    name: str
    title_zh: str
    title_en: str
    source: str = Field(description="where its settings come from")
    rules: dict[str, RuleValue] = Field(description="a rules object any endpoint accepts: {preset, <switch>: value}")


class RoundFieldOut(OutModel):
    name: str
    kind: str
    min: int | None = None
    max: int | None = None
    explanation_zh: str
    explanation_en: str
    needed_when: dict[str, list[str]] = Field(description="switch → the values under which the round needs it")


class RulesCatalogue(OutModel):
    presets: list[PresetOut]
    groups: list[GroupOut]
    switches: list[SwitchOut]
    profiles: list[ExampleProfileOut]
    round_fields: list[RoundFieldOut]


def switch_values(rules: Rules) -> dict[str, Any]:
    """Every switch of a rule set in its JSON form (``dou_values`` as ``{"concealed", "added", "exposed"}``)."""
    values = rules.to_dict()
    values.pop("preset")
    return values


def _kind(info: SwitchInfo) -> Literal["bool", "choice", "int", "int_map"]:
    default = getattr(PRESETS["gy-normal"], info.name)
    if info.name in CHOICES:
        return "choice"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, DouValues):
        return "int_map"
    return "int"


def _switch(info: SwitchInfo) -> SwitchOut:
    kind = _kind(info)
    default = switch_values(PRESETS["gy-normal"])[info.name]
    choices = [ChoiceOut(**dataclasses.asdict(c)) for c in info.choices] if kind == "choice" else None
    return SwitchOut(name=info.name, group=info.group, title_zh=info.title_zh, title_en=info.title_en,
                     explanation_zh=info.explanation_zh, explanation_en=info.explanation_en, kind=kind,
                     choices=choices, default=default, doc=f"{DOC}#{info.name}")


@cache
def catalogue() -> RulesCatalogue:
    """The presets, every switch, the example house profiles and the round fields (the same every call)."""
    presets = [PresetOut(name=name, title_zh=PRESET_TITLES[name][0], title_en=PRESET_TITLES[name][1],
                         rules=switch_values(rules)) for name, rules in PRESETS.items()]
    return RulesCatalogue(
        presets=presets,
        groups=[GroupOut(**dataclasses.asdict(g)) for g in GROUPS],
        switches=[_switch(s) for s in SWITCHES],
        profiles=[ExampleProfileOut(**dataclasses.asdict(p)) for p in PROFILES],
        round_fields=[RoundFieldOut(name=f.name, kind=f.kind, min=f.minimum, max=f.maximum,
                                    explanation_zh=f.explanation_zh, explanation_en=f.explanation_en,
                                    needed_when={k: list(v) for k, v in f.needed_when.items()})
                      for f in ROUND_FIELDS])
