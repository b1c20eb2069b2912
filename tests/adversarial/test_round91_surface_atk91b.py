"""Round 91, agent surfaces (atk91b): past round 90's gitlinks and nested clones: submodules
declared in ``.gitmodules`` (one checked out, one never checked out; an ``ext::`` url, later
``update = !cmd``), plan folders named with a newline, an escape sequence or a 1,200-byte path,
MCP ``submit`` with slugs through ``..``, into a submodule, a git-init'ed folder or a symlinked
folder; ``convert`` with ``-o``/source paths through ``..``; a nested repository appearing
while the daemon runs; the page, ``/api/`` and MCP ``status``/``log``/``wait`` of held plans.

Lab (one, local mode, built once). The agent's ``ok`` (Alice's approval, completed), ``pa``,
``cx``, ``ra``, ``rb`` (frozen). The agent commits gitlinks ``plans/sm`` (a clone of an outside
repository whose ``PLAN.yml`` holds ``SECRETTARGET``, checked out) and ``plans/sn`` (never
checked out) with a ``.gitmodules`` (``sm``'s url ``ext::sh -c touch% <marker>``), then plans
``plans/a\nb``, ``plans/c\x1b[31md`` and ``plans/l{200}/...`` six deep; Alice approves ``cx``;
one pass. Readers, MCP, submits (``plans/gd`` a ``git init``, ``plans/lk`` a symlink out), the
daemon with the page (a clone ``plans/nd`` and ``plans/gd/PLAN.yml`` appear, Alice approves
``ra``), then the agent adds ``update = !touch <marker>`` to every ``.gitmodules`` section and a
gitlink ``plans/su``; Alice approves ``rb``; one pass.
Ids: ``<sm|sn|nl|ctl|deep>:<reader>`` (``show --json``, ``hash``, ``validate``, ``freeze
--check``, Alice's ``approve``): ``E_UNSAFE_PATH``, never "no plan", nothing shown (``deep`` a
control); ``row:<n>`` (``status --json``); ``pass:*`` (rc 0, ``cx`` ran once, the audit's
verdicts, no url/update program fired); ``m<status|log|wait>:<n>``; ``submit:<slug>``;
``cv:*``; ``<n>:<api|html>``; ``daemon:*``; ``upd:*``.

Second lab (``gm``, one small repository per variant): the agent's ``plans/a`` frozen; the agent
commits a ``.gitmodules`` and a gitlink; Alice approves ``a``; one pass and ``audit --json``.
Ids ``gm:<variant>:<pass|ran|audit>``: ``upd-nolink`` (``update = !cmd``, no gitlink),
``upd-none``, ``ignore = bogus``, ``name-dotdot`` (a submodule named ``../../y``), ``vendor``
(``update = !cmd`` for a gitlink outside ``plans/``), ``fetchrecurse`` (``fetchRecurseSubmodules
= bogus``), ``upd-cmd`` (``update = !cmd``), ``badline`` (an unclosed ``[submodule "x"``),
``worktree-only`` (a valid ``.gitmodules`` committed, the unclosed one only in the working
tree, as local mode's agent writes it).

Seen (round 91): 29 ids broke, 5 classes.
``gitmodules-stops-everything`` in the ``gm`` lab (12 ids: ``fetchrecurse``, ``upd-cmd``,
``badline``, ``worktree-only`` x ``pass``, ``ran``, ``audit``): the pass exit 2 "plangate:
E_GIT: git log --first-parent: fatal: bad submodule.x.fetchrecursesubmodules argument: bogus" /
"fatal: invalid value for 'submodule.x.update'" / "fatal: bad config line 2 in file
.../repo/.gitmodules" (the working tree's file: for ``worktree-only`` nothing broken was ever
committed), Alice's approved ``a`` never ran, ``audit --json`` exit 2 the same. Held:
``upd-nolink``, ``upd-none``, ``ignore``, ``name-dotdot``, ``vendor`` (rc 0, ran once, the
audit's verdicts); no ``.gitmodules`` program ever ran.
``gitmodules-stops-everything`` (``upd:pass``, ``upd:ran``, ``upd:audit``, ``upd:status``): **one
agent commit of .gitmodules with ``update = !touch ...`` (git itself calls it invalid in a
repository's .gitmodules) stops the controller**: the pass exit 2 "plangate: E_GIT: git log
--first-parent: fatal: invalid value for 'submodule.plans/sm.update'", Alice's approved ``rb``
never ran (MCP ``status`` "pending_approval", ``file_status`` "approved"), ``audit --json`` exit
2 the same, ``status`` "warning: history not read, showing the last known state: E_GIT ...".
The program never ran (held). In a first probe (the update lines in the first .gitmodules)
every pass, MCP ``status``/``log``/``wait`` of every plan and the daemon ("reconcile.failed")
failed alike, and ``ra`` never ran.
``gitlink-unchecked-absent`` (``sn:show``, ``sn:approve``, ``row:sn``, ``mstatus:sn``,
``mlog:sn``, ``sn:api``, ``sn:html``): a committed gitlink never checked out is "absent"
everywhere: no ``status`` row at all, ``show`` "E_USAGE: .../plans/sn: no such plan file",
Alice's ``approve`` "E_USAGE: plans/sn: no PLAN.yml there", MCP ``status``/``log`` "E_USAGE: no
plan plans/sn on the watched branch", ``/api/plan/plans/sn`` 404 "E_NOT_FOUND: no plan
'plans/sn' on the watched branch", the page "Not found" (the checked-out ``sm``: every one
``E_UNSAFE_PATH`` "plans/sm is a submodule (gitlink) in the plans folder; it is not followed").
``wait-silent`` (``mwait:sm``, ``mwait:sn``): MCP ``wait`` of either gitlink answered
``{"status": null, "previous": null, "changed": false, "waited": 1.019}``, no code.
``approve-submodule-code`` (``sm:approve``): "plangate: E_PLAN_HASH_MISMATCH: . changed after it
was frozen", remedy "re-freeze it and approve it again" (nothing committed).
``submit-nested`` (``submit:sm``, ``submit:smchild``, ``submit:gd``): MCP ``submit`` slug ``sm``
answered ``"ok": true, "path": "plans/sm", "status": "pending_approval"`` and committed "Submit
plan plans/sm" (``D plans/sm``, ``A plans/sm/PLAN.yml``: the gitlink replaced, the file written
into the submodule's checkout); ``sm/child`` committed ``plans/sm/child/PLAN.yml`` the same
way; ``gd`` (a ``git init``'ed folder) committed ``plans/gd/PLAN.yml`` written inside it.
Held: every reader of the checked-out submodule ``E_UNSAFE_PATH`` (``show``, ``hash``,
``validate``, ``freeze``, row, MCP, ``/api/``, page), nothing of ``SECRETTARGET`` shown; the pass
with both gitlinks and ``.gitmodules`` (no update lines) exit 0, ``cx`` ran once, the audit's
verdicts (``ok``, ``cx``); no ``ext::`` url or update program ever ran; newline/escape names:
rows, ``show``, MCP ``status``/``log``/``wait``, ``/api/`` and the page ``E_UNSAFE_PATH``
"the path holds U+000A (\\n) ...", no raw ESC on the page; the 1,200-byte path an ordinary
plan; ``submit`` slugs ``../escape``, ``x\ny``, ``x\x1by``, 300 characters: "E_USAGE: slug
... is not a plan folder name"; ``lk``/``lk/child`` (a symlinked folder) wrote nothing through
the link; ``convert -o plans/lk/../plans`` "E_USAGE: ... is outside", ``-o plans/cx/../sm``,
``-o plans/gd/x/..`` and source ``plans/cx/../sm/cvin.json`` ``E_UNSAFE_PATH``, ``-o
plans/../..`` "E_USAGE ... outside", ``-o plans/cx/..`` the control; the daemon ran ``ra``
once while ``plans/nd`` (a clone) appeared, and adopted neither ``nd`` nor ``gd``.

Should: docs/plan-format.md: "a plan inside a repository of its own nested below the plans
folder (round 89: a submodule committed as a gitlink, ...): every reader says
``E_UNSAFE_PATH`` naming it, and MCP ``log`` answers the code its status row holds, never 'no
plan'", and of every unreadable plan "Each of these costs only that plan; every other plan
carries on in the same pass"; docs/agents.md: "a read that failed is never taken for an absent
plan, by any reader or writer (``approve`` too ...)"; ``wait`` "returns when the controller's
status of the plan (its ``status`` row's, as ``log`` answers it) differs"; round 90's fix:
"the nested-repository refusal applies to bytes a caller read itself ... and to ``convert``'s
source and ``-o`` folder" (``submit`` writes the same kind of file into the same folders).

Fixed (2026-12-02, r91surf): all 29. ``gitmodules-stops-everything``: git parses
``.gitmodules`` (the working tree's, else the index's or HEAD's) in every diff over a gitlink,
to learn how to show it, and dies on an entry it calls invalid; no config setting stops that
(``diff.ignoreSubmodules=all``, ``submodule.recurse=false`` tried, git 2.39), the command
line's ``--ignore-submodules=none`` does (the file never read, no gitlink hidden): every git
command plangate runs that compares trees gets it (``guard.argv``, used by ``RepoBase.run_raw``,
the log stream, ``show``'s reads, ``init`` and the page's ``git show --stat``). The others, one
rule (``planstate.nested_refusal``: a gitlink on the way in the branch's tree, checked out or
not, or a folder holding a ``.git`` below the plans folder) for MCP ``submit``
(``AgentApi._check_nested``), ``approve``/``reject``/``abort`` (``approve.named_plan_file``,
``_shared.refuse_nested``) and the CLI readers of a path with no file there
(``_shared.as_git_stores``); MCP ``wait`` answers a held row's code as ``log`` does
(``agentapi._refuse_held``). The lab's own ``git add -A plans`` (the odd names' commit) had
staged the never checked out ``sn``'s deletion, so the branch held no ``sn`` when the readers
ran ("no plan" was then true for ``row:sn``, ``mstatus:sn``, ``mlog:sn``, ``sn:api`` and
``sn:html``; a probe with ``sn`` committed got its row and MCP ``status``/``log``
``E_UNSAFE_PATH`` before the fix, while ``show`` and ``approve`` said "no plan"): the lab now
adds the three folders by name, keeping ``sn`` committed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, identity, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
SECRET = "SECRETTARGET"
NL = "a\nb"  # a plan folder named with a newline
CTL = "c\x1b[31md"  # ... with an escape sequence
LONG = "l" * 200  # a long folder name, nested deep below
DEEP = "/".join([LONG] * 6)


def _run(lab: Lab, *args: str, cwd: Path | None = None, who: Any = None,
         env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    e = lab.env(who)
    e.update(env or {})
    e["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [mcpkit.PLANGATE, *args], env=e, cwd=cwd or lab.repo, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    out = r.stdout if len(r.stdout) <= 200000 else f"{r.stdout[:6000]}\n...\n{r.stdout[-6000:]}"
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


def _inner(root: Path, name: str, text: str) -> Path:
    """A repository outside the lab holding PLAN.yml (``text``) at its root."""
    src = root / name
    src.mkdir()
    (src / "PLAN.yml").write_text(text)
    _git(src, "init", "-q", "-b", "main", ".", root=root)
    _git(src, "add", "-A", root=root)
    _git(src, "commit", "-qm", "inner", root=root)
    return src


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    slugs = ["ok", "pa", "cx", "ra", "rb"]
    for slug in slugs:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.run()
    got: dict[str, Any] = {"frozen": {s: lab.plan(s)["frozen"]["hash"] for s in slugs}}
    secret = lab.read("pa").replace("attack variant pa", SECRET)
    plans = lab.repo / "plans"
    c = str(lab.config)
    marker = root / "fired"
    # -- submodules declared in .gitmodules: one checked out (sm), one not (sn); update=!cmd,
    # an ext:: url, a url naming a program
    src = _inner(root, "inner", secret)
    head = _git(src, "rev-parse", "HEAD", root=root).strip()
    lab.git("clone", "-q", str(src), str(plans / "sm"))
    for n in ("sm", "sn"):
        lab.git("update-index", "--add", "--cacheinfo", f"160000,{head},plans/{n}")
    mods = (
        '[submodule "plans/sm"]\n\tpath = plans/sm\n\turl = ext::sh -c touch% ' + str(marker)
        + "\n{upd}"
        '[submodule "plans/sn"]\n\tpath = plans/sn\n\turl = ' + str(src) + "\n{upd}"
    )  # fmt: skip
    (lab.repo / ".gitmodules").write_text(mods.format(upd=""))
    lab.git("add", ".gitmodules")
    lab.git("commit", "-qm", "agent: submodules", who=AGENT)
    # -- odd names committed by the agent: a newline, an escape sequence, a long deep path
    for name in (NL, CTL, DEEP):
        p = plans / name / "PLAN.yml"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(plan_text("odd"))
    # each folder by name: ``add -A plans`` would stage the never checked out ``sn``'s deletion
    lab.git("add", "--", *(f"plans/{name}" for name in (NL, CTL, DEEP)))
    lab.git("commit", "-qm", "agent: odd names", who=AGENT)
    lab.set_status("cx", "approved")
    lab.git("add", "plans/cx")
    lab.git("commit", "-qm", "approve cx", who=ALICE)
    done = lab.run(check=False)
    got["pass"] = {"rc": done.returncode, "err": done.stderr[-2000:], "cx": len(lab.calls("cx"))}
    got["fired1"] = marker.exists()
    st = _run(lab, "status", "--json", "--config", c)
    got["statuscmd"] = st
    try:
        rows = {r["plan"]: r for r in json.loads(st["out"])}
    except ValueError:
        rows = {}
    got["rows"] = {k: v for k, v in rows.items() if k not in ("plans/ok",)}
    got["statusplain"] = _run(lab, "status", "--config", c)
    # readers of the submodule's plan file
    smp = str(plans / "sm" / "PLAN.yml")
    rd: dict[str, Any] = {}
    rd["sm:show"] = _run(lab, "show", "--json", "--config", c, smp)
    rd["sm:hash"] = _run(lab, "hash", smp)
    rd["sm:validate"] = _run(lab, "validate", smp)
    rd["sm:freeze"] = _run(lab, "freeze", "--check", smp)
    rd["sn:show"] = _run(lab, "show", "--json", "--config", c, str(plans / "sn"))
    before = lab.head()
    r = _run(lab, "approve", "--config", c, "plans/sm", who=ALICE)
    r["moved"] = lab.head() != before
    rd["sm:approve"] = r
    before = lab.head()
    r = _run(lab, "approve", "--config", c, "plans/sn", who=ALICE)
    r["moved"] = lab.head() != before
    rd["sn:approve"] = r
    for n, name in (("nl", NL), ("ctl", CTL), ("deep", DEEP)):
        rd[f"{n}:show"] = _run(lab, "show", "--json", "--config", c, str(plans / name))
    rd["audit"] = _run(lab, "audit", "--json", "--config", c)
    got["rd"] = rd
    got["fired2"] = marker.exists()
    # -- MCP: status/log/wait of held plans, submit with odd slugs
    held = ["plans/sm", "plans/sn", f"plans/{NL}", f"plans/{CTL}"]
    calls: list[mcpkit.Call] = []
    for p in held:
        calls += [
            ("status", {"path": p}),
            ("log", {"path": p}),
            ("wait", {"path": p, "timeout": 1}),
        ]
    got["mcp"] = dict(zip([f"{p}:{t}" for p in held for t in ("status", "log", "wait")],
                          _texts(lab, calls), strict=True))  # fmt: skip
    (plans / "gd").mkdir()
    _git(plans / "gd", "init", "-q", ".", root=root)
    (root / "away").mkdir()
    (plans / "lk").symlink_to(root / "away")
    # -- convert -o through ..
    cvs = {"plan_version": 1, "goal": SECRET.lower(), "skill_id": "s",
           "steps": [{"step_id": "a", "tool": "rec", "args": {"tag": "cv"}}]}  # fmt: skip
    for k in ("a", "b", "c", "d", "e", "f", "g"):
        (root / f"cv{k}.json").write_text(json.dumps({**cvs, "goal": f"cv{k}"}))
    (plans / "sm" / "cvin.json").write_text(json.dumps(cvs))
    cv: dict[str, Any] = {}
    cv["lkdotdot"] = _run(lab, "convert", "--config", c, "-o", str(plans / "lk" / ".." / "plans"),
                          str(root / "cva.json"))  # fmt: skip
    cv["smdotdot"] = _run(lab, "convert", "--config", c, "-o",
                          str(plans / "cx" / ".." / "sm"), str(root / "cvb.json"))  # fmt: skip
    cv["gddotdot"] = _run(lab, "convert", "--config", c, "-o",
                          str(plans / "gd" / "x" / ".."), str(root / "cvc.json"))  # fmt: skip
    cv["srcsm"] = _run(lab, "convert", "--config", c,
                       str(plans / "cx" / ".." / "sm" / "cvin.json"))  # fmt: skip
    cv["up"] = _run(lab, "convert", "--config", c, "-o", "plans/../..", str(root / "cvd.json"))
    cv["ok"] = _run(lab, "convert", "--config", c, "-o", "plans/cx/..", str(root / "cve.json"))
    got["cv"] = cv
    got["written"] = sorted(
        str(p.relative_to(root)) for p in root.rglob("PLAN.yml") if "/cv" in str(p)
    )
    # -- MCP submit into a folder made a nested repository after the check (race-free form:
    # the nested repository appears right before, the link appears right before)
    # -- the daemon: a nested repository appears while it runs; the page and /api/
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", c], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    page: dict[str, Any] = {}
    try:
        end = time.time() + 60
        while time.time() < end and _get(ui, "/api/")[0] != 200:
            time.sleep(0.2)
        time.sleep(1.0)
        # a nested repository appears in the working tree while the daemon runs
        _inner(root, "inner2", secret)
        lab.git("clone", "-q", str(root / "inner2"), str(plans / "nd"))
        (plans / "gd" / "PLAN.yml").write_text(secret)
        # Alice approves ra meanwhile: the daemon must still run it
        lab.set_status("ra", "approved")
        lab.git("add", "plans/ra")
        lab.git("commit", "-qm", "approve ra", who=ALICE)
        end = time.time() + 60
        while time.time() < end and not lab.calls("ra"):
            time.sleep(0.3)
        time.sleep(3.0)
        page["overview"] = _get(ui, "/api/")
        page["html"] = _get(ui, "/")
        for k, p in (("sm", "plans/sm"), ("sn", "plans/sn"), ("nl", "plans/a%0Ab"),
                     ("ctl", "plans/c%1B%5B31md"), ("nd", "plans/nd")):  # fmt: skip
            page[f"{k}:api"] = _get(ui, f"/api/plan/{p}")
            page[f"{k}:html"] = _get(ui, f"/plan/{p}")
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["page"] = page
    got["daemonerr"] = (root / "daemon.err").read_text()[-3000:]
    got["ra"] = len(lab.calls("ra"))
    got["adopt"] = lab.git("log", "--format=%an|%s", "--name-status", "-4", check=False)
    got["fired3"] = marker.exists()
    # submit slugs: through .., into the submodule, newline, control, long, a nested repo
    sub = {
        "dotdot": "../escape",
        "sm": "sm",
        "smchild": "sm/child",
        "gd": "gd",
        "lk": "lk",
        "lkchild": "lk/child",
        "nl": "x\ny",
        "ctl": "x\x1by",
        "long": "s" * 300,
        "ok": "subok",
    }
    text = plan_text("sub")
    calls = [("submit", {"plan": text.replace('"sub"', f'"sub{k}"'), "slug": v})
             for k, v in sub.items()]  # fmt: skip
    before = lab.head()
    got["submit"] = dict(zip(sub, _texts(lab, calls), strict=True))
    got["submitlog"] = lab.git(
        "log", "--format=%an|%s", "--name-status", f"{before}..HEAD", check=False
    )
    got["away"] = sorted(str(p.relative_to(root)) for p in (root / "away").rglob("*"))
    got["gdfiles"] = sorted(str(p.relative_to(plans / "gd")) for p in (plans / "gd").rglob("*")
                            if ".git" not in p.parts)  # fmt: skip
    got["outside"] = (root / "escape").exists() or (lab.repo / "escape").exists()
    got["aud2"] = _run(lab, "audit", "--json", "--config", c)
    got["tree"] = lab.git("ls-tree", "-r", "HEAD", "plans/", check=False)
    # -- last: the agent adds `update = !cmd` to .gitmodules; Alice approves rb
    (lab.repo / ".gitmodules").write_text(
        mods.format(upd=f"\tupdate = !touch {marker}\n")
        + f'[submodule "plans/su"]\n\tpath = plans/su\n\turl = {src}\n\tupdate = !touch {marker}\n'
    )
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{head},plans/su")
    lab.git("add", ".gitmodules")
    lab.git("commit", "-qm", "agent: submodule update", who=AGENT)
    lab.set_status("rb", "approved")
    lab.git("add", "plans/rb")
    lab.git("commit", "-qm", "approve rb", who=ALICE)
    done = lab.run(check=False)
    upd: dict[str, Any] = {"pass": {"rc": done.returncode, "err": done.stderr[-1500:]}}
    upd["ran"] = len(lab.calls("rb"))
    upd["audit"] = _run(lab, "audit", "--json", "--config", c)
    upd["status"] = _run(lab, "status", "--json", "--config", c)
    t = _texts(lab, [("status", {"path": "plans/rb"}), ("log", {"path": "plans/rb"})])
    upd["mstatus"], upd["mlog"] = t
    upd["fired"] = marker.exists()
    got["upd"] = upd
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r91-surface-atk91b", _build)


RD = ["sm:show", "sm:hash", "sm:validate", "sm:freeze", "sn:show", "sm:approve", "sn:approve",
      "nl:show", "ctl:show", "deep:show"]  # fmt: skip
ROWN = {"sm": "plans/sm", "sn": "plans/sn", "nl": f"plans/{NL}", "ctl": f"plans/{CTL}",
        "deep": f"plans/{DEEP}", "cx": "plans/cx"}  # fmt: skip
ROW = [f"row:{k}" for k in ROWN]
PASS = ["pass:rc", "pass:cx", "pass:audit", "pass:fired"]
MCPN = {"sm": "plans/sm", "sn": "plans/sn", "nl": f"plans/{NL}", "ctl": f"plans/{CTL}"}
MCP = [f"m{t}:{k}" for k in MCPN for t in ("status", "log", "wait")]
SUB = [f"submit:{k}" for k in
       ("dotdot", "sm", "smchild", "gd", "lk", "lkchild", "nl", "ctl", "long", "ok")]  # fmt: skip
CV = [f"cv:{k}" for k in ("lkdotdot", "smdotdot", "gddotdot", "srcsm", "up", "ok")]
PAGE = [f"{k}:{w}" for k in ("sm", "sn", "nl", "ctl", "nd") for w in ("api", "html")]
DAEMON = ["daemon:ra", "daemon:ndadopt", "daemon:overview", "daemon:fired"]
UPD = ["upd:pass", "upd:ran", "upd:audit", "upd:status", "upd:fired"]
IDS = RD + ROW + PASS + MCP + SUB + CV + PAGE + DAEMON + UPD
BROKEN: dict[str, Any] = {}


def _clean(text: str) -> None:
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]
    assert SECRET not in text and SECRET.lower() not in text, text[:2000]


def _unsafe(text: str) -> None:
    _clean(text)
    assert "E_UNSAFE_PATH" in text, text[:1500]
    assert "no plan" not in text and "no such plan" not in text, text[:1500]
    assert "no PLAN.yml there" not in text, text[:1500]


def _check(got: dict[str, Any], vid: str) -> None:
    part, key = vid.split(":", 1)
    if vid in RD:
        seen = got["rd"][vid]
        text = seen["out"] + seen["err"]
        if part == "deep":  # control: a long deep path is an ordinary plan
            assert seen["rc"] == 0 and "Traceback" not in text, text[-1500:]
            return
        assert seen["rc"] != 0 and not seen.get("moved"), text[:1500]
        _unsafe(text)
        return
    if part == "row":
        row = got["rows"].get(ROWN[key])
        text = json.dumps(row)
        if key in ("deep", "cx"):
            assert row and row["status"] in ("pending_approval", "completed"), text[:500]
            return
        assert row is not None, sorted(got["rows"])
        _unsafe(text)
        return
    if part == "pass":
        if key == "rc":
            assert got["pass"]["rc"] == 0, got["pass"]["err"][-1500:]
        elif key == "cx":
            assert got["pass"]["cx"] == 1, got["pass"]
        elif key == "fired":  # no submodule url or update program ran
            assert not (got["fired1"] or got["fired2"] or got["fired3"]), got
        else:
            seen = got["rd"]["audit"]
            assert seen["rc"] in (0, 1) and '"executions"' in seen["out"], seen["err"][-1500:]
            ex = json.loads(seen["out"])["executions"]
            assert [e["plan"] for e in ex if e.get("approval_valid")] == ["plans/ok", "plans/cx"]
        return
    if part.startswith("m") and vid in MCP:
        err, text = got["mcp"][f"{MCPN[key]}:{part[1:]}"]
        _unsafe(text)
        return
    if part == "submit":
        err, text = got["submit"][key]
        assert "Traceback" not in text and "NO REPLY" not in text, text[:1500]
        log = got["submitlog"]
        if key == "ok":
            assert not err and "Submit plan plans/subok" in log, (text[:800], log)
            return
        assert not got["outside"], "a file was written outside plans/"
        if key in ("lk", "lkchild"):  # nothing written through the link
            assert got["away"] == [], got["away"]
            return
        assert err and "E_" in text, text[:1500]
        if key in ("sm", "smchild", "gd"):
            assert "E_UNSAFE_PATH" in text, text[:1500]
            assert f"Submit plan plans/{key.replace('smchild', 'sm/child')}\n" not in log, log
        return
    if part == "cv":
        seen = got["cv"][key]
        text = seen["out"] + seen["err"]
        assert "Traceback" not in text and SECRET.lower() not in seen["out"], text[:1500]
        if key == "ok":
            assert seen["rc"] == 0 and "repo/plans/cve/PLAN.yml" in got["written"], text
            return
        assert seen["rc"] != 0 and "E_" in seen["err"], text[:1500]
        if key in ("smdotdot", "gddotdot", "srcsm"):
            assert "E_UNSAFE_PATH" in text, text[:1500]
        assert got["written"] == ["repo/plans/cve/PLAN.yml"], got["written"]
        return
    if vid in PAGE:
        code, text = got["page"][vid]
        _clean(text)
        assert "\x1b" not in text, repr(text[:500])  # no raw escape sequence on the page
        if part == "nd":  # never committed, never adopted: the branch holds no such plan
            assert code == 404 and ("E_NOT_FOUND" in text or "Not found" in text), text[:800]
            return
        assert code == 200 and "E_UNSAFE_PATH" in text, (code, text[:1500])
        return
    if part == "daemon":
        if key == "ra":  # Alice's approval while a nested repository appeared: ran once
            assert got["ra"] == 1, got["daemonerr"][-1500:]
        elif key == "ndadopt":
            assert "plans/nd" not in got["adopt"] and "plans/gd" not in got["adopt"], got["adopt"]
        elif key == "overview":
            code, text = got["page"]["overview"]
            _clean(text)
            assert code == 200 and "\x1b" not in text, text[:800]
        else:
            assert "reconcile.failed" not in got["daemonerr"], got["daemonerr"][-1500:]
        return
    upd = got["upd"]
    if key == "pass":
        assert upd["pass"]["rc"] == 0, upd["pass"]["err"][-1500:]
    elif key == "ran":
        assert upd["ran"] == 1, upd["pass"]["err"][-800:]
    elif key == "audit":
        assert upd["audit"]["rc"] in (0, 1), upd["audit"]["err"][-800:]
    elif key == "status":
        assert "history not read" not in upd["status"]["err"], upd["status"]["err"][-800:]
    else:
        assert not upd["fired"], "a submodule update program ran"


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round91_surface(lab: Lab, vid: str) -> None:
    _check(lab.got, vid)  # type: ignore[attr-defined]


GM = {  # .gitmodules text, where the gitlink sits ("" none), committed or working tree only
    "upd-nolink": ('[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n\tupdate = !touch {m}\n',
                   "", 1),
    "upd-none": ('[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n\tupdate = none\n', "plans/x", 1),
    "ignore": ('[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n\tignore = bogus\n', "plans/x", 1),
    "name-dotdot": ('[submodule "../../y"]\n\tpath = plans/x\n\turl = ./x\n', "plans/x", 1),
    "vendor": ('[submodule "v"]\n\tpath = vendor/v\n\turl = ./v\n\tupdate = !touch {m}\n',
               "vendor/v", 1),
    "fetchrecurse": ('[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n'
                     "\tfetchRecurseSubmodules = bogus\n", "plans/x", 1),
    "upd-cmd": ('[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n\tupdate = !touch {m}\n',
                "plans/x", 1),
    "badline": ('[submodule "x"\n\tpath = plans/x\n', "plans/x", 1),
    "worktree-only": ('[submodule "x"\n', "plans/x", 0),
}  # fmt: skip
GMIDS = [f"gm:{k}:{c}" for k in GM for c in ("pass", "ran", "audit")]


def _build_gm(root: Path) -> Lab:
    got: dict[str, Any] = {}
    for k, (mods, link, committed) in GM.items():
        lab = Lab(root / k)
        lab.write("a", plan_text("a"))
        lab.commit("agent: plan", AGENT)
        lab.run()
        text = mods.format(m=root / f"fired-{k}")
        if committed:
            (lab.repo / ".gitmodules").write_text(text)
        else:  # a valid file committed, the broken one only in the working tree
            (lab.repo / ".gitmodules").write_text(
                '[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n'
            )
        lab.git("add", ".gitmodules")
        if link:
            lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},{link}")
        lab.git("commit", "-qm", "agent: submodule", who=AGENT)
        if not committed:
            (lab.repo / ".gitmodules").write_text(text)
        lab.set_status("a", "approved")
        lab.git("add", "plans/a")
        lab.git("commit", "-qm", "approve a", who=ALICE)
        done = lab.run(check=False)
        aud = lab.cli("audit", "--json", cwd=lab.repo)
        got[k] = {
            "rc": done.returncode,
            "err": done.stderr[-1500:],
            "ran": len(lab.calls("a")),
            "audit": aud.returncode,
            "auditerr": aud.stderr[-1500:],
            "fired": (root / f"fired-{k}").exists(),
        }
    holder = Lab(root / "holder")
    holder.got = got  # type: ignore[attr-defined]
    return holder


@pytest.fixture(scope="module")
def gmlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r91-surface-atk91b-gm", _build_gm)


@pytest.mark.parametrize("vid", cases(GMIDS, GMIDS, BROKEN))
def test_round91_gitmodules(gmlab: Lab, vid: str) -> None:
    _gm, k, c = vid.split(":")
    seen = gmlab.got[k]  # type: ignore[attr-defined]
    assert not seen["fired"], "a .gitmodules program ran"
    assert "Traceback" not in seen["err"] + seen["auditerr"], seen
    if c == "pass":  # "every other plan carries on in the same pass"
        assert seen["rc"] == 0, seen["err"]
    elif c == "ran":
        assert seen["ran"] == 1, seen["err"]
    else:
        assert seen["audit"] in (0, 1), seen["auditerr"]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk91b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r91-", dir="/tmp/atk91b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
