"""Round 107, the human CLI, the page and its API against status, show and validate (atk107b).

Lab (one, local mode, ~30 s wall): the agent commits ``pend`` (pending), ``comp`` (approved
by Alice, completed), ``fail`` (a tool that exits 3: failed), ``rej`` (rejected by Alice with
``plangate reject``), ``draft``, ``inv`` (an unknown tool: invalid), ``gate`` (second action
``requires_approval``: awaiting_approval), ``abrt`` (a gate plan Alice aborted), ``forged``
(frozen pending, then the agent edits its file to ``status: completed``: an illegal
transition the controller ignores). Then, in one pass of CLI calls, every human command on
every state by Alice, Mallory (no approver, no author) and the agent; then a daemon with
``ui.listen`` and ``metrics.listen`` serves the snapshot, read over plain HTTP.

Ids:
* ``cli-refuse:<cmd>-<plan>-<who>``: ``approve``/``reject``/``abort`` where the docs say the
  status (or the caller's role) forbids it: exit non-zero, a code named, no commit made.
* ``cli-ok:<cmd>-<plan>``: the control (Alice approves ``pend``, aborts ``gate2``).
* ``view:<plan>``: ``/api/`` rows, ``/api/plan/<id>``, ``show --json`` and ``status --json``
  agree on status and hash for every plan (the forged ``completed`` never shown as status).
* ``http:<k>``: POST/PUT/DELETE on ``/api/`` 405; a path outside the plans (``..``,
  encoded ``%2e%2e``, the config, the state dir) never read; odd ``?status=&page=`` no 500;
  ``/metrics`` counts = ``status --json`` counts.
* ``schema:<plan>``: every plan ``validate`` accepts is valid under ``plangate schema``.
* ``init:<k>``: ``init`` into a file, a non-empty folder, an existing repo, a folder inside
  the plans repo: no traceback, nothing clobbered.

Seen (round 107, 60 ids, ~30 s wall): 3 broke (2 classes), 57 held.
Broke: **init-uncoded** (``init:file``): ``plangate init <a file>`` exits 2 with "plangate:
internal error: NotADirectoryError: ... Not a directory: '<file>/plans-repo'" and "rerun
with PLANGATE_DEBUG=1": no code, no remedy (SPEC section 8: every error names its code).
**init-config-in-worktree** (``init:repo``, ``init:in-plans``): ``init`` into the watched
plans repo itself, or into ``plans/newrepo`` inside it, exits 0 and writes ``plangate.yml``
(approvers, tools) and a nested ``plans-repo/`` git repository into a working tree the agent
writes and commits (``git status``: ``?? plangate.yml``, ``?? plans-repo/``,
``?? plans/newrepo/``): the new controller's config lands in reach of plan authors, which
docs/configuration.md says init never does ("beside the plans repository, not inside it").
Held: every forbidden approve/reject/abort (final states: E_ILLEGAL_TRANSITION naming the
state; draft/invalid/pending abort: "nothing to abort"; Mallory and the agent:
E_APPROVER_NOT_ALLOWED "the controller would refuse"), nothing committed; the controls ran.
``/api/``, ``/api/plan/<id>``, ``show --json``, ``status --json`` and ``/metrics`` agree on
every state; the forged ``completed`` shows ``pending_approval`` with E_ILLEGAL_TRANSITION
(``/api/plan``'s ``document`` keeps the file's ``completed``, as the committed text).
POST/PUT/DELETE/PATCH 405; ``..``, ``%2e%2e``, the config's and state dir's absolute paths,
``.git/config``, ``PLAN.yml`` as an id: coded 404; odd ``page``/``status``: 200. Every plan
``validate`` accepts is valid under ``plangate schema``. Not covered: the webhook (remote
mode), MCP ``catalog`` against params_schema.

Changed (2026-12-06): ``reject-draft-alice`` is a control (exit 0, the draft ``rejected``):
round 119 (draft-rejection-ignored) made an allowed approver's rejection of a draft count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, load_yaml, page_settled, plan_text
from test_round2_execution_kit import shared
from test_round97_surface_atk97b import _get, _spawn_daemon, _stop
from test_round104_surfaces_atk104b import _cli
from writerkit import free_port

BOOM = json.dumps([sys.executable, "-c", "import sys; sys.exit(3)"])
GATE2 = """\
  - id: 2
    tool: rec
    why: "second, behind a gate"
    requires_approval: true
    params:
      tag: "{t}-2"
