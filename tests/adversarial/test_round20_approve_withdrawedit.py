"""Round 20, who may reject or abort: withdraw rights gained by editing a plan's content
without writing the version that is waiting or running.

docs/approvals.md: rejections and aborts "count only from an allowed approver or an author
of the plan"; round 14 (``note-abort``) held that a non-approver who is "no author of the
approved version" cannot abort it, and round 17 (``copy-orig``) that producing a version's
exact bytes elsewhere gives no right to withdraw the original. Here Mallory (no approver,
never wrote the agent's content) edits the plan's hashed content and takes the edit back,
or edits a paused run's content, and then withdraws.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent
writes every plan; the controller freezes them. Mallory then acts; finally Alice approves
(the pending plan, or the paused run's gate).

Rejections of a pending plan (defence: ignored, Alice's approval runs it once):

- ``ctl-rej``: Mallory just commits ``status: rejected`` (control of the known rule).
- ``comment-rej``: she first adds a YAML comment to PLAN.yml (hash unchanged), then rejects.
- ``meta-rej``: she first adds ``metadata: {ticket: M-1}`` (not hashed), then rejects.
- ``ours-rej``: on a side branch she edits the task and rejects her version; the agent
  merges it with ``-s ours --no-ff`` (none of it lands), then Alice approves.
- ``co-rej``: in one push she edits the task and restores the file
  (``git checkout <old> -- PLAN.yml``): the net change is nothing, the version is still the
  agent's; she rejects.
- ``revert-rej``: she edits the task; the controller freezes her version; she
  ``git revert``s her edit; the controller freezes the agent's version again; she rejects.

Aborts of a run paused at its gate (Alice approved, action 1 ran; defence: the abort is
ignored, Alice's gate approval runs the gated action once):

- ``comment-abort``: a YAML comment, then ``aborted``.
- ``ours-abort``: a side branch with her edit and ``aborted``, merged ``-s ours``.
- ``edit-abort``: she edits the paused run's task (a version nobody approved, that will never
  run), then aborts; the agent reverts her edit (the file hashes to the approved version
  again) and Alice approves the gate.
- ``co-abort``: she edits the task and restores it (net nothing), then aborts.
- ``side-co-abort``: her edit and its restore on a side branch the agent merges ``--no-ff``
  (net nothing reaches the plan), then she aborts on main.
- ``pin-abort``: the paused parent pins the agent's library ``plans/pin-abort-lib``; she edits
  the library file (a new library version, not the pinned one) and aborts the parent; the
  agent takes her edit back; Alice approves the gate.

Results (the fresh-clone ``plangate audit`` agrees with the controller on every one: it
lists the withdrawals that counted under ``decisions`` and flags the others
``withdraw-not-allowed``):

- held: ``ctl-rej``, ``comment-rej``, ``meta-rej``, ``ours-rej``, ``comment-abort``,
  ``ours-abort``, ``side-co-abort`` and ``pin-abort`` (``E_APPROVER_NOT_ALLOWED``, ignored);
- broke (strict xfails): ``co-rej`` and ``revert-rej`` stay ``rejected`` (Alice's approval is
  ``E_ILLEGAL_TRANSITION`` "from rejected"); ``edit-abort`` and ``co-abort`` are aborted by
  the controller (``plangate: abort``, "abort requested by mallory@example.com"), the gated
  action never runs. Two first-parent commits that change nothing, or an edit of a paused
  run (a version that is not the one approved), make any pusher an "author" entitled to
  kill the plan for good (``rejected``/``aborted`` are final), while the same two commits
  on a merged branch (``side-co-abort``) give no such right.

Tried and not counted as a break: Mallory edits the task (a new pending version, hers) and
rejects it; she is then an author of the version that waits.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_approval_authors import NESTED
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
PIN = """\
  - id: 3
    plan: {{path: plans/{tag}-lib, hash: "{pin}"}}
    why: "run the library"
