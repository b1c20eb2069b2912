"""Round 85, agent surfaces: git's own environment set for a READER (the CLI, ``plangate
mcp``, ``plangate approve``) and not for the daemon, as a git hook, ``git rebase -x`` or an
agent's harness sets it: does a reader print a status or hash the controller never uses, or
write where it should not, without an ``E_`` code?

Lab (one, local mode, built once). The agent's ``plans/ok`` (approved, completed once),
``plans/pa`` (frozen, ``pending_approval``) and one frozen ``plans/ap<e>`` per environment.
Mallory's clone ``evil`` (made before Alice's last commit, so main's tip is not in it) forges
``plans/pa`` ``completed`` and adds ``plans/ev``; its main is also fetched into the plans
repository as ``refs/namespaces/x/refs/heads/main``, and ``refs/alt/<tip>`` replaces main's
tip by the forged commit. ``crafted.index`` is main's tree without ``plans/ok``. A hooks
folder holds a ``post-commit`` that writes a marker. Environments ``<e>``:
- ``gitdir``: ``GIT_DIR=evil/.git``; ``gitdirwt``: with ``GIT_WORK_TREE=evil``; ``worktree``:
  ``GIT_WORK_TREE=evil`` alone; ``ns``: ``GIT_NAMESPACE=x``; ``repbase``:
  ``GIT_REPLACE_REF_BASE=refs/alt/``; ``objdir``: ``GIT_OBJECT_DIRECTORY=evil/.git/objects``
  (main's tip missing there); ``crafted``: ``GIT_INDEX_FILE=crafted.index``;
  ``hooks``: ``GIT_CONFIG_COUNT=1`` ``core.hooksPath=<hooks>``; ``none`` (control).
Readers, one id each ``<e>:<reader>``: ``status`` (``status --json`` rows: plan, status, hash as
with no such variable, or an ``E_`` refusal), ``show`` (``show --json --config plans/pa``:
``pending_approval`` and the frozen hash), ``hash`` (``plans/pa``), MCP
``mcp-status``/``mcp-log``/``mcp-wait`` (0.5 s) of ``plans/pa``, one session with the submit
(the controller's ``pending_approval``, or a refusal naming git: ``E_GIT``; never a verdict the
controller does not hold, such as "no plan"); ``submit`` (MCP ``submit`` of ``plans/s<e>``: ok
with one commit on the real main adding only that file, the shared checkout clean, ``evil``
untouched, no hook run; or refused with nothing committed or left anywhere); ``approve``
(Alice's ``plangate approve plans/ap<e>``: one commit on the real main changing only that
PLAN.yml, or refused with nothing committed; ``evil`` untouched, no hook run). A refusal must be
``E_GIT`` (git failed in the reader's environment), never a verdict about the plan.

Seen (round 85): 4 ids broke, 1 class.
**A git failure read as a verdict on the plan** (``{gitdir,gitdirwt,objdir}:mcp-status``,
``objdir:approve``): with ``GIT_DIR`` (or ``GIT_OBJECT_DIRECTORY``) naming a clone that lacks
main's tip, ``plangate mcp``'s ``status`` of ``plans/pa`` (the controller's row:
``pending_approval``, frozen) answers::

    Error executing tool status: {"ok": false, "code": "E_USAGE", "message": "no plan
    plans/pa on the watched branch", ..., "remedy": "submit it first, or check the path"}

while in the same session ``log`` and ``wait`` answer ``E_GIT`` "cannot read object <tip>",
and the CLI's ``plangate status --json`` ``E_GIT`` "git log --first-parent: fatal: bad object
<tip>". Alice's ``GIT_OBJECT_DIRECTORY=... plangate approve plans/apobjdir`` says ``E_USAGE:
plans/apobjdir/PLAN.yml is not committed  remedy: commit the plan first`` (it is; under
``GIT_DIR`` the same approve says ``E_GIT``). Should (docs/agents.md: ``status``, ``log`` and
``wait`` "find the plan's file on the branch as every reader does"; a refusal is "the JSON
error shape of every plangate command"): one verdict for every reader, ``E_GIT`` naming git's
failure; "submit it first" invites the agent to resubmit a frozen plan. Nothing was written:
no commit, ``evil`` untouched, the checkout clean.
fixed (2026-12-01, r85surface): two rules. (1) The repository is the config's (or the
clone holding the plan named), never the environment's: ``plangate`` drops git's location
variables (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_COMMON_DIR``, ``GIT_INDEX_FILE``,
``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_NAMESPACE``...) at its
start and no git child is given them (``controller.git.guard.LOCATION_ENV``): every reader
now answers the controller's ``pending_approval`` under each. (2) A read that failed is
never "absent": git's "missing" for ``<commit>:<path>`` is checked (the commit, the folder,
the entry's own object: ``Objects._unreadable``), ``rev`` of a ref naming an unreadable
object is ``E_GIT``, and the one-plan status row (MCP ``status``/``log``/``wait``) of a
history not read is the scan's ``E_GIT``, never "no plan" (``tests/git/test_gitrepo.py``,
``test_unreadable_*``). Added ids: ``commondir`` (``GIT_COMMON_DIR=evil/.git``) and
``altobj`` (``GIT_ALTERNATE_OBJECT_DIRECTORIES=evil/.git/objects``), every reader and writer.

Held: ``show --config`` and ``hash`` (the frozen hash and the controller's status under every
variable: they read the checkout, not the environment's repository); CLI ``status`` (the
controller's rows, or ``E_GIT``); ``GIT_NAMESPACE``, ``GIT_REPLACE_REF_BASE`` (a replacement
of main's tip by the forged commit), ``GIT_WORK_TREE`` alone and a crafted ``GIT_INDEX_FILE``
without ``plans/ok``: every reader the controller's ``pending_approval``; ``submit`` and
``approve`` committed exactly their one file on the real main (never the crafted index's
deletion), the shared index and checkout clean afterwards, nothing written into ``evil``, and
a ``core.hooksPath`` from ``GIT_CONFIG_COUNT`` ran no hook.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, plan_text
from test_round2_execution_kit import shared

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
ENVS = [
    "none", "gitdir", "gitdirwt", "worktree", "ns", "repbase", "objdir", "crafted", "hooks",
    "commondir", "altobj",
]  # fmt: skip
KEEP = ("plans/ok", "plans/pa")
HOOK = "#!/bin/sh\necho ran >> {marker}\n"


def _envs(root: Path) -> dict[str, dict[str, str]]:
    evil = root / "evil"
    return {
        "none": {},
        "gitdir": {"GIT_DIR": str(evil / ".git")},
        "gitdirwt": {"GIT_DIR": str(evil / ".git"), "GIT_WORK_TREE": str(evil)},
        "worktree": {"GIT_WORK_TREE": str(evil)},
        "ns": {"GIT_NAMESPACE": "x"},
        "repbase": {"GIT_REPLACE_REF_BASE": "refs/alt/"},
        "objdir": {"GIT_OBJECT_DIRECTORY": str(evil / ".git" / "objects")},
        "crafted": {"GIT_INDEX_FILE": str(root / "crafted.index")},
        "commondir": {"GIT_COMMON_DIR": str(evil / ".git")},
        "altobj": {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(evil / ".git" / "objects")},
        "hooks": {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.hooksPath",
            "GIT_CONFIG_VALUE_0": str(root / "hooks"),
        },
    }


def _run(
    lab: Lab, extra: dict[str, str], *args: str, cwd: Path | None = None, who: Any = None
) -> tuple[int, str]:
    env = lab.env(who)
    env.update(extra)
    env["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [mcpkit.PLANGATE, *args], env=env, cwd=cwd or lab.root, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    return r.returncode, r.stdout + "\n--\n" + r.stderr[-2000:]


def _rows(text: str) -> Any:
    try:
        rows = json.loads(text.split("\n--\n")[0])
    except ValueError:
        return None
    # plans/ok and plans/pa: the rows no approval or submission of this lab changes
    return sorted((r["plan"], r["status"], r["hash"]) for r in rows if r["plan"] in KEEP)


def _evil_state(evil: Path, env: dict[str, str]) -> str:
    git = ["git", "-C", str(evil)]
    heads = subprocess.run(
        [*git, "log", "--all", "--format=%H"], env=env, capture_output=True, text=True
    ).stdout
    st = subprocess.run(
        [*git, "status", "--porcelain"], env=env, capture_output=True, text=True
    ).stdout
    return heads + "|" + st


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    envs = _envs(root)
    got: dict[str, Any] = {"read": {}}
    for slug in ["ok", "pa", *(f"ap{e}" for e in ENVS)]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.run()
    evil = root / "evil"
    lab.git("clone", "-q", str(lab.repo), str(evil))
    forged = evil / "plans" / "pa" / "PLAN.yml"
    forged.write_text(forged.read_text().replace("status: pending_approval", "status: completed"))
    (evil / "plans" / "ev").mkdir()
    (evil / "plans" / "ev" / "PLAN.yml").write_text(plan_text("ev"))
    subprocess.run(["git", "-C", str(evil), "add", "-A"], env=lab.env(), check=True)
    subprocess.run(
        ["git", "-C", str(evil), "commit", "-qm", "forge"], env=lab.env(MALLORY), check=True
    )
    lab.git("fetch", "-q", str(evil), "+refs/heads/main:refs/namespaces/x/refs/heads/main")
    lab.commit("alice: a note after the clone", ALICE)  # main's tip is not in evil
    tip = lab.head()
    lab.git("update-ref", f"refs/alt/{tip}", lab.git("-C", str(evil), "rev-parse", "HEAD").strip())
    idx = dict(lab.env(), GIT_INDEX_FILE=str(root / "crafted.index"))
    subprocess.run(["git", "read-tree", "HEAD"], cwd=lab.repo, env=idx, check=True)
    subprocess.run(
        ["git", "rm", "-q", "--cached", "-r", "plans/ok"], cwd=lab.repo, env=idx, check=True
    )
    hooks = root / "hooks"
    hooks.mkdir()
    for name in ("post-commit", "pre-commit", "post-checkout", "reference-transaction"):
        (hooks / name).write_text(HOOK.format(marker=root / "hook.ran"))
        (hooks / name).chmod(0o755)
    c = str(lab.config)
    pa = lab.repo / "plans" / "pa" / "PLAN.yml"
    got["frozen"] = lab.plan("pa")["frozen"]["hash"]
    got["ref_rows"] = _rows(_run(lab, {}, "status", "--json", "--config", c)[1])
    got["evil0"] = _evil_state(evil, lab.env())
    for e in ENVS:
        x = envs[e]
        got["read"][f"{e}:status"] = _run(lab, x, "status", "--json", "--config", c)
        got["read"][f"{e}:show"] = _run(lab, x, "show", "--json", "--config", c, str(pa))
        got["read"][f"{e}:hash"] = _run(lab, x, "hash", str(pa), cwd=lab.repo)
        before = lab.head()
        lab.extra_env = x  # type: ignore[attr-defined]
        try:
            replies, _err = mcpkit.session(
                lab,
                [
                    ("status", {"path": "plans/pa"}),
                    ("log", {"path": "plans/pa"}),
                    ("wait", {"path": "plans/pa", "timeout": 0.5}),
                    ("submit", {"plan": plan_text(f"s{e}"), "slug": f"s{e}"}),
                ],
            )
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]
        for key, reply in zip(("mcp-status", "mcp-log", "mcp-wait"), replies, strict=False):
            res = (reply or {}).get("result", {})
            text = "".join(c.get("text", "") for c in res.get("content", []))
            got["read"][f"{e}:{key}"] = (1 if res.get("isError") or not reply else 0, text)
        res = (replies[3] or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        after = lab.head()
        got["read"][f"{e}:submit"] = {
            "err": bool(res.get("isError")),
            "text": text[-1500:],
            "commits": lab.git("log", "--format=%an %s", f"{before}..{after}"),
            "names": lab.git("diff", "--name-status", before, after),
            "tree": lab.git("status", "--porcelain", "--untracked-files=all"),
        }
        before = lab.head()
        rc, out = _run(lab, x, "approve", "--config", c, f"plans/ap{e}", cwd=lab.repo, who=ALICE)
        after = lab.head()
        got["read"][f"{e}:approve"] = {
            "rc": rc,
            "text": out[-1500:],
            "commits": lab.git("log", "--format=%an %s", f"{before}..{after}"),
            "names": lab.git("diff", "--name-status", before, after),
            "tree": lab.git("status", "--porcelain", "--untracked-files=all"),
        }
        got["read"][f"{e}:approve"]["evil"] = _evil_state(evil, lab.env())
        got["read"][f"{e}:submit"]["evil"] = got["read"][f"{e}:approve"]["evil"]
        got["read"][f"{e}:approve"]["hook"] = (root / "hook.ran").exists()
        got["read"][f"{e}:submit"]["hook"] = (root / "hook.ran").exists()
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-surface-gitenv", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 surface: {cls}: {what}"
    )


READERS = ("status", "show", "hash", "mcp-status", "mcp-log", "mcp-wait")
READ_IDS = [f"{e}:{r}" for e in ENVS for r in READERS]
WRITE_IDS = [f"{e}:{w}" for e in ENVS for w in ("submit", "approve")]
_G = "a git failure read as a verdict on the plan"
BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r85surface): see the module docstring


@pytest.mark.parametrize("vid", cases(READ_IDS, READ_IDS, BROKEN))
def test_round85_gitenv_readers(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    env, reader = vid.split(":")
    rc, text = got["read"][vid]
    if rc:  # a refusal: an E_ code naming git, never a verdict the controller does not hold
        assert env != "none", text
        assert "E_GIT" in text, text
        return
    if reader == "status":
        assert _rows(text) == got["ref_rows"], (text[:1500], got["ref_rows"])
    elif reader == "show":
        shown = json.loads(text.split("\n--\n")[0])
        assert shown["plan"]["status"] == "pending_approval", text[:1500]
        assert shown["hash"] == got["frozen"], text[:1500]
    elif reader == "hash":
        assert text.split()[0] == got["frozen"], text
    elif reader in ("mcp-status", "mcp-log"):
        body = json.loads(text)
        row = body["plans"][0] if "plans" in body else body
        assert row["status"] == "pending_approval", text[:1500]
    else:
        body = json.loads(text)
        assert body["status"] == "pending_approval" and not body["changed"], text


@pytest.mark.parametrize("vid", cases(WRITE_IDS, WRITE_IDS, BROKEN))
def test_round85_gitenv_writers(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    env, what = vid.split(":")
    seen = got["read"][vid]
    assert seen["evil"] == got["evil0"], seen  # nothing written into Mallory's clone
    assert not seen["hook"], seen  # no hook the environment names ran
    assert seen["tree"] == "", seen  # the shared checkout clean: index and files
    slug = f"s{env}" if what == "submit" else f"ap{env}"
    refused = seen["err"] if what == "submit" else seen["rc"] != 0
    if refused:
        assert env != "none", seen
        assert seen["commits"] == "", seen
        assert "E_GIT" in seen["text"], seen  # git's failure, never a verdict on the plan
        return
    assert len(seen["commits"].splitlines()) == 1, seen
    want = "A" if what == "submit" else "M"
    assert seen["names"].split() == [want, f"plans/{slug}/PLAN.yml"], seen
    who = "Agent" if what == "submit" else "Alice"
    assert seen["commits"].startswith(who) or what == "approve", seen


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk85b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r85ge-", dir="/tmp/atk85b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
