"""Round 58, object store: the branch moves while the controller's pass runs (local mode).

The controller takes the branch into its own store once at the start of a pass and decides
every plan from that history; the agent keeps working meanwhile. Here the "agent" acts from
inside the pass, deterministically: the approved plan ``a-mover`` calls an exec tool
(``mover``) that, as the agent, changes the shared repository while the controller is between
its decision and the start of the next approved plan, ``b-victim`` (plans run in name order,
one after the other).

Config: plain approvals (Alice). Both plans written by the agent and frozen; Alice approves
``b-victim`` (version 1, ``tag: vic``) and ``a-mover``; then one pass. What ``mover`` does
(one lab per mode, so each pass sees one move):

- ``edit``: commits ``b-victim`` version 2 (another param, status still approved) on top
  of the branch, working tree and index with it (a plain ``git commit``).
- ``forged``: the same commit, then a pack in the shared store shadowing the new commit's
  ``b-victim`` blob with version 1's bytes (so git in the checkout shows version 1 there).
- ``reset``: ``git reset --hard`` to the commit before Alice's approval of ``b-victim``
  and then commits, as the agent, ``a-mover``'s file as the controller's start left it: the
  branch no longer holds her approval (nor the controller's start commits).
- ``alt``: writes ``objects/info/alternates`` naming a folder holding a loose object under
  the name of Alice's approval's root tree with other bytes (``b-victim`` version 2 approved),
  and deletes the real loose object.

Asserted: ``b-victim`` version 2 never reaches the tool (``rec`` never sees ``extra``); in
``reset`` ``b-victim`` does not run (its approval is gone from the branch, or it is held);
``a-mover`` ran once; no traceback. After every mode, one more pass runs nothing twice.

Seen: every mode held. The controller commits the start of every approved plan of the pass
before the first action runs, so the move lands after both starts: ``edit``/``forged``/
``alt`` ran version 1 once (the controller's outcome commit writes the file it ran over the
agent's edit); in ``reset`` ``b-victim`` never ran (the branch no longer showed it started).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

MODES = ["edit", "forged", "reset", "alt"]
BROKEN: dict[str, pytest.MarkDecorator] = {}

MOVER = r"""
import hashlib, json, os, struct, subprocess, sys, zlib
mode, repo, home, cfg = sys.argv[1:5]
env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PLANGATE_"))}
env.update(HOME=home, GIT_CONFIG_GLOBAL=cfg, GIT_CONFIG_NOSYSTEM="1",
           GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
           GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
def git(*a, inp=None):
    return subprocess.run(["git", *a], cwd=repo, env=env, input=inp, capture_output=True,
                          check=True).stdout
v2 = open(os.path.join(repo, "..", "v2.yml"), "rb").read()
path = os.path.join(repo, "plans", "b-victim", "PLAN.yml")
objects = os.path.join(repo, ".git", "objects")
def loose(oid, kind, body):
    data = zlib.compress(kind.encode() + b" " + str(len(body)).encode() + b"\0" + body)
    return data
if mode in ("edit", "forged"):
    old = git("rev-parse", "HEAD:plans/b-victim/PLAN.yml").decode().strip()
    with open(path, "wb") as f:
        f.write(v2)
    git("add", "-A")
    git("commit", "-q", "-m", "agent edits b-victim")
    if mode == "forged":
        new = git("rev-parse", "HEAD:plans/b-victim/PLAN.yml").decode().strip()
        body = git("cat-file", "blob", old)
        size = len(body); first = (3 << 4) | (size & 15); size >>= 4; head = bytearray()
        while size:
            head.append(first | 0x80); first, size = size & 0x7F, size >> 7
        head.append(first)
        entry = bytes(head) + zlib.compress(body)
        pack = b"PACK" + struct.pack(">II", 2, 1) + entry
        pack += hashlib.sha1(pack).digest()
        oid = bytes.fromhex(new)
        fan = b"".join(struct.pack(">I", 1 if i >= oid[0] else 0) for i in range(256))
        idx = b"\xfftOc" + struct.pack(">I", 2) + fan + oid
        idx += struct.pack(">II", zlib.crc32(entry) & 0xFFFFFFFF, 12) + pack[-20:]
        idx += hashlib.sha1(idx).digest()
        stem = os.path.join(objects, "pack", "pack-" + hashlib.sha1(pack).hexdigest())
        open(stem + ".pack", "wb").write(pack); open(stem + ".idx", "wb").write(idx)
elif mode == "reset":
    approval = open(os.path.join(repo, "..", "victim-approval")).read().strip()
    old = git("rev-parse", "HEAD").decode().strip()
    git("reset", "-q", "--hard", approval + "^")
    git("checkout", old, "--", "plans/a-mover")
    git("commit", "-q", "-m", "agent re-makes a-mover's commits")
elif mode == "alt":
    approval = open(os.path.join(repo, "..", "victim-approval")).read().strip()
    tree = git("rev-parse", approval + "^{tree}").decode().strip()
    alt = os.path.join(repo, "..", "alt-objects")
    os.makedirs(os.path.join(alt, tree[:2]), exist_ok=True)
    other = git("rev-parse", "HEAD^{tree}").decode().strip()
    body = git("cat-file", "tree", other)
    open(os.path.join(alt, tree[:2], tree[2:]), "wb").write(loose(tree, "tree", body))
    os.makedirs(os.path.join(objects, "info"), exist_ok=True)
    open(os.path.join(objects, "info", "alternates"), "w").write(alt + "\n")
    real = os.path.join(objects, tree[:2], tree[2:])
    if os.path.exists(real):
        os.chmod(real, 0o644); os.unlink(real)
print(json.dumps({"ok": True}))
"""


def _build(root: Path, mode: str) -> Lab:
    (root / "mover.py").write_text(MOVER)
    lab = Lab(root / mode)
    lab.env()  # writes the gitconfig
    argv = [
        sys.executable,
        str(root / "mover.py"),
        mode,
        str(lab.repo),
        str(lab.home),
        str(lab.root / "gitconfig"),
    ]
    lab.write_config(tools=f"mover: {{kind: exec, argv: {json.dumps(argv)}}}\n")
    lab.write(
        "a-mover",
        "plan:\n  name: mover\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: mover}]\nactions:\n  - id: 1\n    tool: mover\n"
        "    why: the agent works on\n    params: {}\n",
    )
    lab.write("b-victim", plan_text("vic"))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    v2 = lab.read("b-victim").replace('tag: "vic"', 'tag: "vic"\n      extra: "v2"')
    v2 = v2.replace("status: pending_approval", "status: approved")
    (lab.root / "v2.yml").write_text(v2)
    approval = lab.approve("b-victim", ALICE)
    (lab.root / "victim-approval").write_text(approval)
    lab.approve("a-mover", ALICE)
    lab.first = lab.run(check=False)  # type: ignore[attr-defined]
    lab.second = lab.run(check=False)  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r58-midpass-{mode}", lambda root: _build(root, mode))


@pytest.mark.parametrize("mode", cases(MODES, MODES, BROKEN))
def test_a_move_during_the_pass_runs_no_unapproved_version(
    tmp_path_factory: pytest.TempPathFactory, mode: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    for result in (lab.first, lab.second):  # type: ignore[attr-defined]
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
    ran = lab.calls("vic")
    assert all("extra" not in call["stdin"] for call in ran), ran
    assert len(ran) <= 1, ran
    if mode == "reset":
        assert ran == [], (lab.codes("b-victim"), lab.first.stderr[-1500:])  # type: ignore[attr-defined]