"""
PLANS = ["pend", "comp", "fail", "rej", "draft", "inv", "gate", "abrt", "forged"]

#: (cmd, plan, who): forbidden by status or role (docs/approvals.md "Human commands")
REFUSE: dict[str, tuple[str, str, tuple[str, str]]] = {}
for _p in ("comp", "rej", "abrt", "draft", "inv"):
    for _c in ("approve", "reject", "abort"):
        REFUSE[f"{_c}-{_p}-alice"] = (_c, _p, ALICE)
# an approver's rejection of a draft counts since round 119 (draft-rejection-ignored): a
# control now, no longer refused
del REFUSE["reject-draft-alice"]
REFUSE.update({
    "reject-fail-alice": ("reject", "fail", ALICE),
    "reject-gate-alice": ("reject", "gate", ALICE),
    "abort-pend-alice": ("abort", "pend", ALICE),
    "approve-pend-mallory": ("approve", "pend", MALLORY),
    "reject-pend-mallory": ("reject", "pend", MALLORY),
    "approve-gate-mallory": ("approve", "gate", MALLORY),
    "abort-gate-mallory": ("abort", "gate", MALLORY),
    "abort-fail-mallory": ("abort", "fail", MALLORY),
    "approve-fail-mallory": ("approve", "fail", MALLORY),
    "approve-pend-agent": ("approve", "pend", AGENT),
    "approve-gate-agent": ("approve", "gate", AGENT),
    "approve-fail-agent": ("approve", "fail", AGENT),
    "approve-forged-agent": ("approve", "forged", AGENT),
    "abort-forged-alice": ("abort", "forged", ALICE),
})  # fmt: skip
OK: dict[str, tuple[str, str, tuple[str, str]]] = {
    "approve-pend": ("approve", "pend", ALICE),
    "abort-gate2": ("abort", "gate2", AGENT),
    "reject-draft-alice": ("reject", "draft", ALICE),
}
INIT = ["file", "nonempty", "repo", "in-plans", "config-there"]


def _m(cmd: str) -> list[str]:
    return ["-m", "no"] if cmd == "reject" else []


def _hcli(lab: Lab, who: tuple[str, str], *args: str) -> dict[str, Any]:
    before = lab.head()
    r = _cli(lab, who, *args, "--config", str(lab.config))
    lab.git("reset", "-q", "--hard")  # a refused command leaves nothing to clean
    return {"rc": r.returncode, "out": (r.stdout + r.stderr)[-1500:], "moved": lab.head() != before}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab", tools=f"boom: {{kind: exec, argv: {BOOM}}}\n")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    t0 = time.time()
    for s in ("pend", "comp", "rej", "forged"):
        lab.write(s, plan_text(s))
    lab.write("fail", plan_text("fail").replace("tool: rec", "tool: boom").replace(
        "- name: rec", "- name: boom"))  # fmt: skip
    lab.write("draft", plan_text("draft", status="draft"))
    lab.write("inv", plan_text("inv").replace("tool: rec", "tool: nosuch").replace(
        "- name: rec", "- name: nosuch"))  # fmt: skip
    for g in ("gate", "abrt", "gate2"):
        lab.write(g, plan_text(g, extra_actions=GATE2.format(t=g)))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for s in ("comp", "fail", "gate", "abrt", "gate2"):
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    got["rej"] = _hcli(lab, ALICE, "reject", "plans/rej", "-m", "no")
    lab.run()
    got["abrt"] = _hcli(lab, ALICE, "abort", "plans/abrt")
    lab.set_status("forged", "completed")
    lab.commit("agent: forge completed", AGENT)
    lab.run()
    got["t_setup"] = time.time() - t0
    got["refuse"] = {k: _hcli(lab, w, c, f"plans/{p}", *_m(c)) for k, (c, p, w) in REFUSE.items()}
    got["ok"] = {k: _hcli(lab, w, c, f"plans/{p}", *_m(c)) for k, (c, p, w) in OK.items()}
    lab.run()
    c = str(lab.config)
    st = _cli(lab, None, "status", "--json", "--config", c)
    got["status"] = {r["plan"]: r for r in json.loads(st.stdout)}
    got["show"] = {}
    for s in PLANS:
        r = _cli(lab, None, "show", "--json", "--config", c, f"plans/{s}")
        try:
            got["show"][s] = json.loads(r.stdout)
        except ValueError:
            got["show"][s] = {"raw": (r.stdout + r.stderr)[-800:]}
    sch = _cli(lab, None, "schema")
    got["schema"] = sch.stdout
    got["docs"] = {s: lab.read(s) for s in PLANS}
    val = _cli(lab, None, "validate", "--json", "--config", c, *[f"plans/{s}" for s in PLANS])
    got["validate"] = val.stdout
    got["init"] = _inits(lab, root)
    ui, met = free_port(), free_port()
    lab.config.write_text(
        lab.config.read_text() + f'ui: {{listen: {ui}}}\nmetrics: {{listen: "127.0.0.1:{met}"}}\n'
    )
    d = _spawn_daemon(lab, root, "1")
    try:
        got["settled"] = page_settled(ui, lab.head, timeout=90)
        got["api"] = _get(ui, "/api/")
        got["plan"] = {s: _get(ui, "/api/plan/plans/" + s) for s in PLANS}
        got["http"] = _http(ui, lab)
        got["metrics"] = _get(met, "/metrics")
    finally:
        _stop(d)
    got["t_run"] = time.time() - t0
    return lab


def _http(ui: int, lab: Lab) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in ("POST", "PUT", "DELETE", "PATCH"):
        out[f"m-{m}"] = _get(ui, "/api/plan/plans/pend", method=m)
    rel = Path("..") / lab.config.name
    odd = {
        "dotdot": "/api/plan/plans/../plangate.yml",
        "enc-dotdot": "/api/plan/plans/%2e%2e/" + urllib.parse.quote(str(rel)),
        "abs-config": "/api/plan/" + urllib.parse.quote(str(lab.config)),
        "state": "/api/plan/" + urllib.parse.quote(str(lab.state)),
        "readme": "/api/plan/README",
        "plan-file": "/api/plan/plans/pend/PLAN.yml",
        "dotgit": "/api/plan/.git/config",
        "page-neg": "/api/?status=pending_approval&page=-1",
        "page-big": "/api/?status=pending_approval&page=99999999999999999999999",
        "page-nan": "/api/?status=pending_approval&page=nan",
        "status-bogus": "/api/?status=%00%ff&page=1",
        "commit-bad": "/commit/..%2f..%2fetc",
    }
    for k, p in odd.items():
        out[k] = _get(ui, p)
    return out


def _inits(lab: Lab, root: Path) -> dict[str, Any]:
    base = root / "init"
    base.mkdir()
    (base / "file").write_text("KEEP-FILE\n")
    (base / "nonempty").mkdir()
    (base / "nonempty" / "mine.txt").write_text("KEEP-MINE\n")
    (base / "config-there").mkdir()
    (base / "config-there" / "plangate.yml").write_text("KEEP-CONFIG\n")
    targets = {
        "file": base / "file",
        "nonempty": base / "nonempty",
        "repo": lab.repo,
        "in-plans": lab.repo / "plans" / "newrepo",
        "config-there": base / "config-there",
    }
    before = lab.head()
    out: dict[str, Any] = {}
    for k, t in targets.items():
        r = subprocess.run(
            [sys.executable, "-m", "controller", "init", str(t)],
            cwd=base, env=lab.env(), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        out[k] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-1500:]}
    out["kept"] = {
        "file": (base / "file").read_text() if (base / "file").is_file() else None,
        "mine": (base / "nonempty" / "mine.txt").read_text(),
        "config": (base / "config-there" / "plangate.yml").read_text(),
        "repo-head": lab.head() == before,
        "repo-clean": lab.git("status", "--porcelain", "--ignored"),
    }
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r107surf-atk107b", _build)


BROKEN: dict[str, Any] = {}

RK = list(REFUSE)


@pytest.mark.parametrize("k", cases([f"cli-refuse:{k}" for k in RK], RK, BROKEN))
def test_cli_refused(lab: Lab, k: str) -> None:
    """A human command the status or the caller's role forbids: non-zero, coded, no commit."""
    r = lab.got["refuse"][k]  # type: ignore[attr-defined]
    assert r["rc"] != 0 and not r["moved"], r
    assert "E_" in r["out"] and "Traceback" not in r["out"], r


