"""Plan- and git-supplied text made safe to show a person, in a terminal or in markdown.

A plan's author (often an agent) writes the plan's name, task, ``why``, params and folder
name, and anyone can write commit subjects, trailers and git identities. None of it may
act on the reader's terminal or renderer: ANSI escape sequences, carriage returns,
zero-width and bidi-override characters (Trojan Source) could otherwise hide, rewrite or
reorder what an approver reads. Every human-facing output (``show``, ``status``, ``audit``,
EXECUTION_LOG.md) passes such text through :func:`visible`; ``--json`` outputs need not,
JSON's own escaping already keeps them inert.
"""

from __future__ import annotations

import re

# C0/C1 controls, and format characters that hide text or reverse its direction (Trojan Source)
HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def visible(text: str) -> str:
    """``text`` with every hidden character shown as its Python escape (``\\x1b``, ``\\u202e``)."""
    return HIDDEN.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def visible_json(text: str) -> str:
    """JSON text as ``json.dumps(..., ensure_ascii=False)`` wrote it, hidden characters as
    ``\\uXXXX`` escapes: still valid JSON that decodes to the same value.

    ``json.dumps`` already escapes C0 controls inside strings, so a raw newline can only be
    the indentation's; it is kept.
    """
    return HIDDEN.sub(
        lambda m: m.group(0) if m.group(0) == "\n" else f"\\u{ord(m.group(0)):04x}", text
    )
