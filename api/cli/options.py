"""Options shared by several ``zhuoji`` subcommands (a module of its own, so the command modules import it
instead of each other)."""

from __future__ import annotations

import argparse
import json

from pipeline.models import WIN_FLAGS, RulesIn, RulesSpec


def add_win_context_options(p: argparse.ArgumentParser, rules_help: str = "") -> None:
    """Rules preset and how the hand was won: shared by ``hand`` (text) and ``score`` (photo)."""
    p.add_argument("--rules", default="gy-normal",
                   help=rules_help or "rules preset: gy-normal, gy-reduced, liupanshui, dushan")
    for name, (term, meaning) in WIN_FLAGS.items():
        p.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=f"{term}: {meaning}")


def win_flags(args: argparse.Namespace) -> dict[str, bool]:
    """The win-context flags given on the command line, as ``analyze_hand`` / ``ScoreContext`` keywords."""
    return {name: getattr(args, name) for name in WIN_FLAGS}


def rules_option(text: str) -> RulesSpec:
    """``--rules``: a preset name, or a JSON object of a preset and switches, parsed once into the value a request's
    ``rules`` field holds. Refused as the HTTP service refuses that field (pydantic's ``ValidationError``, which
    ``api.cli.main`` prints as one line in the service's words); not JSON: a ``ValueError``."""
    value: object = text
    if text.lstrip().startswith(("{", "[", '"')):  # JSON; a preset name is a bare word
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--rules is not valid JSON: {exc}") from None
    return RulesIn.model_validate({"rules": value}).rules
