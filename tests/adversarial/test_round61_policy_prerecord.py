"""Round 61, the recorded policy: a person commits the bytes the controller is ABOUT to
record (or puts an older record back with ``git revert``) before the controller's pass.

docs/approvals.md, "The recorded policy": the controller commits its effective policy "on its
first pass and whenever its config changes"; "A human commit that edits, forges or deletes
the file changes nothing the controller decides (it records its own policy again on the next
pass) and is flagged by the audit", which "keeps judging by the controller's record". SPEC
§11: the audit "judges each approval by the policy recorded at that time"; withdrawals are
judged by "the policy the controller recorded in the withdrawal's first-parent history"
(rounds 27-39). The bytes are public and predictable: RFC 8785 of the effective policy; for
this content the recorded JSON with one approver appended, ``json.dumps(sort_keys=True,
separators=(",", ":"))``, is exact (the ``veto`` phase), or ``plangate run --once`` on a
scratch repo with the same config (the other phases).

Lab (one, shared; scratch repos under it only to make bytes): approvers v1 = the bench's +
Pat + Oscar. The agent writes the plans; the controller records v1 and freezes; Alice approves
``veto-abort`` (action 1 runs, it waits at its gate). Then, one config change per phase:

- ``control``: the operator removes Oscar (v2); the controller records v2; Pat approves.
- ``revert``: the config is v1 again and, before the pass, the agent ``git revert``s the
  controller's v2 record (the file says v1 again); Oscar approves.
- ``pre-file``: v3 adds Nina; before the pass Alice commits v3's exact bytes; Nina approves.
- ``pre-vote``: v4 adds Quinn; Quinn's approval commit also writes v4's exact bytes.
- ``pre-merge``: v5 adds Rita; Bob's pull request writes v5's bytes, merged ``--no-ff`` by
  him; Rita approves.
- ``veto``: v6 adds Sam and removes Pat; the AGENT commits v6's bytes; a pass (the one
  that would record v6: round 27 judges a withdrawal by the policy recorded before it); Sam
  rejects ``veto-reject`` (pending) and aborts ``veto-abort`` (at its gate), Pat rejects
  ``veto-departed``; a pass; Alice approves all three.
- ``pretty`` (control): v7 adds Tara; Alice commits v7 pretty-printed (the same policy,
  not its bytes); Tara approves.
- ``first``: a second repo under v1's config: the agent commits v1's bytes with its plan
  before the controller's first pass there; Alice approves.

Asserted: each approved plan runs once (the controller is right: every approver is in its
config); the fresh-clone audit (no config) calls each run valid with no finding at its start
and names its ``Policy-Hash`` among the recorded ``policies``; with ``--config`` too
(``pre-merge``); each human change of the file is flagged ``policy-changed``; Sam's
rejection and abort hold (nothing of those plans runs after them); Pat's vetoes nothing
(``veto-departed`` runs once).

Seen: **broke, the controller** (3 ids): when the file already holds the controller's next
policy it records nothing (``policy_in_force ... recorded: false``, on every later pass
too) and then judges withdrawals by its stale record: Sam, an approver of the config in
force, is ``E_APPROVER_NOT_ALLOWED`` for his rejection and his abort, both ignored; Alice's
approvals ran ``veto-reject`` and ``veto-abort``'s gated action; Pat, removed (but in the
last record, v2), still vetoes: ``veto-departed`` stays ``rejected``. One agent commit of
predictable bytes disarms a newly added approver's veto, and keeps a departed one's, for as
long as the config stays.
(Control, a hand probe and round 27's ``joined-seen``: the same steps without the agent's
file: Sam's rejection holds, the departed one's is ignored.) **Broke, the audit** (6 ids):
the starts of ``revert``, ``pre-file``, ``pre-vote``,
``pre-merge``, ``first`` name a ``Policy-Hash`` the controller never recorded; the audit
judges the honest run by the previous record: ``policy-hash-mismatch`` for all, and
``start-without-approval`` (``E_APPROVER_NOT_ALLOWED``) for ``pre-file``, ``pre-vote``,
``pre-merge``; ``first``'s ``policies`` is empty; with ``--config`` the same verdict plus a note
that the controller "records it on its next pass" (it never does). Held: ``control``; the
controller's own approvals (all ran); every human change flagged ``policy-changed``;
``pretty``: the next policy pretty-printed is recorded again by the controller (a byte
comparison) and the audit agrees.

Fixed (2026-11-29): whether a policy is recorded is a fact about the controller's own
commits, never the file's bytes. A record is a ``plangate: record policy`` commit, author and
committer the controller (and, for the controller, one its record of its commits holds),
whose ``Policy-Hash:`` names the bytes the file holds there
(``controller.approval.recorded.recorded_hash``). When the config's policy differs from its
last own record (the history index's withdraw policy), the controller makes that commit even
when the file already holds the bytes (its tree then equals its parent's), so withdrawals
after the pass are judged by the config in force (``veto-reject``, ``veto-abort``,
``veto-departed``). The audit reads the record commits, those that change no file included,
for the policy history, and a person's change of the file is ``policy-changed`` and never a
record: every honest start names a recorded policy (``revert``, ``pre-file``, ``pre-vote``,
``pre-merge``, ``first``; with ``--config`` too). The index's version is 31.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, APPROVERS, BOB, Lab, plan_text
from test_round2_execution_kit import shared

PAT = ("Pat", "pat@example.com")
OSCAR = ("Oscar", "oscar@example.com")
NINA = ("Nina", "nina@example.com")
QUINN = ("Quinn", "quinn@example.com")
RITA = ("Rita", "rita@example.com")
SAM = ("Sam", "sam@example.com")
TARA = ("Tara", "tara@example.com")
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "veto-abort-gated"
"""
VIDS = ["control", "revert", "pre-file", "pre-vote", "pre-merge", "pretty", "first"]
WHO = {"control": PAT, "revert": OSCAR, "pre-file": NINA, "pre-vote": QUINN}


