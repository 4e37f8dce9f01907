"""Options shared by several ``zhuoji`` subcommands (a module of its own, so the command modules import it
instead of each other), and the parser class of every subcommand."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.models import RulesSpec


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser that adds some options when the subcommand is used (its arguments parsed or its help
    printed) rather than when ``zhuoji`` builds every subcommand's parser: options defined by the rules engine (the
    win-context flags) then cost nothing to a command without them (``zhuoji detect`` loads no engine)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._when_used: list[Callable[[argparse.ArgumentParser], None]] = []

    def add_when_used(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        self._when_used.append(add)

    def _add_options(self) -> None:
        while self._when_used:
            self._when_used.pop(0)(self)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self._add_options()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._add_options()
        return super().format_help()


def add_win_context_options(p: CommandParser, rules_help: str = "") -> None:
    """Rules preset and how the hand was won: shared by ``hand`` (text) and ``score`` (photo)."""
    p.add_argument("--rules", default="gy-normal",
                   help=rules_help or "rules preset: gy-normal, gy-reduced, liupanshui, dushan")
    p.add_when_used(_add_win_flags)


def _add_win_flags(p: argparse.ArgumentParser) -> None:
    from pipeline.models import WIN_FLAGS

    for name, (term, meaning) in WIN_FLAGS.items():
        p.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=f"{term}: {meaning}")


def win_flags(args: argparse.Namespace) -> dict[str, bool]:
    """The win-context flags given on the command line, as ``analyze_hand`` / ``ScoreContext`` keywords."""
    from pipeline.models import WIN_FLAGS

    return {name: getattr(args, name) for name in WIN_FLAGS}


def rules_option(text: str) -> RulesSpec:
    """``--rules``: a preset name, or a JSON object of a preset and switches, parsed once into the value a request's
    ``rules`` field holds. Refused as the HTTP service refuses that field (pydantic's ``ValidationError``, which
    ``api.cli.main`` prints as one line in the service's words); not JSON: a ``ValueError``."""
    from pipeline.models import RulesIn

    value: object = text
    if text.lstrip().startswith(("{", "[", '"')):  # JSON; a preset name is a bare word
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--rules is not valid JSON: {exc}") from None
    return RulesIn.model_validate({"rules": value}).rules