OKK = list(OK)


@pytest.mark.parametrize("k", cases([f"cli-ok:{k}" for k in OKK], OKK, {}))
def test_cli_ok(lab: Lab, k: str) -> None:
    """The controls: Alice approves the pending plan, the agent (its author) aborts its paused
    plan, Alice rejects the draft (round 119): exit 0, one commit, and the controller followed
    (completed / aborted / rejected)."""
    r = lab.got["ok"][k]  # type: ignore[attr-defined]
    assert r["rc"] == 0 and r["moved"], r
    want = {
        "approve-pend": ("plans/pend", "completed"),
        "abort-gate2": ("plans/gate2", "aborted"),
        "reject-draft-alice": ("plans/draft", "rejected"),
    }
    plan, status = want[k]
    assert lab.got["status"][plan]["status"] == status  # type: ignore[attr-defined]


@pytest.mark.parametrize("s", cases([f"view:{s}" for s in PLANS], PLANS, BROKEN))
def test_views_agree(lab: Lab, s: str) -> None:
    """`/api/` rows, `/api/plan/<id>`'s row and hash, `show --json` and `status --json` say the
    same status and hash; the forged `completed` is never the status shown."""
    g = lab.got  # type: ignore[attr-defined]
    assert g["settled"]
    row = g["status"][f"plans/{s}"]
    code, body = g["api"]
    assert code == 200
    api_rows = {p["plan"]: p for sec in json.loads(body)["sections"] for p in sec["plans"]}
    arow = api_rows[f"plans/{s}"]
    pc, pb = g["plan"][s]
    assert pc == 200, pb[:300]
    pj = json.loads(pb)
    assert arow["status"] == pj["row"]["status"] == row["status"], (arow, pj["row"], row)
    assert arow["hash"] == pj["hash"] == row["hash"]
    sh = g["show"][s]
    if s == "inv":  # show refuses an invalid plan with its code, as status holds it invalid
        assert sh.get("code") == "E_TOOL_UNKNOWN" and row["status"] == "invalid"
        return
    assert sh["hash"] == row["hash"]
    if s == "forged":
        assert row["status"] == sh["plan"]["status"] == "pending_approval"
        assert sh["file_status"] == "completed" and pj["row"]["code"] == "E_ILLEGAL_TRANSITION"


