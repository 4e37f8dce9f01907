"""The Host allow-list: the service answers only to its own names, against DNS rebinding.

A page on ``evil.example`` whose name an attacker re-points at 127.0.0.1 (or at the table server on the home
network) would otherwise script the service from the victim's browser with the browser's blessing, since for the
browser it is the same origin. Such requests carry ``Host: evil.example``: they get 400 ``invalid_host``.

Answered: the loopback names (``localhost``, ``*.localhost``), the bound host, the machine's host name (also with
``.local``, as phones on the home network see it via mDNS), the names given by
``--allowed-host`` / ``ZHUOJI_ALLOWED_HOSTS`` (``*.example.com`` patterns allowed; ``*`` turns the check off), and
any IP address literal: rebinding needs a name, and a browser at ``http://192.168.1.20:8000/`` has that address as
its origin, so an address in ``Host`` is always the server's own as the browser sees it.

Starlette's ``TrustedHostMiddleware`` does the matching; this wrapper answers a refusal in the project's error
shape.
"""

from __future__ import annotations

import ipaddress
import socket

from starlette._utils import parse_host_header  # the parser TrustedHostMiddleware itself uses
from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.service.errors import error_response
from pipeline.settings import Settings

_PASSED = "zhuoji.host_allowed"
ANY_ADDRESS = {"0.0.0.0", "::", ""}


def own_names(settings: Settings) -> list[str]:
    """The names the service answers to: loopback, the machine's names, the bound host, the configured ones."""
    hostname = socket.gethostname().lower()
    names = ["localhost", "*.localhost", hostname, f"{hostname}.local"]  # no getfqdn(): a DNS wait at start-up
    if settings.host not in ANY_ADDRESS:
        names.append(settings.host.lower())
    names += [name.lower() for name in settings.allowed_hosts]
    return list(dict.fromkeys(names))


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class HostAllowListMiddleware:
    """400 ``invalid_host`` unless ``Host`` is an IP address or matches ``allowed_hosts``."""

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.allow_any = "*" in allowed_hosts
        self.check = TrustedHostMiddleware(self._mark, allowed_hosts=allowed_hosts, www_redirect=False)

    @staticmethod
    async def _mark(scope: Scope, _receive: Receive, _send: Send) -> None:
        scope[_PASSED] = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.allow_any:
            await self.app(scope, receive, send)
            return
        parsed = parse_host_header(Headers(scope=scope).get("host"))
        if parsed is None or not _ip_literal(parsed.host):
            await self.check(scope, receive, _discard)
            if not scope.pop(_PASSED, False):
                await error_response(400, "invalid_host", "this server does not answer to that Host name; start it "
                                     "with --allowed-host NAME to add one")(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _discard(_message: Message) -> None:  # TrustedHostMiddleware's own refusal: ours is answered instead
    pass
