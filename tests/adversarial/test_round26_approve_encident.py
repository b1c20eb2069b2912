"""Round 26, who may make a plan run: one person's identity in commits that declare their own
``encoding`` header (``git commit`` with ``i18n.commitEncoding`` writes it; here written with
``git hash-object -t commit --literally``: author and committer header bytes in that
encoding, as git stores them). ``git log`` re-encodes the whole commit (header lines too) to
UTF-8, so ``git log --format=%ae`` shows ``b\\xf3b`` (Latin-1) as ``bób`` and ISO-2022-JP's
escaped fullwidth ``ｂob`` as ``ｂob`` (NFKC: ``bob``). Round 25 made bytes that are not UTF-8
read as ``\\xNN`` text; these variants check that the same person is still one person.

Config: the bench's (approvers Alice and ``*@ops.example.com``), plus ``plans/two/**``
needs two approvals. ``Bób`` is ``bób@ops.example.com`` (an approver by the glob).

- ``lat1-writer``: Bób writes ``plans/en-lat1-writer`` in a Latin-1 commit; after the
  freeze Bób approves it in a plain (UTF-8) commit.
- ``lat1-approver``: Bób writes the plan in a plain commit and approves it in a Latin-1 one.
- ``jis-writer``: Bob writes the plan in an ISO-2022-JP commit as ``ｂob@ops.example.com``;
  Bob approves it plainly as ``bob@ops.example.com``.
- ``jis-approver``: Bob writes it plainly; approves it in an ISO-2022-JP commit as ``ｂob``.
- ``two/lat1-vote``: the agent's plan needing two; Bób votes plainly (``partial``); then Bób
  approves again in a Latin-1 commit.
- ``two/jis-vote``: the same with Bob plainly, then ``ｂob`` in ISO-2022-JP.
- ``lat1-reject``: the agent's plan; Bób rejects it in a Latin-1 commit; then Alice approves.
- ``lat1-ours``: Bób's Latin-1 rejection on a branch the agent merges ``-s ours``; then Alice
  approves on main (one push).

Asserted: nothing runs, nothing starts (``lat1-writer``/``jis-writer``/``*-approver``: refused
``E_SELF_APPROVAL``; ``two/*``: still one vote). Controls: ``ctl-lat1`` (the agent's plan,
Bób approves in a Latin-1 commit) and ``ctl-jis`` (``ｂob`` in ISO-2022-JP) run once.
``audit-spelled-*``: the fresh clone's audit with ``--controller`` spelled
``plangate <plangate@localhost>``, ``PLANGATE@LOCALHOST.`` or ``<plangate@localhost>``: asserted
either the same report as with ``plangate@localhost`` or a refusal with an ``E_`` code (exit 2),
never a traceback. ``audit``: a fresh clone's ``plangate audit --json`` lists no valid
execution of a variant.

Results: all held (``git log`` and the controller read one person: ``E_SELF_APPROVAL`` for
the writer/approver pairs, one vote for ``two/*``, Bób's Latin-1 rejections (on main and
merged ``-s ours``) veto Alice's later approval, the controls run once, the fresh-clone
audit lists the controls' runs only; a spelled ``--controller`` is refused
``E_CONFIG_INVALID``, exit 2).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
BOB_L1 = ("B\u00f3b", "b\u00f3b@ops.example.com")
BOB_FW = ("\uff22ob", "\uff42ob@ops.example.com")
SOLO = ["lat1-writer", "lat1-approver", "jis-writer", "jis-approver", "lat1-reject", "lat1-ours"]
TWO = ["lat1-vote", "jis-vote"]
CTL = ["ctl-lat1", "ctl-jis"]


def raw_commit(lab: Lab, who: tuple[str, str], encoding: str | None, message: str) -> str:
    """Commit the index as ``who``, header and message bytes in ``encoding``."""
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    parent = lab.head()
    enc = encoding or "utf-8"
    ident = f"{who[0]} <{who[1]}> {int(time.time())} +0000".encode(enc)
    body = (
        f"tree {tree}\nparent {parent}\n".encode()
        + b"author "
        + ident
        + b"\ncommitter "
        + ident
        + b"\n"
        + (f"encoding {encoding}\n".encode() if encoding else b"")
        + b"\n"
        + message.encode(enc)
    )
    path = lab.root / "commit.bin"
    path.write_bytes(body)
    sha = lab.git("hash-object", "-t", "commit", "--literally", "-w", str(path)).strip()
    lab.git("update-ref", "HEAD", sha)
    lab.git("reset", "-q")
    return sha


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    writers = {
        "lat1-writer": (BOB_L1, "ISO-8859-1"),
        "lat1-approver": (BOB_L1, None),
        "jis-writer": (BOB_FW, "ISO-2022-JP"),
        "jis-approver": (BOB, None),
    }
    for vid, (who, enc) in writers.items():
        lab.write(f"en-{vid}", plan_text(f"en-{vid}"))
        raw_commit(lab, who, enc, f"write {vid}\n")
    for vid in ["lat1-reject", "lat1-ours", *CTL]:
        lab.write(f"en-{vid}", plan_text(f"en-{vid}"))
    for vid in TWO:
        lab.write(f"two/en-{vid}", plan_text(f"two-en-{vid}"))
    lab.commit("agent adds plans", AGENT)
    shown = lab.git("log", "--format=%H %ae %ce")
    (root / "shown.txt").write_text(shown)
    lab.run()  # freeze
    time.sleep(1.05)
    approvals = {
        "lat1-writer": (BOB_L1, None),
        "lat1-approver": (BOB_L1, "ISO-8859-1"),
        "jis-writer": (BOB, None),
        "jis-approver": (BOB_FW, "ISO-2022-JP"),
        "ctl-lat1": (BOB_L1, "ISO-8859-1"),
        "ctl-jis": (BOB_FW, "ISO-2022-JP"),
    }
    lab.git("checkout", "-q", "-b", "rj-ours")
    lab.set_status("en-lat1-ours", "rejected")
    raw_commit(lab, BOB_L1, "ISO-8859-1", "reject lat1-ours\n")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge rj-ours", "rj-ours", who=AGENT)
    lab.approve("en-lat1-ours", ALICE)
    for vid, (who, enc) in approvals.items():
        lab.set_status(f"en-{vid}", "approved")
        raw_commit(lab, who, enc, f"approve {vid}\n")
    lab.set_status("en-lat1-reject", "rejected")
    raw_commit(lab, BOB_L1, "ISO-8859-1", "reject lat1-reject\n")
    lab.set_status("two/en-lat1-vote", "approved")
    raw_commit(lab, BOB_L1, None, "vote 1\n")
    lab.set_status("two/en-jis-vote", "approved")
    raw_commit(lab, BOB, None, "vote 1\n")
    lab.run()
    time.sleep(1.05)
    lab.approve("en-lat1-reject", ALICE)
    lab.set_status("two/en-lat1-vote", "approved")
    raw_commit(lab, BOB_L1, "ISO-8859-1", "vote 2\n")
    lab.set_status("two/en-jis-vote", "approved")
    raw_commit(lab, BOB_FW, "ISO-2022-JP", "vote 2\n")
    lab.run()
    lab.run()
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    res = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(res.stdout or "{}")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-encident", _build)


def _slug(vid: str) -> str:
    return f"two/en-{vid}" if vid in TWO else f"en-{vid}"


def _tag(vid: str) -> str:
    return f"two-en-{vid}" if vid in TWO else f"en-{vid}"


@pytest.mark.parametrize("vid", CTL)
def test_controls_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(_tag(vid))) == 1, lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", SOLO + TWO)
def test_one_person_never_makes_it_run(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(_slug(vid))
    assert not lab.started(_slug(vid)), lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", ["lat1-writer", "lat1-approver", "jis-writer", "jis-approver"])
def test_self_approval_refused(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" in lab.codes(_slug(vid)), lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", TWO)
def test_one_vote(lab: Lab, vid: str) -> None:
    approval = lab.plan(_slug(vid)).get("approval") or {}
    assert len(approval.get("approvals") or []) <= 1, lab.codes(_slug(vid))


def test_fresh_clone_audit_lists_only_the_controls(lab: Lab) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    runs = sorted(e["plan"] for e in report.get("executions", []) if e.get("approval_valid"))
    assert runs == ["plans/en-ctl-jis", "plans/en-ctl-lat1"], report


@pytest.mark.parametrize(
    "spelled",
    ["plangate <plangate@localhost>", "PLANGATE@LOCALHOST.", "<plangate@localhost>"],
    ids=["named", "upper-dot", "angle"],
)
def test_audit_with_a_spelled_controller_never_passes_other_history(lab: Lab, spelled: str) -> None:
    plain = lab.cli("audit", "--json", "--controller", "plangate@localhost", cwd=lab.root / "clone")
    other = lab.cli("audit", "--json", "--controller", spelled, cwd=lab.root / "clone")
    assert "Traceback" not in other.stderr, other.stderr[-2000:]
    if other.returncode == 2:
        assert "E_" in other.stderr, other.stderr[-2000:]
    else:
        assert json.loads(other.stdout) == json.loads(plain.stdout), other.stdout[-3000:]
