# ruff: noqa: E501  (plan texts and tool argv are kept on one line as written)
"""Round 7, what runs and what is recorded, in remote mode: pushes that land on the remote
while a plan runs (the controller's clone lives in its state directory; the agent and Alice
push to the same bare repository).

Every plan's first action is ``pusher``, a tool the attacker controls in the sense of the
brief (it is the outside world acting while the action runs): it pulls the agent's clone,
makes one commit about its own plan, pushes it (retrying on a race) and, for the abort
variants, waits longer than ``remote.poll_interval`` before it returns. The plan's second
action is ``rec``. One ``run --once`` pass runs them all.

- the agent edits the running plan's ``why``, sets it back to ``approved``, deletes it, or
  commits an unrelated file: the controller's outcome commit records the approved version,
  each action ran once;
- the agent force-pushes the branch back to Alice's approval (erasing the start commit):
  the action that had not started runs once at most, never twice (a lab of its own since
  round 100: the controller no longer pushes its clone's old tip back over a rewind, so the
  rewind erases every later approval, and the other variants need theirs);
- an abort (by Alice, an allowed approver; by the agent, the plan's author) or a rejection
  (which on an executing plan means abort, docs/approvals.md) is on the remote 0.6 s before
  the second action starts (poll interval 0.2 s): docs/approvals.md, "the controller stops a
  running plan before its next action ... nothing more of the plan runs". The daemon honours
  it, and so does ``run --once`` in local mode; ``run --once`` in remote mode runs the next
  action and commits ``completed`` on top of the abort, and ``audit`` flags nothing.
- Alice aborts a second, approved plan that has not run any action yet (pushed while the
  first plan runs): remote ``run --once`` runs all of it. The agent editing that queued
  plan's params instead: it runs as approved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PUSHER = r"""
import json, os, sys, subprocess, time
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
repo = os.environ["AGENT_REPO"]; slug = sys.argv[1]; mode = sys.argv[2]
who = ("Alice", "alice@example.com") if mode in ("abort-alice", "reject-alice", "abort-queued") else ("Agent", "agent@example.com")
env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PLANGATE_"))}
env.update(GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1], GIT_COMMITTER_NAME=who[0],
           GIT_COMMITTER_EMAIL=who[1], GIT_CONFIG_GLOBAL=os.environ["AGENT_GC"],
           GIT_CONFIG_NOSYSTEM="1", HOME=os.environ["AGENT_HOME"])
g = lambda *a: subprocess.run(["git", *a], cwd=repo, env=env, capture_output=True, text=True)
g("pull", "-q", "--rebase", "origin", "main")
p = os.path.join(repo, "plans", slug, "PLAN.yml")
if mode.endswith("-queued"):
    p = os.path.join(repo, "plans", "q-" + mode, "PLAN.yml")
def sub(old, new):
    t = open(p).read()
    if old == "status: executing" and old not in t:
        old = "status: approved"
    assert old in t, (old, t[:200])
    open(p, "w").write(t.replace(old, new, 1))
note = ""
if mode == "rewind":
    tip = g("log", "--format=%H", "--grep=^approve " + slug + "$", "-1").stdout.strip()
    note = g("push", "-q", "-f", "origin", tip + ":main").stderr + tip
else:
    if mode == "edit-why":
        sub("why: ", "why: EDITED ")
    elif mode == "set-approved":
        sub("status: executing", "status: approved")
    elif mode == "delete":
        os.remove(p)
    elif mode == "other":
        open(os.path.join(repo, "NOTE"), "a").write("x\n")
    elif mode == "edit-queued":
        sub('tag: "q-edit-queued"', 'tag: "q-edit-queued"\n      extra: EDITED')
    elif mode.startswith("abort"):
        sub("status: executing", "status: aborted")
    elif mode.startswith("reject"):
        sub("status: executing", "status: rejected")
    g("add", "-A")
    note = g("commit", "-q", "-m", mode + " " + slug).stderr
    for _ in range(10):
        r = g("push", "-q", "origin", "HEAD:main")
        if r.returncode == 0:
            break
        g("pull", "-q", "--rebase", "origin", "main")
    else:
        note += "PUSH FAILED " + r.stderr
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": ["pushed-" + slug], "stdin": note}) + "\n")
if mode.startswith(("abort", "reject")):
    time.sleep(0.6)   # three times remote.poll_interval: the abort is there to be seen
print("{}")
"""

HELD = ["edit-why", "set-approved", "delete", "other"]
ABORTS = ["abort-alice", "abort-agent", "reject-alice"]
QUEUED = ["abort-queued", "edit-queued"]


def _plan(mode: str) -> str:
    slug = f"p-{mode}"
    return f"""\
plan:
  name: {slug}
  task: "push while running ({mode})"
  status: pending_approval
available_tools:
  - name: pusher
  - name: rec
actions:
  - id: 1
    tool: pusher
    why: "first, while the world pushes"
    params: {{tag: {slug}, mode: {mode}}}
  - id: 2
    tool: rec
    why: "second"
    params: {{tag: second-{slug}}}
