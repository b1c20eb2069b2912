"""The values of ``plangate.yml`` that are text with a grammar: durations, listen addresses,
branch names, identities as git stores them; the option names of each tool kind.

Pure parsers and the constants they use, shared by the models and by the endpoints that bind
what :func:`parse_listen` returns. No pydantic here.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: Methods an ``http`` tool may use (CONNECT and TRACE are not for tools).
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: Longest timeout or interval, in seconds: the daemon's waits overflow past ~292 years, and
#: nothing a controller does should wait longer than a year.
MAX_SECONDS = 365 * 86400
#: Options of each tool kind, besides those every kind takes.
KIND_OPTIONS = {
    "echo": (),
    "exec": ("argv", "env", "cwd"),
    "python": ("target", "env", "cwd"),
    "http": ("method", "url", "headers"),
}
_COMMON_OPTIONS = (
    "kind",
    "description",
    "params_schema",
    "idempotent",
    "timeout",
    "output_trust",
    "sensitive",
    "risk",
    "estimate",
)
#: Risk tiers of catalog tools and plans, lowest first (SPEC §11).
RISKS = ("low", "medium", "high")
NotifyEvent = Literal[
    "awaiting-approval", "partial", "refuse", "start", "complete", "fail", "abort"
]
#: Events ``notify:`` can post (SPEC §11).
NOTIFY_EVENTS: tuple[str, ...] = get_args(NotifyEvent)
_REQUIRED_OPTION = {"exec": "argv", "python": "target", "http": "url"}
_IDENT = r"[^\W\d]\w*"
_TARGET = re.compile(rf"{_IDENT}(?:\.{_IDENT})*:{_IDENT}(?:\.{_IDENT})*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PORT = re.compile(r"[0-9]{1,5}")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Characters git strips from the ends of a commit's name or email (its "crud"); the same set
#: as controller.git.gitrepo, which this layer cannot import.
_GIT_CRUD = frozenset(" .,:;<>\"\\'") | {chr(c) for c in range(33)}
_REF_FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | {chr(c) for c in range(32)}
LISTEN_REMEDY = (
    "write host:port with a port from 1 to 65535 (0: any free port), e.g. 127.0.0.1:8787; "
    "an IPv6 address goes in brackets ([::1]:8787); :8787 listens on all interfaces; "
    "null turns the endpoint off"
)


def parse_duration(value: str | int | float | None) -> float | None:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"12h"``, ``"7d"`` or ``"2w"``."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"not a duration: {value!r} (write e.g. 90s, 15m, 12h, 7d)")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def parse_listen(value: str) -> tuple[str, int]:
    """``host:port``, ``[v6]:port`` or ``:port`` (all interfaces) -> (host, port).

    The one parser of ``webhook.listen`` and ``metrics.listen``: the config is checked with it
    when it is read, and the endpoints bind what it returns. ValueError says what is wrong.
    """
    host, sep, port_text = value.rpartition(":")
    if not sep:
        raise ValueError("not host:port")
    if not _PORT.fullmatch(port_text) or int(port_text) > 65535:
        raise ValueError(f"port {port_text!r} is not a number from 0 to 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not _is_ip(host, version=6):
            raise ValueError(f"{host!r} in brackets is not an IPv6 address")
    elif ":" in host:
        raise ValueError("an IPv6 address must be written in brackets")
    elif host and not (_is_ip(host, version=4) or _is_hostname(host)):
        raise ValueError(f"{host!r} is neither an IP address nor a host name")
    return host, int(port_text)


def _is_ip(text: str, version: int) -> bool:
    import ipaddress

    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == version


def _is_hostname(text: str) -> bool:
    labels = text.removesuffix(".").split(".")
    if len(text) > 253 or labels[-1].isdigit():  # all-numeric: a mistyped IPv4 address
        return False
    return all(_HOST_LABEL.fullmatch(label) for label in labels)


def is_branch_name(name: str) -> bool:
    """True when git accepts ``name`` as a branch: ``git check-ref-format refs/heads/NAME``
    passes and ``git branch`` would not refuse it (a leading ``-``, ``HEAD``)."""
    if name in ("", "@", "HEAD") or name.startswith(("-", "/")) or name.endswith(("/", ".")):
        return False
    if any(s in name for s in ("..", "//", "@{")) or any(c in _REF_FORBIDDEN for c in name):
        return False
    return all(
        part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/")
    )


def _stored_as_written(text: str) -> bool:
    """True when git keeps a commit's name or email as given (it strips or refuses others)."""
    if not text or text[0] in _GIT_CRUD or text[-1] in _GIT_CRUD:
        return False
    return not (_CONTROL.search(text) or "<" in text or ">" in text)
