"""Round 75, agent-facing surfaces: round 74's one name function (case, HFS+ ignorables,
NTFS's trailing dots and 8.3 short names) applied ABOVE the plan folders: to the plans folder
itself and to the controller's ``.plangate/`` record folder. A checkout that folds names
makes ``PLANS/ok/PLAN.yml`` or ``plans./ok/PLAN.yml`` the file ``plans/ok/PLAN.yml``, and
``.PLANGATE/policy.json`` or ``PLANGA~1/policy.json`` (the 8.3 short name of ``.plangate``)
the recorded policy ``.plangate/policy.json``; the controller and the fresh-clone audit read
git, where they are other paths.

Lab (one, module scope; three ``run --once`` passes):
- the agent commits ``plans/ok`` and ``plans/self`` (pending); alias trees, each already
  ``approved``: ``PLANS/px`` (``rec px``), ``Plans/ok`` (the same name and task as
  ``plans/ok``, ``rec ok-alias``), ``plans./py`` (``rec py``), ``plans\u200c/pz`` (U+200C
  in the plans folder's name, ``rec pz``);
- after pass 1 (the controller's ``plangate: record policy`` is on the branch) the agent
  commits copies of ``.plangate/policy.json`` naming itself as the controller's identity
  and as an approver at ``.PLANGATE/policy.json``, ``PLANGA~1/policy.json`` and
  ``.plangate./policy.json``, and sets its own ``plans/self`` ``approved``; Alice approves
  ``plans/ok``; passes 2 and 3.
Variants (``<id>:<what>``): ``alias-{px,ok,py,pz}:{ran,row}`` (never run, no row: they are
no plans under the plans folder), ``ok:ran`` (the control: once, approved by alice),
``self:{ran,row}`` (the agent's own approval under its forged policy twins: never runs,
refused or ignored), ``policy-{upper,83,dot}:audit`` (the fresh-clone ``plangate audit
--json`` without a config neither stops ``E_CONFIG_INVALID`` on a second identity nor takes
the twin as a recorded policy: it exits 0 and its valid runs are the completed rows),
``policy:record`` (the controller's next passes record no policy change).
Must hold: nothing outside ``plans/`` runs; ``self`` never runs; the audit agrees; and
(``policy-{upper,83,dot}:flagged``) the audit flags the agent's twin of the policy record
``policy-changed``, as it flags a human edit of ``.plangate/policy.json``.

Seen (round 75):
- ``policy-{upper,83,dot}:flagged`` (3 ids, one class, minor): the agent's forged copies of
  the recorded policy (the agent as the controller's identity and an approver,
  ``allow_self_approval``) at ``.PLANGATE/policy.json``, ``PLANGA~1/policy.json`` and
  ``.plangate./policy.json`` get no finding: ``plangate audit --json`` on a fresh clone
  reports ``findings: []``. On an 8.3 checkout ``PLANGA~1`` is ``.plangate`` (git writes it
  after the real record), on a case-insensitive one ``.PLANGATE`` is. Should
  (docs/approvals.md, "The recorded policy": "A human commit that edits, forges or deletes
  the file changes nothing the controller decides ... and is flagged by the audit"; round 74:
  names compared as the file systems git guards a checkout against compare them):
  ``policy-changed`` naming the twin. Nothing else follows: the controller and the audit
  decide by the controller's own record commits (one ``record policy``, the audit's single
  policy), ``self`` was refused ``E_APPROVER_NOT_ALLOWED``. Fixed (2026-11-30,
  r75twinfold): the audit walks the record's twin paths (``recorded.TWIN_SPECS``) and reports
  each (``recorded.is_twin``: ``names.same_path``) ``policy-changed`` naming it, as a note
  (not a finding: git holds the record untouched, every verdict follows the controller's
  record commits, and ``policy-{upper,83,dot}:audit`` keeps its exit 0).
Round 84 (r84plansdir, 2026-12-01): another spelling of the plans folder is the plans folder for
what lands there: ``Plans/ok/PLAN.yml`` (other bytes) is a twin claim of ``plans/ok``'s plan
file, so ``plans/ok`` is held ``E_PLAN_AMBIGUOUS`` and never runs (``ok:ran`` and the audit ids
now say so; round 84's ``planstwin`` ``mc``, ``uc``); the aliases are still no plans.
Held: ``PLANS/px``, ``Plans/ok`` (other bytes beside the real ``plans/ok``), ``plans./py``,
``plans<U+200C>/pz``, each committed ``approved``, are no plans: no row, never frozen or run;
``plans/ok`` ran once, approved by alice; the agent's self-approval under its forged policy
twins was refused; the audit (exit 0, no second identity, ``E_CONFIG_INVALID`` never raised)
lists exactly the completed run.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

ALIASES = {"px": "PLANS/px", "ok": "Plans/ok", "py": "plans./py", "pz": "plans\u200c/pz"}
POLICY = {"upper": ".PLANGATE", "83": "PLANGA~1", "dot": ".plangate."}


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    lab.write("ok", plan_text("ok"))
    lab.write("self", plan_text("self"))
    for tag, where in ALIASES.items():
        path = lab.repo / where / "PLAN.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = plan_text("ok-alias" if tag == "ok" else tag, "approved", name=tag)
        path.write_text(text)
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    recorded = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    forged = json.loads(json.dumps(recorded).replace("plangate@localhost", AGENT[1]))
    forged["approval"]["approvers"] = [*forged["approval"]["approvers"], AGENT[1]]
    forged["approval"]["allow_self_approval"] = True
    for folder in POLICY.values():
        path = lab.repo / folder / "policy.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(forged, sort_keys=True, separators=(",", ":")))
    lab.set_status("self", "approved")
    lab.commit("agent: notes and my approval", AGENT)
    lab.set_status("ok", "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got: dict[str, Any] = {}
    cfg = str(lab.config)
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = ["ok", "self", "ok-alias", "px", "py", "pz"]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    done = lab.cli("audit", "--json", cwd=clone)
    got["audit-rc"], got["audit-err"] = done.returncode, done.stderr[-1500:]
    report = json.loads(done.stdout or "{}")
    got["audit"] = {
        "valid": sorted(e["plan"] for e in report.get("executions", []) if e.get("approval_valid")),
        "runs": len(report.get("executions", [])),
        "text": done.stdout[-4000:],
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-surface-topnames", _build)


AIDS = [f"alias-{t}:{w}" for t in ALIASES for w in ("ran", "row")]


@pytest.mark.parametrize("vid", cases(AIDS, AIDS, {}))
def test_a_plans_folder_alias_is_no_plan(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.removeprefix("alias-").split(":")
    if what == "ran":
        assert got["calls"]["ok-alias" if tag == "ok" else tag] == 0, got["calls"]
        assert not [s for s in got["subjects"] if ALIASES[tag] in s], got["subjects"]
    else:
        assert not [p for p in got["rows"] if not p.startswith("plans/")], sorted(got["rows"])
        assert f"plans/{ALIASES[tag]}" not in got["rows"], sorted(got["rows"])


SIDS = ["ok:ran", "self:ran", "self:row", "policy:record"]


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, {}))
def test_the_control_runs_and_the_forged_policy_twins_decide_nothing(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    if vid == "ok:ran":
        # round 84 (r84plansdir): ``Plans/ok/PLAN.yml`` (other bytes) IS ``plans/ok/PLAN.yml``
        # on a case-insensitive checkout: a twin claim that holds ``plans/ok``, no plan itself
        row = got["rows"]["plans/ok"]
        assert got["calls"]["ok"] == 0 and got["calls"]["ok-alias"] == 0, (got["calls"], row)
        assert "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    elif vid == "self:ran":
        assert got["calls"]["self"] == 0, got["calls"]
    elif vid == "self:row":
        assert got["rows"]["plans/self"]["status"] != "completed", got["rows"]["plans/self"]
    else:
        records = [s for s in got["subjects"] if "record policy" in s]
        assert records == ["plangate plangate: record policy"], records


PIDS = [f"policy-{k}:audit" for k in POLICY]


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, {}))
def test_the_fresh_clone_audit_reads_no_policy_twin(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert got["audit-rc"] == 0, (got["audit-rc"], got["audit-err"])
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed == [], got["audit"]  # ``plans/ok`` held (round 84)
    assert got["audit"]["runs"] == 0, got["audit"]
    folder = POLICY[vid.split(":")[0].removeprefix("policy-")]
    assert f"{folder}/policy.json" not in got["audit-err"], got["audit-err"]


FIDS = [f"policy-{k}:flagged" for k in POLICY]
FBROKEN: dict[str, Any] = {}  # fixed (r75twinfold): the audit notes a twin policy-changed


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, FBROKEN))
def test_a_policy_record_twin_is_flagged(lab: Lab, vid: str) -> None:
    """docs/approvals.md ("The recorded policy"): "A human commit that edits, forges or deletes
    the file ... is flagged by the audit" (``policy-changed``). ``PLANGA~1/policy.json`` is
    written after ``.plangate/policy.json`` on an 8.3 checkout (``.`` sorts before ``P``) and
    IS that file there; ``.PLANGATE/`` is one folder with it on a case-insensitive one.
    Minor: the file is a record, not an input, and the audit decides by the controller's
    own record commits; only a reader of the checkout's file is shown the agent's policy."""
    got = lab.got  # type: ignore[attr-defined]
    folder = POLICY[vid.split(":")[0].removeprefix("policy-")]
    assert "policy-changed" in got["audit"]["text"], got["audit"]["text"][-1500:]
    assert folder in got["audit"]["text"], got["audit"]["text"][-1500:]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r75tn-", dir="/tmp/atk75b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
