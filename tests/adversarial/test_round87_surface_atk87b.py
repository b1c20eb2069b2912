"""Round 87, agent surfaces: git's environment beyond round 85's location list, set for a
READER by a hook, ``git rebase -x`` or an agent's harness, and round 85's list against the
readers round 85 did not try (``validate``, ``freeze --check``, ``audit``, ``check``).

Lab (one, local mode, built once). Config with a secret file (``TOK``). The agent's
``plans/ok`` (approved, completed once; its param is ``$<secrets.TOK>``), ``plans/pa`` (frozen,
``pending_approval``), ``plans/lib`` (a library) and ``plans/par`` (pins ``plans/lib`` by
hash; approved, completed once); afterwards the agent edits ``plans/lib`` (the pin no longer
reads on main: the audit must judge ``par``'s run with ``lib`` as of the run's start).
Mallory's clone ``evil`` (main's tip not in it) forges ``plans/pa`` ``completed``. A fresh
clone ``clone`` of the plans repository with a branch ``apr`` (Alice approves ``plans/pa``).
Environments ``<e>`` (set for the reader only):
- ``none`` (control); round 85's location variables: ``gitdir`` (``GIT_DIR=evil/.git``),
  ``objdir`` (``GIT_OBJECT_DIRECTORY=evil/.git/objects``), ``altobj``, ``commondir``,
  ``index`` (``GIT_INDEX_FILE`` a crafted index without ``plans/pa``), ``worktree``
  (``GIT_WORK_TREE=evil``);
- beyond it: ``shallow`` (``GIT_SHALLOW_FILE`` naming the commit after ``par``'s run: the
  history before it cut off), ``graft`` (``GIT_GRAFT_FILE`` giving main's tip the initial
  commit as its only parent), ``pathspec`` (``GIT_ICASE_PATHSPECS=1``,
  ``GIT_GLOB_PATHSPECS=1``), ``trace`` (``GIT_TRACE``, ``GIT_TRACE2_EVENT``,
  ``GIT_TRACE_PACKET``, ``GIT_TRACE_SETUP`` into files: no secret may reach them),
  ``gconfig`` (``GIT_CONFIG_GLOBAL`` naming a file with ``core.fsmonitor``,
  ``core.hooksPath``, ``alias.log``, a ``filter`` for ``*.yml``: no program runs),
  ``execpath`` (``GIT_EXEC_PATH`` a folder of ``git-*`` scripts writing a marker),
  ``ceiling`` (``GIT_CEILING_DIRECTORIES`` the repository and the clone themselves).
Readers, one id each ``<e>:<reader>``: ``status`` (``status --json --config``: the rows of
``ok``/``pa``/``par`` as with no variable), ``show`` (``show --json --config plans/pa``:
``pending_approval``, the frozen hash), ``hash`` (``plans/pa`` from the checkout), ``validate``
(``validate --json --config``: valid), ``freeze`` (``freeze --check``: frozen, exit 0),
``audit`` (``audit --json`` in the clone: ``ok`` and ``par`` valid, no finding), ``check``
(``check --format json --base main --head apr --as alice``: ``plans/pa`` approved by Alice),
``mcp`` (MCP ``status`` of ``plans/pa`` and ``log`` of ``plans/par``); every reader either the
controller's answer, or a refusal with an ``E_`` code naming git (``E_GIT``), never another
verdict; and for every environment ``<e>:clean``: no marker written (no program ran), no
secret in any trace file, the repository and clone unchanged, ``evil`` untouched. Round
85's six location environments run only the readers round 85 did not (``validate``,
``freeze``, ``audit``, ``check``); ``none`` and the seven new ones run all eight.

Seen (round 87): 0 ids broke; 102 ids, all held.
Held: every reader under every environment gave the controller's answer: ``status`` rows
``plans/ok completed``, ``plans/pa pending_approval``, ``plans/par completed`` with their
hashes; ``show``/``hash``/``validate``/``freeze --check`` the frozen hash of ``plans/pa``
(``pa/PLAN.yml: frozen sha256:775c... (unchanged)``); the clone's ``audit --json`` both runs
``approval_valid: true`` and no finding, ``par``'s nested ``lib`` judged as of the run's start
though ``lib`` was edited on main after it (the row of ``par`` stays ``completed``), also under
``GIT_SHALLOW_FILE`` cutting the history at the commit after the runs and ``GIT_GRAFT_FILE``
re-parenting main's tip onto the initial commit (git itself honours both: ``git log`` under
the shallow file shows 3 of main's 15 commits, from ``plangate: complete plans/par``; under
the graft file 2); ``check`` ``plans/pa`` ``approved``, counted
Alice, ``outcome: start``; MCP ``status`` ``pending_approval`` and ``log`` of ``plans/par``
``completed``. No program ran (``core.fsmonitor``, ``core.hooksPath``, aliases of ``log`` and
``show``, a ``filter`` on ``*.yml``, ``diff.external``, ``core.pager`` from
``GIT_CONFIG_GLOBAL``; ``git-*`` scripts in ``GIT_EXEC_PATH``), nothing written in the
repository, the clone or ``evil``.
Noted, within the promise (a refusal with git's code, or nothing the controller reads): the
pathspec variables are not dropped at ``check``'s entry: ``pathspec:check`` (and
``GIT_ICASE_PATHSPECS=1`` or ``GIT_GLOB_PATHSPECS=1`` alone) answers ``{"ok": false, "code":
"E_GIT", "message": "git ls-tree -r: fatal: plans: pathspec magic not supported by this
command: 'glob', 'icase'"}`` while ``status``, ``audit`` and the others answer as without
them (``GIT_NOGLOB_PATHSPECS=1``, ``GIT_LITERAL_PATHSPECS=0``: ``check`` as without them). The
trace variables reach plangate's git children: ``trace`` left about 400 KB of git traces
(``git cat-file --batch``, ``git log``, ``git config --list``, ``git ls-tree``...) in the
files the environment names; no secret (``TOK``, ``plans/ok``'s param) was in them.

Hand probes (not ids here; round 87, held): a lab where ``plans/par`` pinning ``plans/lib``
ran once, then the agent on main, in a fresh clone, deletes ``plans/lib``, renames its file
``PLAN.yaml``, moves the folder away and leaves a symlink ``plans/lib -> y``, adds a twin
``plans/LIB``, or adds a ``PLAN.yaml`` beside ``PLAN.yml`` with another default: ``audit
--json`` exit 0, ``"ok": true``, ``plans/par`` ``approval_valid: true``, no finding, as with no
edit (the pinned plan read at the run's start commit).

Should (docs/agents.md): "git's location variables in the environment (``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_COMMON_DIR``, ``GIT_INDEX_FILE``, ``GIT_OBJECT_DIRECTORY``,
``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_NAMESPACE``, as a hook, ``git rebase -x`` or a
harness sets them) are dropped when ``plangate`` starts"; "a read that failed is never taken
for an absent plan, by any reader or writer"; docs/threat-model.md: "every git child runs
with ``GIT_NO_REPLACE_OBJECTS=1`` and an empty graft file: history as the branch holds it",
"``core.hooksPath=/dev/null``, ``core.fsmonitor=false``, no pager, editor, external diff".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, plan_text
from test_round2_execution_kit import shared

SECRET = "s3cr3t-r87b-Zq81xw"
ENVS = [
    "none", "gitdir", "objdir", "altobj", "commondir", "index", "worktree",
    "shallow", "graft", "pathspec", "trace", "gconfig", "execpath", "ceiling",
]  # fmt: skip
READERS = ("status", "show", "hash", "validate", "freeze", "audit", "check", "mcp")
#: round 85's environments already ran its readers (status, show, hash, MCP): only the others
R85 = ("gitdir", "objdir", "altobj", "commondir", "index", "worktree")
NEW_READERS = ("validate", "freeze", "audit", "check")


def _readers(e: str) -> tuple[str, ...]:
    return NEW_READERS if e in R85 else READERS


KEEP = ("plans/ok", "plans/pa", "plans/par")
MARK = '#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null 2>&1\nexit 0\n'

LIB = """\
plan:
  name: lib
  task: "a library"
  status: draft
