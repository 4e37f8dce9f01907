"""Who may write a table: its edit key, its view id, and the links that carry them.

A table is written only by whoever holds its edit key (``Authorization: Bearer <key>``); its view id reads it and
nothing else. The key is 256 random bits and only its SHA-256 is stored: a slow password hash (bcrypt, scrypt)
guards guessable secrets against a stolen database, but a random 256-bit key cannot be guessed, so one SHA-256
is as strong and costs nothing per request. Keys are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

MAX_KEY = 200  # longer than any key made here; a longer one is not hashed, just refused
_VIEW_ID = re.compile(r"[A-Za-z0-9_-]{22}")


def _token(nbytes: int) -> str:
    """``nbytes`` random bytes, URL-safe, never beginning with "-": a command line (``--key -Ab…``) would take such
    a key for an option (a 64th of the keys lost, a fraction of a bit)."""
    while (token := secrets.token_urlsafe(nbytes)).startswith("-"):
        pass
    return token


def new_edit_key() -> str:
    """256 random bits, URL-safe (43 characters)."""
    return _token(32)


def new_view_id() -> str:
    """128 random bits, URL-safe (22 characters); unrelated to the table id, so a view link names no table."""
    return _token(16)


def is_view_id(text: object) -> bool:
    return isinstance(text, str) and _VIEW_ID.fullmatch(text) is not None


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def key_matches(given: str | None, stored_hash: str | None) -> bool:
    """Whether ``given`` is the key whose hash is ``stored_hash``; the digests are compared in constant time."""
    if not given or not stored_hash or len(given) > MAX_KEY:
        return False
    return hmac.compare_digest(key_hash(given), stored_hash)


def edit_url(table_id: str, edit_key: str, base_url: str = "") -> str:
    """The page with the table open for writing: the key in the fragment, which browsers never send to a server."""
    return f"{base_url.rstrip('/')}/#table={table_id}&key={edit_key}"


def view_url(view_id: str, base_url: str = "") -> str:
    return f"{base_url.rstrip('/')}/t/{view_id}"
