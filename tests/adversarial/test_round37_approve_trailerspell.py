"""Round 37, quorum: a signed ``Plan-Approved:`` trailer naming the plan in another spelling,
as the controller, ``plangate check`` and the fresh-clone audit read it.

docs/approvals.md: a commit inside a merged branch counts when it carries ``Plan-Approved:
<plan path> <hash>`` and a good signature; "Only values under the plans folder count".
``plan: {path}`` pins accept several spellings of one folder (round 24); the trailer's path
may be spelled the same ways. Whatever the controller decides, ``check`` and ``audit`` must
reach the same verdict.

Config: ``allowed_signers`` lists Alice and Bob (``require_signed`` off); plans under
``plans/two/**`` need two approvals. Per variant the agent's ``plans/two/<vid>`` (frozen);
on a branch ``pr-<vid>`` Bob signs an empty commit ``Plan-Approved: <spelling> <hash>`` and
the agent sets ``approved``. ``plangate check --base main --head pr-<vid> --as
alice@example.com`` is recorded; Alice merges ``--no-ff``; one pass; a fresh clone's audit.

Spellings: ``exact`` (control), ``slash`` (``plans/two/<vid>/``), ``dot``
(``plans/./two/<vid>``), ``dslash`` (``plans//two/<vid>``), ``file``
(``plans/two/<vid>/PLAN.yml``), ``lead`` (``./plans/two/<vid>``), ``up``
(``plans/two/x/../<vid>``).

Whole messages (Bob's signed commit, the exact path): ``body`` (the trailer line in the
body, prose after it), ``folded`` (the hash on a continuation line), ``lower``
(``plan-approved:``), ``spaced`` (``Plan-Approved :``), ``two-hash`` / ``two-hash-rev`` (an
older hash of the plan and the current one, in both orders), ``dup`` (the same trailer
twice), ``with-plan`` (a ``Plan:`` trailer naming another plan beside it), ``with-hash`` (a
``Plan-Hash:`` naming the older hash beside it). Where the trailer commit sits: ``nested``
(a branch merged ``--no-ff`` into the pull request), ``nested-ours`` (merged ``-s ours``),
``earlier`` (merged into main before, by a merge that approves nothing).

Asserted: ``check`` predicts ``start`` exactly when the controller started the plan, and the
audit calls every such start valid.

Results: every variant held: the three tools agree. Counted: ``exact``, ``folded``,
``spaced``, ``two-hash-rev``, ``dup``, ``with-plan``, ``with-hash``, ``nested``,
``nested-ours``; not counted (``partial``): the other path spellings, ``body``, ``lower``,
``two-hash``, ``earlier``. (Observed, not a break of who may approve: a commit naming two
hashes of one plan counts when the current hash comes first, not when it comes second.)
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

SPELL = {
    "exact": "plans/two/{v}",
    "slash": "plans/two/{v}/",
    "dot": "plans/./two/{v}",
    "dslash": "plans//two/{v}",
    "file": "plans/two/{v}/PLAN.yml",
    "lead": "./plans/two/{v}",
    "up": "plans/two/x/../{v}",
}
#: whole messages: ``{p}`` is the exact path, ``{h}`` the hash, ``{o}`` an older hash
MESSAGES = {
    "body": "approve\n\nPlan-Approved: {p} {h}\n\nthanks, looks good",
    "folded": "approve\n\nPlan-Approved: {p}\n {h}",
    "lower": "approve\n\nplan-approved: {p} {h}",
    "spaced": "approve\n\nPlan-Approved : {p} {h}",
    "two-hash": "approve\n\nPlan-Approved: {p} {o}\nPlan-Approved: {p} {h}",
    "two-hash-rev": "approve\n\nPlan-Approved: {p} {h}\nPlan-Approved: {p} {o}",
    "dup": "approve\n\nPlan-Approved: {p} {h}\nPlan-Approved: {p} {h}",
    "with-plan": "approve\n\nPlan: plans/two/other\nPlan-Approved: {p} {h}",
    "with-hash": "approve\n\nPlan-Hash: {o}\nPlan-Approved: {p} {h}",
}
for _v in MESSAGES:
    SPELL[_v] = ""
#: where Bob's exact trailer commit sits: in a branch merged into the pull request
#: (``--no-ff`` or ``-s ours``), or merged into main earlier by a merge that approves nothing
WHERE = ["nested", "nested-ours", "earlier"]
for _v in WHERE:
    SPELL[_v] = "plans/two/{v}"
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(
        approval=f"allowed_signers: {signers}\n"
        'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in SPELL:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    old = {v: lab.plan(f"two/{v}")["frozen"]["hash"] for v in MESSAGES}
    for vid in MESSAGES:
        text = lab.read(f"two/{vid}")
        lab.write(f"two/{vid}", text.replace('task: "', 'task: "v2 '))
    lab.commit("agent edits", AGENT)
    lab.run()
    time.sleep(1.05)
    checks: dict[str, Any] = {}
    for vid, spell in SPELL.items():
        digest = lab.plan(f"two/{vid}")["frozen"]["hash"]
        if vid == "earlier":
            lab.git("checkout", "-q", "-b", "t-earlier", "main")
            lab.git(*_sign_args(lab, "bob"), "commit", "-q", "-S", "--allow-empty", "-m",
                    f"approve\n\nPlan-Approved: plans/two/{vid} {digest}", who=BOB)  # fmt: skip
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--no-ff", "-m", "merge t-earlier", "t-earlier", who=AGENT)
            lab.run()
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        if vid == "earlier":
            pass
        elif vid.startswith("nested"):
            lab.git("checkout", "-q", "-b", f"sub-{vid}")
            lab.git(*_sign_args(lab, "bob"), "commit", "-q", "-S", "--allow-empty", "-m",
                    f"approve\n\nPlan-Approved: plans/two/{vid} {digest}", who=BOB)  # fmt: skip
            lab.git("checkout", "-q", f"pr-{vid}")
            (lab.repo / f"NOTE-{vid}").write_text("x\n")
            lab.commit("agent note", AGENT)
            strategy = ["-s", "ours"] if vid == "nested-ours" else []
            lab.git("merge", "-q", "--no-ff", *strategy, "-m", "merge sub", f"sub-{vid}", who=AGENT)
        elif vid in MESSAGES:
            message = MESSAGES[vid].format(p=f"plans/two/{vid}", h=digest, o=old[vid])
        else:
            message = f"approve (trailer)\n\nPlan-Approved: {spell.format(v=vid)} {digest}"
        lab.git(*_sign_args(lab, "bob"), "commit", "-q", "-S", "--allow-empty", "-m", message,
                who=BOB)  # fmt: skip
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        lab.git("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", ALICE[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        rows = [
            p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/two/{vid}"
        ]
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:]}
        lab.git("merge", "-q", "--no-ff", "-m", f"merge pr-{vid}", f"pr-{vid}", who=ALICE)
    lab.run()
    (root / "checks.json").write_text(json.dumps(checks))
    lab.git("clone", "-q", str(lab.repo), str(root / "fresh"))
    audit = lab.cli("audit", "--json", cwd=root / "fresh")  # one audit, read by every variant
    (root / "audit.json").write_text(json.dumps({"out": audit.stdout, "err": audit.stderr}))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-trailerspell", _build)


def _p() -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in SPELL]


@pytest.mark.parametrize("vid", _p())
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    row = json.loads((lab.root / "checks.json").read_text())[vid]
    started = lab.started(f"two/{vid}")
    assert (row.get("outcome") == "start") == started, (row, started, lab.codes(f"two/{vid}"))


@pytest.mark.parametrize("vid", _p())
def test_audit_agrees(lab: Lab, vid: str) -> None:
    result = json.loads((lab.root / "audit.json").read_text())
    assert "Traceback" not in result["err"], result["err"][-2000:]
    report = json.loads(result["out"])
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/two/{vid}"]
    assert all(e.get("approval_valid") for e in runs), json.dumps(runs)
    assert bool(runs) == lab.started(f"two/{vid}") == (len(lab.calls(vid)) == 1)
