"""Round 73, agent-facing surfaces: round 72's claim rule ("a claim is any entry of the
folder, whatever its kind ... whenever it comes", docs/plan-format.md; the history index judges
a plan again whenever an entry claiming its file's place comes or goes) attacked with claims
that ARRIVE in ways an index reading added paths could miss: a rename or a move (git's rename
detection shows ``R``, not ``A``), a folder renamed onto a plan file's name, another plan's
file moved in, ignorable-character files, symlinks and gitlinks (the HFS+ fold) added after
the freeze, a claim in a commit dated 1990, a claim made only by an evil merge (in neither
parent), and claims committed AFTER Alice's approval but before the pass that would run it.

Lab (one, module scope; three ``run --once`` passes; a daemon at the end):
- the agent commits one plan per host ``plans/<h>/PLAN.yml`` (a ``rec`` call tagged ``<h>``),
  a file ``notes.md`` and a folder ``docs/`` beside each, a draft plan ``plans/donor``, and
  ``gone`` born beside a symlink ``plan.yml`` (held from birth); pass 1 freezes the rest;
- the agent's next commit (after the freeze): ``mv-in`` (``git mv notes.md plan.yml``),
  ``mv-dir`` (``git mv docs PLAN.YML``: a file below a folder so named, by rename),
  ``mv-plan`` (``git mv plans/donor/PLAN.yml plans/mv-plan/plan.yaml``: another plan's file
  moved in), ``mv-zw`` (``git mv notes.md Plan.Y<U+206A>ml``), ``zw-file`` (a FILE
  ``PLAN.y<U+200C>ml``), ``zw-sym`` (a symlink ``PLAN.yml<U+FEFF>``), ``zw-gl`` (a gitlink
  ``<U+200D>plan.yml``), ``rlo-dir`` (a folder ``PLAN.yml<U+202E>/``), and ``gone`` (its
  claim removed); then ``past``'s claim (a symlink ``plan.yml``) in a commit dated 1990;
  then an evil merge of a side branch by the agent whose result alone adds ``evil``'s
  symlink ``plan.yml`` and ``evil-zw``'s folder ``PLAN.y<U+200D>aml/`` (in neither parent);
  pass 2 (``gone`` frozen);
- Alice approves every host in one commit; then the agent commits ``after-sym`` (a symlink
  ``plan.yml``), ``after-zw`` (a folder ``PLAN.y<U+200C>ml/``), ``after-mv`` (``git mv
  notes.md PLAN.yaml``): claims after the approval, before the run; pass 3.
- ``ctl`` gets nothing (the control: runs once); ``gone`` is the second control (its claim
  withdrawn before the freeze: Alice's approval runs it once).
Readers (``<host>:<reader>``): ``status --json``'s row, ``show --json``, MCP ``log``, MCP
``status``, the daemon's ``/api/plan/<id>``, the ``rec`` calls (``ran``); the fresh-clone
``plangate audit --json``.
Must hold: each claimed host is held (row not completed, E_PLAN_AMBIGUOUS or E_UNSAFE_PATH on
every reader) and never runs, however the claim arrived; the controls run once and every
reader says completed by alice; the audit's valid runs are the completed rows; every row
``status --json`` lists names an entry of HEAD's tree.

Seen (round 73):
- ``{mv-in,mv-dir,mv-plan,mv-zw,zw-file,zw-sym,zw-gl,rlo-dir,past,evil,evil-zw,after-sym,
  after-zw,after-mv}:api`` (14 ids, the page class of ``test_round73_surface_pinlists.py``):
  the daemon's ``/api/plan/<id>`` of each held host says ``code: E_PLAN_AMBIGUOUS`` in its row
  but answers beside it a ``document`` (the plan file's text, read) and a ``hash``, where
  ``show`` and MCP ``log`` refuse: "neither is read or run until one is deleted". Should
  (docs/plan-format.md: ``E_PLAN_AMBIGUOUS`` "for every reader" because "a reviewer could read
  one while the other ran"): no document and no hash for a folder held ambiguous. Fixed
  (2026-11-30, r73logtwin): the page and its API take the row's ``held`` verdict and read no
  file of a held folder (``test_round73_surface_pinlists.py``'s class).
- ``rows-in-tree`` (1 id): ``gone``'s symlink ``plan.yml``, deleted by the agent before the
  approval, is still a row of ``status --json`` after pass 3 (``plans/gone/plan.yml``,
  ``E_UNSAFE_PATH: ... is a symbolic link``): a row for an entry no longer in the tree (the
  same for a folder ``PLAN.YML/`` removed with ``git rm -r``). Should: the row goes with the
  entry, as a plan's row goes with its folder (minor: nothing runs; a stale refusal only).
  Fixed (2026-11-30, r73freeze): an entry held E_UNSAFE_PATH that is removed takes its row
  when nothing of its plan is left at its path (``Lifecycle._unsafe_gone``, index version
  58). The oracle lists HEAD's tree with ``-z``: git C-quoted the names holding a hidden
  character (``"plans/zw-sym/PLAN.yml\357\273\277"``), which the rows name as they are.
Noted, not counted: ``gone`` (born beside a symlink ``plan.yml``) was frozen by pass 1 while
held: the class ``f-*:frozen`` of ``test_round73_surface_pinlists.py`` (fixed by r73freeze:
``gone`` is frozen by pass 2, once its claim went).
Held: every late claim, whatever its arrival (a rename ``R`` of a file or a folder onto a plan
file's name, another plan's file moved in, ignorable-character files, symlinks, gitlinks and
folders, a commit dated 1990, an evil merge adding the claim in neither parent, a claim
committed after Alice's approval and before the pass): the row ``E_PLAN_AMBIGUOUS``, ``show``
and MCP ``log``/``status`` refuse, never run (nor the donor, nor the claims' own plans);
``ctl`` and ``gone`` run once on every reader; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from test_round2_execution_kit import shared
from test_round72_surface_namefolds import _api

# host -> (when, how, name): when the claim comes (late: after the freeze; after: after the
# approval), and how (mv: git mv notes.md; mvdir: git mv docs; mvplan: the donor's file moved
# in; file/sym/gl/dir: a new entry)
LATE: dict[str, tuple[str, str, str]] = {
    "mv-in": ("late", "mv", "plan.yml"),
    "mv-dir": ("late", "mvdir", "PLAN.YML"),
    "mv-plan": ("late", "mvplan", "plan.yaml"),
    "mv-zw": ("late", "mv", "Plan.Y\u206aml"),
    "zw-file": ("late", "file", "PLAN.y\u200cml"),
    "zw-sym": ("late", "sym", "PLAN.yml\ufeff"),
    "zw-gl": ("late", "gl", "\u200dplan.yml"),
    "rlo-dir": ("late", "dir", "PLAN.yml\u202e"),
    "past": ("past", "sym", "plan.yml"),
    "evil": ("merge", "sym", "plan.yml"),
    "evil-zw": ("merge", "dir", "PLAN.y\u200daml"),
    "after-sym": ("after", "sym", "plan.yml"),
    "after-zw": ("after", "dir", "PLAN.y\u200cml"),
    "after-mv": ("after", "mv", "PLAN.yaml"),
}
CONTROLS = ("ctl", "gone")
HOSTS = [*CONTROLS, *LATE]


def _claim(lab: Lab, host: str, how: str, name: str, gl_commit: str) -> None:
    folder = lab.repo / "plans" / host
    if how == "mv":
        lab.git("mv", f"plans/{host}/notes.md", f"plans/{host}/{name}")
    elif how == "mvdir":
        lab.git("mv", f"plans/{host}/docs", f"plans/{host}/{name}")
    elif how == "mvplan":
        lab.git("mv", "plans/donor/PLAN.yml", f"plans/{host}/{name}")
    elif how == "file":
        (folder / name).write_text(plan_text(f"{host}-in", "approved"))
    elif how == "sym":
        (folder / name).symlink_to("../ctl/PLAN.yml")
    elif how == "dir":
        lab.write(f"{host}/{name}", plan_text(f"{host}-in", "approved"))
    else:  # an uninitialised submodule
        lab.git("update-index", "--add", "--cacheinfo", f"160000,{gl_commit},plans/{host}/{name}")
        (folder / name).mkdir()


def _claims(lab: Lab, when: str, message: str) -> None:
    gl_commit = lab.head()
    for host, (w, how, name) in LATE.items():
        if w == when:
            _claim(lab, host, how, name, gl_commit)
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", message, who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    for host in HOSTS:
        lab.write(host, plan_text(host))
        lab.write(host, "notes\n", "notes.md")
        lab.write(f"{host}/docs", "docs\n", "a.md")
    lab.write("donor", plan_text("donor", "draft"))
    (lab.repo / "plans" / "gone" / "plan.yml").symlink_to("../ctl/PLAN.yml")
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    (lab.repo / "plans" / "gone" / "plan.yml").unlink()
    _claims(lab, "late", "agent: notes")
    lab.git_date = "@631152000 +0000"  # 1990-01-01
    _claims(lab, "past", "agent: an old note")
    lab.git_date = None
    lab.git("checkout", "-q", "-b", "side")
    lab.write("ctl", "side\n", "side.md")
    lab.commit("agent: side", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "side", who=AGENT)
    _claims(lab, "merge", "merge side")
    lab.run()
    time.sleep(1.1)
    for host in HOSTS:
        lab.set_status(host, "approved")
    lab.commit("alice: approve", ALICE)
    _claims(lab, "after", "agent: after the approval")
    lab.run()
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in [*HOSTS, "donor", *[f"{h}-in" for h in LATE]]}
    got["show"] = {}
    for h in HOSTS:
        shown = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / h))
        got["show"][h] = f"{shown.returncode} {shown.stdout}{shown.stderr}"
    replies = session(
        lab,
        [("log", {"path": f"plans/{h}"}) for h in HOSTS]
        + [("status", {"path": f"plans/{h}"}) for h in HOSTS],
    )[0]
    got["mcp-log"] = dict(zip(HOSTS, replies[: len(HOSTS)], strict=True))
    got["mcp-status"] = dict(zip(HOSTS, replies[len(HOSTS) :], strict=True))
    got["api"] = _api(lab, HOSTS)
    # -z: a name with a hidden character is listed as it is, not C-quoted (core.quotePath)
    got["tree"] = lab.git("ls-tree", "-r", "-t", "-z", "--name-only", "HEAD", "plans").split("\0")
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-surface-lateclaims", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 73: {what}")


READERS = ("row", "show", "mcp-log", "mcp-status", "api", "ran")
IDS = [f"{h}:{r}" for h in HOSTS for r in READERS]
HELD = ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")


def _text(reply: dict[str, Any] | None) -> tuple[bool, str]:
    assert reply is not None
    result = reply.get("result") or {}
    text = json.dumps(reply, ensure_ascii=False)
    return bool(result.get("isError")), text


@pytest.mark.parametrize("vid", cases(IDS, IDS, {}))
def test_a_claim_however_it_arrives_holds_the_plan(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    honest = host in CONTROLS
    if reader == "row":
        row = got["rows"][f"plans/{host}"]
        if honest:
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        else:
            assert row["status"] != "completed", row
            assert any(c in json.dumps(row) for c in HELD), row
    elif reader == "show":
        text = got["show"][host]
        if honest:
            assert text.startswith("0 ") and "completed" in text, text[:800]
        else:
            assert not text.startswith("0 ") and any(c in text for c in HELD), text[:800]
    elif reader in ("mcp-log", "mcp-status"):
        error, text = _text(got[reader][host])
        if honest:
            assert not error and "completed" in text, text[:800]
        else:
            assert "completed" not in text or error, text[:800]
            assert any(c in text for c in HELD), text[:800]
    elif reader == "api":
        text = got["api"][host]
        if honest:
            assert text.startswith("200 ") and "completed" in text, text[:800]
        else:
            assert any(c in text for c in HELD), text[:800]
            assert '"status": "completed"' not in text, text[:800]
            answer = json.loads(text[4:])
            assert not answer.get("document") and not answer.get("hash"), text[:800]
    else:
        assert got["calls"][host] == (1 if honest else 0), got["calls"]
        if not honest:
            assert got["calls"][f"{host}-in"] == 0, got["calls"]
            assert got["calls"]["donor"] == 0, got["calls"]


@pytest.mark.parametrize("vid", cases(["rows-in-tree"], ["rows-in-tree"], {}))  # r73freeze
def test_every_status_row_names_an_entry_of_the_tree(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    gone = [p for p in got["rows"] if p not in got["tree"]]
    assert not gone, [(p, got["rows"][p]["reason"]) for p in gone]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert "plans/ctl" in completed and "plans/gone" in completed, completed


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r73lc-"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
