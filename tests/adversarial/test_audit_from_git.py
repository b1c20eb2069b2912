"""Property: git history alone proves what ran and why (SPEC §8 audit, §11 recorded policy).

Attacks on the audit: change the config after honest runs (the approver has left, the tool is
retired, nobody may approve any more) so a config-reading audit flags honest history; audit a
fresh clone with no config at all; and tamper with history after runs (a human edits
EXECUTION_LOG.md, the ``approval:`` or ``execution:`` block, the content of a finished plan,
sets a controller-only status, forges a start/complete pair under the controller's name, or
forges / deletes the recorded policy ``.plangate/policy.json``). Defence: honest history
audits clean whatever today's config says (and with none), every tampering is flagged.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, plan_text, play
from test_round2_execution_kit import shared


def submit(lab: Lab, vid: str) -> None:
    text = plan_text(vid)
    if vid == "retired":
        text = text.replace("rec", "old")
    lab.write(vid, text)
    lab.commit(f"add {vid}", AGENT)


def approve(lab: Lab, vid: str) -> None:
    lab.approve(vid, ALICE)


def _build_honest(root: Path) -> Lab:
    lab = Lab(root)
    lab.write_config(tools="old: {kind: echo}\n")
    play(lab, {"left": [submit, approve], "retired": [submit, approve]})
    assert len(lab.calls("left")) == 1
    return lab


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-audit-honest", _build_honest)


def _config(lab: Lab, name: str, old: str, new: str) -> Path:
    path = lab.root / f"{name}.yml"
    text = lab.config.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def _clean(code: int, report: dict[str, Any]) -> None:
    assert code == 0, report
    assert report.get("findings") == [], report
    assert {e["plan"] for e in report["executions"]} == {"plans/left", "plans/retired"}
    assert all(e["approval_valid"] for e in report["executions"]), report


def test_honest_history_audits_clean_with_its_config(honest: Lab) -> None:
    _clean(*honest.audit(config=honest.config))


CHANGES = {
    "approver-left": ('approvers: ["alice@example.com", ', "approvers: ["),
    "nobody-may-approve": (
        'approvers: ["alice@example.com", "*@ops.example.com"]',
        "approvers: []",
    ),
    "tool-retired": ("old: {kind: echo}\n", ""),
}


@pytest.mark.parametrize("vid", list(CHANGES))
def test_a_later_config_change_does_not_flag_honest_history(honest: Lab, vid: str) -> None:
    config = _config(honest, vid, *CHANGES[vid])
    _clean(*honest.audit(config=config))


def test_a_fresh_clone_audits_with_no_config_at_all(honest: Lab, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", str(honest.repo), str(clone)], check=True, env=honest.env()
    )
    result = honest.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    _clean(result.returncode, report)


def test_the_policy_is_recorded_in_git(honest: Lab) -> None:
    log = honest.git("log", "--format=%ae %s", "--", ".plangate/policy.json")
    assert log.strip(), "no .plangate/policy.json on the branch"
    assert all(line.startswith(BOT[1]) for line in log.splitlines())
    json.loads(honest.git("show", "HEAD:.plangate/policy.json"))


def test_every_start_commit_names_its_policy(honest: Lab) -> None:
    out = honest.git("log", "--format=%s%x00%(trailers:key=Policy-Hash,valueonly)%x01")
    starts = [r.split("\0") for r in out.split("\x01") if r.strip().startswith("plangate: start")]
    assert starts and all(value.strip() for _, value in starts), starts


# -- tampering after honest runs -----------------------------------------------------------


def _edit(mutate: Any, filename: str = "PLAN.yml", who: tuple[str, str] = AGENT) -> Any:
    def step(lab: Lab, vid: str) -> None:
        path = lab.repo / "plans" / vid / filename
        path.write_text(mutate(path.read_text()))
        lab.commit(f"tidy {vid}", who)

    return step


def _forge_run(lab: Lab, vid: str) -> None:
    """A start and a complete commit under the controller's name for a plan nobody approved."""
    for status in ("executing", "completed"):
        lab.set_status(vid, status)
        event = "start" if status == "executing" else "complete"
        message = f"plangate: {event} plans/{vid}\n\nPlan: plans/{vid}\nPlan-Status: {status}\n"
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", message, who=BOT)


