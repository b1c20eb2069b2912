"""Round 39, may a retired signing key still withdraw when its commit sits inside a merged
branch, dated back into the key's window?

docs/approvals.md (round 38's fix): a withdrawal's key is judged "at a time history fixes:
the withdrawal commit's date, unless it claims a time past the reader's clock, and on the
first-parent line never before the controller's last commit before it (git proves the
withdrawal was made after that commit; a retired key withdraws nothing once the controller
has committed since it retired, however the commit is dated)". A commit inside a merged
branch whose branch forked from a controller commit made after the retirement is just as
provably later: that controller commit is its ancestor.

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key,
Alice's and Bob's listed keys (no window), Carol's listed key with ``valid-before`` a few
seconds after the build starts, and ``*@example.com,*@ops.example.com cert-authority <ca>``;
key ``bobt`` holds a certificate for ``bob@ops.example.com`` valid for the same few seconds.
The agent writes each plan; the controller freezes it; ``abort-side`` (a gated plan) is
approved by Alice and pauses at its gate while the windows are open. Then the windows
close; the agent adds a filler plan and the controller freezes it (a controller commit made
after the retirement). From that tip:

- ``fp-dated`` (control, round 38's rule): Carol sets ``rejected`` on main, signed with her
  retired key, author and committer date one second before the key's ``valid-before``.
- ``side-ours``: the same commit on a side branch forked from that tip; the agent merges it
  ``-s ours`` (the plan's file on main is unchanged).
- ``side-merge``: the same, merged by the agent with a plain ``--no-ff`` merge (the merge
  brings ``rejected`` onto main under the agent's unsigned merge).
- ``cert-side``: Bob's rejection signed with the expired certificate ``bobt``, dated back,
  on a side branch merged ``-s ours``.
- ``abort-side``: Carol's ``aborted`` of the paused plan, dated back, on a side branch merged
  ``-s ours``.
- ``synced``: a side branch forked while the windows were open (before the retirement);
  after the filler's freeze Carol merges main into it (``git merge main``: the controller's
  post-retirement commit becomes an ancestor through the second parent), then sets
  ``rejected`` dated back; the agent merges it ``-s ours``.

Then Alice approves each plan (and ``abort-side``'s gate), signed with her listed key; the
controller passes; a fresh clone is audited (``plangate audit --json``, no config).

Asserted (the defence): a withdrawal signed by a key retired before a controller commit that
is an ancestor of the withdrawal counts for nothing: Alice's approval runs each plan once
(``abort-side``: its gated action 2 runs); the audit agrees (each start ``approval_valid``,
no ``start-without-approval``). The bench checks that git itself calls each dated side
commit good (``%G?`` ``G``: git verifies an SSH signature at the commit's own date).

Results: ``fp-dated`` held (round 38's first-parent bound: ignored, Alice's approval ran
it). BROKE (strict xfails): ``side-ours``, ``side-merge``, ``cert-side``, ``synced``: the
controller counted the retired key's (or expired certificate's) rejection made inside the
merged branch: ``plangate status`` read ``rejected`` and Alice's later approval of the
version was refused (``rec`` never ran); ``abort-side``: the controller committed
``plangate: abort`` (``Aborted-By: carol``) and the gated action never ran. Each of those
side commits has the controller's post-retirement freeze as an ancestor, so git proves it
was made after the retirement; the round 38 bound reads only the withdrawal's first-parent
line. The fresh-clone audit agrees with the controller in every variant (it lists the same
withdrawals under ``decisions``): both are wrong alike.

Fixed (the same session): a withdrawal inside a merged branch is judged never before the
newest controller commit it descends from through any parent (``Lifecycle._ancestor_clock``;
only a commit the controller knows as its own counts, so a forged late one cannot void an
honest withdrawal).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOB, CAROL, Lab, WindowClosed, plan_text, with_widening_window
from test_round2_execution_kit import shared

#: the keys' first validity window, in seconds; a lab whose window closed before the
#: controller's in-window commits were made is rebuilt with it doubled (advkit)
VALID_FOR = 9
REJECTS = ["fp-dated", "side-ours", "side-merge", "cert-side", "synced"]
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "abort-side-gated"
"""
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (see the docstring)


def _side(lab: Lab, vid: str, key: str, who: tuple[str, str], status: str, when: int, how: str):
    lab.git("checkout", "-q", "-b", f"side-{vid}")
    signkit.sign(lab, vid, key, who, status, when)
    lab.git("checkout", "-q", "main")
    args = ["-s", "ours"] if how == "ours" else []
    lab.git("merge", "-q", "--no-ff", *args, "-m", f"merge side-{vid}", f"side-{vid}", who=AGENT)


