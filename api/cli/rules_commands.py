"""``zhuoji rules``: the presets, every rules switch and the example house profiles (the body of GET /v1/rules,
from the same pipeline function)."""

from __future__ import annotations

import argparse
import json


def add_rules(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="the rules presets, every house-rules switch and example profiles",
                       description="The presets, every rules switch (grouped, with its values and one line each) "
                                   "and example regional house profiles; --json prints the GET /v1/rules body. "
                                   "Set a switch with --rules '{\"preset\": \"gy-normal\", \"shangxia_ji\": true}'.")
    p.add_argument("--json", action="store_true", help="machine-readable output (the GET /v1/rules body)")
    p.set_defaults(func=run_rules)


def _value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def run_rules(args: argparse.Namespace) -> int:
    from pipeline.rules import catalogue

    cat = catalogue()
    if args.json:
        print(json.dumps(cat.model_dump(mode="json"), ensure_ascii=False))
        return 0
    lines = ["Presets:"]
    defaults = {s.name: s.default for s in cat.switches}
    for preset in cat.presets:
        changed = {k: v for k, v in preset.rules.items() if v != defaults[k]}
        differs = ", ".join(f"{k}={_value(v)}" for k, v in changed.items()) or "the defaults below"
        lines.append(f"  {preset.name}  {preset.title_zh} ({preset.title_en}): {differs}")
    for group in cat.groups:
        lines += ["", f"{group.title_zh} ({group.title_en}):"]
        for s in (s for s in cat.switches if s.group == group.name):
            values = " | ".join(_value(c.value) for c in s.choices) if s.choices else s.kind
            lines.append(f"  {s.name} = {_value(s.default)}  [{values}]  {s.title_zh} ({s.title_en}): "
                         f"{s.explanation_en}")
    lines += ["", "Example house profiles (use the rules object with --rules or a table):"]
    for profile in cat.profiles:
        lines.append(f"  {profile.name}  {profile.title_zh} ({profile.title_en}): {_value(profile.rules)}")
        lines.append(f"      source: {profile.source}")
    lines += ["", "Round fields some switches need:"]
    lines += [f"  {f.name}: {f.explanation_en}" for f in cat.round_fields]
    print("\n".join(lines))
    return 0