def test_http_methods(lab: Lab) -> None:
    """http:methods: POST/PUT/DELETE/PATCH on `/api/plan/<id>`: 405, nothing changes."""
    h = lab.got["http"]  # type: ignore[attr-defined]
    assert all(h[f"m-{m}"][0] == 405 for m in ("POST", "PUT", "DELETE", "PATCH")), h


ODD = ["dotdot", "enc-dotdot", "abs-config", "state", "readme", "plan-file", "dotgit",
       "page-neg", "page-big", "page-nan", "status-bogus", "commit-bad"]  # fmt: skip


@pytest.mark.parametrize("k", cases([f"http:{k}" for k in ODD], ODD, BROKEN))
def test_http_odd(lab: Lab, k: str) -> None:
    """A path naming no plan (the config, the state dir, `..`, `.git`, the plan FILE): a coded
    404 reading nothing; an odd `?status=&page=`: an answer, never a 500 or a traceback."""
    code, body = lab.got["http"][k]  # type: ignore[attr-defined]
    assert code in (200, 400, 404), (code, body[:300])
    # the config read back would show its YAML key `approvers:`; a status row's JSON field
    # `"approvers": [...]` (the quorum's counted approvers) is an answer, not a leak
    assert "Traceback" not in body and "KEEP-" not in body and "approvers:" not in body
    if code != 200:
        assert "E_" in body or "Not found" in body
    else:
        assert json.loads(body)["total"] == len(lab.got["status"])  # type: ignore[attr-defined]


