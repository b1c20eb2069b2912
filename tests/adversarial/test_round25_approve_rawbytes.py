"""Round 25, who may make a plan run: approval commits whose trailers or identities hold bytes
that are not UTF-8. Every odd commit but ``mal-git``'s is written with ``git hash-object -t commit
--literally`` (raw header and message bytes; any pusher can push such an object).

Promise: bad input gets an ``E_...`` code and never stalls the plan for good; the
controller's own record stays readable, and the fresh-clone audit agrees with it. Config:
the bench's. The agent writes ``plans/rb-<vid>``; the controller freezes it; a second later:

- ``pa-ff``: Alice approves with a ``Plan-Approved: plans/rb-pa-ff \\xff`` trailer (a hash that
  is one byte 0xFF).
- ``mal-pa``: Mallory (no approver) sets ``approved`` with the same kind of trailer; after the
  controller's pass Alice approves the plan as usual.
- ``mal-git``: as ``mal-pa`` with plain ``git commit -F msg`` (git re-reads the byte as
  Latin-1 and stores ``ÿ`` in UTF-8: a control of the path plain git takes).
- ``mal-fffe``: Mallory's author email holds U+FFFE (valid UTF-8, a noncharacter YAML does
  not allow unescaped); then Alice approves as usual.
- ``mal-email``: Mallory's approval commit's author email is ``mallory\\xff@example.com``
  (written with ``git hash-object --literally``); then Alice approves as usual.
- ``plan-hash``: Alice approves with ``Plan: plans/rb-plan-hash`` and ``Plan-Hash: \\xff``.
- ``co-ff``: Alice approves; the message has ``Co-authored-by: \\xff <x\\xff@ops.example.com>``.
- ``glob-ff``: the agent's plan is approved by ``b\\xffob@ops.example.com`` (the controller
  reads it as Bob, an approver): it must run once.
- ``self-ff``: Bob writes the plan as ``bob@ops.example.com`` and approves it as
  ``b\\xffob@ops.example.com``: nothing may start.
- ``quorum-ff``: the plan needs two approvals; ``b\\xffob@ops.example.com`` gives the first
  (the controller's ``partial`` commit records the vote).
- ``gate-ff``: Alice approves a gated plan, action 1 runs, it pauses; ``b\\xffob@`` approves
  the gate: the gated action must run once.
- ``mal-nul``/``mal-nel``/``mal-esc``: as ``mal-pa`` with a trailer value holding NUL, NEL
  and U+2028, or an ANSI escape (valid UTF-8 the YAML writer has to escape).
- ``ctl``: Alice approves plainly (control: must run once, whatever the others do).

Asserted per variant: after the controller's passes the plan's PLAN.yml at HEAD still parses
(``plangate status`` does not call it ``unreadable`` / ``E_YAML_PARSE``); ``mal-*`` run exactly
once (on Alice's later approval); the others never run on the odd commit unless it is a
valid approval by Alice; and a fresh clone's ``plangate audit --json`` flags none of the
controller's own commits ``controller-unexplained``.

Results: BROKE (strict xfails) for every variant whose odd bytes reach a text the controller
writes into the approval block (``pa-ff``, ``mal-pa``, ``plan-hash``: the refusal message
quotes the trailer's value; ``mal-email``, ``glob-ff``, ``self-ff``, ``quorum-ff``: ``by``
and the message quote the author; ``quorum-ff`` in the ``partial`` block's ``approvals``):
the controller commits e.g. ``message: "... \\udcff ..."`` (a lone surrogate
escape) and the file no longer parses (``E_YAML_PARSE``, status ``unreadable``) for good.
``mal-pa``/``mal-email``: Mallory, no approver, so stalls the plan: Alice's later ordinary
approval never runs it. ``glob-ff``/``gate-ff``: the controller commits ``start`` on Bob's
approval, the plan says ``executing`` and never runs (the gated action never runs). The
fresh-clone audit flags each of those controller commits ``controller-unexplained``. Held:
``self-ff`` is refused ``E_SELF_APPROVAL`` (no start); ``co-ff``, ``mal-fffe``, ``mal-git``,
``mal-nul``, ``mal-nel``, ``mal-esc`` and ``ctl`` behave.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = [
    "pa-ff",
    "mal-pa",
    "mal-git",
    "mal-email",
    "mal-fffe",
    "plan-hash",
    "co-ff",
    "glob-ff",
    "self-ff",
    "quorum-ff",
    "gate-ff",
    "mal-nul",
    "mal-nel",
    "mal-esc",
    "ctl",
]
MAL = {"mal-pa", "mal-git", "mal-email", "mal-fffe", "mal-nul", "mal-nel", "mal-esc"}
#: valid UTF-8 (or NUL) the YAML writer must escape: Plan-Approved values of Mallory's commits
ODD_TEXT = {"mal-nul": b"a\x00b", "mal-nel": "a\u0085b\u2028c".encode(), "mal-esc": b"\x1b[31mX"}


def _commit_bytes(lab: Lab, message: bytes, author: bytes) -> str:
    """Commit the index as ``author`` (raw header bytes) with a raw ``message``."""
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    now = str(int(time.time())).encode()
    who = author + b" " + now + b" +0000"
    body = (
        b"tree "
        + tree.encode()
        + b"\nparent "
        + lab.head().encode()
        + b"\nauthor "
        + who
        + b"\ncommitter "
        + who
        + b"\n\n"
        + message
        + b"\n"
    )
    out = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        cwd=lab.repo,
        input=body,
        capture_output=True,
        env=lab.env(),
        check=True,
    )
    sha = out.stdout.decode().strip()
    lab.git("update-ref", "HEAD", sha)
    lab.git("reset", "-q", "--hard")
    return sha


def _timed(lab: Lab, name: str) -> None:
    start = time.monotonic()
    lab.run()
    (lab.root / f"{name}.secs").write_text(f"{time.monotonic() - start:.2f}")


GATE = (
    "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
    '    params: {tag: "rb-gate-ff-2"}\n'
)
QUORUM = 'rules:\n  - match: {paths: ["plans/rb-quorum-ff"]}\n    require: [{count: 2}]\n'
ALICE_RAW = b"Alice <alice@example.com>"


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=QUORUM)
    for v in VIDS:
        if v != "self-ff":
            lab.write(f"rb-{v}", plan_text(f"rb-{v}") + (GATE if v == "gate-ff" else ""))
    lab.commit("agent adds plans", AGENT)
    lab.write("rb-self-ff", plan_text("rb-self-ff"))
    lab.commit("bob adds a plan", BOB)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("rb-gate-ff", ALICE)
    lab.run()  # action 1, then the pause at the gate
    time.sleep(1.05)
    lab.set_status("rb-pa-ff", "approved")
    _commit_bytes(lab, b"approve\n\nPlan-Approved: plans/rb-pa-ff \xff", ALICE_RAW)
    lab.set_status("rb-mal-pa", "approved")
    _commit_bytes(
        lab, b"approve\n\nPlan-Approved: plans/rb-mal-pa \xff", b"Mallory <mallory@example.com>"
    )
    lab.set_status("rb-mal-email", "approved")
    _commit_bytes(lab, b"approve mal-email", b"Mallory <mallory\xff@example.com>")
    lab.set_status("rb-mal-git", "approved")  # plain git: commit -F of a file, only a warning
    (root / "msg").write_bytes(b"approve\n\nPlan-Approved: plans/rb-mal-git \xff\n")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-F", str(root / "msg"), who=("Mallory", "mallory@example.com"))
    lab.set_status("rb-mal-fffe", "approved")
    _commit_bytes(lab, b"approve mal-fffe", "Mallory <mallory\ufffe@example.com>".encode())
    for v, value in ODD_TEXT.items():
        lab.set_status(f"rb-{v}", "approved")
        message = b"approve\n\nPlan-Approved: plans/rb-" + v.encode() + b" " + value
        _commit_bytes(lab, message, b"Mallory <mallory@example.com>")
    lab.set_status("rb-plan-hash", "approved")
    _commit_bytes(lab, b"approve\n\nPlan: plans/rb-plan-hash\nPlan-Hash: \xff", ALICE_RAW)
    lab.set_status("rb-co-ff", "approved")
    _commit_bytes(lab, b"approve\n\nCo-authored-by: \xff <x\xff@ops.example.com>", ALICE_RAW)
    lab.set_status("rb-glob-ff", "approved")
    _commit_bytes(lab, b"approve glob-ff", b"Bob <b\xffob@ops.example.com>")
    lab.set_status("rb-self-ff", "approved")
    _commit_bytes(lab, b"approve self-ff", b"Bob <b\xffob@ops.example.com>")
    lab.set_status("rb-quorum-ff", "approved")  # a first vote of two
    _commit_bytes(lab, b"approve quorum-ff", b"Bob <b\xffob@ops.example.com>")
    lab.set_status("rb-gate-ff", "approved")  # the gate, by Bob's byte spelling
    _commit_bytes(lab, b"approve gate-ff", b"Bob <b\xffob@ops.example.com>")
    lab.approve("rb-ctl", ALICE)
    _timed(lab, "pass-1")
    (root / "status1.json").write_text(
        lab.cli("status", "--json", "--config", str(lab.config)).stdout
    )
    time.sleep(1.05)
    for v in MAL:  # Alice approves as usual (where the file still says pending_approval)
        text = (lab.repo / "plans" / f"rb-{v}" / "PLAN.yml").read_text()
        if "status: pending_approval" in text.split("frozen:")[0]:
            lab.approve(f"rb-{v}", ALICE)
    _timed(lab, "pass-2")
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    audit = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(audit.stdout)
    (root / "audit.err").write_text(audit.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-rawbytes", _build)


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 25: {what}")


_UNREADABLE = (
    "the controller writes a text from the commit's non-UTF-8 bytes (a surrogate escape "
    "such as \\udcff) into the approval block of PLAN.yml as a YAML escape no reader accepts: "
    "the plan is unreadable (E_YAML_PARSE) for good"
)
_AUDIT = (
    "the fresh-clone audit flags the controller's own commit that wrote the unreadable "
    "record controller-unexplained ('a refuse commit cannot set status None')"
)
#: What round 25 found (the ids whose odd bytes reach a message or ``by`` the controller writes).
ODD = ["pa-ff", "mal-pa", "mal-email", "plan-hash", "glob-ff", "self-ff", "quorum-ff", "gate-ff"]
#: Round 25 found these (fixed: git's metadata bytes that are not UTF-8 are read as the
#: text \xNN, and the controller's YAML writer never writes a lone surrogate).
FOUND: dict[str, pytest.MarkDecorator] = {v: _xf(_UNREADABLE) for v in ODD}
BROKEN: dict[str, pytest.MarkDecorator] = {}
RUN_FOUND: dict[str, pytest.MarkDecorator] = {
    v: _xf(
        "Mallory (no approver) stalls the plan for good: after the controller's unreadable "
        "refusal, Alice's ordinary approval never runs it"
    )
    for v in ["mal-pa", "mal-email"]
}
RUN_BROKEN: dict[str, pytest.MarkDecorator] = {}
AUDIT_FOUND: dict[str, pytest.MarkDecorator] = {v: _xf(_AUDIT) for v in ODD}
AUDIT_BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_the_controllers_record_stays_readable(lab: Lab, vid: str) -> None:
    slug = f"rb-{vid}"
    rows = {r["plan"]: r for r in json.loads((lab.root / "status1.json").read_text())}
    row = rows[f"plans/{slug}"]
    assert row.get("status") != "unreadable", json.dumps(row)[:1500]
    assert "E_YAML_PARSE" not in json.dumps(row), json.dumps(row)[:1500]
    data = lab.plan(slug)  # HEAD's file parses
    assert isinstance(data.get("plan"), dict), json.dumps(data, default=str)[:1500]


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[RUN_BROKEN[v]] if v in RUN_BROKEN else []) for v in VIDS],
)
def test_runs_at_most_once_and_alices_later_approval_runs_mallorys_target(
    lab: Lab, vid: str
) -> None:
    slug = f"rb-{vid}"
    calls = len(lab.calls(slug))
    if vid in MAL or vid == "ctl":
        assert calls == 1, lab.codes(slug)
    else:
        assert calls <= 1, lab.codes(slug)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[AUDIT_BROKEN[v]] if v in AUDIT_BROKEN else []) for v in VIDS],
)
def test_the_fresh_clone_audit_accepts_the_controllers_commits(lab: Lab, vid: str) -> None:
    err = (lab.root / "audit.err").read_text()
    assert "Traceback" not in err, err[-2000:]
    report = json.loads((lab.root / "audit.json").read_text())
    plan = f"plans/rb-{vid}"
    bad = [
        f
        for f in report.get("findings", [])
        if f.get("plan") == plan and f.get("kind") == "controller-unexplained"
    ]
    assert not bad, json.dumps(bad)[:1500]


NOSTART_FOUND: dict[str, pytest.MarkDecorator] = {
    v: _xf(
        "the controller starts the plan on Bob's approval (start commit, status executing) "
        "but its record is unreadable: the approved plan (gate) never runs, stays executing"
    )
    for v in ["glob-ff", "gate-ff"]
}
#: Out of scope since the fix: the byte is kept (``b\xffob@``), a mailbox other than Bob's
#: that the approver glob ``*@ops.example.com`` admits; Bob approving his own plan under
#: another address is forged authorship (docs/threat-model.md, "Out of scope"; closed by
#: ``require_signed`` or narrower approver lists). Before, the byte was dropped and the
#: address read as Bob's.
NOSTART_BROKEN: dict[str, pytest.MarkDecorator] = {
    "self-ff": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 25, out of scope: b\\xffob@ is another address than bob@ (forged "
        "authorship under an approver glob)",
    )
}


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(v, id=v, marks=[NOSTART_BROKEN[v]] if v in NOSTART_BROKEN else [])
        for v in ["glob-ff", "self-ff", "gate-ff"]
    ],
)
def test_bobs_byte_spelling_is_bob(lab: Lab, vid: str) -> None:
    """The controller reads ``b\\xffob@`` as Bob: his approval of the agent's plan runs it
    once; of his own plan starts nothing (E_SELF_APPROVAL)."""
    slug = f"rb-{vid}"
    if vid == "glob-ff":
        assert len(lab.calls(slug)) == 1, lab.codes(slug)
    elif vid == "gate-ff":  # Alice approved, action 1 ran; Bob approves the gate
        assert len(lab.calls(f"{slug}-2")) == 1, lab.codes(slug)
    else:
        assert lab.calls(slug) == [], lab.codes(slug)
        assert not _started(lab, slug), lab.codes(slug)


def _started(lab: Lab, slug: str) -> bool:
    """A controller start of ``plans/<slug>`` (one-plan or batched form); the log holds raw
    bytes that are not UTF-8, so it is read as bytes (advkit's text reader would fail)."""
    out = subprocess.run(
        ["git", "log", "--author=plangate@localhost", "--format=%B%x01"],
        cwd=lab.repo,
        capture_output=True,
        env=lab.env(),
        check=True,
    ).stdout.decode("utf-8", "replace")
    for body in out.split("\x01"):
        if f"plangate: start plans/{slug}\n" in body + "\n":
            return True
        groups = body.split("\nPlan: ")[1:]
        for group in groups:
            lines = group.splitlines()
            if lines and lines[0] == f"plans/{slug}" and "Plan-Event: start" in lines[1:3]:
                return True
    return False
