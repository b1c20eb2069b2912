"""Round 83 (surface, atk83b): the config spellings that name ``core.attributesFile``.

The CLI's readers find attributes "without git" (docs/operations.md, "Line ends and
attributes": "Where no attribute can apply they run no git at all
(`controller/git/attrfiles.py` looks for ... a config naming `core.attributesFile` or an
include)"), so a config git reads one way and that search another makes the CLI hash the raw
bytes while ``git add`` stored them converted. Lab (one, built once; the helpers of
``test_round83_surface_attrplaces.py``): per spelling a small repository whose ONLY
attribute source is ``core.attributesFile`` (``working-tree-encoding=ISO-8859-1`` for
``plans/<s>*``) named in ``.git/config`` spelled so; the agent commits ``plans/<s>`` and the
CLI-frozen ``plans/<s>f``; one ``run --once``. Spellings:
- ``lower``/``upper``: ``[core] attributesfile``, ``[CORE] ATTRIBUTESFILE``;
- ``quoted``: the value in double quotes; ``cont``: the value split by a backslash-newline;
  ``comment``: a trailing ``; comment``; ``nospace``: ``attributesFile=<path>``;
- ``bom``: ``.git/config`` starting with a UTF-8 byte order mark; ``crlf``: CR LF lines;
- ``increl``: ``include.path`` relative to ``.git/``; ``incnest``: an include naming
  another include; ``inctilde``: ``include.path = ~/inc.cfg``;
- ``iifcase``: ``includeIf "gitdir/i:<REPO IN UPPER CASE>/"``; ``iifglob``:
  ``includeIf "gitdir:**/<s>/repo/"``; ``iifhas``: ``includeIf
  "hasconfig:remote.*.url:https://forge.example/**"`` with such a remote.
Variants as in the sister module: ``<s>:{hash,show,validate,freeze,clean}``, plus the
premise (``git add`` applied each spelling).

Seen (round 83): nothing broke here (see the sister module for the one class found).
Held: every spelling above: the CLI printed the frozen hash and ``Ã©``, its ``freeze`` was
the hash the controller kept, ``git status`` clean.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases
from test_round2_execution_kit import shared
from test_round83_surface_attrplaces import ENC, _hash_in, _one

SPELLS = [
    "lower", "upper", "quoted", "cont", "comment", "nospace", "bom", "crlf",
    "increl", "incnest", "inctilde", "iifcase", "iifglob", "iifhas",
]  # fmt: skip


def _spell(lab: Lab, spell: str, root: Path) -> list[str]:
    repo, sub = lab.repo, lab.root
    attrs = sub / "attrs"
    attrs.write_text(f"plans/{spell}*/** {ENC}\n")
    config = repo / ".git" / "config"
    base = config.read_bytes()
    inc = f"[core]\n\tattributesFile = {attrs}\n"
    add = {
        "lower": f"[core]\n\tattributesfile = {attrs}\n",
        "upper": f"[CORE]\n\tATTRIBUTESFILE = {attrs}\n",
        "quoted": f'[core]\n\tattributesFile = "{attrs}"\n',
        "cont": f"[core]\n\tattributesFile = {str(attrs)[:6]}\\\n{str(attrs)[6:]}\n",
        "comment": f"[core]\n\tattributesFile = {attrs} ; the owner's\n",
        "nospace": f"[core]\n\tattributesFile={attrs}\n",
        "bom": None,
        "crlf": None,
    }
    if spell == "bom":
        config.write_bytes(b"\xef\xbb\xbf" + base + inc.encode())
    elif spell == "crlf":
        text = (base.decode() + inc).replace("\n", "\r\n")
        config.write_bytes(text.encode())
    elif spell in add:
        config.write_bytes(base + str(add[spell]).encode())
    elif spell == "increl":
        (repo / ".git" / "inc.cfg").write_text(inc)
        lab.git("config", "include.path", "inc.cfg")
    elif spell == "incnest":
        (sub / "inner.cfg").write_text(inc)
        (sub / "outer.cfg").write_text(f"[include]\n\tpath = {sub / 'inner.cfg'}\n")
        lab.git("config", "include.path", str(sub / "outer.cfg"))
    elif spell == "inctilde":
        (lab.home / "inc.cfg").write_text(inc)
        lab.git("config", "include.path", "~/inc.cfg")
    elif spell == "iifcase":
        (sub / "inc.cfg").write_text(inc)
        lab.git("config", f"includeIf.gitdir/i:{str(repo).upper()}/.path", str(sub / "inc.cfg"))
    elif spell == "iifglob":
        (sub / "inc.cfg").write_text(inc)
        lab.git("config", f"includeIf.gitdir:**/{spell}/repo/.path", str(sub / "inc.cfg"))
    elif spell == "iifhas":
        (sub / "inc.cfg").write_text(inc)
        lab.git("remote", "add", "origin", "https://forge.example/team/plans.git")
        key = "includeIf.hasconfig:remote.*.url:https://forge.example/**.path"
        lab.git("config", key, str(sub / "inc.cfg"))
    return [spell, f"{spell}f"]


def _lab(root: Path) -> Lab:
    lab = Lab.__new__(Lab)
    lab.root = root
    lab.got = {s: _one(root, s, _spell) for s in SPELLS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-surface-attrconfig", _lab)


WHATS = ("hash", "show", "validate", "freeze", "clean")
IDS = [f"{s}:{w}" for s in SPELLS for w in WHATS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_the_cli_reads_the_config_as_git_does(lab: Lab, vid: str) -> None:
    """However the config names ``core.attributesFile``, the CLI's hash, text and freeze
    are the controller's, and ``git status`` stays clean."""
    spell, what = vid.split(":")
    got = lab.got[spell]  # type: ignore[attr-defined]
    frozen = got["frozen"][spell]
    assert frozen.startswith("sha256:"), got["frozen"]
    if what == "hash":
        text = got["hash"][spell]
        assert text.startswith("0 ") and _hash_in(text) == frozen, (frozen, text)
    elif what == "show":
        text = got["show"][spell]
        assert text.startswith("0 ") and f"variant {spell} Ã©" in text, text[-1500:]
        assert frozen in text and "STALE" not in text, text[-1500:]
    elif what == "validate":
        text = got["validate"][spell]
        assert text.startswith("0 ") and _hash_in(text) == frozen, (frozen, text)
    elif what == "freeze":
        text, held = got["cli-freeze"], got["frozen"][f"{spell}f"]
        assert text.startswith("0 ") and _hash_in(text) == held, (held, text)
        row = got["rows"].get(f"plans/{spell}f") or {}
        assert row.get("status") == "pending_approval" and row.get("hash") == held, row
    else:
        assert got["dirty"] == "", got["dirty"]


def test_stored_text_is_the_attribute_s(lab: Lab) -> None:
    """The premise: ``git add`` applied the attribute for every spelling (``Ã©`` stored)."""
    got = lab.got  # type: ignore[attr-defined]
    stored = {s: got[s]["stored"] for s in SPELLS}
    assert all(all(v.values()) for v in stored.values()), stored


if __name__ == "__main__":
    import json
    import sys
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r83ac-", dir="/tmp/atk83b"))
    got = {s: _one(out, s, _spell) for s in (sys.argv[1:] or SPELLS)}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