def test_metrics_counts(lab: Lab) -> None:
    """metrics:counts: `plangate_plans{status}` equals `status --json`'s counts."""
    code, body = lab.got["metrics"]  # type: ignore[attr-defined]
    assert code == 200
    got = {}
    for line in body.split("\n"):
        if line.startswith('plangate_plans{status="'):
            st = line.split('"')[1]
            got[st] = int(float(line.rsplit(" ", 1)[1]))
    want: dict[str, int] = {}
    for r in lab.got["status"].values():  # type: ignore[attr-defined]
        want[r["status"]] = want.get(r["status"], 0) + 1
    assert {k: v for k, v in got.items() if v} == want


def test_schema_accepts_valid(lab: Lab) -> None:
    """schema:valid-plans: every plan `validate --json` calls valid is valid under `plangate
    schema` (JSON Schema 2020-12)."""
    import jsonschema

    g = lab.got  # type: ignore[attr-defined]
    sch = json.loads(g["schema"])
    rows = [json.loads(x) for x in g["validate"].splitlines() if x.strip()]
    checked = 0
    for r in rows:
        if not r["valid"]:
            continue
        doc = json.loads(json.dumps(load_yaml(g["docs"][r["path"].split("/")[1]]), default=str))
        errs = [e.message for e in jsonschema.Draft202012Validator(sch).iter_errors(doc)]
        assert not errs, (r["path"], errs[:3])
        checked += 1
    assert checked >= 7


#: init's odd folders: a FILE's path answers an uncoded "internal error"; a folder inside an
#: existing git working tree (the watched plans repo itself, a plan's folder) gets the new
#: controller's plangate.yml there, where that tree's agent writes and commits
#: round 107's two init classes (init-uncoded, init-config-in-worktree; 3 ids) were fixed
#: the same session (r107init): a file is E_USAGE, a folder inside a git working tree too
BROKEN_INIT: dict[str, Any] = {}


@pytest.mark.parametrize("k", cases([f"init:{k}" for k in INIT], INIT, BROKEN_INIT))
def test_init(lab: Lab, k: str) -> None:
    """`init` into a file, a non-empty folder, the watched repo, a plan folder, a folder that
    already holds a config: a coded answer (no "internal error"), nothing clobbered, and never
    a config written inside a git working tree an agent writes (docs/configuration.md: the
    config is kept out of reach of plan authors)."""
    g = lab.got["init"]  # type: ignore[attr-defined]
    r = g[k]
    assert "internal error" not in r["out"] and "Traceback" not in r["out"], r
    assert r["rc"] == 0 or "E_" in r["out"], r
    assert g["kept"]["file"] == "KEEP-FILE\n" and g["kept"]["mine"] == "KEEP-MINE\n"
    assert g["kept"]["config"] == "KEEP-CONFIG\n" and g["kept"]["repo-head"]
    if k in ("repo", "in-plans"):
        assert r["rc"] != 0, r["out"][:300]
