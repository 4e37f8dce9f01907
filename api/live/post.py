"""Live mode's proposed rounds sent to the table screen: ``zhuoji live --table --server URL``.

:class:`TableScreen` names the service and the table (``--server``: the service's address, or the table's edit link
``http://host:8000/#table=ID&key=KEY`` as the phone shows it; ``--table-id`` and ``--key`` / ``ZHUOJI_TABLE_KEY``
give or replace its parts). :meth:`TableScreen.check` asks the service before any model loads: a server that does
not answer, a table it does not have, a key it refuses are one line each. Each proposal then goes to
``POST /v1/tables/{id}/proposal`` (the read-table answer and the frame, :class:`pipeline.proposal.ProposalIn`).

Plain ``urllib``: two requests per round need no HTTP library.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np

from pipeline.live_table import Proposal
from pipeline.proposal import ProposalIn, proposal_body

TIMEOUT_S = 15.0  # per request: a service on the table's network answers in milliseconds
KEY_ENV = "ZHUOJI_TABLE_KEY"  # keeps the edit key out of the process list


@dataclass(frozen=True)
class TableScreen:
    """Where proposals go: the service at ``base`` (scheme://host[:port][/prefix]), table ``table_id``, written with
    its edit ``key``."""

    base: str
    table_id: str
    key: str

    @classmethod
    def parse(cls, server: str, table_id: str | None = None, key: str | None = None) -> TableScreen:
        """From ``--server`` (an address or an edit link), ``--table-id`` and ``--key`` (else ``ZHUOJI_TABLE_KEY``,
        else the link's key); ValueError for what is missing or no http(s) address."""
        try:
            parts = urlsplit(server.strip())
            parts.port  # noqa: B018 - a port that is no number raises here
        except ValueError:
            raise ValueError(f"--server {server!r} is no address: give http://host:port (or the table's edit "
                             "link)") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--server {server!r} is no address: give http://host:port (or the table's edit link)")
        linked = {k: v[0] for k, v in parse_qs(parts.fragment).items()}
        table_id = table_id or linked.get("table")
        key = key or os.environ.get(KEY_ENV) or linked.get("key")
        if not table_id:
            raise ValueError("which table? --table-id ID, or the table's edit link as --server")
        if not key:
            raise ValueError(f"the table's edit key is needed to post to it: --key KEY, {KEY_ENV}, or the table's "
                             "edit link as --server")
        return cls(f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}", table_id, key)

    @property
    def table_url(self) -> str:
        return f"{self.base}/v1/tables/{quote(self.table_id, safe='')}"

    @property
    def page(self) -> str:
        """The table screen (without the key)."""
        return f"{self.base}/#table={quote(self.table_id, safe='')}"

    def _request(self, method: str, url: str, body: bytes | None = None) -> tuple[int, dict]:
        """(status, JSON answer) of one request; ValueError when the service cannot be reached or does not
        answer as this service does."""
        headers = {"Accept": "application/json"}
        if method != "GET":
            headers |= {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:  # noqa: S310 - http(s) only (parse)
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ValueError(f"cannot reach the service at {self.base}: {reason}") from None
        try:
            data = json.loads(raw) if raw else {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ValueError(f"{self.base} did not answer as a zhuoji service (HTTP {status})") from None
        return status, data if isinstance(data, dict) else {}

    @staticmethod
    def _message(data: dict) -> str:
        error = data.get("error")
        return str(error.get("message")) if isinstance(error, dict) else "no reason given"

    def check(self) -> None:
        """The service answers, has the table and takes the key; else ValueError (one line). The key is tried on
        an empty proposal: the service checks a key before the body, so the right key gets 422 and nothing is
        written."""
        status, data = self._request("GET", self.table_url)
        if status == 404:
            raise ValueError(f"the service at {self.base} has no table {self.table_id!r}")
        if status != 200:
            raise ValueError(f"the service at {self.base} answered {status} for the table: {self._message(data)}")
        status, data = self._request("POST", f"{self.table_url}/proposal", b"{}")
        if status != 422:  # 401 key_required, 403 wrong_key, 404 an older service without proposals, 409 finished
            raise ValueError(f"the service refused to take proposals for table {self.table_id} ({status}): "
                             f"{self._message(data)}")

    def send(self, body: ProposalIn) -> str:
        """Post one proposal; its id on the service. ValueError (one line) when it is not taken."""
        status, data = self._request("POST", f"{self.table_url}/proposal", body.model_dump_json().encode())
        if status != 201:
            raise ValueError(f"the service did not take the proposal ({status}): {self._message(data)}")
        return str(data.get("id", ""))


class ProposalPoster:
    """``live_table``'s ``on_proposal`` for ``--server``: posts each round with its frame, and says on stderr where it
    went, or in one line why it did not (the watch goes on: the next round may get through)."""

    def __init__(self, screen: TableScreen) -> None:
        self.screen = screen
        self.posted = self.failed = 0

    def __call__(self, proposal: Proposal, frame: np.ndarray) -> None:
        try:
            self.screen.send(proposal_body(proposal.reading, frame))
        except ValueError as exc:
            self.failed += 1
            print(f"zhuoji live: the round of frame {proposal.frame} did not reach the table screen: {exc}",
                  file=sys.stderr)
            return
        self.posted += 1
        print(f"zhuoji live: round of frame {proposal.frame} proposed on the table screen {self.screen.page}",
              file=sys.stderr)
