"""Round 72, agent-facing surfaces: round 71's claims of a plan file's place (an entry of the
folder named as the plan file in any case, a folder, a file, a symlink, a gitlink) made AFTER
the plan was frozen (round 71 judged "a new plan beside such a folder"), on main and through a
merged pull request, and ``plangate check``'s answer for that pull request against what the
controller then does and what every other reader says.

Lab (one, module scope; three ``run --once`` passes): the agent commits one plan per host,
frozen by a pass. On main (``m-*``), the agent's next commit puts a claim beside each
``PLAN.yml``: ``m-sym`` (a symlink ``plan.yml -> ../c-ok/PLAN.yml``, another plan's text),
``m-gl`` (a gitlink ``plan.yml``), ``m-dir`` (a folder ``PLAN.YML/`` holding an "approved"
plan); Alice approves them on main; a pass. On the branch ``pr`` (``c-*``) the agent's commit
puts: ``c-ok`` nothing (the control; two refused folders below it, ``i-deep`` at
``c-ok/a/plan.yaml/b`` and ``i-log`` at ``c-ok/x/EXECUTION_LOG.md``), ``c-sym``, ``c-symy`` (a
symlink ``PLAN.yaml``), ``c-gl``, ``c-dir``, ``c-ydir`` (a folder ``plan.yaml/``), ``c-file`` (a
file ``PLAN.yaml``: round 69's case), ``c-zw`` (a folder ``PLAN.y<U+200C>ml/``); Alice approves
every ``c-*`` host on the branch; ``plangate check --base main --head pr --as alice --format
json``; Alice merges ``--no-ff``; a pass.
Readers: ``status --json``'s row, ``show --json --config``, MCP ``log``, the ``rec`` calls
(``<host>:<reader>``); ``check``'s outcome and problems (``<host>:check-outcome``,
``<host>:check-code``, ``<inner>:check-code``); the fresh-clone ``plangate audit --json``.
Must hold: a host with a claim beside its plan file is E_PLAN_AMBIGUOUS (a symlink
``PLAN.yaml``: E_UNSAFE_PATH) on every reader and never runs; ``c-ok`` runs once; ``check``
says ``start`` only for what the merge starts and names the problem every other reader names;
the audit's valid runs are the completed rows.

Seen (round 72):
- ``{m-sym,m-gl,c-sym,c-gl}:{row,ran}`` (8 ids): a symlink or a gitlink named ``plan.yml``
  committed beside an EXISTING plan's ``PLAN.yml`` (on main, or on a branch merged ``--no-ff``)
  is missed by the history index: the row says ``completed``, approver alice, no note, and
  Alice's approval RAN the plan, while ``show`` and MCP ``log`` say E_PLAN_AMBIGUOUS ("neither
  is read or run") over the same tree. The same claim present when the plan was born is
  E_PLAN_AMBIGUOUS on the row (``test_round72_surface_namefolds.py``, ``sym-lc``, ``gl-lc``),
  and a FOLDER claim added later (``m-dir``, ``c-dir``) is caught. On a case-insensitive
  checkout the symlink is the reviewer's ``PLAN.yml``: another plan's text. Should
  (docs/plan-format.md: one rule decides "which entries of a folder are its plan file or claim
  to be one", E_PLAN_AMBIGUOUS "for every reader"; "a reviewer could read one while the other
  ran"): the row E_PLAN_AMBIGUOUS and nothing run, however late the claim came.
- ``c-zw:{row,show,mcp-log,ran}`` (4 ids): round 72's ignorable-character class (see
  ``test_round72_surface_namefolds.py``), here through a merge.
- ``{c-sym,c-symy,c-gl,c-zw}:check-outcome`` (4 ids): ``check`` says the merge would
  ``start`` them; every other reader holds them (``c-symy``: the controller never runs it).
- ``{c-sym,c-symy,c-gl,c-dir,c-ydir,c-file,c-zw}:check-code``, ``{i-deep,i-log}:check-code``
  (9 ids): ``check`` names no problem (symlinks, gitlink, ``c-zw``) or ``E_SCHEMA_INVALID`` "the
  file must be a mapping with plan: and actions:" (folders, ``PLAN.yaml`` beside, the refused
  folders below ``c-ok``, whose plan files are valid), where the row, ``show`` and MCP say
  E_PLAN_AMBIGUOUS or E_UNSAFE_PATH. Should (``plangate check --help``: "what merging a pull
  request would do with each plan it changes"): the controller's verdict and code.
Fixed (2026-11-30, r72claims): one claim rule for every entry and every reader. The history
index judges a plan again whenever an entry claiming its file's place comes or goes, whatever
its kind (``lifecycle._claimed_folder``: a symlink, gitlink or file named as a plan file, or a
file below a folder so named; before, only a path the index took for a plan's reached
``_shadowed``, so a link or a lower-case file added after the freeze was never judged), so the
eight ``LATE`` ids are E_PLAN_AMBIGUOUS on the row and never run. Names are compared by one
fold (``controller.plan.names.fold``: case, the code points HFS+ ignores, NFD), so ``c-zw`` is
E_PLAN_AMBIGUOUS on every reader. ``check`` reports a plan the controller reads no file of as
the index and the merge's listing say (``check._held``: the status row's E_PLAN_AMBIGUOUS or
E_UNSAFE_PATH, outcome ``held``, invalid), never the missing text's E_SCHEMA_INVALID: the 13
``check`` ids hold. (History index version 56.)
Held: ``c-ok`` (every reader, ``check`` ``start``, ran once), every claim host on ``show`` and
MCP ``log``, ``m-dir``/``c-dir``/``c-ydir``/``c-file``/``c-symy`` never run, the inner plans
never run, the fresh-clone audit agrees with the rows (it too lists ``m-sym``, ``m-gl``,
``c-sym``, ``c-gl`` as valid runs).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from test_round2_execution_kit import shared

ZWNJ = "\u200c"
# host -> what the pull request adds beside its PLAN.yml (None: nothing, the control)
HOSTS: dict[str, tuple[str, str] | None] = {
    "c-ok": None,
    "c-sym": ("sym", "plan.yml"),
    "c-symy": ("sym", "PLAN.yaml"),
    "c-gl": ("gl", "plan.yml"),
    "c-dir": ("dir", "PLAN.YML"),
    "c-ydir": ("dir", "plan.yaml"),
    "c-file": ("file", "PLAN.yaml"),
    "c-zw": ("dir", f"PLAN.y{ZWNJ}ml"),
}
# the same claims committed on main after the freeze, approved on main (no merge)
MAIN = {
    "m-sym": ("sym", "plan.yml"),
    "m-gl": ("gl", "plan.yml"),
    "m-dir": ("dir", "PLAN.YML"),
}
# refused folders two levels below a plan folder: never a plan
INNER = {"i-deep": "c-ok/a/plan.yaml/b", "i-log": "c-ok/x/EXECUTION_LOG.md"}


def _claims(lab: Lab, hosts: dict[str, tuple[str, str] | None], message: str) -> None:
    """The agent's one commit putting each host's claim beside its PLAN.yml."""
    gl_commit = lab.head()
    for host, claim in hosts.items():
        if claim is None:
            continue
        kind, name = claim
        folder = lab.repo / "plans" / host
        if kind == "sym":
            (folder / name).symlink_to("../c-ok/PLAN.yml")
        elif kind == "dir":
            lab.write(f"{host}/{name}", plan_text(f"{host}-in", "approved"))
        elif kind == "file":
            lab.write(host, plan_text(f"{host}-in", "approved"), name)
        else:
            (folder / name).mkdir()  # an uninitialised submodule: an empty folder
    lab.git("add", "-A")
    for host, claim in hosts.items():
        if claim and claim[0] == "gl":
            lab.git("update-index", "--add", "--cacheinfo",
                    f"160000,{gl_commit},plans/{host}/{claim[1]}")  # fmt: skip
    lab.git("commit", "-q", "-m", message, who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    for host in [*HOSTS, *MAIN]:
        lab.write(host, plan_text(host))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)  # the approvals follow the freeze by a second (git dates are seconds)
    _claims(lab, MAIN, "agent: beside, on main")
    for host in MAIN:
        lab.set_status(host, "approved")
    lab.commit("alice: approve on main", ALICE)
    lab.run()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "pr")
    for key, folder in INNER.items():
        lab.write(folder, plan_text(f"{key}-in", "approved"))
    _claims(lab, HOSTS, "agent: beside, on the branch")
    for host in HOSTS:
        lab.set_status(host, "approved")
    lab.commit("alice: approve on the branch", ALICE)
    done = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    got: dict[str, Any] = {"check-rc": done.returncode, "check-err": done.stderr[-2000:]}
    got["check"] = {p["plan"]: p for p in json.loads(done.stdout)["plans"]}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    lab.run()
    cfg = str(lab.config)
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {
        t: len(lab.calls(t))
        for t in [*HOSTS, *MAIN, *[f"{h}-in" for h in [*HOSTS, *MAIN]], *[f"{k}-in" for k in INNER]]
    }
    got["show"] = {}
    for h in [*HOSTS, *MAIN]:
        shown = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / h))
        got["show"][h] = f"{shown.returncode} {shown.stdout}{shown.stderr}"
    got["mcp-log"] = session(lab, [("log", {"path": f"plans/{h}"}) for h in [*HOSTS, *MAIN]])[0]
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    got["base"] = base
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-surface-checknames", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 72: {what}")


LATE = _xf(
    "a symlink or gitlink named plan.yml committed beside an existing plan's PLAN.yml (on main "
    "or through a merge) is missed by the history index: the row says completed and the plan "
    "runs, while show and MCP log say E_PLAN_AMBIGUOUS"
)
IGNORABLE = _xf("a folder PLAN.y<U+200C>ml/ beside the plan file is no claim: the host runs")
CHECK_RUN = _xf("plangate check says a merge would start a plan the controller holds ambiguous")
CHECK_CODE = _xf(
    "plangate check names another problem (E_SCHEMA_INVALID 'the file must be a mapping', or "
    "none) where every other reader says E_PLAN_AMBIGUOUS or E_UNSAFE_PATH"
)
READERS = ("row", "show", "mcp-log", "ran")
ALLH = {**HOSTS, **MAIN}
RIDS = [f"{h}:{r}" for h in ALLH for r in READERS]
BROKEN: dict[str, Any] = {}  # fixed (r72claims): LATE, IGNORABLE


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, BROKEN))
def test_a_claim_beside_the_plan_file_holds_it_on_every_reader(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    honest = ALLH[host] is None
    if reader == "row":
        row = got["rows"][f"plans/{host}"]
        if honest:
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        else:  # a symlink PLAN.yaml is no plan file (E_UNSAFE_PATH); the rest E_PLAN_AMBIGUOUS
            assert row["status"] != "completed", row
            assert "E_PLAN_AMBIGUOUS" in json.dumps(row) or "E_UNSAFE_PATH" in json.dumps(row), row
    elif reader == "show":
        text = got["show"][host]
        if honest:
            assert text.startswith("0 "), text[:800]
        else:
            assert not text.startswith("0 ") and "E_PLAN_AMBIGUOUS" in text, text[:800]
    elif reader == "mcp-log":
        result = got["mcp-log"][list(ALLH).index(host)]["result"]
        text = result["content"][0]["text"]
        if honest:
            assert not result.get("isError") and '"status": "completed"' in text, text[:800]
        else:
            assert result.get("isError") and "E_PLAN_AMBIGUOUS" in text, text[:800]
    else:
        assert got["calls"][host] == (1 if honest else 0), got["calls"]
        assert got["calls"][f"{host}-in"] == 0, got["calls"]


CIDS = [f"{h}:{r}" for h in HOSTS for r in ("check-outcome", "check-code")] + [
    f"{k}:check-code" for k in INNER
]
CBROKEN: dict[str, Any] = {}  # fixed (r72claims): CHECK_RUN, CHECK_CODE


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, CBROKEN))
def test_check_says_what_the_merge_does(lab: Lab, vid: str) -> None:
    """``plangate check --as alice`` of the pull request, before the merge, against what the
    controller did after it (and what every other reader calls the folder)."""
    got = lab.got  # type: ignore[attr-defined]
    key, reader = vid.split(":")
    if key in INNER:
        entry = got["check"].get(f"plans/{INNER[key]}")
        assert entry is None or "E_UNSAFE_PATH" in json.dumps(entry["problems"]), entry
        assert got["calls"][f"{key}-in"] == 0, got["calls"]
        return
    entry = got["check"][f"plans/{key}"]
    honest = HOSTS[key] is None
    if reader == "check-outcome":
        assert (entry["outcome"] == "start") == honest, entry
        assert got["calls"][key] == (1 if honest else 0) or not honest, got["calls"]
    else:
        codes = {p["code"] for p in entry["problems"]}
        if honest:
            assert entry["valid"] and not codes, entry
        else:
            assert codes & {"E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"}, entry


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r72ck-", dir="/tmp/atk72b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