"""


def _build(root: Path, held: list[str] = HELD) -> Lab:
    lab = Lab(root)
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    (root / "pusher.py").write_text(PUSHER)
    env = {
        "REC_LOG": str(lab.log),
        "AGENT_REPO": str(lab.repo),
        "AGENT_GC": str(root / "gitconfig"),
        "AGENT_HOME": str(lab.home),
    }
    argv = [sys.executable, str(root / "pusher.py"), "{tag}", "{mode}"]
    lab.write_config(
        tools=f"pusher: {{kind: exec, argv: {json.dumps(argv)}, env: {json.dumps(env)}}}\n"
    )
    text = lab.config.read_text().replace(
        f"repo: {lab.repo}\n",
        f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
    )
    lab.config.write_text(text)

    def sync() -> None:
        lab.git("pull", "-q", "--rebase", "origin", "main")

    alone = held == ["rewind"]  # the rewind's own lab: nothing else to erase
    modes = held if alone else held + ABORTS + QUEUED
    queued = [] if alone else QUEUED
    for mode in modes:
        lab.write(f"p-{mode}", _plan(mode))
    for mode in queued:
        lab.write(f"q-{mode}", plan_text(f"q-{mode}"))
    if not alone:
        lab.write("zz-honest", plan_text("zz-honest"))
    lab.commit("plans")
    lab.git("push", "-q", "origin", "HEAD:main")
    lab.run()
    sync()
    for mode in modes:
        lab.approve(f"p-{mode}", ALICE)
    for mode in queued:
        lab.approve(f"q-{mode}", ALICE)
    if not alone:
        lab.approve("zz-honest", ALICE)
    lab.git("push", "-q", "origin", "HEAD:main")
    lab.run()
    lab.run()
    # read what the remote holds (the agent's clone may hold a rebased leftover)
    lab.git("fetch", "-q", "origin")
    lab.git("reset", "-q", "--hard", "origin/main")
    clone = root / "audit-clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True, env=lab.env())
    lab.audit_out = lab.cli("audit", cwd=clone).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r7-runs-remote", _build)


@pytest.fixture(scope="module")
def rewind_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r7-runs-remote-rewind", lambda root: _build(root, ["rewind"]))


def _pushed(lab: Lab, slug: str) -> None:
    notes = lab.calls(f"pushed-{slug}")
    assert len(notes) == 1 and "PUSH FAILED" not in notes[0]["stdin"], notes


@pytest.mark.parametrize("mode", HELD)
def test_a_push_while_running_changes_nothing_that_runs(lab: Lab, mode: str) -> None:
    slug = f"p-{mode}"
    _pushed(lab, slug)
    assert len(lab.calls(slug)) == 1, lab.calls(slug)
    assert len(lab.calls(f"second-{slug}")) == 1, lab.calls(f"second-{slug}")
    data = lab.plan(slug)
    assert data["plan"]["status"] == "completed", data["plan"]
    assert "EDITED" not in json.dumps(data), data["actions"]
    assert lab.status()[f"plans/{slug}"]["status"] == "completed"


def test_a_rewind_while_running_runs_nothing_twice(rewind_lab: Lab) -> None:
    _pushed(rewind_lab, "p-rewind")
    assert len(rewind_lab.calls("p-rewind")) == 1, rewind_lab.calls("p-rewind")
    assert len(rewind_lab.calls("second-p-rewind")) <= 1, rewind_lab.calls("second-p-rewind")


@pytest.mark.parametrize("mode", ABORTS)
def test_an_abort_on_the_remote_stops_the_next_action(lab: Lab, mode: str) -> None:
    slug = f"p-{mode}"
    _pushed(lab, slug)
    assert len(lab.calls(slug)) == 1
    assert lab.calls(f"second-{slug}") == [], "the second action ran after the abort was pushed"
    assert lab.plan(slug)["plan"]["status"] == "aborted"


def test_a_queued_plan_edited_on_the_remote_runs_as_approved(lab: Lab) -> None:
    _pushed(lab, "p-edit-queued")
    ran = lab.calls("q-edit-queued")
    assert len(ran) <= 1 and all("EDITED" not in r["stdin"] for r in ran), ran


def test_a_plan_aborted_on_the_remote_before_it_ran_never_runs(lab: Lab) -> None:
    _pushed(lab, "p-abort-queued")
    assert lab.calls("q-abort-queued") == [], "the aborted plan ran"
    assert lab.plan("q-abort-queued")["plan"]["status"] == "aborted"


def test_the_audit_does_not_call_a_run_past_an_abort_ok(lab: Lab) -> None:
    """If the next action ran after an abort, the history should say so."""
    flags = [ln for ln in lab.audit_out.splitlines() if ln.startswith("FLAG")]  # type: ignore[attr-defined]
    for mode in ABORTS:
        if lab.calls(f"second-p-{mode}"):
            assert any(f"plans/p-{mode} " in ln for ln in flags), (mode, flags)


def test_the_bystander_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz-honest")) == 1