inputs:
  t: "x"
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "lib"
    params:
      tag: "lib"
      t: "$<inputs.t>"
"""


def _par(pin: str) -> str:
    return f"""\
plan:
  name: par
  task: "a parent"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "par"
    params:
      tag: "par"
  - id: 2
    plan: {{path: plans/lib, hash: "{pin}"}}
    why: "the library"
    inputs: {{t: "y"}}
"""


def _envs(root: Path, lab: Lab) -> dict[str, dict[str, str]]:
    evil = root / "evil"
    gc = root / "gconfig"
    return {
        "none": {},
        "gitdir": {"GIT_DIR": str(evil / ".git")},
        "objdir": {"GIT_OBJECT_DIRECTORY": str(evil / ".git" / "objects")},
        "altobj": {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(evil / ".git" / "objects")},
        "commondir": {"GIT_COMMON_DIR": str(evil / ".git")},
        "index": {"GIT_INDEX_FILE": str(root / "crafted.index")},
        "worktree": {"GIT_WORK_TREE": str(evil)},
        "shallow": {"GIT_SHALLOW_FILE": str(root / "shallow")},
        "graft": {"GIT_GRAFT_FILE": str(root / "grafts")},
        "pathspec": {"GIT_ICASE_PATHSPECS": "1", "GIT_GLOB_PATHSPECS": "1"},
        "trace": {
            "GIT_TRACE": str(root / "trace" / "t1"),
            "GIT_TRACE2_EVENT": str(root / "trace" / "t2"),
            "GIT_TRACE_PACKET": str(root / "trace" / "t3"),
            "GIT_TRACE_SETUP": str(root / "trace" / "t4"),
            "GIT_TRACE2": str(root / "trace" / "t5"),
        },
        "gconfig": {"GIT_CONFIG_GLOBAL": str(gc)},
        "execpath": {"GIT_EXEC_PATH": str(root / "execpath")},
        "ceiling": {"GIT_CEILING_DIRECTORIES": f"{lab.repo}:{root / 'clone'}"},
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


def _session(lab: Lab, extra: dict[str, str]) -> list[tuple[int, str]]:
    env = lab.env()
    env.update(extra)
    calls = [("status", {"path": "plans/pa"}), ("log", {"path": "plans/par"})]
    done = subprocess.run(
        [mcpkit.PLANGATE, "mcp", "--config", str(lab.config)],
        input=mcpkit._requests(calls), capture_output=True, text=True, cwd=lab.root, env=env,
        timeout=120, check=False,
    )  # fmt: skip
    replies: dict[Any, Any] = {}
    for line in done.stdout.splitlines():
        if line.strip():
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    out = []
    for i in (1, 2):
        res = (replies.get(i) or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        out.append((1 if res.get("isError") or i not in replies else 0, text))
    return out


def _rows(text: str) -> Any:
    try:
        rows = json.loads(text.split("\n--\n")[0])
    except ValueError:
        return None
    return sorted((r["plan"], r["status"], r["hash"]) for r in rows if r["plan"] in KEEP)


def _state(path: Path, env: dict[str, str]) -> str:
    git = ["git", "-C", str(path)]
    heads = subprocess.run(
        [*git, "for-each-ref", "--format=%(refname) %(objectname)"], env=env,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    st = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"], env=env,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    return heads + "|" + st


def _audit_view(text: str) -> Any:
    try:
        report = json.loads(text.split("\n--\n")[0])
    except ValueError:
        return None
    valid = sorted(e["plan"] for e in report.get("executions", []) if e.get("approval_valid"))
    allx = sorted(e["plan"] for e in report.get("executions", []))
    return {"valid": valid, "all": allx, "findings": len(report.get("findings", []) or [])}


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(
        root,
        extra="agent: {identity: {name: Agent, email: agent@example.com}}\n"
        f"secrets: {{file: {root / 'sec.yml'}}}\n",
    )
    lab.write("ok", plan_text("ok", params='key: "$<secrets.TOK>"\n'))
    lab.write("pa", plan_text("pa"))
    lab.write("lib", LIB)
    lab.commit("agent: plans", AGENT)
    pin = _run(lab, {}, "hash", "plans/lib/PLAN.yml", cwd=lab.repo)[1].split()[0]
    lab.write("par", _par(pin))
    lab.commit("agent: parent", AGENT)
    lab.run()
    lab.approve("ok")
    lab.approve("par")
    lab.run()
    after_run = lab.head()
    lab.write("lib", LIB.replace('t: "x"', 't: "changed"'))
    lab.commit("agent: lib edited after the run", AGENT)
    lab.run()
    evil = root / "evil"
    lab.git("clone", "-q", str(lab.repo), str(evil))
    forged = evil / "plans" / "pa" / "PLAN.yml"
    forged.write_text(forged.read_text().replace("status: pending_approval", "status: completed"))
    subprocess.run(["git", "-C", str(evil), "add", "-A"], env=lab.env(), check=True)
    subprocess.run(
        ["git", "-C", str(evil), "commit", "-qm", "forge"], env=lab.env(MALLORY), check=True
    )
    lab.commit("alice: a note after the clone", ALICE)
    tip = lab.head()
    initial = lab.git("rev-list", "--max-parents=0", "HEAD").split()[0]
    (root / "shallow").write_text(after_run + "\n")
    (root / "grafts").write_text(f"{tip} {initial}\n")
    idx = dict(lab.env(), GIT_INDEX_FILE=str(root / "crafted.index"))
    subprocess.run(["git", "read-tree", "HEAD"], cwd=lab.repo, env=idx, check=True)
    subprocess.run(
        ["git", "rm", "-q", "--cached", "-r", "plans/pa"], cwd=lab.repo, env=idx, check=True
    )
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], env=lab.env(), check=True)
    cg = ["git", "-C", str(clone)]
    subprocess.run([*cg, "checkout", "-q", "-b", "apr"], env=lab.env(), check=True)
    cpa = clone / "plans" / "pa" / "PLAN.yml"
    cpa.write_text(cpa.read_text().replace("status: pending_approval", "status: approved"))
    subprocess.run([*cg, "commit", "-qam", "approve pa"], env=lab.env(ALICE), check=True)
    subprocess.run([*cg, "checkout", "-q", "main"], env=lab.env(), check=True)
    subprocess.run([*cg, "branch", "-q", "-f", "apr", "apr"], env=lab.env(), check=True)
    prog = root / "prog.sh"
    prog.write_text(MARK.format(marker=root / "marker.gconfig"))
    prog.chmod(0o755)
    hooks = root / "hooks"
    hooks.mkdir()
    for name in ("post-commit", "pre-commit", "post-checkout", "reference-transaction"):
        (hooks / name).write_text(MARK.format(marker=root / "marker.gconfig"))
        (hooks / name).chmod(0o755)
    (root / "gconfig").write_text(
        (root / "gitconfig").read_text()
        + f"[core]\n\tfsmonitor = {prog}\n\thooksPath = {hooks}\n\tpager = {prog}\n"
        f"[alias]\n\tlog = !{prog}\n\tshow = !{prog}\n"
        f'[filter "x"]\n\tclean = {prog}\n\tsmudge = {prog}\n\tprocess = {prog}\n'
        f"[diff]\n\texternal = {prog}\n[core]\n\tsshCommand = {prog}\n"
    )
    (lab.repo / ".git" / "info" / "attributes").write_text("*.yml filter=x\n")
    (clone / ".git" / "info" / "attributes").write_text("*.yml filter=x\n")
    ep = root / "execpath"
    ep.mkdir()
    for name in ("git-cat-file", "git-log", "git-rev-parse", "git-ls-tree", "git-upload-pack",
                 "git-remote-file", "git-show", "git-for-each-ref", "git-rev-list"):  # fmt: skip
        (ep / name).write_text(MARK.format(marker=root / "marker.execpath"))
        (ep / name).chmod(0o755)
    (root / "trace").mkdir()
    envs = _envs(root, lab)
    c = str(lab.config)
    got: dict[str, Any] = {"read": {}, "clean": {}}
    got["frozen"] = lab.plan("pa")["frozen"]["hash"]
    got["ref_rows"] = _rows(_run(lab, {}, "status", "--json", "--config", c)[1])
    base = lab.env()
    got["s0"] = (_state(evil, base), _state(lab.repo, base), _state(clone, base))

    def one(e: str) -> dict[str, Any]:
        x = envs[e]
        want = _readers(e)
        r: dict[str, Any] = {}
        if "status" in want:
            r["status"] = _run(lab, x, "status", "--json", "--config", c)
            r["show"] = _run(lab, x, "show", "--json", "--config", c, str(lab.repo / "plans/pa"))
            r["hash"] = _run(lab, x, "hash", "pa/PLAN.yml", cwd=lab.repo / "plans")
        r["validate"] = _run(lab, x, "validate", "--json", "--config", c, "plans/pa/PLAN.yml",
                             cwd=lab.repo)  # fmt: skip
        r["freeze"] = _run(lab, x, "freeze", "--check", "pa/PLAN.yml", cwd=lab.repo / "plans")
        r["audit"] = _run(lab, x, "audit", "--json", cwd=clone / "plans")
        r["check"] = _run(
            lab, x, "check", "--config", c, "--format", "json", "--base", "main", "--head",
            "apr", "--as", ALICE[1], cwd=clone,
        )  # fmt: skip
        if "mcp" in want:
            ms, ml = _session(lab, x)
            r["mcp"] = (max(ms[0], ml[0]), json.dumps([ms[1], ml[1]]))
        return r

    with ThreadPoolExecutor(max_workers=3) as pool:  # markers and traces are per environment
        results = dict(zip(ENVS, pool.map(one, ENVS), strict=True))
    end = (_state(evil, base), _state(lab.repo, base), _state(clone, base))
    traces = "".join(f.read_text(errors="replace") for f in sorted((root / "trace").iterdir()))
    for e in ENVS:
        for k, v in results[e].items():
            got["read"][f"{e}:{k}"] = v
        mark = root / f"marker.{e}"
        got["clean"][e] = {
            "marker": mark.read_text() if mark.exists() else "",
            "secret": SECRET in traces,
            "traced": len(traces) if e == "trace" else 0,
            "state": end,
        }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r87-surface-atk87b", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 87 surface: {cls}: {what}"
    )


READ_IDS = [f"{e}:{r}" for e in ENVS for r in _readers(e)]
CLEAN_IDS = [f"{e}:clean" for e in ENVS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(READ_IDS, READ_IDS, BROKEN))
def test_round87_env_readers(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    env, reader = vid.split(":")
    rc, text = got["read"][vid]
    if reader == "freeze" and rc == 0:
        return  # frozen: exit 0
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
    elif reader == "validate":
        body = json.loads(text.split("\n--\n")[0])
        assert all(f.get("valid") for f in body["files"]) if "files" in body else body, text
    elif reader == "audit":
        view = _audit_view(text)
        assert view is not None and view["valid"] == ["plans/ok", "plans/par"], text[:2000]
        assert view["all"] == ["plans/ok", "plans/par"], text[:2000]
    elif reader == "check":
        assert "plans/pa" in text and "alice" in text.lower(), text[:2000]
    else:
        status, log = json.loads(text)
        body = json.loads(status)
        row = body["plans"][0] if "plans" in body else body
        assert row["status"] == "pending_approval", status[:1500]
        assert json.loads(log)["status"] == "completed", log[:1500]


@pytest.mark.parametrize("vid", cases(CLEAN_IDS, CLEAN_IDS, BROKEN))
def test_round87_env_clean(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    seen = got["clean"][vid.split(":")[0]]
    assert seen["marker"] == "", seen  # no program the environment names ran
    assert not seen["secret"], seen  # no secret in any trace file
    assert seen["state"] == got["s0"], seen  # nothing written anywhere


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk87b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r87b-", dir="/tmp/atk87b"))
    sys.setrecursionlimit(10000)
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