"""
LIB = NESTED  # round 2's library plan text
REJ = ["ctl-rej", "comment-rej", "meta-rej", "ours-rej", "co-rej", "revert-rej"]
ABORT = ["comment-abort", "ours-abort", "edit-abort", "co-abort", "side-co-abort", "pin-abort"]


def _mark(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 20: {what}")


#: round 20: all broke; fixed since: an author may withdraw only the version at stake (the
#: plan's changers when that version first appeared; the approved one once started)
FOUND: dict[str, pytest.MarkDecorator] = {
    "co-rej": _mark("an edit and its restore (net nothing) make Mallory an author who may reject"),
    "revert-rej": _mark("an edit and its git revert make Mallory an author who may reject"),
    "edit-abort": _mark("an edit of a paused run (a version never approved) lets her abort it"),
    "co-abort": _mark("an edit and its restore let a non-approver abort a paused run"),
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _edit(lab: Lab, slug: str, marker: str = " (mallory)") -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    old = 'task: "attack variant ' + slug + '"'
    if old not in text:
        old = 'task: "a plan meant to be nested"'
    assert old in text, text
    path.write_text(text.replace(old, old[:-1] + marker + '"'))


def _side(lab: Lab, slug: str, status: str | None, strategy: list[str]) -> None:
    lab.git("checkout", "-q", "-b", f"side-{slug}")
    old = lab.head()
    _edit(lab, slug)
    lab.commit(f"mallory edits {slug}", MALLORY)
    if status:
        lab.set_status(slug, status)
        lab.commit(f"{status} {slug}", MALLORY)
    else:
        lab.git("checkout", old, "--", f"plans/{slug}/PLAN.yml")
        lab.commit(f"mallory restores {slug}", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git(
        "merge", "-q", *strategy, "--no-ff", "-m", f"merge side-{slug}", f"side-{slug}", who=AGENT
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in REJ:
        lab.write(slug, plan_text(slug))
    lab.write("pin-abort-lib", LIB.format(tag="pin-abort"))
    lab.commit("agent's library", AGENT)
    pin = lab.cli("hash", str(lab.repo / "plans" / "pin-abort-lib")).stdout.strip()
    assert pin.startswith("sha256:"), pin
    for slug in ABORT:
        extra = GATE.format(tag=slug) + (
            PIN.format(tag=slug, pin=pin) if slug == "pin-abort" else ""
        )
        lab.write(slug, plan_text(slug, extra_actions=extra))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for slug in ABORT:
        lab.approve(slug, ALICE)
    lab.run()  # action 1, then the gate
    # Mallory's preparations
    for slug in ("comment-rej", "comment-abort"):
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text("# reviewed by mallory\n" + path.read_text())
        lab.commit(f"mallory comments {slug}", MALLORY)
    path = lab.repo / "plans" / "meta-rej" / "PLAN.yml"
    path.write_text(path.read_text() + "metadata:\n  ticket: M-1\n")
    lab.commit("mallory's ticket", MALLORY)
    _side(lab, "ours-rej", "rejected", ["-s", "ours"])
    _side(lab, "ours-abort", "aborted", ["-s", "ours"])
    _side(lab, "side-co-abort", None, [])
    for slug in ("co-rej", "co-abort"):
        old = lab.head()
        _edit(lab, slug)
        lab.commit(f"mallory edits {slug}", MALLORY)
        lab.git("checkout", old, "--", f"plans/{slug}/PLAN.yml")
        lab.commit(f"mallory restores {slug}", MALLORY)
    edits = {}
    for slug in ("revert-rej", "edit-abort", "pin-abort"):
        _edit(lab, "pin-abort-lib" if slug == "pin-abort" else slug)
        edits[slug] = lab.commit(f"mallory edits {slug}", MALLORY)
    lab.run()  # the controller freezes her revert-rej version
    lab.git("revert", "--no-edit", edits["revert-rej"], who=MALLORY)
    lab.run()  # ... and the agent's version again
    for slug in REJ:
        if slug != "ours-rej":
            lab.set_status(slug, "rejected")
            lab.commit(f"reject {slug}", MALLORY)
    for slug in ABORT:
        if slug != "ours-abort":
            lab.set_status(slug, "aborted")
            lab.commit(f"abort {slug}", MALLORY)
    lab.run()
    # the agent takes back the edits of the paused runs; Alice approves
    for slug in ("edit-abort", "pin-abort"):
        path = lab.repo / "plans" / ("pin-abort-lib" if slug == "pin-abort" else slug) / "PLAN.yml"
        path.write_text(path.read_text().replace(" (mallory)", ""))
        lab.commit(f"agent takes back mallory's edit of {slug}", AGENT)
    for slug in REJ + ABORT:
        lab.approve(slug, ALICE)
    lab.run()
    # a fresh clone's audit, for the record
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(res.stdout)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-withdrawedit", _build)


@pytest.mark.parametrize("slug", ABORT)
def test_the_run_paused_at_its_gate(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1, lab.codes(slug)


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, [])) for s in REJ])
def test_a_non_author_cannot_reject(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1, lab.codes(slug)


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, [])) for s in ABORT])
def test_a_non_author_cannot_abort_the_run(lab: Lab, slug: str) -> None:
    assert len(lab.calls(f"{slug}-gated")) == 1, lab.codes(slug)
    if slug == "pin-abort":
        assert len(lab.calls(f"{slug}-nested")) == 1, lab.codes(slug)
