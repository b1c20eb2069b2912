"""Round 90, agent surfaces (atk90b): past round 89's nested-repository refusal: a ``git
worktree add`` inside ``plans/``, a ``.git`` SYMLINK naming a git directory elsewhere, a plan
two levels below a nested repository's root, an empty ``.git`` folder; the same committed as
gitlinks read through MCP, the audit, the page and ``/api/``; git's location variables in
the agent's shell naming the nested worktree (a reader) or an index staging ``EVIL`` (an
approver); a hard link; a sparse checkout; ``.git/info/attributes`` with a filter and a diff
driver; ``convert`` of a source inside a nested worktree and ``-o`` into one or a link.

Lab (one, local mode, built once). The agent's ``plans/ok`` (Alice's approval, completed),
``pa``, ``hl``, ``sp``, ``at``, ``cx``, ``e0``..``e4`` (frozen). Working tree only: ``wt``
(``git worktree add --detach plans/wt`` of a commit whose tree holds a ``PLAN.yml`` with task
``SECRETTARGET``), ``gl`` (``PLAN.yml`` beside ``.git`` -> a ``--separate-git-dir``
repository outside), ``gd`` (``plans/gd`` a repository, the plan at ``plans/gd/x``), ``ge``
(an empty ``.git`` folder). Passes run (the controller's adoption of uncommitted plans). Then
Alice approves ``cx`` and the agent commits ``plans/wc`` (a second worktree) and ``plans/gk``
(a ``.git`` symlink) as gitlinks; one pass.
Ids: ``<n>:<reader>`` for ``wt``, ``wc``, ``gl``, ``gd``, ``ge``, ``ok`` x ``showj`` (``show
--json --config``), ``hash``, ``validate``, ``vfolder``, ``freeze`` (``--check``):
``E_UNSAFE_PATH``, the target never shown (``ok`` the control); ``adopt:<n>`` (``wt``, ``gl``,
``gd``, ``ge``): no controller commit of the nested file; ``pass:rc``/``pass:cx``: the pass
after the gitlinks exits 0 and runs Alice's ``cx`` once; ``<wc|gk>:<surface>`` for MCP
``status``/``log`` (the row's ``E_UNSAFE_PATH``), ``audit --json --config`` (a verdict), the
daemon's ``/api/plan/plans/<n>`` and ``/plan/plans/<n>`` (``E_UNSAFE_PATH``, never "no
plan"); ``GIT_<VAR>:show`` (the variable naming the worktree's git dir, its work tree, an
``EVIL`` index, the outside repository's objects as the object directory or an alternate:
``show`` of ``plans/wt/PLAN.yml`` still ``E_UNSAFE_PATH``), ``GIT_<VAR>:approve`` (Alice's
``plangate approve`` of ``e<i>`` under it: the frozen text approved), ``GIT_<VAR>:ran`` (ran
once, ``EVIL`` never); ``hl:*`` (``plans/hl/PLAN.yml`` hard-linked to a file outside the
repository: ``show`` the frozen hash, ``approve``, ``other``: the approval wrote nothing through
the link, ``ran`` once); ``sp:*`` (``git sparse-checkout set --no-cone '/*' '!/plans/sp/'``:
the row, ``show``, Alice's ``approve``, ``ran``); ``at:*`` (``/plans/at/PLAN.yml filter=evil
diff=evil`` in ``.git/info/attributes``, clean/smudge/textconv/command programs in
``.git/config``, the file dated 2100: ``status``, ``show``, ``hash``, ``freeze``, ``audit``,
MCP, ``approve``, ``ran``, ``fired``: no program ran); ``cv:*`` (``convert --json`` and plain
``convert`` of ``plans/wt/cv.json``, ``convert -o plans/wt``, ``-o plans/lnk`` a symlink out,
``-o plans`` the control).

Seen (round 90): 20 ids broke, 5 classes.
``gitlink-stops-everything`` (8 ids: ``pass:rc``, ``pass:cx``, ``wc``/``gk`` x ``mstatus``,
``mlog``, ``audit``): **one agent commit of a gitlink in plans/ stops the controller**. The
pass logged "E_UNSAFE_PATH: plans/gk is a submodule (gitlink) in the plans folder; it is not
followed" and then exited 2 "plangate: E_GIT: cannot read object 3f00f3ed...: SHA
b'3f00f3ed...' could not be resolved, git returned: b'3f00f3ed... missing'" (the gitlink's
commit), Alice's approved ``cx`` never ran; every later pass and the daemon
("reconcile.failed" ``E_GIT``, "reasons": ["retry"]) the same; ``audit --json --config`` exit 2
``E_GIT``; MCP ``status``/``log`` of ``plans/wc`` "E_GIT: cannot read object ..."; ``status``
"warning: history not read, showing the last known state". Round 89's own module
(``test_round89_surface_atk89b.py``) now errors in its lab build the same way ("run --once
exited 2 ... E_GIT: cannot read object 8388d1a0...") on this head: the round-89 fix's lab no
longer builds. Also a gitlink whose commit IS in the store (a worktree's) failed alike in a
hand probe.
``page-absent`` (4 ids: ``wc``/``gk`` x ``api``, ``html``): the page served the last known
state: ``/api/plan/plans/wc`` 404 "E_NOT_FOUND: no plan 'plans/wc' on the watched branch",
remedy "check the path", the HTML "Not found", for a gitlink the branch holds.
``nested-adopted`` (4 ids: ``adopt:wt``, ``adopt:gl``, ``adopt:gd``, ``adopt:ge``): **local
mode's adoption commits a plan inside a nested repository**: the pass's commit "plangate: 9
plan events" (``Plan-Event: freeze`` for ``plans/gd/x`` ...) added ``plans/wt/PLAN.yml``,
``plans/gl/PLAN.yml``, ``plans/gd/x/PLAN.yml`` (the ``SECRETTARGET`` text of the worktree,
the ``.git``-symlinked repository and the nested repository) and ``plans/ge/PLAN.yml`` under
the controller's name, frozen ``pending_approval``, while every reader said "E_UNSAFE_PATH:
plans/wt is a git repository ... below the plans folder of the repository around it; plangate
never reads a plan through one, and the controller holds such a folder without running it"
(``ge``, an empty ``.git`` folder git itself does not take for a repository, too).
``sparse-absent`` (``sp:approve``): Alice's ``plangate approve plans/sp`` of a frozen plan the
branch holds, left out of her working tree by a sparse checkout: "E_USAGE: plans/sp: no
PLAN.yml there", remedy "give a plan folder or its PLAN.yml" (the row said
``pending_approval``; ``show`` "E_USAGE: ...: no such plan file").
``convert-nested`` (3 ids): ``convert --json plans/wt/cv.json`` "ok": true, "valid": true;
plain ``convert`` of it printed the converted plan ("task: \"secrettarget\""); ``convert -o
plans/wt`` wrote ``plans/wt/cv/PLAN.yml`` inside the nested worktree (exit 0).
Held: every reader of ``wt``, ``wc``, ``gl``, ``gd``, ``ge`` ``E_UNSAFE_PATH`` with nothing of
the target shown; the five location variables (``show`` ``E_UNSAFE_PATH``, ``approve``
committed the frozen text approved, ``EVIL`` never ran, each plan once); the hard link (the
frozen hash, Alice's approval, ran once, the outside file untouched); the sparse row and
``show``'s coded error, nothing ran; ``.git/info/attributes``: no filter or diff program ran
for ``status``, ``show``, ``hash``, ``freeze``, ``audit``, MCP, ``approve``, ``run``, the frozen
hash shown, ran once; ``convert -o plans/lnk`` "E_USAGE: .../plans/lnk/cv is outside ...".

Should: docs/plan-format.md: "So is a plan inside a repository of its own nested below the
plans folder (round 89: a submodule committed as a gitlink, a folder whose ``.git`` is a file
naming a git directory elsewhere, a clone never committed): every reader says
``E_UNSAFE_PATH`` naming it, and MCP ``log`` answers the code its status row holds, never 'no
plan'", and of every unreadable plan: "Each of these costs only that plan; every other plan
carries on in the same pass"; docs/errors.md ``E_UNSAFE_PATH``: "A plan path plangate will
not read or write: a symlink, FIFO, device or submodule where a plan file or folder should
be"; docs/agents.md: "a read that failed is never taken for an absent plan, by any reader or
writer (``approve`` too ...)".

Fixed (2026-12-02, the lead): ``gitlink-stops-everything`` and ``page-absent`` were a
regression of this session's held-twin fix (``Lifecycle._held_note`` read every changed
path's blob, a gitlink's commit too): it reads regular files only, for held plans only;
``nested-adopted`` and ``convert-nested``: the nested-repository refusal applies to bytes a
caller read itself (the adoption) and to ``convert``'s source and ``-o`` folder
(``plans.nested_problem``, ``nested_at``); ``sparse-absent``: ``approve`` names a plan the
branch holds but the working tree lacks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, identity, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
SECRET = "SECRETTARGET"
MARK = '#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n'
NESTED = ("wt", "wc", "gl", "gd", "ge", "ok")
READERS = ("showj", "hash", "validate", "vfolder", "freeze")
HELD = ("wc", "gk")  # committed: the branch holds a gitlink
HREADERS = ("row", "mstatus", "mlog", "api", "html", "audit")
LOCS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
)
LOPS = ("show", "approve")
HL = ("show", "approve", "other", "ran")
SP = ("row", "show", "approve", "ran")
AT = ("status", "show", "hash", "freeze", "audit", "mcp", "approve", "ran", "fired")
CV = ("nested", "outnested", "outlink", "ok")
PL = ("row", "show", "hash", "mlog")


def _run(lab: Lab, *args: str, cwd: Path | None = None, who: Any = None,
         env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    e = lab.env(who)
    e.update(env or {})
    e["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [mcpkit.PLANGATE, *args], env=e, cwd=cwd or lab.repo, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    out = r.stdout if len(r.stdout) <= 12000 else f"{r.stdout[:6000]}\n...\n{r.stdout[-6000:]}"
    return {"rc": r.returncode, "out": out, "err": r.stderr[-3000:]}


def _git(cwd: Path, *args: str, root: Path, who: Any = AGENT, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(root / "home"), GIT_CONFIG_GLOBAL=str(root / "gitconfig"))
    env.update(GIT_CONFIG_NOSYSTEM="1", **identity(who))
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=check, capture_output=True, text=True
    ).stdout


def _texts(lab: Lab, calls: list[mcpkit.Call]) -> list[tuple[int, str]]:
    replies, err = mcpkit.session(lab, calls)
    out = []
    for reply in replies:
        res = (reply or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if reply is None:
            text = "NO REPLY " + err[-1500:]
        out.append((1 if reply is None or res.get("isError") else 0, text))
    return out


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _tree_commit(lab: Lab, text: str) -> str:
    """A commit (no branch) whose tree holds PLAN.yml at its root."""
    blob = lab.git("hash-object", "-w", "--stdin", input=text).strip()
    tree = lab.git("mktree", input=f"100644 blob {blob}\tPLAN.yml\n").strip()
    return lab.git("commit-tree", tree, "-m", "side", who=AGENT).strip()


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    slugs = ["ok", "pa", "hl", "sp", "at", "cx", *(f"e{i}" for i in range(len(LOCS)))]
    for slug in slugs:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.run()
    got: dict[str, Any] = {"frozen": {s: lab.plan(s)["frozen"]["hash"] for s in slugs[1:]}}
    secret = lab.read("pa").replace("attack variant pa", SECRET)
    plans = lab.repo / "plans"
    c = str(lab.config)
    # -- nested work trees of new kinds
    side = _tree_commit(lab, secret)
    lab.git("worktree", "add", "-q", "--detach", str(plans / "wt"), side)
    sep = root / "gl.git"
    (root / "glsrc").mkdir()
    (root / "glsrc" / "PLAN.yml").write_text(secret)
    _git(root / "glsrc", "init", "-q", f"--separate-git-dir={sep}", ".", root=root)
    _git(root / "glsrc", "add", "-A", root=root)
    _git(root / "glsrc", "commit", "-qm", "inner", root=root)
    (plans / "gl").mkdir()
    (plans / "gl" / "PLAN.yml").write_text(secret)
    (plans / "gl" / ".git").symlink_to(sep)  # .git a SYMLINK to a git directory
    (plans / "gd" / "x").mkdir(parents=True)  # the plan two levels below a nested root
    (plans / "gd" / "x" / "PLAN.yml").write_text(secret)
    _git(plans / "gd", "init", "-q", ".", root=root)
    _git(plans / "gd", "add", "-A", root=root)
    _git(plans / "gd", "commit", "-qm", "inner", root=root)
    (plans / "ge" / ".git").mkdir(parents=True)  # an empty .git folder: no repository
    (plans / "ge" / "PLAN.yml").write_text(secret)
    # -- git's location variables naming the nested worktree, for a reader and an approver
    wtgit = lab.repo / ".git" / "worktrees" / "wt"
    evil_index = root / "evil.index"
    locs: dict[str, Any] = {}
    for i, var in enumerate(LOCS):
        slug = f"e{i}"
        value = {
            "GIT_DIR": str(wtgit),
            "GIT_WORK_TREE": str(plans / "wt"),
            "GIT_INDEX_FILE": str(evil_index),
            "GIT_OBJECT_DIRECTORY": str(sep / "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(sep / "objects"),
        }[var]
        if var == "GIT_INDEX_FILE":  # an index staging an EVIL version of the plan
            env = lab.env(AGENT)
            env["GIT_INDEX_FILE"] = str(evil_index)
            subprocess.run(["git", "read-tree", "HEAD"], cwd=lab.repo, env=env, check=True)
            evil = lab.read(slug).replace(f'tag: "{slug}"', 'tag: "EVIL"')
            blob = lab.git("hash-object", "-w", "--stdin", input=evil).strip()
            subprocess.run(
                ["git", "update-index", "--cacheinfo", f"100644,{blob},plans/{slug}/PLAN.yml"],
                cwd=lab.repo, env=env, check=True,
            )  # fmt: skip
        env = {var: value}
        locs[f"{var}:show"] = _run(
            lab, "show", "--json", "--config", c, str(plans / "wt" / "PLAN.yml"), env=env
        )
        before = lab.head()
        r = _run(lab, "approve", "--config", c, f"plans/{slug}", who=ALICE, env=env)
        r["moved"] = lab.head() != before
        r["text"] = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
        locs[f"{var}:approve"] = r
    got["locs"] = locs
    # -- a hard link: plans/hl/PLAN.yml and plans/pa/PLAN.yml one file on disk (frozen texts
    # differ only by name, so the agent links hl's to a copy it keeps elsewhere too)
    outside = root / "hl-outside.yml"
    os.link(plans / "hl" / "PLAN.yml", outside)
    hl: dict[str, Any] = {}
    hl["show"] = _run(lab, "show", "--json", "--config", c, str(plans / "hl" / "PLAN.yml"))
    before = lab.head()
    hl["approve"] = _run(lab, "approve", "--config", c, "plans/hl", who=ALICE)
    hl["approve"]["moved"] = lab.head() != before
    hl["other"] = {"outside": outside.read_text(), "porcelain": lab.git("status", "--porcelain")}
    # -- sparse checkout: the agent leaves plans/sp out of the working tree
    lab.git("sparse-checkout", "set", "--no-cone", "/*", "!/plans/sp/")
    sp: dict[str, Any] = {"exists": (plans / "sp" / "PLAN.yml").exists()}
    lab._status = None  # type: ignore[attr-defined]
    sp["row"] = json.dumps(lab.status().get("plans/sp"))
    sp["show"] = _run(lab, "show", "--json", "--config", c, str(plans / "sp" / "PLAN.yml"))
    before = lab.head()
    sp["approve"] = _run(lab, "approve", "--config", c, "plans/sp", who=ALICE)
    sp["approve"]["moved"] = lab.head() != before
    sp["approve"]["text"] = lab.git("show", "HEAD:plans/sp/PLAN.yml")
    sp["pass"] = _run(lab, "run", "--once", "--config", c, cwd=root)
    lab.git("sparse-checkout", "disable")
    # -- .git/info/attributes: a filter and a diff driver the agent defines in .git/config
    prog = root / "prog"
    marker = root / "ran-attr"
    prog.write_text(MARK.format(marker=marker))
    prog.chmod(0o755)
    info = lab.repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("/plans/at/PLAN.yml filter=evil diff=evil\n")
    for key, val in (
        ("filter.evil.clean", str(prog)),
        ("filter.evil.smudge", str(prog)),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", str(prog)),
        ("diff.evil.command", str(prog)),
    ):
        lab.git("config", key, val)
    os.utime(plans / "at" / "PLAN.yml", (4102444800, 4102444800))  # racily clean for good
    at: dict[str, Any] = {}
    atp = str(plans / "at" / "PLAN.yml")
    at["status"] = _run(lab, "status", "--json", "--config", c)
    at["show"] = _run(lab, "show", "--json", "--config", c, atp)
    at["hash"] = _run(lab, "hash", atp)
    at["freeze"] = _run(lab, "freeze", "--check", atp)
    at["audit"] = _run(lab, "audit", "--json", "--config", c)
    at["mcp"] = _texts(lab, [("status", {"path": "plans/at"}), ("log", {"path": "plans/at"})])
    before = lab.head()
    at["approve"] = _run(lab, "approve", "--config", c, "plans/at", who=ALICE)
    at["approve"]["moved"] = lab.head() != before
    at["pass"] = _run(lab, "run", "--once", "--config", c, cwd=root)
    at["fired"] = marker.read_text() if marker.exists() else ""
    (info / "attributes").unlink()
    got["at"] = at
    lab.run()
    hl["ran"] = {"n": len(lab.calls("hl")), "st": lab.plan("hl")["plan"]["status"]}
    sp["ran"] = {"n": len(lab.calls("sp")), "st": lab.plan("sp")["plan"]["status"]}
    at["ran"] = {"n": len(lab.calls("at")), "st": lab.plan("at")["plan"]["status"]}
    got["hl"], got["sp"] = hl, sp
    got["locran"] = {
        v: {"evil": lab.calls("EVIL"), "st": lab.plan(f"e{i}")["plan"]["status"]}
        for i, v in enumerate(LOCS)
    }
    got["adopt"] = {
        n: lab.git("log", "--format=%an|%s", "--", f"plans/{n}").split("\n")[0]
        for n in ("wt", "gl", "gd", "ge")
    }
    lab.git("worktree", "add", "-q", "--detach", str(plans / "wc"), side)
    (plans / "gk").mkdir()
    (plans / "gk" / "PLAN.yml").write_text(secret)
    (plans / "gk" / ".git").symlink_to(sep)
    lab.set_status("cx", "approved")  # Alice's approval of a frozen plan, then the gitlinks
    lab.git("add", "plans/cx")
    lab.git("commit", "-qm", "approve cx", who=ALICE)
    lab.git("add", "plans/wc", "plans/gk")
    lab.git("commit", "-qm", "agent: folders", who=AGENT)
    done = lab.run(check=False)
    got["pass"] = {"rc": done.returncode, "err": done.stderr[-1500:]}
    got["pass"]["cx"] = len(lab.calls("cx"))
    got["tree"] = lab.git("ls-tree", "-r", "HEAD", "plans/")
    st = _run(lab, "status", "--json", "--config", c)
    got["statuscmd"] = st
    try:
        rows = {r["plan"]: r for r in json.loads(st["out"])}
    except ValueError:
        rows = {}
    got["status"] = rows

    def path_of(name: str) -> Path:
        return plans / name / ("x/PLAN.yml" if name == "gd" else "PLAN.yml")

    def one(job: tuple[str, str]) -> dict[str, Any]:
        name, op = job
        path = str(path_of(name))
        args = {
            "showj": ["show", "--json", "--config", c, path],
            "hash": ["hash", path],
            "validate": ["validate", path],
            "vfolder": ["validate", "--config", c, str(Path(path).parent)],
            "freeze": ["freeze", "--check", path],
        }[op]
        return _run(lab, *args)

    jobs = [(n, op) for n in NESTED for op in READERS]
    with ThreadPoolExecutor(2) as pool:
        got["nested"] = dict(zip([f"{n}:{op}" for n, op in jobs], pool.map(one, jobs), strict=True))
    # -- the held gitlinks on the other surfaces
    calls: list[mcpkit.Call] = []
    for name in HELD:
        calls += [("status", {"path": f"plans/{name}"}), ("log", {"path": f"plans/{name}"})]
    texts = _texts(lab, calls)
    aud = _run(lab, "audit", "--json", "--config", c)
    held: dict[str, Any] = {}
    for i, name in enumerate(HELD):
        held[f"{name}:row"] = json.dumps(rows.get(f"plans/{name}"))
        held[f"{name}:mstatus"] = json.dumps(texts[2 * i])
        held[f"{name}:mlog"] = json.dumps(texts[2 * i + 1])
        held[f"{name}:audit"] = aud
    got["held"] = held
    # -- convert: a source inside a nested repository, an output folder that is one / a link
    src = {"plan_version": 1, "goal": SECRET.lower(), "skill_id": "s",
           "steps": [{"step_id": "a", "tool": "rec", "args": {"tag": "cv"}}]}  # fmt: skip
    (plans / "wt" / "cv.json").write_text(json.dumps(src))
    (root / "cv.json").write_text(json.dumps(src))
    (root / "cvok.json").write_text(json.dumps({**src, "goal": "cvok"}))
    (root / "elsewhere").mkdir()
    (plans / "lnk").symlink_to(root / "elsewhere")
    cv: dict[str, Any] = {}
    nested_src = str(plans / "wt" / "cv.json")
    cv["nested"] = _run(lab, "convert", "--json", "--config", c, nested_src)
    cv["nestedshow"] = _run(lab, "convert", "--config", c, nested_src)
    cv["outnested"] = _run(
        lab, "convert", "--config", c, "-o", str(plans / "wt"), str(root / "cv.json")
    )
    cv["outlink"] = _run(
        lab, "convert", "--config", c, "-o", str(plans / "lnk"), str(root / "cv.json")
    )
    cv["ok"] = _run(lab, "convert", "--config", c, "-o", str(plans), str(root / "cvok.json"))
    cv["written"] = sorted(
        str(p.relative_to(root)) for p in root.rglob("PLAN.yml")
        if "elsewhere" in str(p) or "plans/wt/" in str(p) or "plans/cvok" in str(p)
    )  # fmt: skip
    got["cv"] = cv
    # -- the page and its API for the held plans
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", c], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    try:
        end = time.time() + 60
        while time.time() < end and _get(ui, "/api/")[0] != 200:
            time.sleep(0.2)
        time.sleep(1.0)
        held["overview"] = _get(ui, "/api/")
        for name in HELD:
            held[f"{name}:api"] = _get(ui, f"/api/plan/plans/{name}")
            held[f"{name}:html"] = _get(ui, f"/plan/plans/{name}")
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    lab.got = got  # type: ignore[attr-defined]
    return lab


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 90 surface: {cls}: {what}"
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r90-surface-atk90b", _build)


NIDS = [f"{n}:{op}" for n in NESTED for op in READERS]
AIDS = [f"adopt:{n}" for n in ("wt", "gl", "gd", "ge")]
PIDS = ["pass:rc", "pass:cx"]
HIDS = [f"{n}:{op}" for n in HELD for op in ("mstatus", "mlog", "audit", "api", "html")]
LIDS = [f"{v}:{op}" for v in LOCS for op in (*LOPS, "ran")]
HLIDS = [f"hl:{op}" for op in HL]
SPIDS = [f"sp:{op}" for op in SP]
ATIDS = [f"at:{op}" for op in AT]
CVIDS = [f"cv:{op}" for op in ("nested", "nestedshow", "outnested", "outlink", "ok")]
IDS = NIDS + AIDS + PIDS + HIDS + LIDS + HLIDS + SPIDS + ATIDS + CVIDS
_ADOPT = xfail(
    "nested-adopted",
    "the controller's pass commits, under its name, a plan file inside a repository nested "
    "below plans/ (a worktree, a .git symlink, a plan below a nested root) that every reader "
    "calls E_UNSAFE_PATH",
)
_STOP = xfail(
    "gitlink-stops-everything",
    "one committed gitlink in plans/ makes every pass, audit, MCP status/log exit E_GIT "
    "'cannot read object <gitlink commit>': no plan runs, the audit reaches no verdict",
)
_ABSENT = xfail(
    "page-absent", "the page and /api/plan/ answer E_NOT_FOUND 'no plan' for a held gitlink"
)
BROKEN: dict[str, Any] = {}


def _clean(text: str) -> None:
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]
    assert SECRET not in text and SECRET.lower() not in text, text[:2000]


def _check_nested(got: dict[str, Any], vid: str) -> None:
    name, _op = vid.split(":")
    seen = got["nested"][vid]
    text = seen["out"] + seen["err"]
    assert "Traceback" not in text, text[-2000:]
    if name == "ok":
        assert seen["rc"] == 0 and "E_UNSAFE_PATH" not in seen["out"], text[-2000:]
        return
    assert SECRET not in text, text[:2000]  # the nested plan never read or shown
    assert seen["rc"] != 0 and "E_UNSAFE_PATH" in text, text[:2000]


def _check_held(got: dict[str, Any], vid: str) -> None:
    _name, op = vid.split(":")
    if op in ("api", "html"):
        code, text = got["held"][vid]
        _clean(text)
        assert "E_UNSAFE_PATH" in text and "no plan" not in text, (code, text[:1500])
        return
    seen = got["held"][vid]
    text = json.dumps(seen)
    _clean(text)
    if op == "audit":  # the audit reaches its verdicts, the gitlink held
        assert seen["rc"] in (0, 1) and '"executions"' in seen["out"], text[:1500]
    else:  # the code the status row holds
        assert "E_UNSAFE_PATH" in text and "no plan" not in text, text[:1500]


def _check_loc(got: dict[str, Any], vid: str) -> None:
    var, op = vid.split(":")
    if op == "ran":
        seen = got["locran"][var]
        assert seen["evil"] == [] and seen["st"] == "completed", seen
        return
    seen = got["locs"][vid]
    _clean(json.dumps(seen))
    if op == "show":  # the environment never turns the nested worktree into the repository
        assert seen["rc"] != 0 and "E_UNSAFE_PATH" in seen["out"] + seen["err"], seen
    else:  # one commit of Alice's: the frozen text, approved, whatever index git was told
        assert seen["rc"] == 0 and seen["moved"], seen
        assert "EVIL" not in seen["text"] and "status: approved" in seen["text"], seen


def _check_misc(got: dict[str, Any], vid: str) -> None:
    part, op = vid.split(":")
    if part == "adopt":  # no controller commit of a file inside a nested repository
        assert not got["adopt"][op].startswith("plangate|"), got["adopt"]
        return
    if part == "pass":
        if op == "rc":  # "Each of these costs only that plan; every other plan carries on"
            assert got["pass"]["rc"] == 0, got["pass"]["err"][-1500:]
        else:
            assert got["pass"]["cx"] == 1, got["pass"]
        return
    if part == "hl":
        seen = got["hl"][op]
        if op == "show":
            assert json.loads(seen["out"])["hash"] == got["frozen"]["hl"], seen
        elif op == "approve":
            assert seen["rc"] == 0 and seen["moved"], seen
        elif op == "other":  # the approval wrote no file beyond its own (the link's twin)
            assert "approved" not in seen["outside"], seen
            assert " M " not in seen["porcelain"] and "M  " not in seen["porcelain"], seen
        else:
            assert seen == {"n": 1, "st": "completed"}, seen
        return
    if part == "sp":
        seen = got["sp"][op]
        if op == "row":
            assert '"pending_approval"' in seen and got["frozen"]["sp"] in seen, seen
        elif op == "show":  # a coded error, never a traceback
            assert seen["rc"] != 0 and '"code": "E_' in seen["out"], seen
        elif op == "approve":  # approved as frozen, or refused naming why (never "absent")
            assert "Traceback" not in seen["err"], seen
            if not seen["moved"]:
                assert "no PLAN.yml there" not in seen["err"], seen["err"]
                assert "E_" in seen["err"], seen
            else:
                assert "status: approved" in seen["text"], seen
        else:
            assert seen["n"] == (1 if got["sp"]["approve"]["moved"] else 0), seen
        return
    if part == "at":
        seen = got["at"][op]
        assert got["at"]["fired"] == "", got["at"]["fired"]  # no filter or diff program ran
        if op == "fired":
            return
        if op == "ran":
            assert seen == {"n": 1, "st": "completed"}, seen
        elif op == "mcp":
            assert all(not err for err, _t in seen), seen
            assert '"plans/at"' in seen[0][1], seen
        elif op == "approve":
            assert seen["rc"] == 0 and seen["moved"], seen
        elif op in ("show", "hash", "freeze"):
            text = seen["out"] + seen["err"]
            assert "Traceback" not in text, text[-1500:]
            assert seen["rc"] == 0 and got["frozen"]["at"] in text, text[-1500:]
        else:
            assert seen["rc"] in (0, 1) and "Traceback" not in seen["err"], seen
        return
    seen = got["cv"][op]
    written = got["cv"]["written"]
    text = seen["out"] + seen["err"]
    assert "Traceback" not in text, text[-1500:]
    if op == "ok":
        assert seen["rc"] == 0 and "repo/plans/cvok/PLAN.yml" in written, (seen, written)
        return
    assert SECRET.lower() not in seen["out"], seen["out"][:1500]
    assert seen["rc"] != 0 and "E_" in seen["err"], seen
    if op in ("nested", "nestedshow", "outnested"):
        assert "E_UNSAFE_PATH" in text, seen
    spot = "elsewhere" if op == "outlink" else "plans/wt/cv"
    assert not any(spot in w for w in written), written


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round90_surface(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    if vid in NIDS:
        _check_nested(got, vid)
    elif vid in HIDS:
        _check_held(got, vid)
    elif vid in LIDS:
        _check_loc(got, vid)
    else:
        _check_misc(got, vid)


def test_round90_gitlinks_committed(lab: Lab) -> None:
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    assert tree.count("160000 commit") == 2, tree


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk90b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r90-", dir="/tmp/atk90b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
