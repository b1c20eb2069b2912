"""Property: the controller's config and state are out of the agent's reach (SPEC §15: the
state directory defaults to outside the repo; the controller refuses to start when its config
or state directory lies inside the watched working tree).

Attacks: the agent writes the working tree, ``.git`` included. If the history index or the
journal lived there it could forge a job row or delete the journal after a crash; if the
config lived there it could add itself as an approver. Variants: the default state directory,
a state directory inside the tree, inside ``.git``, reached through a symlink; the config
inside the tree (as ``plangate init`` leaves it), reached through a symlink, or found as
``./plangate.yml`` in the checkout. Defence: nothing of the controller's lands in the repo, and
a config or state directory inside it is refused (exit 2, an E_ code) before any plan runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab, cases, plan_text


def _lab(tmp: Path) -> Lab:
    lab = Lab(tmp)
    lab.write("greet", plan_text("greet"))
    lab.commit("add", AGENT)
    return lab


def _config_text(lab: Lab, state: str | None) -> str:
    text = lab.config.read_text()
    lines = [line for line in text.splitlines() if not line.startswith("state_dir:")]
    if state is not None:
        lines.insert(1, f"state_dir: {state}")
    return "\n".join(lines) + "\n"


def _refused(result: subprocess.CompletedProcess[str], lab: Lab) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-600:])
    assert "E_" in result.stderr, result.stderr[-600:]
    assert "Traceback" not in result.stderr
    assert lab.calls("greet") == []
    assert "plangate: freeze" not in lab.git("log", "--format=%s")


def test_the_default_state_directory_is_outside_the_repo(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    lab.config.write_text(_config_text(lab, None))
    result = lab.run(check=False)
    if result.returncode == 2:  # refusing to pick a default is a defence too
        _refused(result, lab)
        return
    recorded = {lab.repo / ".plangate", lab.repo / ".plangate" / "policy.json"}  # committed
    inside = [
        p
        for p in lab.repo.rglob("*")
        if ("plangate" in p.name.lower() or p.suffix in (".sqlite", ".jsonl")) and p not in recorded
    ]
    assert not inside, f"controller state inside the repo: {inside}"


STATE_INSIDE = {
    "in-tree": lambda lab: str(lab.repo / "state"),
    "in-dot-git": lambda lab: str(lab.repo / ".git" / "plangate"),
    "in-plans": lambda lab: str(lab.repo / "plans" / ".state"),
    "symlink-into-tree": lambda lab: _link(lab.root / "state-link", lab.repo / ".git" / "st"),
    "relative-dotdot": lambda lab: "repo/.git/x/../plangate",
}


def _link(link: Path, target: Path) -> str:
    target.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return str(link)


# each refused since issue 11 (E_CONFIG_INVALID before any work)
STATE_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(STATE_INSIDE), list(STATE_INSIDE), STATE_BROKEN))
def test_a_state_directory_inside_the_tree_is_refused(tmp_path: Path, vid: str) -> None:
    lab = _lab(tmp_path)
    lab.config.write_text(_config_text(lab, STATE_INSIDE[vid](lab)))
    _refused(lab.run(check=False), lab)


def _config_in_tree(lab: Lab) -> list[str]:
    inside = lab.repo / "plangate.yml"
    inside.write_text(lab.config.read_text())
    return ["run", "--once", "--config", str(inside)]


def _config_symlink(lab: Lab) -> list[str]:
    inside = lab.repo / "plans" / "plangate.yml"
    inside.write_text(lab.config.read_text())
    outside = lab.root / "etc-plangate.yml"
    outside.unlink()
    outside.symlink_to(inside)
    return ["run", "--once", "--config", str(outside)]


def _config_by_env(lab: Lab) -> list[str]:
    inside = lab.repo / "ops" / "plangate.yml"
    inside.parent.mkdir()
    inside.write_text(lab.config.read_text())
    lab.extra_env = {"PLANGATE_CONFIG": str(inside)}  # type: ignore[attr-defined]
    return ["run", "--once"]


CONFIG_INSIDE = {
    "config-in-tree": _config_in_tree,
    "config-symlink-into-tree": _config_symlink,
    "config-by-env-in-tree": _config_by_env,
}
CONFIG_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(CONFIG_INSIDE), list(CONFIG_INSIDE), CONFIG_BROKEN))
def test_a_config_inside_the_tree_is_refused(tmp_path: Path, vid: str) -> None:
    lab = _lab(tmp_path)
    if vid == "config-symlink-into-tree":
        lab.config.rename(lab.root / "etc-plangate.yml")
        lab.config = lab.root / "etc-plangate.yml"
    args = CONFIG_INSIDE[vid](lab)
    _refused(lab.cli(*args, cwd=lab.root), lab)


@pytest.mark.parametrize("vid", ["init-then-run"])
def test_plangate_init_then_run_in_the_checkout_is_refused(tmp_path: Path, vid: str) -> None:
    """``plangate init`` puts plangate.yml beside the plans repository (issue 12); an agent
    that can write the checkout drops its own plangate.yml there, naming itself approver;
    ``plangate run`` from the checkout must not take that config."""
    lab = Lab(tmp_path)
    workspace = tmp_path / "fresh"
    result = lab.cli("init", str(workspace), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    fresh = workspace / "plans-repo"
    (fresh / "plangate.yml").write_text(
        (workspace / "plangate.yml")
        .read_text()
        .replace("repo: plans-repo", "repo: .")
        .replace('approvers: ["', 'approvers: ["agent@example.com", "')
    )
    (fresh / "plans" / "hello" / "PLAN.yml").write_text(
        (fresh / "plans" / "hello" / "PLAN.yml")
        .read_text()
        .replace("status: pending_approval", "status: approved")
    )
    env = {**lab.env(AGENT)}
    subprocess.run(["git", "commit", "-qam", "approve my own"], cwd=fresh, env=env, check=True)
    ran = lab.cli("run", "--once", cwd=fresh)
    assert ran.returncode == 2 and "E_" in ran.stderr, ran.stderr[-600:]
    assert (
        "plangate: start"
        not in subprocess.run(
            ["git", "log", "--format=%s"],
            cwd=fresh,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )


def test_an_approver_list_cannot_come_from_the_repo(tmp_path: Path) -> None:
    """A committed plangate.yml in the repo (the agent's) is never read by a controller whose
    config is elsewhere: the agent's approval of its own plan is refused."""
    lab = _lab(tmp_path)
    lab.run()
    (lab.repo / "plangate.yml").write_text(
        lab.config.read_text().replace('approvers: ["', 'approvers: ["mallory@example.com", "')
    )
    lab.commit("config in the repo", AGENT)
    lab.approve("greet", ("Mallory", "mallory@example.com"))
    lab.run()
    assert lab.calls("greet") == []
    assert lab.refusal("greet") == "E_APPROVER_NOT_ALLOWED"
    assert os.path.exists(lab.config)
