"""Round 30, who may make a plan run under ``require_signed`` when ``allowed_signers`` also
trusts a certificate authority (``*@example.com,*@ops.example.com cert-authority <CA key>``,
OpenSSH's way to let people sign with keys the operator never lists one by one).

Config: the bench's (approvers Alice and ``*@ops.example.com``), ``require_signed: true``,
``plans/two/**`` needs two approvals, and ``allowed_signers``:

    alice@example.com <alice>
    bob@ops.example.com <bob>
    a.smith@corp.example,alice@example.com <multi>
    alice@example.com valid-after="20991231" <future>
    alice@example.com valid-before="20200101" <retired>
    *@example.com,*@ops.example.com cert-authority <ca>

Keys ``alicec``, ``bobc``, ``agentc`` each hold a certificate the CA issued for
``alice@example.com``, ``bob@ops.example.com``, ``agent@example.com`` (signing uses the
certificate file as ``user.signingKey``; git then says ``G`` and names the certificate's
principal: ``git-*`` asserts that). Alice and Bob approve with their listed keys.

Self-approval (the agent's commit, author and committer the agent, signed with a key of the
approver; she then approves on main, signed with her listed key). Defence:
``E_SELF_APPROVAL``, ``rec`` never runs:

- ``cert-content``: the commit adding the plan is signed with ``alicec``; Alice approves.
- ``cert-notes``: a ``NOTES.md`` commit in the plan's folder is signed with ``alicec``.
- ``cert-edit``: the agent's edit of its plan (before the freeze) is signed with ``alicec``.
- ``two/cert-quorum``: the commit adding the plan is signed with ``bobc``; Alice approves
  (``partial``), then Bob.
- ``chk``: on a pull request the agent's ``NOTES.md`` commit is signed with ``alicec`` and the
  agent sets ``approved``; ``plangate check --as alice@example.com`` is recorded; Alice merges
  it ``--no-ff``, signed. ``check-chk``: check predicts the controller's verdict.
- controls of the known rule: ``plain-content`` (signed with ``alice``), ``multi-content``
  (``multi``: a line naming two principals), ``future-content`` / ``retired-content`` (a key
  outside its validity window).

Withdrawals (the signed rejection of a pending plan; Alice then approves, signed). Defence:
the rejection counts (``rec`` never runs):

- ``cert-reject``: Bob (an approver) rejects, signed with ``bobc``.
- ``cert-author-reject``: the agent (the plan's author) rejects, signed with ``agentc``.
- ``cert-reject-side``: Bob rejects, signed with ``bobc``, on a side branch the agent merges
  ``--no-ff``; ``plain-reject-side``: the same signed with Bob's listed key (control).
- ``cert-abort``: Alice approves a plan whose action 2 is gated (action 1 runs, it pauses);
  Bob aborts, signed with ``bobc``; Alice approves the gate. Defence: the gated action never
  runs.

``check-trailer``: ``plans/two/trailer`` (two approvals): on a pull request Bob's empty
commit ``Plan-Approved: plans/two/trailer <hash>`` signed with ``bobc``, and the agent sets
``approved``; ``plangate check --as alice@example.com`` is recorded; Alice merges it, signed.
Asserted: check's outcome is the controller's (``start`` when it started, else ``partial``).

``ctl``: the agent's unsigned plan, Alice approves: runs once. ``audit-*``: a fresh clone's
``plangate audit --json --config`` flags a start of a self-approved plan
``start-without-approval``; it flags none for ``ctl``.

Results when found: BROKE (strict xfails): ``cert-content``, ``cert-notes``, ``cert-edit``,
``two/cert-quorum`` (each ran once on the signer's own approval: the history did not take a
certified key as its holder's), ``cert-reject``, ``cert-author-reject`` and
``cert-reject-side`` (ignored as ``E_APPROVER_NOT_ALLOWED``; Alice's approval ran the plan),
``cert-abort`` (ignored the same way; the gate approval ran the gated action), and the audits
of the four self-approved starts (``approval_valid: true``). Held: ``plain-reject-side``,
``chk`` (``E_SELF_APPROVAL`` when the signed notes arrive through a merged branch) and
``check-chk``, ``check-trailer`` (check and controller ``partial``: Bob's certified trailer
refused ``E_SIGNATURE_INVALID``), the four controls, ``ctl``, ``audit-ctl``. Seen on the side
(a first draft whose ``allowed_signers`` held only the CA line): an approval signed with a
certified key was refused ``E_SIGNATURE_INVALID``, and check agreed (``refuse``).

Results now: all 12 FIXED (no marks left; ``FOUND`` keeps the record). git's ``%GK`` names
only the certified key, which no line lists; the history reader and ``verify_commit`` now
read the certificate from the commit's own SSH signature (the SSHSIG blob's public key, for
the key git verified) and keep the key as ``cert:<certificate>``, and
``signers.key_holders`` maps listed and certified keys to people in one place (a user
certificate whose CA signature verifies, by the CA of a ``cert-authority`` line whose
principal patterns allow its principals; to count now, valid with its line at the
verifier's clock and without critical options). So the certified content makes its holder
a writer (``E_SELF_APPROVAL``; the audits flag nothing since nothing started), certified
rejections and aborts count, and certified approvals count by the same rules: Bob's
certified trailer is now his vote, so ``two/trailer`` starts on Alice's merge and check
predicts ``start`` (``check-trailer`` asserts agreement either way). Unit tests:
``tests/approval/test_signers_certificates.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

SELF = [
    "cert-content",
    "cert-notes",
    "cert-edit",
    "two/cert-quorum",
    "plain-content",
    "multi-content",
    "future-content",
    "retired-content",
]
BROKE_SELF = ["cert-content", "cert-notes", "cert-edit", "two/cert-quorum"]
#: The record of what broke (strict xfails when found; all fixed: no marks left, so each
#: variant shows by passing).
FOUND: dict[str, list[pytest.MarkDecorator]] = {
    vid: []
    for vid in [
        *BROKE_SELF,
        *(f"audit-{v}" for v in BROKE_SELF),
        "cert-reject",
        "cert-author-reject",
        "cert-reject-side",
        "cert-abort",
    ]
}

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "cert-abort-gated"
"""


