"""Who may reach a served ledger: the rules `ledger-tui serve` checks on every request.

The model is Jupyter's. A random token is made per run and printed in the URL; the first page
visit with it sets an HttpOnly, SameSite=Strict cookie, and every later request (the page, its
scripts, the websocket, downloads) must carry the token or that cookie. On top of the token:

- the `Host` header must name this server (the loopback names for a loopback bind, the bound
  address, the `--public-url` host), so a DNS-rebinding page cannot speak to it under a name
  of its own;
- a websocket's `Origin` must be the served origin: browsers send it on every websocket, and a
  page from anywhere else (another site, another local port, a `file://` page) is refused
  before any app is started.

Plain Python and no aiohttp: `serve.py` asks `Gate.admit` and turns the answer into a response.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "LOOPBACK_NAMES",
    "Admission",
    "Gate",
    "build_gate",
    "clamp_terminal_size",
    "is_loopback",
    "is_wildcard",
    "token_problem",
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_WILDCARDS = ("", "0.0.0.0", "::")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~-]+")
MIN_TOKEN_LENGTH = 8
# The largest terminal a session may ask for: a wall of 4K screens at a tiny font is ~500x200.
# Textual's memory and every frame's size grow with the cell count (50000x20000 took a session
# past 5 GB), so a `resize` is clamped before it reaches the app.
MAX_WIDTH = 500
MAX_HEIGHT = 200


def is_wildcard(host: str) -> bool:
    """Does binding `host` listen on every address of the machine?"""
    return host.strip("[]") in _WILDCARDS


def is_loopback(host: str) -> bool:
    """Does binding `host` keep the server on this machine (127.0.0.0/8, ::1, localhost)?"""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _cells(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def clamp_terminal_size(width: object, height: object) -> tuple[int, int] | None:
    """A browser's terminal size as the app may get it: whole cells, 1 to MAX_WIDTH by 1 to
    MAX_HEIGHT; None when either is not a whole number (the message is ignored)."""
    columns, rows = _cells(width), _cells(height)
    if columns is None or rows is None:
        return None
    return max(1, min(columns, MAX_WIDTH)), max(1, min(rows, MAX_HEIGHT))


def token_problem(token: str) -> str | None:
    """Why `--token TOKEN` cannot be used (one line), or None."""
    if len(token) < MIN_TOKEN_LENGTH:
        return (
            f"--token: use at least {MIN_TOKEN_LENGTH} characters "
            "(leave --token out and a random one is made)"
        )
    if not _TOKEN_SHAPE.fullmatch(token):
        return "--token: use letters, digits and . _ ~ - only (it travels in a URL and a cookie)"
    return None


def _bracketed(name: str) -> str:
    return f"[{name}]" if ":" in name else name


def _netlocs(scheme: str, name: str, port: int) -> set[str]:
    """The ways a browser writes `name:port` in a Host header: with the port, and without it
    when it is the scheme's default."""
    host = _bracketed(name.lower())
    forms = {f"{host}:{port}"}
    if _DEFAULT_PORTS.get(scheme) == port:
        forms.add(host)
    return forms


def _origin(scheme: str, name: str, port: int) -> str:
    """An origin as browsers serialise it: scheme, host, and the port unless it is the default."""
    host = _bracketed(name.lower())
    if _DEFAULT_PORTS.get(scheme) == port:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class Admission:
    """The answer for one request: refused with an HTTP status and a line for people, or let
    in (and whether to set the token cookie on the response)."""

    status: int = 200
    reason: str = ""
    set_cookie: bool = False

    @property
    def allowed(self) -> bool:
        """True when the request may reach its handler."""
        return self.status == 200


@dataclass(frozen=True)
class Gate:
    """The token, and the Host and Origin values this server answers to."""

    token: str | None  # None: `--no-token`, the owner's explicit choice
    hosts: frozenset[str]
    origins: frozenset[str]
    cookie_name: str

    def token_matches(self, offered: str | None) -> bool:
        """Is `offered` this run's token? Compared in constant time."""
        if self.token is None or not offered:
            return False
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def admit(
        self,
        *,
        host: str | None,
        origin: str | None,
        websocket: bool,
        query_token: str | None,
        cookie_token: str | None,
    ) -> Admission:
        """Check one request: its Host, its Origin when it is a websocket, then the token."""
        if (host or "").strip().lower() not in self.hosts:
            return Admission(
                403,
                "ledger-tui: this server does not answer to that Host name; "
                "open the address `ledger-tui serve` printed",
            )
        if websocket and (origin or "").strip().lower().rstrip("/") not in self.origins:
            return Admission(
                403, "ledger-tui: a websocket from another origin (another page or site) refused"
            )
        if self.token is None:
            return Admission()
        if self.token_matches(query_token):
            # The cookie lets the page's own requests in without the token in their URLs.
            return Admission(set_cookie=not websocket)
        if self.token_matches(cookie_token):
            return Admission()
        return Admission(
            403,
            "ledger-tui: this needs the token; open the full address `ledger-tui serve` "
            "printed (it ends in ?token=...)",
        )


def build_gate(host: str, port: int, public_url: str | None, token: str | None) -> Gate:
    """The gate for a server bound to `host:port`, reached at `public_url` when one is given.

    A loopback or wildcard bind answers to the loopback names (a browser on this machine);
    a specific address answers to itself; `public_url` (behind a proxy, or the name other
    machines use) adds its host and its origin. Raises ValueError on a `public_url` that is
    not http(s)://HOST[:PORT].
    """
    hosts: set[str] = set()
    origins: set[str] = set()
    names: set[str] = set()
    if is_loopback(host) or is_wildcard(host):
        names.update(LOOPBACK_NAMES)
    if not is_wildcard(host):
        names.add(host.strip("[]"))
    for name in names:
        hosts |= _netlocs("http", name, port)
        origins.add(_origin("http", name, port))
    if public_url:
        parts = urlsplit(public_url)
        expected = f"--public-url {public_url}: expected http(s)://HOST[:PORT]"
        try:
            public_port = parts.port
        except ValueError:
            raise ValueError(expected) from None
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ValueError(expected)
        scheme = parts.scheme
        chosen_port = public_port or _DEFAULT_PORTS[scheme]
        hosts |= _netlocs(scheme, parts.hostname, chosen_port)
        origins.add(_origin(scheme, parts.hostname, chosen_port))
    return Gate(
        token=token,
        hosts=frozenset(hosts),
        origins=frozenset(origins),
        # Cookies ignore ports: a name per port keeps two servers on one machine apart.
        cookie_name=f"ledger-tui-token-{port}",
    )
