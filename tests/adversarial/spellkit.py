"""The identity-spelling labs of rounds 9-11 (one person under many spellings of an address).

A module's plans are Bob's (or Alice's) ``self-*``/``a-*``/``b-*`` plans, the agent's
``two/dup-*`` plans under a ``count: 2`` rule and the controls ``plain`` and ``two/honest``.
A spelling git's porcelain would not write (a quoted local part, a comment, an invisible
character) is committed by hand: :func:`raw_commit`, :func:`approve_raw`. The first votes
are kept with :func:`save_partial` (read back by :func:`partial_votes`). A module keeps its
spellings, its ``BROKEN`` entries and its assertions.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from advkit import Lab


def tag(vid: str) -> str:
    """The ``rec`` tag of ``plans/<vid>`` (a nested slug's ``/`` as ``-``)."""
    return vid.replace("/", "-")


def marked(vids: list[str], broken: dict[str, Any]) -> list[Any]:
    """One ``pytest.param`` per variant, marked from ``broken``."""
    return [pytest.param(v, id=v, marks=broken.get(v, [])) for v in vids]


def raw_commit(lab: Lab, message: str, name: str, email: str) -> str:
    """Stage everything and commit it with an ident git's porcelain would not write."""
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    parent = lab.head()
    stamp = str(int(lab.git("log", "-1", "--format=%ct").strip()) + 1)
    body = (
        f"tree {tree}\nparent {parent}\n"
        f"author {name} <{email}> {stamp} +0000\n"
        f"committer {name} <{email}> {stamp} +0000\n\n{message}\n"
    )
    sha = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=body).strip()
    lab.git("update-ref", "HEAD", sha)
    return sha


def approve_raw(lab: Lab, slug: str, email: str, name: str = "Bob") -> str:
    """``plans/<slug>`` approved by ``name <email>``, committed by hand."""
    lab.set_status(slug, "approved")
    return raw_commit(lab, f"approve {slug}", name, email)


def save_partial(lab: Lab, slugs: list[str]) -> None:
    """The approval status each of ``slugs`` has now (after the first votes)."""
    partial = {v: (lab.plan(v).get("approval") or {}).get("status") for v in slugs}
    (lab.root / "partial.json").write_text(json.dumps(partial))


def partial_votes(lab: Lab) -> dict[str, Any]:
    return dict(json.loads((lab.root / "partial.json").read_text()))
