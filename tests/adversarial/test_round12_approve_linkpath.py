"""Round 12, who may make a plan run: ``plangate approve PATH`` in a checkout the agent wrote
(local mode: one shared working tree), where PATH is a symlink in the working tree.

Round 5 tried sibling plans staged or unstaged beside the one Alice approves, round 6 a plan
inside her plan's folder. Here the name Alice types leads elsewhere: the agent replaces, in
the working tree only (nothing committed), the plan Alice reviewed with a symlink to its own
frozen plan.

- ``dir``: ``plans/dir-x`` (a folder) becomes a symlink to ``plans/dir-evil``; Alice runs
  ``plangate approve plans/dir-x``.
- ``file``: ``plans/file-x/PLAN.yml`` becomes a symlink to ``../file-evil/PLAN.yml``; Alice
  runs ``plangate approve plans/file-x``.
- ``reject``: ``plans/rej-x`` becomes a symlink to ``plans/rej-good`` (another pending plan);
  Alice runs ``plangate reject -m no plans/rej-x`` (she means to reject the agent's ``rej-x``).

- ``cwd-config``: the agent drops an untracked ``plangate.yml`` in the checkout whose ``repo:``
  is its own clone, where ``plans/cwd-x`` carries an extra param; Alice runs ``plangate
  approve plans/cwd-x`` without ``--config``. Held: the commit lands in the checkout, the
  plan runs with the params Alice reviewed.

- ``xrepo``: ``plans/xr-x`` becomes a symlink to ``plans/xr-x`` in the agent's own clone,
  where the agent changed a param and froze it; Alice runs ``plangate approve plans/xr-x``.
  Observed: ``approved plans/xr-x in <sha> on main``, the commit is in the agent's clone
  (Alice's approval of a version she never saw, ready for the agent to push).

Defence: the command refuses (the path is a link) or approves/rejects only the plan it names;
no evil plan runs; ``rej-good`` is not rejected by a command naming ``rej-x``.
Observed: ``approve`` follows the link, commits ``approve plans/<evil>`` as Alice (trailers
name the evil plan, so every later check agrees) and prints it after the fact; the controller
runs the agent's plan on Alice's approval (both ``dir`` and ``file``); ``reject`` rejects
``rej-good`` (a withdrawal, so its version is withdrawn for good).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_approval_authors import shared_lab

# round 12: `plangate approve/reject PATH` followed a working-tree symlink the agent put at
# PATH and committed Alice's approval (or rejection) of another plan; fixed since (its strict
# xfail was BROKE): a link below the repository is E_UNSAFE_PATH (commands.approve)


def _as_alice(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *args, "--config", str(lab.config)],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
        check=False,
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in (
        "ctl",
        "dir-x",
        "dir-evil",
        "file-x",
        "file-evil",
        "rej-x",
        "rej-good",
        "cwd-x",
        "xr-x",
    ):
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    out = {}
    res = _as_alice(lab, "approve", "plans/ctl")
    out["ctl"] = [res.returncode, res.stdout, res.stderr[-1500:]]

    shutil.rmtree(lab.repo / "plans" / "dir-x")
    os.symlink("dir-evil", lab.repo / "plans" / "dir-x")
    res = _as_alice(lab, "approve", "plans/dir-x")
    out["dir"] = [res.returncode, res.stdout, res.stderr[-1500:]]
    lab.git("checkout", "-q", "--", "plans")  # Alice notices nothing; the tree is restored

    (lab.repo / "plans" / "file-x" / "PLAN.yml").unlink()
    os.symlink("../file-evil/PLAN.yml", lab.repo / "plans" / "file-x" / "PLAN.yml")
    res = _as_alice(lab, "approve", "plans/file-x")
    out["file"] = [res.returncode, res.stdout, res.stderr[-1500:]]
    lab.git("checkout", "-q", "--", "plans")

    shutil.rmtree(lab.repo / "plans" / "rej-x")
    os.symlink("rej-good", lab.repo / "plans" / "rej-x")
    res = _as_alice(lab, "reject", "-m", "no", "plans/rej-x")
    out["reject"] = [res.returncode, res.stdout, res.stderr[-1500:]]
    if (lab.repo / "plans" / "rej-x").is_symlink():
        (lab.repo / "plans" / "rej-x").unlink()
    lab.git("checkout", "-q", "--", "plans")

    # cwd-config: the agent drops ./plangate.yml in the checkout, its repo: its own clone
    other = root / "other"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(other)], check=True, env=lab.env())
    evil = other / "plans" / "cwd-x" / "PLAN.yml"
    evil.write_text(evil.read_text().replace('tag: "cwd-x"', 'tag: "cwd-x"\n      evil: "yes"'))
    subprocess.run(["git", "commit", "-qam", "evil"], cwd=other, env=lab.env(AGENT), check=True)
    (lab.repo / "plangate.yml").write_text(
        lab.config.read_text()
        .replace(f"repo: {lab.repo}", f"repo: {other}")
        .replace(f"state_dir: {lab.state}", f"state_dir: {root / 'other-state'}")
        + "demo: true\n"
    )
    res = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "plans/cwd-x"],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
    )
    out["cwd"] = [res.returncode, res.stdout, res.stderr[-1500:]]
    (lab.repo / "plangate.yml").unlink()

    # xrepo: plans/xr-x becomes a symlink to the same plan in the agent's clone, where the
    # agent changed and froze it; Alice approves the name she reviewed
    xr = other / "plans" / "xr-x" / "PLAN.yml"
    xr.write_text(xr.read_text().replace('tag: "xr-x"', 'tag: "xr-x"\n      evil: "yes"'))
    subprocess.run(
        [sys.executable, "-m", "controller", "freeze", str(xr)],
        cwd=other,
        env=lab.env(),
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["git", "commit", "-qam", "evil xr-x"], cwd=other, env=lab.env(AGENT), check=True
    )
    shutil.rmtree(lab.repo / "plans" / "xr-x")
    os.symlink(str(other / "plans" / "xr-x"), lab.repo / "plans" / "xr-x")
    res = _as_alice(lab, "approve", "plans/xr-x")
    out["xrepo"] = [res.returncode, res.stdout, res.stderr[-1500:]]
    (lab.repo / "plans" / "xr-x").unlink()
    lab.git("checkout", "-q", "--", "plans")
    out["xrepo-log"] = subprocess.run(
        ["git", "log", "--format=%ae %s", "-3"], cwd=other, capture_output=True, text=True
    ).stdout
    (root / "cli.json").write_text(json.dumps(out))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r12-linkpath", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, json.loads((lab.root / "cli.json").read_text())["ctl"]


@pytest.mark.parametrize(
    "vid,evil",
    [pytest.param("dir", "dir-evil"), pytest.param("file", "file-evil")],
    ids=["dir", "file"],
)
def test_approve_through_a_link_approves_no_other_plan(lab: Lab, vid: str, evil: str) -> None:
    cli = json.loads((lab.root / "cli.json").read_text())[vid]
    assert lab.calls(evil) == [], (cli, lab.codes(evil))
    assert not lab.started(evil), (cli, lab.codes(evil))
    subjects = [r[3] for r in lab.log_rows() if r[2] == ALICE[1]]
    assert f"approve plans/{evil}" not in subjects, (cli, subjects)


def test_reject_through_a_link_rejects_no_other_plan(lab: Lab) -> None:
    cli = json.loads((lab.root / "cli.json").read_text())["reject"]
    assert lab.status()["plans/rej-good"]["status"] != "rejected", (cli, lab.codes("rej-good"))


def test_a_config_in_the_checkout_does_not_move_the_approval(lab: Lab) -> None:
    cli = json.loads((lab.root / "cli.json").read_text())["cwd"]
    calls = lab.calls("cwd-x")
    assert len(calls) == 1, (cli, lab.codes("cwd-x"))
    assert json.loads(calls[0]["stdin"]) == {"tag": "cwd-x"}, calls


def test_approve_through_a_link_writes_no_other_repository(lab: Lab) -> None:
    cli = json.loads((lab.root / "cli.json").read_text())
    alices = [
        line for line in cli["xrepo-log"].splitlines() if line.startswith("alice@example.com")
    ]
    assert not [line for line in alices if "xr-x" in line], (cli["xrepo"], cli["xrepo-log"])
    assert "E_UNSAFE_PATH" in cli["xrepo"][2], cli["xrepo"]
