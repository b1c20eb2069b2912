"""Round 81, approval side: ``require_signed`` approvals whose commit is signed by a key that
NAMES an approver (its comment is the approver's address) but that ``allowed_signers`` does
not list (docs/approvals.md, the §5 table: "``git verify-commit`` accepts the commit (with
``gpg.ssh.allowedSignersFile`` = ``allowed_signers``), the signer is an approver, the signer is
the approver identity"; "Approvals inside a pull request": a ``Plan-Approved:`` commit counts
only when ``verify-commit`` accepts it with ``allowed_signers``), and ``plangate check`` of a
signed pull request ("check predicts the merge signed by ``--as`` with a key
``allowed_signers`` lets them sign git commits with").

Lab (one, local mode, real clock: signatures are checked at the verifier's clock). Keys
as ``signkit.signed_lab`` makes them (Alice, Bob, Carol, the controller's ``bot``, a CA),
plus two the agent makes itself: ``ralice`` (comment ``Alice <alice@example.com>``) and
``rbob`` (comment ``bob@ops.example.com``), in no ``allowed_signers`` line. The controller
signs its commits. The agent writes ``plans/<id>``; P0 freezes. Then, by id:

- ``ctl`` (control): Alice sets ``approved`` signed with her listed key: runs once;
- ``prctl`` (control): Alice's signed approval on her branch, ``check --as alice``
  predicts ``start``, she merges ``--no-ff`` signed: runs once;
- ``rogue``: the agent commits as Alice, signed with ``ralice``: ``E_SIGNATURE_INVALID``,
  never runs;
- ``roguebob``: the same as Bob with ``rbob``: never runs;
- ``swapkey``: a commit authored as ALICE signed with BOB's listed key (the signer is not the
  approver identity): never runs;
- ``rogueside``: on the agent's branch an empty commit with ``Plan-Approved: plans/<id>
  <hash>`` signed with ``ralice`` and the agent's ``approved``, the agent merges it (signed
  with ``rbob``): never runs; ``check --as agent`` must not predict ``start``;
- ``rogueffwd``: the agent's ``approved`` commit as Alice signed with ``ralice`` on a
  branch, main fast-forwarded onto it: never runs;
- ``roguepr``: ``rogue`` on a branch merged ``--no-ff`` by Bob signed with his listed key
  (Bob's request: runs at most once, and then on Bob).

What must hold: the tag runs as ``WANT`` says, a counted run's approver is never the agent
nor Alice for a version only a rogue key "approved", ``check`` agreed with the pass, and a
fresh clone's audit agrees with the controller.

Seen (round 81): no break. A key whose comment names Alice or Bob but that no
``allowed_signers`` line lists was refused ``E_SIGNATURE_INVALID`` on the line (``rogue``,
``roguebob``), brought in by a fast-forward (``rogueffwd``), and so was Bob's listed key on a
commit authored as Alice (``swapkey``); the rogue-signed ``Plan-Approved:`` trailer inside a
branch the agent merged counted nothing (``rogueside``), and ``roguepr`` ran once on Bob's
signed merge (his own request; the rogue commit inside counted nothing). ``check`` agreed
with the pass on ``prctl`` (start), ``rogueside`` and ``roguepr``; the controls ran once and
the fresh clone's audit agreed on every id.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from signkit import signed_lab, signed_run
from test_round2_execution_kit import shared

ALL = ["ctl", "prctl", "rogue", "roguebob", "swapkey", "rogueside", "rogueffwd", "roguepr"]
CONTROLS = ["ctl", "prctl"]
WANT: dict[str, tuple[int, int]] = {v: (0, 0) for v in ALL}
WANT.update({"ctl": (1, 1), "prctl": (1, 1), "roguepr": (0, 1)})
NEVER: dict[str, set[str]] = {v: {AGENT[1]} for v in ALL}
for _v in ("rogue", "rogueside", "rogueffwd", "roguepr", "swapkey"):
    NEVER[_v].add(ALICE[1])
NEVER["roguebob"].add(BOB[1])
CHECKS = {"prctl": ALICE[1], "rogueside": AGENT[1], "roguepr": BOB[1]}

RUNS_BROKEN: dict[str, Any] = {}
BROKEN: dict[str, Any] = {}
CHECK_BROKEN: dict[str, Any] = {}


def _git_signed(lab: Lab, key: str, *args: str, who: tuple[str, str]) -> str:
    path = lab.root / "keys" / key
    lab.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={path}", *args, who=who)
    return lab.head()


def _build(root: Path) -> Lab:
    lab, _exp = signed_lab(root / "lab", valid_for=3600)
    keys = lab.root / "keys"
    for name, comment in (("ralice", "Alice <alice@example.com>"), ("rbob", "bob@ops.example.com")):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(keys / name)],
            check=True,
            capture_output=True,
        )
    for v in ALL:
        lab.write(v, plan(v))
    lab.commit("agent plans")
    signed_run(lab)  # P0

    def vote(v: str, key: str, who: tuple[str, str]) -> None:
        lab.set_status(v, "approved")
        lab.git("add", "-A")
        _git_signed(lab, key, "commit", "-q", "-S", "-m", f"approve {v}", who=who)

    vote("ctl", "alice", ALICE)
    vote("rogue", "ralice", ALICE)
    vote("roguebob", "rbob", BOB)
    vote("swapkey", "bob", ALICE)
    tip = lab.head()
    lab.git("checkout", "-q", "-b", "b-rogueffwd", tip)
    vote("rogueffwd", "ralice", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "b-rogueffwd")
    tip = lab.head()
    lab.git("checkout", "-q", "-b", "b-prctl", tip)
    vote("prctl", "alice", ALICE)
    lab.git("checkout", "-q", "-b", "b-roguepr", tip)
    vote("roguepr", "ralice", ALICE)
    lab.git("checkout", "-q", "-b", "b-rogueside", tip)
    doc = lab.plan("rogueside")
    digest = (doc.get("frozen") or doc["plan"].get("frozen"))["hash"]
    _git_signed(
        lab, "ralice", "commit", "-q", "-S", "--allow-empty", "-m",
        f"approve plans/rogueside (trailer)\n\nPlan-Approved: plans/rogueside {digest}\n",
        who=ALICE,
    )  # fmt: skip
    lab.set_status("rogueside", "approved")
    lab.commit("agent: ask rogueside")
    lab.git("checkout", "-q", "main")
    checks: dict[str, Any] = {}
    for v, who in CHECKS.items():
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"b-{v}",
            "--as", who, "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        checks[v] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.checks = checks  # type: ignore[attr-defined]
    _git_signed(
        lab, "alice", "merge", "-q", "--no-ff", "-S", "-m", "merge prctl", "b-prctl", who=ALICE
    )
    _git_signed(
        lab, "bob", "merge", "-q", "--no-ff", "-S", "-m", "merge roguepr", "b-roguepr", who=BOB
    )
    _git_signed(
        lab, "rbob", "merge", "-q", "--no-ff", "-S", "-m", "merge rogueside", "b-rogueside",
        who=AGENT,
    )  # fmt: skip
    signed_run(lab)  # P1
    signed_run(lab)  # P2
    st = lab.status()
    lab.final = {v: json.dumps(st.get(f"plans/{v}", {})) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-roguekeys", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str(lab.final[v])[:3000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, RUNS_BROKEN))
def test_the_version_runs_as_often_as_its_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid]
    n = len(lab.calls(vid))
    assert least <= n <= most, (n, said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_no_counted_run_rests_on_a_rogue_key(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    for r in runs:
        assert str(r.get("approver")) not in NEVER[vid], runs
    assert len(runs) == len(lab.calls(vid)), (runs, said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted(str(e.get("approver")) for e in mine) == sorted(
        str(e.get("approver")) for e in fresh
    ), (mine, fresh)
    assert len(fresh) == len(lab.calls(vid)), (fresh, said(lab, vid))


CHECKED = list(CHECKS)


@pytest.mark.parametrize("vid", cases(CHECKED, CHECKED, CHECK_BROKEN))
def test_check_predicted_what_the_pass_then_did(lab: Lab, vid: str) -> None:
    row = lab.checks[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{vid}"]
    predicted = bool(mine) and mine[0].get("outcome") == "start"
    assert predicted == (len(lab.calls(vid)) > 0), (json.dumps(mine)[:3000], said(lab, vid))


REFUSED = ["rogue", "roguebob", "swapkey", "rogueffwd"]


@pytest.mark.parametrize("vid", cases(REFUSED, REFUSED, BROKEN))
def test_a_rogue_signature_is_refused_with_its_code(lab: Lab, vid: str) -> None:
    assert "E_SIGNATURE_INVALID" in lab.final[vid], said(lab, vid)  # type: ignore[attr-defined]