def _policy(mode: str) -> Any:
    def step(lab: Lab, vid: str) -> None:
        path = lab.repo / ".plangate" / "policy.json"
        if mode == "forge":
            path.parent.mkdir(exist_ok=True)
            data = json.loads(path.read_text()) if path.exists() else {}
            data["approvers"] = [*data.get("approvers", []), "mallory@example.com"]
            path.write_text(json.dumps(data))
        elif mode == "garbage":
            path.write_text("not the controller's policy\n")
        elif mode == "merged":  # an approver merges a branch that edits the policy
            lab.git("switch", "-q", "-c", "policy-edit")
            doc = json.loads(path.read_bytes())
            doc["approval"]["approvers"].append("mallory@example.com")
            path.write_bytes(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
            lab.commit("policy: widen approvers", AGENT)
            lab.git("switch", "-q", "main")
            lab.git("merge", "-q", "--no-ff", "-m", "merge policy-edit", "policy-edit", who=ALICE)
            POLICY_COMMITS[vid] = lab.head()
            return
        elif path.exists():
            path.unlink()
        POLICY_COMMITS[vid] = lab.commit(f"policy {mode}", AGENT)

    return step


TAMPER = {
    "log-edited": [
        submit,
        approve,
        _edit(lambda t: t + "\nAll good, signed off by the CEO.\n", "EXECUTION_LOG.md"),
    ],
    "approval-block-edited": [
        submit,
        approve,
        _edit(lambda t: t.replace("by: alice@example.com", "by: bob@ops.example.com")),
    ],
    "execution-block-edited": [
        submit,
        approve,
        _edit(lambda t: t.replace("status: succeeded", "status: skipped")),
    ],
    "content-after-run": [
        submit,
        approve,
        _edit(
            lambda t: t.replace(
                'tag: "content-after-run"', 'tag: "content-after-run"\n      extra: 1'
            )
        ),
    ],
    "illegal-status": [
        submit,
        _edit(lambda t: t.replace("status: pending_approval", "status: completed")),
    ],
    "forged-run": [submit, _forge_run],
    "forged-run-by-approver": [
        submit,
        _edit(lambda t: t.replace("status: pending_approval", "status: executing"), who=ALICE),
    ],
}
POLICY_TAMPER = {  # in this order: the merge edits the controller's own record
    "policy-merged": _policy("merged"),
    "policy-forged": _policy("forge"),
    "policy-garbage": _policy("garbage"),
    "policy-deleted": _policy("delete"),
}
#: variant -> the commit that made the change
POLICY_COMMITS: dict[str, str] = {}


def _build_tampered(root: Path) -> Lab:
    lab = Lab(root)
    scenarios: dict[str, list[Any]] = dict(TAMPER)
    scenarios["honest"] = [submit, approve]
    play(lab, scenarios)
    for vid, step in POLICY_TAMPER.items():
        step(lab, vid)
    code, report = lab.audit(config=lab.config)
    assert code == 1, report
    lab.report = report  # type: ignore[attr-defined]
    lab.policy_commits = dict(POLICY_COMMITS)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lab, dict[str, Any]]:
    lab = shared(tmp_path_factory, "adv-audit-tampered", _build_tampered)
    POLICY_COMMITS.update(lab.policy_commits)  # type: ignore[attr-defined]  # built elsewhere
    return lab, lab.report  # type: ignore[attr-defined]


def test_the_honest_plan_beside_the_tampering_is_not_flagged(
    tampered: tuple[Lab, dict[str, Any]],
) -> None:
    _, report = tampered
    assert not [f for f in report["findings"] if "plans/honest" in json.dumps(f)]


@pytest.mark.parametrize("vid", list(TAMPER))
def test_tampering_after_the_fact_is_flagged(
    tampered: tuple[Lab, dict[str, Any]], vid: str
) -> None:
    _, report = tampered
    assert [f for f in report["findings"] if f"plans/{vid}" in json.dumps(f)], report["findings"]


@pytest.mark.parametrize("vid", list(POLICY_TAMPER))
def test_a_policy_change_the_controller_did_not_make_is_flagged(
    tampered: tuple[Lab, dict[str, Any]], vid: str
) -> None:
    _, report = tampered
    found = [f for f in report["findings"] if f["commit"] == POLICY_COMMITS[vid]]
    assert [f["kind"] for f in found] == ["policy-changed"], report["findings"]