def _build(root: Path, valid_for: int) -> Lab:
    lab, expires = signkit.signed_lab(root, valid_for)
    signers = root / "allowed_signers"
    for vid in REJECTS:
        lab.write(vid, plan_text(vid))
    lab.write("abort-side", plan_text("abort-side", extra_actions=GATE))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    time.sleep(1.05)
    signkit.sign(lab, "abort-side", "alice", ALICE, "approved")
    signkit.signed_run(lab)  # action 1 runs, the plan pauses at its gate
    lab.git("branch", "side-synced")  # forked while the windows are open
    last = int(lab.git("log", "-1", "--format=%ct").strip())
    lab.dated = expires - 2  # type: ignore[attr-defined]
    if lab.dated <= last:  # type: ignore[attr-defined]
        raise WindowClosed(f"window closed at {expires}, last commit {last}")
    time.sleep(max(0.0, expires - time.time() + 1.5))
    lab.write("filler", plan_text("filler"))
    lab.commit("agent adds a filler", AGENT)
    signkit.signed_run(lab)  # the controller freezes it: a controller commit after the retirement
    when = lab.dated  # type: ignore[attr-defined]
    signkit.sign(lab, "fp-dated", "carol", CAROL, "rejected", when)
    _side(lab, "side-ours", "carol", CAROL, "rejected", when, "ours")
    _side(lab, "side-merge", "carol", CAROL, "rejected", when, "merge")
    _side(lab, "cert-side", "bobt", BOB, "rejected", when, "ours")
    _side(lab, "abort-side", "carol", CAROL, "aborted", when, "ours")
    lab.git("checkout", "-q", "side-synced")
    lab.git("merge", "-q", "--no-ff", "-m", "sync main", "main", who=CAROL)
    signkit.sign(lab, "synced", "carol", CAROL, "rejected", when)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "merge synced", "side-synced", who=AGENT)
    lab.verified = {  # type: ignore[attr-defined]
        b: lab.git(
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G?", b
        ).strip()
        for b in ["side-side-ours", "side-cert-side", "side-abort-side", "side-synced"]
    }  # fmt: skip
    signkit.signed_run(lab)
    lab.after_withdraw = {  # type: ignore[attr-defined]
        r["plan"]: r.get("status")
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    for vid in REJECTS:
        if lab.plan(vid)["plan"]["status"] == "rejected":
            lab.set_status(vid, "pending_approval")
            lab.commit(f"agent reopens {vid}", AGENT)
    for vid in [*REJECTS, "abort-side"]:
        if lab.plan(vid)["plan"]["status"] in ("pending_approval", "awaiting_approval"):
            signkit.sign(lab, vid, "alice", ALICE, "approved")
    signkit.signed_run(lab)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r39-sidedate", with_widening_window(_build, first=VALID_FOR))


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_dated_signatures_verify_for_git(lab: Lab) -> None:
    """The bench: git itself calls each dated side commit good (``G``) at its own date."""
    assert set(lab.verified.values()) == {"G"}, lab.verified  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(REJECTS))
def test_a_retired_key_rejects_nothing(lab: Lab, vid: str) -> None:
    after = lab.after_withdraw  # type: ignore[attr-defined]
    assert after.get(f"plans/{vid}") != "rejected", (after, lab.codes(vid))
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(["abort-side"]))
def test_a_retired_key_aborts_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert not any(s.startswith("plangate: abort ") for s in lab.subjects(vid)), lab.codes(vid)
    assert len(lab.calls(f"{vid}-gated")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", [*REJECTS, "abort-side"])
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    """Whatever the verdict, the audit reaches the controller's: it lists the withdrawal
    under ``decisions`` exactly when the controller counted it (the plan never ran, or was
    aborted), and calls every start the controller made valid."""
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert all(e.get("approval_valid") for e in runs), runs
    kinds = {"reject", "abort-request"}
    listed = [
        d
        for d in report.get("decisions", []) or []
        if d.get("plan") == f"plans/{vid}" and d.get("kind") in kinds
    ]
    if vid == "abort-side":
        counted = any(s.startswith("plangate: abort ") for s in lab.subjects(vid))
    else:
        counted = lab.calls(vid) == []
    assert bool(listed) == counted, (listed, counted, json.dumps(report)[:3000])
