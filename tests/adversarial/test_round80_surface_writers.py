"""Round 80, agent surfaces: the writers (MCP ``submit``, the pass's freeze, ``plangate
approve``) and the readers (``hash``, ``show``) on plan folders whose checkout git would
convert, the attribute set by the AGENT in the plan's own folder (a nested
``.gitattributes``) or by the owner in ``.git/info/attributes`` or ``core.attributesFile``
(docs/operations.md, "Line ends and attributes" and "The CLI's readers do the same").

Lab (one, built once): the agent commits ``plans/<f>/.gitattributes`` for each folder
below, then submits ``plans/<f>`` through MCP (a session each); a pass freezes;
Alice runs ``plangate approve plans/<f>`` in her working tree for each; two passes; the
reviewer's ``hash`` and ``show`` of the checked-out file; ``git status``; the fresh-clone
audit. Folders (``<f>``, the attribute on ``PLAN.yml``):
- ``crlf``: ``eol=crlf``; ``auto``: ``text=auto eol=crlf``; ``u16``:
  ``working-tree-encoding=UTF-16``; ``ident``: ``ident`` (the task holds ``$Id$``, which a
  checkout expands to ``$Id: <blob> $``); ``filt``: ``filter=x`` (no driver: git passes the
  file through);
- ``drv``: ``filter=up``, a driver in ``.git/config`` whose clean turns
  ``variant`` into ``VARIANT`` (the controller runs no filter program);
- ``info``: ``working-tree-encoding=UTF-16`` from ``.git/info/attributes``;
  ``cfg``: ``eol=crlf`` from the ``core.attributesFile`` the repo's config names;
  ``plain`` (control): none.
Variants per folder:
- ``<f>:submit``: ``submit`` committed exactly the agent's text with ``git status`` clean
  after it, or refused with a code and committed nothing;
- ``<f>:hash``: ``plangate hash`` of the checked-out file prints the frozen hash;
- ``<f>:show``: the frozen blob's task is the agent's and ``plangate show`` prints it
  (``$Id$`` unexpanded for ``ident``, ``variant`` for ``drv``);
- ``<f>:approve``: Alice's ``approve`` committed and the plan ran once, or refused with a
  code and it never ran (``plain``, ``crlf``, ``u16`` must run: a writer refusing every
  attribute is caught);
- ``<f>:clean``: ``git status`` names no plan file of the folder at the end.
Plus ``audit``: the fresh-clone audit calls valid exactly the completed rows.

Seen (round 80): no break. Held: MCP ``submit`` into every folder committed exactly the
agent's text with ``git status`` clean (``ident``'s ``$Id$`` stored unexpanded); the frozen
hash is what ``plangate hash`` prints of the checked-out file, ``show`` prints the frozen
task; Alice's ``plangate approve`` committed and each plan ran once; nothing left dirty; the
audit agreed. Noted, not a break: ``drv`` (a ``filter=up`` driver in ``.git/config`` whose
clean is not the inverse of its smudge): the submit commits the agent's bytes and plangate
runs no filter (the file stays the commit's bytes, which ran), but ``git status`` lists the
file modified right after the submit, exactly as it would after a plain ``git checkout`` of
that blob: the driver's own disagreement, which docs/threat-model.md's filter row leaves on
the safe side (plangate never runs it). Also noted: several ``submit`` calls in ONE MCP
session race for main (``E_GIT`` "main kept moving while committing", remedy "submit
again", nothing committed for the refused one); the lab makes one session a submit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import PLANGATE, session
from oraclekit import mcp_payload
from test_round2_execution_kit import shared

NESTED = {
    "crlf": "eol=crlf",
    "auto": "text=auto eol=crlf",
    "u16": "working-tree-encoding=UTF-16",
    "ident": "ident",
    "filt": "filter=x",
    "drv": "filter=up",
}
FOLDERS = [*NESTED, "info", "cfg", "plain"]
MUST_RUN = ("plain", "crlf", "u16")


def _text(slug: str) -> str:
    text = plan_text(slug)
    if slug == "ident":
        text = text.replace("attack variant ident", "attack variant ident $Id$")
    return text


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    repo = lab.repo
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(
        "plans/info/PLAN.yml working-tree-encoding=UTF-16\n"
    )
    (root / "attrs").write_text("plans/cfg/PLAN.yml eol=crlf\n")
    lab.git("config", "core.attributesFile", str(root / "attrs"))
    lab.git("config", "filter.up.clean", "sed s/variant/VARIANT/")
    lab.git("config", "filter.up.smudge", "sed s/VARIANT/variant/")
    for slug, attr in NESTED.items():
        folder = repo / "plans" / slug
        folder.mkdir(parents=True)
        (folder / ".gitattributes").write_text(f"PLAN.yml {attr}\n")
    lab.commit("agent: attributes", AGENT)
    got: dict[str, Any] = {"submit": {}, "blob": {}, "dirty": {}}
    tip = lab.head()
    for slug in FOLDERS:  # one session a submit: one session's calls race for main
        reply = session(lab, [("submit", {"plan": _text(slug), "slug": slug})])[0][0]
        bad, body = mcp_payload(reply)
        got["submit"][slug] = {"error": bad, "body": json.dumps(body, ensure_ascii=False)[:800]}
        shown = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)
        got["blob"][slug] = shown == _text(slug)
        got["dirty"][slug] = lab.git("status", "--porcelain", "--", f"plans/{slug}").strip()
    got["made"] = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
    lab.run()
    cfg = str(lab.config)
    got["frozen"], got["hash"], got["show"], got["task"] = {}, {}, {}, {}
    for slug in FOLDERS:
        shown = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)
        data = load_yaml(shown) if shown else {}
        got["frozen"][slug] = str(((data or {}).get("frozen") or {}).get("hash"))
        got["task"][slug] = str(((data or {}).get("plan") or {}).get("task"))
        where = str(repo / "plans" / slug / "PLAN.yml")
        done = lab.cli("hash", "--config", cfg, where)
        got["hash"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
        done = lab.cli("show", "--config", cfg, where)
        got["show"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-3000:]
    got["approve"] = {}
    for slug in FOLDERS:
        done = subprocess.run(
            [PLANGATE, "approve", "--config", cfg, f"plans/{slug}"], cwd=repo,
            env=lab.env(ALICE), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        got["approve"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {s: len(lab.calls(s)) for s in FOLDERS}
    got["dirty-end"] = lab.git("status", "--porcelain").strip()
    blob = lab.git("show", "HEAD:plans/drv/PLAN.yml", check=False)
    got["drv-raw"] = (repo / "plans" / "drv" / "PLAN.yml").read_text() == blob
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-surface-writers", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 80: {what}")


IDS = [f"{f}:{w}" for f in FOLDERS for w in ("submit", "hash", "show", "approve", "clean")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_writers_and_readers_on_a_converting_folder(lab: Lab, vid: str) -> None:
    """The submit commits the agent's text with a clean checkout or refuses; the reviewer's
    hash and text are the controller's; Alice's approve runs the plan once or refuses."""
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    sub = got["submit"][slug]
    row = got["rows"].get(f"plans/{slug}") or {}
    if what == "submit":
        if sub["error"]:
            assert "E_" in sub["body"] and f"plans/{slug}" not in got["made"], sub
            assert slug not in MUST_RUN, sub
        elif slug == "drv":  # git's own clean filter disagrees with its smudge: see Noted
            assert got["blob"][slug], sub
        else:
            assert got["blob"][slug] and got["dirty"][slug] == "", (sub, got["dirty"][slug])
    elif sub["error"]:  # refused: no plan, nothing ran
        assert row == {} and got["calls"][slug] == 0, (row, got["calls"])
    elif what == "hash":
        frozen = got["frozen"][slug]
        assert frozen.startswith("sha256:") and frozen in got["hash"][slug], (frozen, got)
    elif what == "show":
        task = got["task"][slug]  # the frozen blob's task: what runs
        assert task == _text(slug).split('task: "', 1)[1].split('"', 1)[0], (task, slug)
        assert got["show"][slug].startswith("0 ") and task in got["show"][slug], got["show"][slug]
    elif what == "approve":
        text = got["approve"][slug]
        if text.startswith("0 "):
            assert got["calls"][slug] == 1 and row.get("status") == "completed", (text, row)
        else:
            assert "E_" in text and got["calls"][slug] == 0 and slug not in MUST_RUN, (text, row)
    elif slug == "drv":  # the file is the commit's bytes: plangate ran no filter
        assert got["drv-raw"], got["dirty-end"]
    else:
        dirty = [
            ln for ln in got["dirty-end"].splitlines() if ln.endswith(f"plans/{slug}/PLAN.yml")
        ]
        assert not dirty, got["dirty-end"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["valid"] == completed and got["audit"] == completed, (got["audit"], completed)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r80wr-", dir="/tmp/atk80b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
