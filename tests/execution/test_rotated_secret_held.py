"""A secret rotated or removed while a run waits stays hidden for the whole run (round 126,
atk126e, ``rotated-secret-unsealed-in-clear``).

Action 1 gets ``$<secrets.ROT>`` and prints it (recorded ``***``, the real value sealed in the
journal); the run pauses at action 2's gate; the operator rotates ROT (or removes it, or
restarts with a new ``PLANGATE_SECRET_*``); the gate is approved and action 2 gets the OLD
value from the seal, as documented. What action 2 prints of it was written in clear in every
record: the run's redactor knew only the secrets configured when it wrote. A run's redactor
now hides every value its journal's seals say it was given (``secrets.held_values``,
``SecretStore.hold``), and each seal carries them on (``Redactor.held_in``).

Real git, the real ``plangate`` command, a real exec tool.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from controller.execution.secrets import Redactor
from tests.support.gitenv import ALICE, commit_all, git, run_cli
from tests.support.gitkit import edit_status, write_plan

OLD, NEW = "Rv1Kq8Zt3Wm6Pn2Xb", "Rv2Hj5Yc9Ls4Dg7Nf"
ENV_OLD, ENV_NEW = "Ev1Mx4Qp8Tz2Wk6Hd", "Ev2Nc7Rb3Yf9Lq5Js"

#: prints ``{"x": <sec>, "echo": <params>}``; ``mode: err`` prints the params to stderr and
#: exits 3; every call's params appended to ``calls.jsonl`` beside it
TOOL = r"""
import json, os, sys
p = json.loads(sys.stdin.read() or "{}")
with open(os.path.join(os.path.dirname(sys.argv[0]), "calls.jsonl"), "a") as f:
    f.write(json.dumps(p) + "\n")
if p.get("mode") == "err":
    sys.stderr.write("refused: " + json.dumps(p) + "\n")
    sys.exit(3)
print(json.dumps({"x": p.get("sec", ""), "echo": p}))
"""

PLAN = """\
plan:
  name: rotate
  task: t
  status: pending_approval
available_tools: [{{name: emit}}]
actions:
  - id: 1
    tool: emit
    why: w
    params: {{sec: "$<secrets.{name}>"}}
    outputs: [{{name: x, path: $.json.x}}]
  - id: 2
    tool: emit
    why: w
    requires_approval: true
    params: {{v: "user=$<actions[1].outputs.x>;", mode: {mode}}}
"""


def _lab(repo: Path, name: str, mode: str) -> tuple[Path, Path]:
    tool = repo.parent / "emit.py"
    tool.write_text(TOOL)
    secrets = repo.parent / "secrets.yml"
    secrets.write_text(f"ROT: {OLD}\nKEEP: Kp4Wd8Rt2Zm7Qx5Lb\n")
    config = repo.parent / "plangate.yml"
    config.write_text(
        json.dumps(
            {
                "repo": str(repo),
                "state_dir": str(repo.parent / "state"),
                "approval": {"approvers": [ALICE[1]]},
                "secrets": {"file": str(secrets)},
                "tools": {"emit": {"kind": "exec", "argv": [sys.executable, str(tool)]}},
            }
        )
    )
    write_plan(repo, "rot", PLAN.format(name=name, mode=mode))
    commit_all(repo, "agent: rot")
    return config, secrets


def _pass(config: Path, repo: Path, env: dict[str, str]) -> str:
    done = run_cli("--config", str(config), "run", "--once", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    "name,change,mode",
    [
        ("ROT", "rotated", "ok"),
        ("ROT", "removed", "ok"),
        ("ROT", "rotated", "err"),
        ("ENVROT", "restarted", "ok"),
    ],
)
def test_a_value_given_before_the_pause_stays_hidden_after_a_rotation(
    repo: Path, name: str, change: str, mode: str
) -> None:
    config, secrets = _lab(repo, name, mode)
    old = ENV_OLD if name == "ENVROT" else OLD
    env = {"PLANGATE_SECRET_ENVROT": ENV_OLD}
    logs = _pass(config, repo, env)
    edit_status(repo, "rot", "approved")
    commit_all(repo, "approve rot", ALICE)
    logs += _pass(config, repo, env)
    assert "awaiting_approval" in git(repo, "show", "HEAD:plans/rot/PLAN.yml")
    if change == "rotated":
        secrets.write_text(f"ROT: {NEW}\nKEEP: Kp4Wd8Rt2Zm7Qx5Lb\n")
    elif change == "removed":
        secrets.write_text("KEEP: Kp4Wd8Rt2Zm7Qx5Lb\n")
    else:
        env = {"PLANGATE_SECRET_ENVROT": ENV_NEW}
    edit_status(repo, "rot", "approved")
    commit_all(repo, "approve the gate", ALICE)
    logs += _pass(config, repo, env)
    calls = [json.loads(x) for x in (repo.parent / "calls.jsonl").read_text().splitlines()]
    assert calls[-1]["v"] == f"user={old};"  # the sealed value, as docs/execution.md says
    want = "failed" if mode == "err" else "completed"
    assert f"status: {want}" in git(repo, "show", "HEAD:plans/rot/PLAN.yml")
    read = {
        "history": git(repo, "log", "--all", "-p", "--format=%H%n%B"),
        "journal": "".join(
            p.read_text() for p in (repo.parent / "state" / "journal").rglob("*.jsonl")
        ),
        "status": run_cli("--config", str(config), "status", cwd=repo, env=env).stdout,
        "show -v": run_cli(
            "--config", str(config), "show", "-v", "plans/rot", cwd=repo, env=env
        ).stdout,
        "logs": logs,
    }
    assert "user=***;" in read["history"]
    leaks = [k for k, text in read.items() if old in text or old[:8] in text]
    assert not leaks


def test_a_seal_made_before_round_126_still_names_what_it_hid() -> None:
    """A journal sealed before the seals carried their values (a run paused across the
    upgrade): what the redactor changed is held whole, so its value is hidden in it."""
    from controller.execution.secrets import held_values

    before = Redactor([OLD])
    before.seal_key = b"k" * 32
    real = {"result": {"stdout": f"user={OLD};"}, "outputs": {"x": OLD, "n": 1}}
    record = {
        "result": before.data(real["result"]),
        "outputs": before.data(real["outputs"]),
        "sealed": before.seal(real),  # no "held": as sealed before round 126
    }
    after = Redactor([NEW])
    after.seal_key = before.seal_key
    held = held_values(after, [record])
    assert OLD in held and f"user={OLD};" in held
    assert "stdout" not in held and "1" not in held  # what the redaction kept is not held
    hides = Redactor([NEW, *held])
    assert hides.text(f"printed {OLD} and user={OLD};") == "printed *** and ***"


def test_a_seal_carries_the_values_its_data_holds() -> None:
    """Those found as written when they account for all the redaction hid; every value
    given when not (a secret held only encoded must be carried on too)."""
    keep = "Kp4Wd8Rt2Zm7Qx5Lb"
    redactor = Redactor([OLD, keep, "Bearer Ht1Bq7Xw3Kz9Pm5Lc"])

    def held(data: dict[str, str]) -> list[str]:
        return redactor.held_in(data, redactor.data(data))

    assert held({"x": f"a {OLD} b"}) == [OLD]
    assert held({"t": "Ht1Bq7Xw3Kz9Pm5Lc"}) == ["Bearer Ht1Bq7Xw3Kz9Pm5Lc"]
    encoded = base64.b64encode(keep.encode()).decode()
    assert sorted(held({"x": OLD, "b": encoded})) == sorted(redactor.given)
