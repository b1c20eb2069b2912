"""Round 89, agent surfaces (atk89b): indirection past round 88's folder links: a plan's
folder that is another repository (a committed gitlink, a ``.git`` FILE pointing elsewhere,
a nested repository in the working tree only), the index against the working tree against
HEAD (a staged version under an honest file, ``skip-worktree`` and ``assume-unchanged``
bits hiding an edit), programs the agent's shell names in git's own environment variables
(``GIT_EXTERNAL_DIFF``, ``GIT_PAGER``, ``GIT_EDITOR``, ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``,
``GIT_SEQUENCE_EDITOR``), and MCP ``path`` inputs (dot segments, absolute, NUL, long, case,
types).

Lab (one, local mode, built once). The agent's ``plans/ok`` (Alice's approval, completed),
``plans/pa`` (frozen, ``pending_approval``), ``plans/ix``, ``plans/su``, ``plans/au``
(frozen). Then, ``gc``: ``plans/gc`` a repository of its own (``git init``) holding a
``PLAN.yml`` whose task is ``SECRETTARGET``, committed by the agent in the outer repository
as a gitlink (mode 160000); ``gs`` the same with ``git init --separate-git-dir`` (a ``.git``
FILE naming a git directory outside the tree), committed as a gitlink; ``gu`` a
``--separate-git-dir`` repository in the working tree only; ``ok`` the honest file (control).
Readers (ids ``<name>:<op>``): ``showj`` (``show --json --config``), ``showt`` (``show
--config``), ``hash``, ``validate``, ``vfolder`` (``validate --config`` of the folder),
``freeze`` (``freeze --check``); for ``gc``/``gs`` also ``mcp`` (MCP ``status`` of the
folder): each must be ``E_UNSAFE_PATH`` with the target never shown.
Index ids: ``ix`` the agent stages ``tag: EVIL`` and puts the frozen text back in the working
tree (``git status``: ``MM``); ``su``/``au`` the agent edits the working-tree file to ``tag:
EVIL`` and sets ``skip-worktree``/``assume-unchanged`` (``git status``: clean). ``:show``
(``show --config``: the frozen hash only for the frozen text, else STALE), ``:freeze``
(``freeze --check``), ``:approve`` (Alice's ``plangate approve``: the commit holds the
frozen text with ``approved``, or the approval is refused ``uncommitted edits``), ``:ran``
(``run --once``: ``EVIL`` never runs).
Env ids ``env<VAR>:<op>``: the variable names a marker program; ``status``, ``show``,
``audit``, ``approve`` (Alice, of a frozen plan) and ``run`` (``run --once``, the plan
completed): nothing ran.
``cw:<op>``: the agent sets ``core.worktree`` in the shared ``.git/config`` to a tree of its
own whose ``plans/cw/PLAN.yml`` says ``tag: EVIL`` (``git status``: `` M plans/cw/PLAN.yml``):
``show`` (the frozen hash), ``approve`` (Alice's one commit: the frozen text, approved),
``ran`` (``run --once``: ``cw`` ran once, ``EVIL`` never).
MCP ids ``mcp:<form>:<tool>``: ``status``/``log`` of a spelled ``path``: the same answer as
``plans/ok``, or an error with its ``E_`` code; never a traceback, never SECRETTARGET.

Seen (round 89): 20 ids broke, 3 classes.
``gitlink-followed`` (12 ids: ``gc``, ``gs`` x ``showj``, ``showt``, ``hash``, ``validate``,
``vfolder``, ``freeze``): **a plan folder committed as a submodule (gitlink), which the
controller holds ``E_UNSAFE_PATH``, is read through by every CLI reader**. ``status``
(and MCP ``status``) said "E_UNSAFE_PATH: plans/gc is a submodule (gitlink) in the plans
folder; it is not followed", while ``show --config .../plans/gc/PLAN.yml`` printed "Plan: pa
/ Task: SECRETTARGET / Status: pending_approval - waiting for an approval / Hash:
sha256:264d9a2b... (STALE: changed since frozen)" (exit 0; ``--json`` the same), ``hash``
"sha256:264d9a2b...", ``validate`` "valid (sha256:264d9a2b...)" (with "warning: outside the
plans folder .../plans/gc/plans"), ``validate --config plans/gc`` "valid (...)" with no
warning, ``freeze --check`` "stale; run `plangate freeze ...`" (exit 1, no code). The ``.git``
FILE form (``gs``, ``--separate-git-dir``) the same.
``nested-followed`` (6 ids: ``gu`` x the same readers): the working-tree-only repository
behind a ``.git`` file is read alike, and there ``show`` said ``"freeze_state": "frozen"``
and ``freeze --check`` "frozen sha256:264d9a2b... (unchanged)" (exit 0) for the same text
``gc``/``gs`` call STALE (its ``frozen:`` block is ``plans/pa``'s, the task changed).
``absent`` (2 ids: ``mcp:gitgc:log``, ``mcp:gitgcf:log``): MCP ``log`` of ``plans/gc``
(or ``plans/gc/PLAN.yml``) answered "E_USAGE: no plan plans/gc on the watched branch",
remedy "check the path", while ``status`` of the same path in the same session answered the
row ``"held": "E_UNSAFE_PATH"``.
Held: MCP ``status`` of the gitlink folder; ``core.worktree`` (``cw``: every reader,
``approve`` and the pass read the configured repository's tree; ``EVIL`` never ran); the
index cases (``approve`` under a staged ``EVIL`` committed the working-tree text with
``approved``, the index left clean;
``skip-worktree``/``assume-unchanged`` edits: ``show`` STALE, ``freeze --check`` "stale",
``approve`` "E_USAGE: plans/su/PLAN.yml has uncommitted edits; approving would not cover
what you see"; ``EVIL`` never ran, ``ix`` completed as frozen); no program named by
``GIT_EXTERNAL_DIFF``, ``GIT_PAGER``, ``GIT_EDITOR``, ``GIT_SSH_COMMAND``, ``GIT_ASKPASS``,
``GIT_SEQUENCE_EDITOR`` ran for ``status``, ``show``, ``audit``, ``approve`` or ``run
--once``; MCP paths: ``plans/ok/`` and ``plans/ok/PLAN.yml`` answered as ``plans/ok``;
``plans/pa/../ok``, ``./plans/ok``, ``plans//ok``, ``../../../../etc`` "E_USAGE: '...' is
not a plan path"; NUL, U+202E and a 5000-byte name ``E_UNSAFE_PATH``; ``/etc/passwd``,
the absolute repository path, ``PLANS/OK``, NFD: "E_USAGE: no plan plans/... on the watched
branch"; an int or a list "E_USAGE: status: path must be a string".

Should (docs/errors.md, E_UNSAFE_PATH): "A plan path plangate will not read or write: a
symlink, FIFO, device or submodule where a plan file or folder should be ... the plan is
never read"; docs/plan-format.md: "a committed symlink or submodule (gitlink) where
``PLAN.yml`` should be ... is never opened or followed ... The readers say the same ...
(``validate``, ``hash``, ``show``, ``freeze``, ...): ``E_UNSAFE_PATH``, the target never
read or shown".

Fixed (2026-12-02, the lead): each reader refuses a plan whose work tree (nearest ``.git``)
lies below the plans folder of the work tree around it, ``E_UNSAFE_PATH`` naming the nested
repository (``plans.link_problem``, ``_nested_in``; the config's ``repo`` itself excepted), and
MCP ``log`` of a plan the branch holds unread answers its status row's code (``agentapi.log``).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, identity, plan_text
from test_round2_execution_kit import shared

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
SECRET = "SECRETTARGET"
MARK = '#!/bin/sh\necho "$0 $*" >> {marker}\nexit 0\n'
LINKS = ("gc", "gs", "gu", "ok")
LREADERS = ("showj", "showt", "hash", "validate", "vfolder", "freeze")
INDEX = ("ix", "su", "au")
IOPS = ("show", "freeze", "approve", "ran")
ENVS = (
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_SEQUENCE_EDITOR",
)
EOPS = ("status", "show", "audit", "approve", "run")
MCPFORMS: dict[str, Any] = {
    "plain": "plans/ok",
    "dotdot": "plans/pa/../ok",
    "dot": "./plans/ok",
    "slash2": "plans//ok",
    "trail": "plans/ok/",
    "file": "plans/ok/PLAN.yml",
    "abs": "/etc/passwd",
    "absrepo": "{repo}/plans/ok",
    "nul": "plans/ok\x00x",
    "long": "plans/" + "a" * 5000,
    "case": "PLANS/OK",
    "nfd": "plans/o\u0301k",
    "bidi": "plans/\u202eko",
    "int": 7,
    "list": ["plans/ok"],
    "gitgc": "plans/gc",
    "gitgcf": "plans/gc/PLAN.yml",
    "escape": "../../../../etc",
}


def _run(lab: Lab, *args: str, cwd: Path | None = None, who: Any = None,
         env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    e = lab.env(who)
    e.update(env or {})
    e["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [mcpkit.PLANGATE, *args], env=e, cwd=cwd or lab.repo, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    return {"rc": r.returncode, "out": r.stdout, "err": r.stderr[-3000:]}


def _git(cwd: Path, *args: str, who: Any = AGENT, root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(root / "home"), GIT_CONFIG_GLOBAL=str(root / "gitconfig"))
    env.update(GIT_CONFIG_NOSYSTEM="1", **identity(who))
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


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


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    for slug in ("ok", "pa", "cw", *INDEX, *(f"e{i}" for i in range(len(ENVS)))):
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.run()
    got: dict[str, Any] = {
        "frozen": {s: lab.plan(s)["frozen"]["hash"] for s in ("pa", "cw", *INDEX)}
    }
    secret = lab.read("pa").replace("attack variant pa", SECRET)
    plans = lab.repo / "plans"
    for name in ("gc", "gs", "gu"):
        (plans / name).mkdir()
        (plans / name / "PLAN.yml").write_text(secret)
        sep = [] if name == "gc" else [f"--separate-git-dir={root / (name + '.git')}"]
        _git(plans / name, "init", "-q", *sep, ".", root=root)
        _git(plans / name, "add", "-A", root=root)
        _git(plans / name, "commit", "-qm", "inner", root=root)
    lab.git("add", "plans/gc", "plans/gs")
    lab.git("commit", "-qm", "agent: folders", who=AGENT)
    lab.run()
    got["tree"] = lab.git("ls-tree", "HEAD", "plans/gc", "plans/gs")
    got["status"] = lab.status()
    c = str(lab.config)

    def one(job: tuple[str, str]) -> dict[str, Any]:
        name, op = job
        path = str(plans / name / "PLAN.yml")
        args = {
            "showj": ["show", "--json", "--config", c, path],
            "showt": ["show", "--config", c, path],
            "hash": ["hash", path],
            "validate": ["validate", path],
            "vfolder": ["validate", "--config", c, str(plans / name)],
            "freeze": ["freeze", "--check", path],
        }[op]
        return _run(lab, *args)

    jobs = [(n, op) for n in LINKS for op in LREADERS]
    with ThreadPoolExecutor(2) as pool:
        got["links"] = dict(zip([f"{n}:{op}" for n, op in jobs], pool.map(one, jobs), strict=True))
    for name in ("gc", "gs"):
        got["links"][f"{name}:mcp"] = _texts(lab, [("status", {"path": f"plans/{name}"})])
    # -- the index against the working tree
    ix = plans / "ix" / "PLAN.yml"
    honest = ix.read_text()
    ix.write_text(honest.replace('tag: "ix"', 'tag: "EVIL"'))
    lab.git("add", "plans/ix/PLAN.yml")
    ix.write_text(honest)
    for slug, bit in (("su", "--skip-worktree"), ("au", "--assume-unchanged")):
        f = plans / slug / "PLAN.yml"
        f.write_text(f.read_text().replace(f'tag: "{slug}"', 'tag: "EVIL"'))
        lab.git("update-index", bit, f"plans/{slug}/PLAN.yml")
    got["porcelain"] = lab.git("status", "--porcelain")
    idx: dict[str, Any] = {}
    for slug in INDEX:
        path = str(plans / slug / "PLAN.yml")
        idx[f"{slug}:show"] = _run(lab, "show", "--json", "--config", c, path)
        idx[f"{slug}:freeze"] = _run(lab, "freeze", "--check", path)
        before = lab.head()
        r = _run(lab, "approve", "--config", c, f"plans/{slug}", who=ALICE)
        r["text"] = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
        r["moved"] = lab.head() != before
        idx[f"{slug}:approve"] = r
    lab.run()
    for slug in INDEX:
        idx[f"{slug}:ran"] = {"evil": lab.calls("EVIL"), "st": lab.plan(slug)["plan"]["status"]}
    got["index"] = idx
    # -- programs named in git's environment variables
    prog = root / "prog"
    prog.write_text(MARK.format(marker=root / "ran-env"))
    prog.chmod(0o755)
    envs: dict[str, Any] = {var: {} for var in ENVS}
    pa = str(plans / "pa" / "PLAN.yml")
    reads = {
        "status": ["status", "--json", "--config", c],
        "show": ["show", "--json", "--config", c, pa],
        "audit": ["audit", "--json", "--config", c],
    }
    jobs2 = [(var, op) for var in ENVS for op in reads]
    with ThreadPoolExecutor(2) as pool:
        for (var, op), seen in zip(
            jobs2,
            pool.map(lambda j: _run(lab, *reads[j[1]], env={j[0]: str(prog)}), jobs2),
            strict=True,
        ):
            envs[var][op] = seen
    marker = root / "ran-env"
    fired = marker.read_text() if marker.exists() else ""
    for i, var in enumerate(ENVS):
        env = {var: str(prog)}
        seen = envs[var]
        seen["approve"] = _run(lab, "approve", "--config", c, f"plans/e{i}", who=ALICE, env=env)
        seen["run"] = _run(lab, "run", "--once", "--config", c, cwd=root, env=env)
        seen["run"]["st"] = lab.plan(f"e{i}")["plan"]["status"]
        # a reader's marker (all readers ran before) counts against every variable
        seen["fired"] = fired + (marker.read_text() if marker.exists() else "")
        if marker.exists():
            marker.unlink()
    got["env"] = envs
    # -- MCP path inputs
    forms = {k: v.format(repo=lab.repo) if isinstance(v, str) else v for k, v in MCPFORMS.items()}
    calls: list[mcpkit.Call] = []
    for form in forms.values():
        calls += [("status", {"path": form}), ("log", {"path": form})]
    texts = _texts(lab, calls)
    got["mcp"] = {k: texts[2 * i : 2 * i + 2] for i, k in enumerate(forms)}
    # -- core.worktree in the shared .git/config names another tree holding an EVIL cw
    alt = root / "alt" / "plans" / "cw"
    alt.mkdir(parents=True)
    (alt / "PLAN.yml").write_text(lab.read("cw").replace('tag: "cw"', 'tag: "EVIL"'))
    lab.git("config", "core.worktree", str(root / "alt"))
    cw: dict[str, Any] = {}
    cw["show"] = _run(lab, "show", "--json", "--config", c, str(plans / "cw" / "PLAN.yml"))
    before = lab.head()
    cw["approve"] = _run(lab, "approve", "--config", c, "plans/cw", who=ALICE)
    cw["approve"]["moved"] = lab.head() != before
    cw["run"] = _run(lab, "run", "--once", "--config", c, cwd=root)
    lab.git("config", "--unset", "core.worktree")
    cw["approve"]["text"] = lab.git("show", f"{before}..HEAD", "--format=%an", "--", "plans/cw")
    cw["ran"] = {
        "evil": lab.calls("EVIL"),
        "cw": lab.calls("cw"),
        "st": lab.plan("cw")["plan"]["status"],
    }
    got["cw"] = cw
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r89-surface-atk89b", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 89 surface: {cls}: {what}"
    )


LIDS = [f"{n}:{op}" for n in LINKS for op in LREADERS] + ["gc:mcp", "gs:mcp"]
IIDS = [f"{s}:{op}" for s in INDEX for op in IOPS]
EIDS = [f"env{v}:{op}" for v in ENVS for op in EOPS]
MTOOLS = ("status", "log")
MIDS = [f"mcp:{k}:{t}" for k in MCPFORMS for t in MTOOLS]
CIDS = ["cw:show", "cw:approve", "cw:ran"]
IDS = LIDS + IIDS + EIDS + MIDS + CIDS
BROKEN: dict[str, Any] = {}


def _check_link(got: dict[str, Any], vid: str) -> None:
    name, op = vid.split(":")
    seen = got["links"][vid]
    if op == "mcp":
        text = json.dumps(seen)
        assert SECRET not in text and "Traceback" not in text, text[:2000]
        assert "E_UNSAFE_PATH" in text, text[:2000]
        return
    text = seen["out"] + seen["err"]
    assert "Traceback" not in text, text[-2000:]
    if name == "ok":
        assert seen["rc"] == 0 or op == "freeze", text[-2000:]
        assert "E_UNSAFE_PATH" not in text, text[-2000:]
        return
    if name != "gu":  # the controller holds the committed gitlink, as documented
        assert "E_UNSAFE_PATH" in json.dumps(got["status"].get(f"plans/{name}", {}))
    assert SECRET not in text, text[:2000]  # the target never shown
    assert seen["rc"] != 0 and "E_UNSAFE_PATH" in text, text[:2000]


def _check_index(got: dict[str, Any], vid: str) -> None:
    slug, op = vid.split(":")
    seen = got["index"][vid]
    frozen = got["frozen"][slug]
    assert "Traceback" not in json.dumps(seen), seen
    if op == "show":
        shown = json.loads(seen["out"])
        # the working-tree text is what is shown: frozen only when it IS the frozen text
        assert (shown["hash"] == frozen) == (slug == "ix"), seen
        assert (shown["freeze_state"] == "frozen") == (slug == "ix"), seen
    elif op == "freeze":
        assert (seen["rc"] == 0) == (slug == "ix"), seen
    elif op == "approve":
        assert "EVIL" not in seen["text"], seen
        if slug == "ix":
            assert seen["rc"] == 0 and seen["moved"], seen
            assert "status: approved" in seen["text"], seen
        else:
            assert seen["rc"] != 0 and not seen["moved"], seen
            assert "E_USAGE" in seen["err"] and "uncommitted edits" in seen["err"], seen
    else:
        assert seen["evil"] == [], seen
        assert seen["st"] == ("completed" if slug == "ix" else "pending_approval"), seen


def _check_env(got: dict[str, Any], vid: str) -> None:
    var, op = vid.split(":")
    seen = got["env"][var[3:]]
    assert seen["fired"] == "", seen["fired"]  # no program of the environment's ran
    one = seen[op]
    assert "Traceback" not in one["err"], one["err"]
    assert one["rc"] == 0, one
    if op == "status":
        rows = {r["plan"]: r["status"] for r in json.loads(one["out"])}
        assert rows["plans/ok"] == "completed", rows
    elif op == "show":
        assert json.loads(one["out"])["hash"] == got["frozen"]["pa"], one
    elif op == "audit":
        assert json.loads(one["out"])["ok"] is True, one["out"][:2000]
    elif op == "run":
        assert one["st"] == "completed", one


def _check_mcp(got: dict[str, Any], vid: str) -> None:
    _m, form, tool = vid.split(":")
    k = MTOOLS.index(tool)
    err, answer = got["mcp"][form][k]
    _e, want = got["mcp"]["plain"][k]
    text = json.dumps(answer)
    assert "Traceback" not in text and SECRET not in text and "NO REPLY" not in text, text[:2000]
    assert "root:x:" not in text, text[:2000]
    if form == "plain":
        assert not err and '"completed"' in answer, answer[:2000]
    elif form in ("gitgc", "gitgcf"):  # the gitlink folder the branch holds: its code
        assert "E_UNSAFE_PATH" in answer and "no plan" not in answer, answer[:2000]
    elif err:  # a refusal: its code, never a bare library message
        assert '"code": "E_' in answer, answer[:2000]
    else:  # an answer: the plan's own, as for plans/ok
        assert answer == want, (answer[:1000], want[:1000])


def _check_worktree(got: dict[str, Any], vid: str) -> None:
    seen = got["cw"][vid.split(":")[1]]
    assert "Traceback" not in json.dumps(seen), seen
    if vid == "cw:show":  # the configured repository's tree: the frozen text
        assert seen["rc"] == 0 and json.loads(seen["out"])["hash"] == got["frozen"]["cw"], seen
    elif vid == "cw:approve":  # one commit of Alice's: the frozen text, approved
        assert seen["rc"] == 0 and seen["moved"], seen
        assert "EVIL" not in seen["text"] and "+  status: approved" in seen["text"], seen
    else:
        assert seen["evil"] == [] and len(seen["cw"]) == 1 and seen["st"] == "completed", seen


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round89_surface(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    if vid in LIDS:
        _check_link(got, vid)
    elif vid in IIDS:
        _check_index(got, vid)
    elif vid in EIDS:
        _check_env(got, vid)
    elif vid in CIDS:
        _check_worktree(got, vid)
    else:
        _check_mcp(got, vid)


def test_round89_gitlinks_committed(lab: Lab) -> None:
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    assert tree.count("160000 commit") == 2, tree
    assert lab.got["porcelain"].startswith("MM plans/ix"), lab.got["porcelain"]  # type: ignore[attr-defined]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk89b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r89-", dir="/tmp/atk89b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