def _key(keys: Path, name: str, principal: str | None = None) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    if principal:
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(keys / "ca"), "-I", name, "-n", principal,
             str(keys / f"{name}.pub")],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return (keys / f"{name}.pub").read_text().strip()


def _signed(lab: Lab, key: str, who: tuple[str, str], *args: str) -> None:
    path = lab.root / "keys" / (f"{key}-cert.pub" if key.endswith("c") else key)
    lab.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={path}", *args, who=who)


def _commit(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    _signed(lab, key, who, "commit", "-q", "-S", "--allow-empty", "-m", message)


def _set(lab: Lab, slug: str, status: str, key: str, who: tuple[str, str]) -> None:
    lab.set_status(slug, status)
    _commit(lab, key, who, f"{status} {slug}")


def _shows(lab: Lab) -> str:
    """What git itself says of HEAD's signature with the controller's allowed_signers."""
    signers = lab.root / "allowed_signers"
    return lab.git(
        "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G? %GS"
    ).strip()  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = _key(keys, "ca")
    alice = _key(keys, "alice")
    bob = _key(keys, "bob")
    multi = _key(keys, "multi")
    future = _key(keys, "future")
    retired = _key(keys, "retired")
    _key(keys, "alicec", "alice@example.com")
    _key(keys, "bobc", "bob@ops.example.com")
    _key(keys, "agentc", "agent@example.com")
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {alice}\nbob@ops.example.com {bob}\n"
        f"a.smith@corp.example,alice@example.com {multi}\n"
        f'alice@example.com valid-after="20991231" {future}\n'
        f'alice@example.com valid-before="20200101" {retired}\n'
        f"*@example.com,*@ops.example.com cert-authority {ca}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    lab.write("cert-content", plan_text("cert-content"))
    _commit(lab, "alicec", AGENT, "add cert-content")
    shows = {"cert-content": _shows(lab)}
    lab.write("two/cert-quorum", plan_text("two-cert-quorum"))
    _commit(lab, "bobc", AGENT, "add two/cert-quorum")
    lab.write("plain-content", plan_text("plain-content"))
    _commit(lab, "alice", AGENT, "add plain-content")
    lab.write("multi-content", plan_text("multi-content"))
    _commit(lab, "multi", AGENT, "add multi-content")
    for key in ("future", "retired"):
        lab.write(f"{key}-content", plan_text(f"{key}-content"))
        _commit(lab, key, AGENT, f"add {key}-content")
    rejects = ("cert-reject", "cert-author-reject", "cert-reject-side", "plain-reject-side")
    for vid in ("cert-notes", "cert-edit", *rejects, "ctl", "chk"):
        lab.write(vid, plan_text(vid))
    lab.write("cert-abort", plan_text("cert-abort", extra_actions=GATE))
    lab.write("two/trailer", plan_text("two-trailer"))
    lab.commit("agent adds plans", AGENT)
    lab.write("cert-notes", "see the ticket\n", filename="NOTES.md")
    _commit(lab, "alicec", AGENT, "notes")
    lab.write("cert-edit", plan_text("cert-edit", params="extra: 1\n"))
    _commit(lab, "alicec", AGENT, "edit cert-edit")
    lab.run()  # freeze
    time.sleep(1.05)
    _set(lab, "cert-reject", "rejected", "bobc", BOB)
    shows["cert-reject"] = _shows(lab)
    _set(lab, "cert-author-reject", "rejected", "agentc", AGENT)
    shows["cert-author-reject"] = _shows(lab)
    lab.git("checkout", "-q", "-b", "side")
    _set(lab, "cert-reject-side", "rejected", "bobc", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.git("checkout", "-q", "-b", "side2")
    _set(lab, "plain-reject-side", "rejected", "bob", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side2", "side2", who=AGENT)
    lab.shows = shows  # type: ignore[attr-defined]
    for vid in (
        "cert-content",
        "cert-notes",
        "cert-edit",
        "plain-content",
        "multi-content",
        "ctl",
        "future-content",
        "retired-content",
    ):
        _set(lab, vid, "approved", "alice", ALICE)
    _set(lab, "two/cert-quorum", "approved", "alice", ALICE)
    _set(lab, "cert-abort", "approved", "alice", ALICE)
    lab.run()
    _set(lab, "cert-abort", "aborted", "bobc", BOB)
    lab.run()
    _set(lab, "cert-abort", "approved", "alice", ALICE)
    _set(lab, "cert-reject", "approved", "alice", ALICE)
    _set(lab, "cert-author-reject", "approved", "alice", ALICE)
    _set(lab, "cert-reject-side", "approved", "alice", ALICE)
    _set(lab, "plain-reject-side", "approved", "alice", ALICE)
    _set(lab, "two/cert-quorum", "approved", "bob", BOB)
    lab.git("checkout", "-q", "-b", "pr")
    lab.write("chk", "reviewed\n", filename="NOTES.md")
    _commit(lab, "alicec", AGENT, "notes for chk")
    lab.set_status("chk", "approved")
    lab.commit("agent asks for chk", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", "pr3")
    digest = lab.plan("two/trailer")["frozen"]["hash"]
    _commit(lab, "bobc", BOB, f"approve (trailer)\n\nPlan-Approved: plans/two/trailer {digest}")
    lab.set_status("two/trailer", "approved")
    lab.commit("agent asks for two/trailer", AGENT)
    lab.git("checkout", "-q", "main")
    clone = root / "chk-clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr3",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check3.json").write_text(out.stdout)
    (root / "check3.err").write_text(out.stderr)
    _signed(lab, "alice", ALICE, "merge", "-q", "--no-ff", "-S", "-m", "merge pr", "pr")
    _signed(lab, "alice", ALICE, "merge", "-q", "--no-ff", "-S", "-m", "merge pr3", "pr3")
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", "--config", str(lab.config), cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r30-certsigners", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=FOUND.get(v, [])) for v in vids]


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


@pytest.mark.parametrize(
    ("vid", "want"),
    [
        ("cert-content", "G alice@example.com"),
        ("cert-reject", "G bob@ops.example.com"),
        ("cert-author-reject", "G agent@example.com"),
    ],
)
def test_git_accepts_the_certified_signature(lab: Lab, vid: str, want: str) -> None:
    assert lab.shows[vid] == want  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(["ctl"]))
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([*SELF, "chk"]))
def test_a_certified_key_that_signed_the_content_names_its_holder(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


REJECTS = ["cert-reject", "cert-author-reject", "cert-reject-side", "plain-reject-side"]


@pytest.mark.parametrize("vid", _p(REJECTS))
def test_a_certified_rejection_counts(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)


@pytest.mark.parametrize("vid", _p(["cert-abort"]))
def test_a_certified_abort_counts(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert lab.calls(f"{vid}-gated") == [], lab.codes(vid)


def _json(lab: Lab, name: str) -> Any:
    text = (lab.root / f"{name}.json").read_text()
    assert text.strip(), (lab.root / f"{name}.err").read_text()[-2000:]
    return json.loads(text)


@pytest.mark.parametrize("vid", _p(["check-chk"]))
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    report = _json(lab, "check")
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == "plans/chk"]
    want = "start" if lab.started("chk") else "refuse"
    assert row and row[0].get("outcome") == want, json.dumps(report)[:3000]


@pytest.mark.parametrize("vid", _p(["audit-ctl"]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    found = [
        f
        for f in _json(lab, "audit").get("findings", [])
        if f.get("plan") == "plans/ctl" and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]


@pytest.mark.parametrize("vid", _p([f"audit-{v}" for v in SELF]))
def test_fresh_clone_audit_flags_a_self_approved_start(lab: Lab, vid: str) -> None:
    plan = vid.removeprefix("audit-")
    if not lab.started(plan):
        return
    found = [
        f
        for f in _json(lab, "audit").get("findings", [])
        if f.get("plan") == f"plans/{plan}" and f.get("kind") == "start-without-approval"
    ]
    assert found, f"the audit accepts the start of plans/{plan}"


@pytest.mark.parametrize("vid", _p(["check-trailer"]))
def test_check_predicts_the_controller_on_a_certified_trailer(lab: Lab, vid: str) -> None:
    report = _json(lab, "check3")
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == "plans/two/trailer"]
    want = "start" if lab.started("two/trailer") else "partial"
    assert row and row[0].get("outcome") == want, json.dumps(report)[:3000]
