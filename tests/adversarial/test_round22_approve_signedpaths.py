"""Round 22, who may make a plan run, with ``require_signed``: a signing key that wrote the
content through a merged branch, an evil merge, a pure move or a ``-s ours`` merge followed
by a copy; and the same key's ``Plan-Approved:`` trailer in a pull request.

Config: ``require_signed: true``; ``allowed_signers`` lists Alice, Bob and Carol; one
approval, except ``plans/two/**`` (two). Every commit below is made under the agent's name
(author and committer ``Agent``) but signed with Bob's key, unless said otherwise; the
controller freezes; Bob then approves on main, signed, as himself. Defence:
``E_SELF_APPROVAL`` (the key made the content), ``rec`` never runs:

- ``br-signed``: the plan added on a side branch (Bob's key), merged ``--no-ff`` by the agent
  (unsigned merge).
- ``evil-signed``: the agent's side branch adds the plan; the merge commit (``Agent``,
  signed by Bob's key) changes its params (an evil merge).
- ``mv-author``: the agent's plan, moved to its final folder by Bob (author, unsigned).
- ``mv-signed``: the agent's plan, moved by a commit signed with Bob's key.
  (Since round 69 a byte-exact move writes nothing: both now run once on Bob's approval,
  the mover being no writer; ``test_the_mover_of_the_agents_plan_is_no_writer``.)
- ``ours-copy-signed``: the plan added on a side branch (Bob's key), merged ``-s ours`` by
  the agent (nothing lands), then the agent commits the same bytes on main.
- ``trailer-writer`` (``plans/two``): the plan committed on main with Bob's key; in a pull
  request Bob adds a signed ``Plan-Approved:`` trailer commit, the agent sets ``approved``,
  Alice merges (signed). Defence: ``partial`` with Alice's vote only.

Control: ``ctl`` (the agent's unsigned plan, Bob's signed approval) runs once.

``check-*`` (does ``plangate check`` reach the controller's verdict?): the agent's plan,
frozen; a pull request in which the agent sets ``approved`` (``chk-one``, one approval), or
Bob adds a signed ``Plan-Approved:`` trailer and the agent sets ``approved``
(``two/chk-two``, two approvals). CI runs ``plangate check --base main --head pr-<vid>
--as alice@example.com --format json``; Alice then merges ``--no-ff -S`` (signed with her
listed key); one controller pass. Defence: ``check`` predicts ``start`` exactly when the
controller started the plan.

Results: every self-approval variant held (``E_SELF_APPROVAL``; ``trailer-writer``
``partial`` with Alice only); the control ran once. ``check-chk-one`` and ``check-chk-two``
BROKE (strict xfails): ``check`` predicts ``outcome: refuse`` with the merge refused
``E_SIGNATURE_INVALID`` ("git verify-commit refused <sha>: no signature": the simulated merge
commit is unsigned, whatever ``--as`` will sign with), while the controller started both on
Alice's signed merge (``rec`` ran; for ``chk-two`` Bob's trailer and Alice's merge counted).
Under ``require_signed``, CI's prediction for a reviewed pull request is always "refuse"
(exit 1), never the controller's verdict.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

CHECKS = {"chk-one": "chk-one", "chk-two": "two/chk-two"}
VIDS = ["br-signed", "evil-signed", "ours-copy-signed"]
#: a byte-exact move writes nothing since round 69 (docs/approvals.md): the mover approves
MOVERS = ["mv-author", "mv-signed"]


def _signed(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "--allow-empty", "-m", message, who=who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob", "carol")}
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n"
        f"carol@ops.example.com {pubs['carol']}\n"
    )
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    g = lab.git
    # br-signed
    g("checkout", "-q", "-b", "s-br")
    lab.write("br-signed", plan_text("br-signed"))
    _signed(lab, "bob", AGENT, "add br-signed")
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "-q", "-m", "merge s-br", "s-br", who=AGENT)
    # evil-signed
    g("checkout", "-q", "-b", "s-evil")
    lab.write("evil-signed", plan_text("evil-signed", params="x: 1\n"))
    lab.commit("add evil-signed", AGENT)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "--no-commit", "s-evil", who=AGENT)
    lab.write("evil-signed", plan_text("evil-signed", params="x: 2\n"))
    _signed(lab, "bob", AGENT, "merge s-evil")
    # mv-author / mv-signed
    lab.write("mva-src", plan_text("mv-author"))
    lab.write("mvs-src", plan_text("mv-signed"))
    lab.commit("agent adds", AGENT)
    g("mv", "plans/mva-src", "plans/mv-author")
    lab.commit("bob moves", BOB)
    g("mv", "plans/mvs-src", "plans/mv-signed")
    _signed(lab, "bob", AGENT, "moves")
    # ours-copy-signed
    g("checkout", "-q", "-b", "s-oc")
    lab.write("oc-src", plan_text("ours-copy-signed"))
    _signed(lab, "bob", AGENT, "draft")
    g("checkout", "-q", "main")
    g("merge", "-s", "ours", "-q", "-m", "merge s-oc ours", "s-oc", who=AGENT)
    lab.write("ours-copy-signed", g("show", "s-oc:plans/oc-src/PLAN.yml"))
    lab.commit("agent copies", AGENT)
    # trailer-writer and the control
    lab.write("two/trailer-writer", plan_text("trailer-writer"))
    _signed(lab, "bob", AGENT, "add trailer-writer")
    lab.write("ctl", plan_text("ctl"))
    lab.write("chk-one", plan_text("chk-one"))
    lab.write("two/chk-two", plan_text("chk-two"))
    lab.commit("add ctl and the check plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in [*VIDS, *MOVERS, "ctl"]:
        lab.set_status(vid, "approved")
        _signed(lab, "bob", BOB, f"approve {vid}")
    digest = lab.plan("two/trailer-writer")["frozen"]["hash"]
    g("checkout", "-q", "-b", "pr-tw")
    _signed(
        lab,
        "bob",
        BOB,
        "approve plans/two/trailer-writer (trailer)\n\n"
        f"Plan-Approved: plans/two/trailer-writer {digest}",
    )
    lab.set_status("two/trailer-writer", "approved")
    lab.commit("agent sets approved", AGENT)
    g("checkout", "-q", "main")
    g(*_sign_args(lab, "alice"), "merge", "--no-ff", "-S", "-q", "-m", "merge pr-tw", "pr-tw",
      who=ALICE)  # fmt: skip
    lab.run()
    # check-*: what `plangate check --as alice` predicts for a pull request Alice will merge
    # signed, and what the controller then does
    checks: dict[str, Any] = {}
    for vid, slug in CHECKS.items():
        g("checkout", "-q", "-b", f"pr-{vid}")
        if vid == "chk-two":
            digest = lab.plan(slug)["frozen"]["hash"]
            _signed(
                lab, "bob", BOB, f"approve {slug} (trailer)\n\nPlan-Approved: plans/{slug} {digest}"
            )
        lab.set_status(slug, "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", ALICE[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        rows = [p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{slug}"]
        checks[vid] = rows[0] if rows else {}
        g(*_sign_args(lab, "alice"), "merge", "--no-ff", "-S", "-q", "-m", f"merge pr-{vid}",
          f"pr-{vid}", who=ALICE)  # fmt: skip
    lab.run()
    (lab.root / "checks.json").write_text(json.dumps(checks))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r22-signedpaths", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_the_signing_writer_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


@pytest.mark.parametrize("vid", MOVERS)
def test_the_mover_of_the_agents_plan_is_no_writer(lab: Lab, vid: str) -> None:
    """Since round 69 (r69date, one rule for moves): a plan file moved with its bytes kept
    writes nothing, so Bob, who only moved the agent's plan (signed or not), approves it as
    anyone who did not write it: it runs once (round 22 counted the move as writing)."""
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_signing_writers_trailer_is_no_vote(lab: Lab) -> None:
    slug = "two/trailer-writer"
    assert lab.calls("trailer-writer") == [], lab.codes(slug)
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
    assert [a["by"] for a in approval.get("approvals", [])] == [ALICE[1]], approval


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


#: What round 22 found (fixed: check predicts the merge signed by --as with a listed key).
FOUND = {
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 22: under require_signed, plangate check --as the merger predicts "
        "'refuse' (E_SIGNATURE_INVALID, 'no signature' for the simulated merge) for a pull "
        "request whose signed merge the controller then starts",
    )
    for vid in CHECKS
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=f"check-{v}", marks=BROKEN.get(v, ())) for v in CHECKS]
)
def test_check_predicts_what_the_controller_did(lab: Lab, vid: str) -> None:
    row = json.loads((lab.root / "checks.json").read_text())[vid]
    started = lab.started(CHECKS[vid])
    assert (row.get("outcome") == "start") == started, (row, started, lab.codes(CHECKS[vid]))