def _config(lab: Lab, extra: list[str], repo: Path | None = None, state: Path | None = None) -> str:
    text = lab.config.read_text()
    first = text.split("approvers: ", 1)[1].split("\n", 1)[0]
    text = text.replace(f"approvers: {first}", f"approvers: {json.dumps(APPROVERS + extra)}")
    if repo is not None and state is not None:
        text = text.replace(f"repo: {lab.repo}", f"repo: {repo}")
        text = text.replace(f"state_dir: {lab.state}", f"state_dir: {state}")
    return text


def _bytes_of(lab: Lab, extra: list[str], name: str) -> bytes:
    """The policy.json the controller would record for ``extra``: run on a scratch repo."""
    scratch = Lab(lab.root / name)
    scratch.config.write_text(_config(lab, extra, scratch.repo, scratch.state))
    scratch.run()
    return (scratch.repo / ".plangate" / "policy.json").read_bytes()


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    v1 = ["pat@example.com", "oscar@example.com"]
    lab.config.write_text(_config(lab, v1))
    for vid in VIDS[:-1]:
        lab.write(vid, plan_text(vid))
    lab.write("veto-reject", plan_text("veto-reject"))
    lab.write("veto-departed", plan_text("veto-departed"))
    lab.write("veto-abort", plan_text("veto-abort", extra_actions=GATE))
    lab.commit("agent adds plans")
    lab.run()
    lab.approve("veto-abort", ALICE)  # action 1 runs, the plan waits at its gate
    v1_bytes = (lab.repo / ".plangate" / "policy.json").read_bytes()
    human: dict[str, str] = {}
    # control: the operator narrows (v2), the controller records it, Pat approves
    lab.config.write_text(_config(lab, ["pat@example.com"]))
    lab.run()
    record_v2 = lab.git("log", "-1", "--format=%H", "--grep=^plangate: record policy").strip()
    lab.approve("control", PAT)
    lab.run()
    # revert: the config is v1 again; the agent reverts the controller's v2 record first
    lab.config.write_text(_config(lab, v1))
    lab.git("revert", "--no-edit", record_v2, who=AGENT)
    human["revert"] = lab.head()
    lab.approve("revert", OSCAR)
    lab.run()
    # pre-file: v3 adds Nina; Alice commits v3's bytes before the pass
    v3 = [*v1, "nina@example.com"]
    v3_bytes = _bytes_of(lab, v3, "scratch3")
    lab.config.write_text(_config(lab, v3))
    (lab.repo / ".plangate" / "policy.json").write_bytes(v3_bytes)
    human["pre-file"] = lab.commit("alice records the new policy", ALICE)
    lab.approve("pre-file", NINA)
    lab.run()
    # pre-vote: v4 adds Quinn; Quinn's approval commit carries v4's bytes
    v4 = [*v3, "quinn@example.com"]
    v4_bytes = _bytes_of(lab, v4, "scratch4")
    lab.config.write_text(_config(lab, v4))
    (lab.repo / ".plangate" / "policy.json").write_bytes(v4_bytes)
    lab.set_status("pre-vote", "approved")
    human["pre-vote"] = lab.commit("approve pre-vote", QUINN)
    lab.run()
    # pre-merge: v5 adds Rita; Bob's pull request carries v5's bytes, merged --no-ff by him
    v5 = [*v4, "rita@example.com"]
    v5_bytes = _bytes_of(lab, v5, "scratch5")
    lab.config.write_text(_config(lab, v5))
    lab.git("checkout", "-q", "-b", "pr-policy")
    (lab.repo / ".plangate" / "policy.json").write_bytes(v5_bytes)
    lab.commit("bob records the new policy", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-policy", "pr-policy", who=BOB)
    human["pre-merge"] = lab.head()
    lab.approve("pre-merge", RITA)
    lab.run()
    # veto: v6 adds Sam and removes Pat; the AGENT writes v6's bytes (the recorded JSON so
    # edited, sorted and compact: RFC 8785 for this content); after a pass Sam rejects one
    # plan and aborts the other at its gate, Pat rejects a third; Alice approves all three
    recorded = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    recorded["approval"]["approvers"].remove("pat@example.com")
    recorded["approval"]["approvers"].append("sam@example.com")
    canonical = json.dumps(recorded, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    v6 = [a for a in v5 if a != "pat@example.com"] + ["sam@example.com"]
    lab.config.write_text(_config(lab, v6))
    (lab.repo / ".plangate" / "policy.json").write_text(canonical)
    human["veto"] = lab.commit("agent tidies .plangate", AGENT)
    lab.run()  # the pass that would record v6 (round 27: a withdrawal is judged by the
    # policy recorded before it, so Sam's must come after this pass to be his right)
    lab.set_status("veto-reject", "rejected")
    lab.commit("sam rejects", SAM)
    lab.set_status("veto-abort", "aborted")
    lab.commit("sam aborts", SAM)
    lab.set_status("veto-departed", "rejected")
    lab.commit("pat rejects", PAT)
    lab.run()
    lab.set_status("veto-reject", "approved")
    lab.set_status("veto-abort", "approved")
    lab.set_status("veto-departed", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    # pretty (control): v7 adds Tara; Alice commits v7 pretty-printed (not the bytes)
    recorded["approval"]["approvers"].append("tara@example.com")
    lab.config.write_text(_config(lab, [*v6, "tara@example.com"]))
    (lab.repo / ".plangate" / "policy.json").write_text(json.dumps(recorded, indent=2))
    human["pretty"] = lab.commit("alice records the new policy, readable", ALICE)
    lab.approve("pretty", TARA)
    lab.run()
    lab.run()
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env(BOB))
    result = lab.cli("audit", "--json", cwd=clone)
    lab.report = json.loads(result.stdout)  # type: ignore[attr-defined]
    lab.report_rc = result.returncode  # type: ignore[attr-defined]
    result = lab.cli("audit", "--json", "--config", str(lab.config), cwd=clone)
    lab.configured = json.loads(result.stdout)  # type: ignore[attr-defined]
    # first: a second repo under the same config as v1; the agent commits v1's bytes with
    # its plan before the controller's first pass there
    other = Lab(root / "first")
    other.config.write_text(  # the same tools (rec's argv), its own repo, state and log
        _config(lab, v1, other.repo, other.state).replace(str(lab.log), str(other.log))
    )
    other.write("first", plan_text("first"))
    (other.repo / ".plangate").mkdir()
    (other.repo / ".plangate" / "policy.json").write_bytes(v1_bytes)
    other_human = other.commit("agent adds its plan", AGENT)
    other.run()
    other.approve("first", ALICE)
    other.run()
    clone = root / "first-clone"
    subprocess.run(
        ["git", "clone", "-q", str(other.repo), str(clone)], check=True, env=lab.env(BOB)
    )
    result = other.cli("audit", "--json", cwd=clone)
    lab.other_report = json.loads(result.stdout)  # type: ignore[attr-defined]
    lab.other_rc = result.returncode  # type: ignore[attr-defined]
    lab.other_calls = len(other.calls("first"))  # type: ignore[attr-defined]
    human["first"] = other_human
    lab.human = human  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r61-prerecord", _build)


def _report(lab: Lab, vid: str) -> dict[str, Any]:
    if vid == "first":
        return lab.other_report  # type: ignore[attr-defined,no-any-return]
    return lab.report  # type: ignore[attr-defined,no-any-return]


def _starts(lab: Lab, vid: str) -> list[dict[str, Any]]:
    return [e for e in _report(lab, vid).get("executions", []) if e.get("plan") == f"plans/{vid}"]


@pytest.mark.parametrize("vid", VIDS, ids=VIDS)
def test_the_controller_runs_each_plan_its_config_allows(lab: Lab, vid: str) -> None:
    if vid == "first":
        assert lab.other_calls == 1  # type: ignore[attr-defined]
        return
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", VIDS)
def test_the_fresh_clone_audit_reaches_the_controllers_verdict(lab: Lab, vid: str) -> None:
    starts = _starts(lab, vid)
    report = _report(lab, vid)
    assert len(starts) == 1, report
    run = starts[0]
    recorded = {p["hash"] for p in report.get("policies", [])}
    bad = [f for f in report.get("findings", []) if f.get("commit") == run["start_commit"]]
    assert run["approval_valid"], run
    assert run["policy_hash"] in recorded, (run["policy_hash"], recorded)
    assert not bad, bad


@pytest.mark.parametrize(
    "tag", ["veto-reject", "veto-abort-gated"], ids=["veto-reject", "veto-abort"]
)
def test_a_withdrawal_by_an_approver_of_the_config_in_force_holds(lab: Lab, tag: str) -> None:
    slug = tag.removesuffix("-gated")
    assert lab.calls(tag) == [], lab.codes(slug)


@pytest.mark.parametrize("vid", ["veto-departed"])
def test_a_withdrawal_by_a_departed_approver_vetoes_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", ["pre-merge"])
def test_the_audit_with_the_config_reaches_the_controllers_verdict(lab: Lab, vid: str) -> None:
    report = lab.configured  # type: ignore[attr-defined]
    runs = [e for e in report["executions"] if e["plan"] == f"plans/{vid}"]
    assert len(runs) == 1 and runs[0]["approval_valid"], runs


@pytest.mark.parametrize(
    "vid", ["revert", "pre-file", "pre-vote", "pre-merge", "veto", "pretty", "first"]
)
def test_each_human_change_of_the_file_is_flagged(lab: Lab, vid: str) -> None:
    commit = lab.human[vid]  # type: ignore[attr-defined]
    report = _report(lab, vid)
    kinds = [f["kind"] for f in report.get("findings", []) if f.get("commit") == commit]
    assert "policy-changed" in kinds, report
    assert (lab.other_rc if vid == "first" else lab.report_rc) == 1  # type: ignore[attr-defined]
