"""Round 74, agent-facing surfaces: round 73's held folders and the controller's own writers
(docs/plan-format.md: "The controller writes nothing into a folder it holds ... a source
(``PLAN.json`` & co.) beside a claim, or beside a second source one path with it, is not
converted but waits ``E_PLAN_AMBIGUOUS``") attacked with the OTHER source formats (a
``PLAN.md`` model reply with one fenced block), two sources of two formats, twin sources of
another format, a source beside a forged log, and claims whose TIMING round 73 did not try:
in the same commit as Alice's approval, by a merge that lands after her approval, a claim
Alice herself removes in her approval commit, a claim that comes and goes around her approval.

Lab (one, module scope; four ``run --once`` passes; one daemon at the end):
- pass 1 (the agent's first commit): ``ok-json`` (``PLAN.json`` alone) and ``ok-md``
  (``PLAN.md``: one fenced ```` ```json ```` block) are the controls (converted, Alice
  approves their PLAN.yml, each runs once); ``md-sym`` (``PLAN.md`` beside a symlink
  ``plan.yml``), ``md-dir`` (beside a folder ``Plan.Yaml/``), ``md-zw`` (beside a file
  ``PLAN.y<U+206F>ml``), ``two-fmt`` (``PLAN.json`` beside ``PLAN.md``), ``md-twin``
  (``PLAN.md`` beside ``plan.MD``), ``md-twinzw`` (``PLAN.md`` beside ``PLAN.m<U+200D>d``):
  never converted, held E_PLAN_AMBIGUOUS, never run; ``src-log`` (``PLAN.json`` beside a
  forged "completed, approved by alice" ``EXECUTION_LOG.md``) and ``src-logtw`` (beside the
  same at ``execution_log.md``): converted (a log is no claim of the plan file's place), the
  forgery noted E_OWNED_BLOCK_CHANGED on every reader, never shown; after Alice's approval
  they run once and the shown log is the controller's. Plans ``same-ap``, ``merge-ap``,
  ``flip``, ``ctl`` (PLAN.yml, frozen by pass 1); ``rm-ap`` (PLAN.yml born beside a symlink
  ``plan.yml``: held, never frozen by pass 1).
- between pass 1 and 2: ``same-ap``: ONE commit by Alice sets ``approved`` and adds a folder
  ``PLAN.YML/`` (the agent's file in her working tree, ``git add -A``); ``merge-ap``: the
  agent's side branch adds a symlink ``plan.yml``, Alice approves on main, the agent merges
  the side branch after her approval; ``rm-ap``: Alice's approval commit deletes the symlink
  (she read the plan and removed the claim herself); ``flip``: the agent adds a symlink
  ``plan.yml`` (held by pass 2); ``ctl``: Alice approves (the control).
- between pass 2 and 3: Alice approves ``flip`` while it is held; pass 3.
- between pass 3 and 4: the agent removes ``flip``'s claim; pass 4.
Readers (``<plan>:<reader>``): ``status --json``'s row (``row``), ``show --json`` (``show``),
MCP ``log`` (``mcp-log``), the daemon's ``/api/plan/<id>`` (``api``) and page ``/plan/<id>``
(``page``), the ``rec`` calls (``ran``); for the sources whether a ``plangate: convert``
commit wrote their PLAN.yml (``convert``); the fresh-clone ``plangate audit --json``.
Must hold: a held folder is held on every reader (E_PLAN_AMBIGUOUS or E_UNSAFE_PATH, never
``completed``, no document) and runs zero times; the controls run once, completed by alice on
every reader; a forged log is noted and never shown; the audit's valid runs are the
completed rows. Readers for the sources also: ``held`` (the row's ``held`` field, round 73),
``plangate validate <folder>`` (``validate``), ``plangate hash <folder>`` (``hash``) and
``plangate freeze <folder>`` on a copy of the working tree (``freeze``: refused, nothing
written); ``yml-sym`` (PLAN.yml beside a symlink
``plan.yml``) is the rule's own case, held on every reader. More sources: ``yml-twin``
(``PLAN.md`` holding plain plan YAML, a model's reply not fenced, beside ``plan.MD`` holding
another plan), ``json-twin`` (``PLAN.json`` beside ``plan.JSON``), ``json-sym`` (``PLAN.json``
beside a symlink ``plan.yml``).

Seen (round 74):
- ``{md-sym,md-dir,md-zw,two-fmt,md-twin,md-twinzw,yml-twin,json-twin,json-sym}:{show,
  validate,hash,freeze}`` (36 ids, one class: the CLI on the working tree): the controller
  holds the source (no convert commit, the row ``E_PLAN_AMBIGUOUS: cannot convert ...``), but
  ``plangate validate plans/<f>`` answers ``PLAN.md: valid (sha256:...)`` (``PLAN.json``
  likewise) for a source beside a symlink, a folder or a file claiming the plan file's place,
  or beside its case or ignorable twin; ``plangate hash`` prints a hash for ``yml-twin``,
  ``json-twin``, ``json-sym``; ``plangate show plans/yml-twin`` shows ``PLAN.md``'s document
  and hash (exit 0) while ``plan.MD`` beside it holds another plan (the reviewer on a
  case-insensitive checkout has one of the two); and ``plangate freeze plans/yml-twin`` WRITES
  ``frozen:`` into ``PLAN.md`` beside its twin (``frozen sha256:...``; git status ``M``).
  The other answers refuse under unrelated codes (``E_YAML_PARSE`` for a fenced PLAN.md,
  ``E_SCHEMA_INVALID`` for JSON, ``E_USAGE`` for two formats). The same claim beside a PLAN.yml
  (``yml-sym``) is ``E_PLAN_AMBIGUOUS`` on all four, nothing written. Should
  (docs/plan-format.md: ``E_PLAN_AMBIGUOUS`` "for every reader"; a source beside a claim or a
  twin source "is not converted but waits ``E_PLAN_AMBIGUOUS``"; "The controller writes
  nothing into a folder it holds"): refused ``E_PLAN_AMBIGUOUS`` naming both entries, nothing
  read as valid, no hash, nothing written. Nothing runs: the twin never converts, so the harm
  is a reviewer told "valid" (or shown one of two documents, or a local freeze written) for a
  folder the controller holds. Fixed (2026-11-30, r74heldcli): one verdict on a folder, for
  its plan file and its source alike (``controller.plan.names.folder_verdict``: the plan
  file's claims, then ``source_verdict``, the daemon's converter's rule), read by every CLI
  path through ``plans.held_problem`` (``read_plan``, ``load_source``; ``plan_file_in``
  resolves a folder to its first source claim, so two sources are no E_USAGE): all 36
  answer E_PLAN_AMBIGUOUS naming the claim, no hash, nothing written.
- ``{same 9}:{held,mcp-log,api,page}`` (36 ids, one class): the held source's
  ``status --json`` row has NO ``held`` field (``status: unreadable``, the code in
  ``problem``), where a held PLAN.yml's row says ``held: E_PLAN_AMBIGUOUS``; MCP ``log``
  answers ``E_USAGE: no plan plans/<f> on the watched branch``; the page and
  ``/api/plan/<id>`` say ``E_UNSAFE_PATH: no readable PLAN file`` with ``code: null``. Should
  (round 73: rows carry ``held``; the page of a held row shows "its code, notes and the
  controller's own record"): every reader says ``E_PLAN_AMBIGUOUS`` and why, as the row does.
  Fixed (2026-11-30, r74heldread): the source verdict moved beside the plan file's
  (``controller.plan.names.source_verdict``) and the reader of a plan by its id asks it
  (``controller.git.planstate.plan_file_of``: MCP ``log``/``wait`` raise its code and why); a
  source row the verdict holds carries ``held`` (``HELD_CODES``), so the page and
  ``/api/plan/<id>`` take the held page (code, why, notes, the controller's own record only).
Noted, not counted: ``flip`` (Alice approved while the claim held the folder; the agent then
removed the claim): pass 4 reads the approval as the agent's (``approval refused:
E_APPROVER_NOT_ALLOWED: agent@example.com (author of <the claim's removal>)``) and commits a
refusal: safe, but Alice's approval is lost without her being told it was given to a held
plan; ``rm-ap`` (Alice's approval commit removes the claim of a never-frozen plan): refused
``E_PLAN_NOT_FROZEN``, then frozen: safe, she approves again. ``src-log`` (a forged
``EXECUTION_LOG.md`` beside a ``PLAN.json``): converted and run; the controller's log replaces
the forgery, shown by no reader.
Held: the controls (``ok-json``, ``ok-md``, the logged sources, ``ctl``) run once, completed
by alice on every reader; no held source converts or runs (nor its twin or claim plan); a
claim in Alice's approval commit (``same-ap``) or merged after it (``merge-ap``) holds the plan
on every reader (no document, no hash); ``rm-ap`` and ``flip`` never run on an approval given
to a held or never-frozen plan; the forged logs are never shown; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import session
from oraclekit import page_texts
from test_round2_execution_kit import shared

FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r74)\n"
)
# folder -> entries (name, kind): json/md (a source), sym/dir/file (a claim), log (forged)
SOURCES: dict[str, list[tuple[str, str]]] = {
    "ok-json": [("PLAN.json", "json")],
    "ok-md": [("PLAN.md", "md")],
    "md-sym": [("PLAN.md", "md"), ("plan.yml", "sym")],
    "md-dir": [("PLAN.md", "md"), ("Plan.Yaml", "dir")],
    "md-zw": [("PLAN.md", "md"), ("PLAN.y\u206fml", "file")],
    "two-fmt": [("PLAN.json", "json"), ("PLAN.md", "md2")],
    "md-twin": [("PLAN.md", "md"), ("plan.MD", "md2")],
    "md-twinzw": [("PLAN.md", "md"), ("PLAN.m\u200dd", "md2")],
    "yml-twin": [("PLAN.md", "yml"), ("plan.MD", "yml2")],
    "json-twin": [("PLAN.json", "json"), ("plan.JSON", "json2")],
    "json-sym": [("PLAN.json", "json"), ("plan.yml", "sym")],
    "src-log": [("PLAN.json", "json"), ("EXECUTION_LOG.md", "log")],
    "src-logtw": [("PLAN.json", "json"), ("execution_log.md", "log")],
}
SRC_OK = ("ok-json", "ok-md", "src-log", "src-logtw")  # converted, approved, run once
LOGGED = ("src-log", "src-logtw")
TIMED = ("ctl", "same-ap", "merge-ap", "rm-ap", "flip")
TIMED_OK = ("ctl",)


def _data(tag: str) -> dict[str, Any]:
    return dict(load_yaml(plan_text(tag)))


def _write_sources(lab: Lab) -> None:
    for folder, entries in SOURCES.items():
        where = lab.repo / "plans" / folder
        where.mkdir(parents=True)
        for name, kind in entries:
            tag = f"{folder}-2" if kind.endswith("2") else folder
            if kind in ("json", "json2"):
                (where / name).write_text(json.dumps(_data(tag), indent=1))
            elif kind in ("md", "md2"):
                body = json.dumps(_data(tag), indent=1)
                (where / name).write_text(f"```json\n{body}\n```\n")
            elif kind in ("yml", "yml2"):  # a model's reply, not fenced: plain plan YAML
                (where / name).write_text(plan_text(tag))
            elif kind == "sym":
                (where / name).symlink_to("../ctl/PLAN.yml")
            elif kind == "dir":
                lab.write(f"{folder}/{name}", plan_text(f"{folder}-in", "approved"))
            elif kind == "file":
                (where / name).write_text(plan_text(f"{folder}-in", "approved"))
            else:
                (where / name).write_text(FORGED)


def _approve_converted(lab: Lab, folders: tuple[str, ...]) -> None:
    for folder in folders:
        path = lab.repo / "plans" / folder / "PLAN.yml"
        if path.is_file():
            text = path.read_text()
            path.write_text(text.replace('status: "pending_approval"', 'status: "approved"', 1))


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    _write_sources(lab)
    for plan in TIMED:
        lab.write(plan, plan_text(plan))
    lab.write("yml-sym", plan_text("yml-sym"))
    (lab.repo / "plans" / "yml-sym" / "plan.yml").symlink_to("../ctl/PLAN.yml")
    (lab.repo / "plans" / "rm-ap" / "plan.yml").symlink_to("../ctl/PLAN.yml")
    lab.commit("agent: plans", AGENT)
    lab.run()  # pass 1: converts and freezes
    time.sleep(1.1)
    lab.git("checkout", "-q", "-b", "side")
    (lab.repo / "plans" / "merge-ap" / "plan.yml").symlink_to("../ctl/PLAN.yml")
    lab.commit("agent: a note", AGENT)
    lab.git("checkout", "-q", "main")
    (lab.repo / "plans" / "flip" / "plan.yml").symlink_to("../ctl/PLAN.yml")
    lab.commit("agent: flip's note", AGENT)
    # Alice: approves ctl, rm-ap (removing its claim), same-ap (with the agent's folder)
    for plan in ("ctl", "same-ap", "merge-ap", "rm-ap"):
        lab.set_status(plan, "approved")
    (lab.repo / "plans" / "rm-ap" / "plan.yml").unlink()
    lab.write("same-ap/PLAN.YML", plan_text("same-ap-in", "approved"))
    _approve_converted(lab, SRC_OK)
    lab.commit("alice: approve", ALICE)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()  # pass 2
    time.sleep(1.1)
    lab.set_status("flip", "approved")
    lab.commit("alice: approve flip", ALICE)
    lab.run()  # pass 3: flip held
    time.sleep(1.1)
    (lab.repo / "plans" / "flip" / "plan.yml").unlink()
    lab.commit("agent: flip's note gone", AGENT)
    lab.run()  # pass 4
    cfg = str(lab.config)
    plans = [*SOURCES, *TIMED, "yml-sym"]
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*plans, *[f"{p}-in" for p in plans], *[f"{p}-2" for p in plans]]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["converts"] = {
        f: [t for t in lab.subjects(f) if t.startswith("plangate: convert")] for f in SOURCES
    }
    got["tree"] = lab.git("ls-tree", "-r", "-z", "--name-only", "HEAD", "plans").split("\0")
    got["show"] = {}
    for plan in plans:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    got["validate"] = {}
    for plan in plans:
        done = lab.cli("validate", "--config", cfg, str(lab.repo / "plans" / plan))
        got["validate"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    got["hash"], got["freeze"] = {}, {}
    for plan in plans:
        done = lab.cli("hash", str(lab.repo / "plans" / plan))
        got["hash"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    copy = root / "fz"  # the CLI's own writer, on a copy of the working tree
    shutil.copytree(lab.repo, copy, symlinks=True)
    for plan in plans:
        done = lab.cli("freeze", str(copy / "plans" / plan), cwd=copy)
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", f"plans/{plan}"],
            cwd=copy, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        got["freeze"][plan] = f"{done.returncode} {done.stdout}{done.stderr}\nchanged: {changed}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in plans])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(plans, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{p}" for p in plans], "plans/ctl")
    got["page"] = {p: pages[f"plans/{p}"][0] for p in plans}
    got["api"] = {p: pages[f"plans/{p}"][1] for p in plans}
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-surface-heldsources", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 74: {what}")


HELD_SRC = [f for f in SOURCES if f not in SRC_OK]
SREADERS = (
    "convert",
    "row",
    "held",
    "show",
    "validate",
    "hash",
    "freeze",
    "mcp-log",
    "api",
    "page",
    "ran",
)
SIDS = [f"{f}:{r}" for f in [*SOURCES, "yml-sym"] for r in SREADERS]
BROKEN: dict[str, Any] = {}  # all fixed (2026-11-30, r74heldcli and r74heldread)


def _refused(text: str) -> bool:
    shown = '"hash": "sha256' in text or "valid (sha256" in text
    return not text.startswith("0 ") and not shown


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, BROKEN))
def test_a_held_source_is_held_on_every_reader(lab: Lab, vid: str) -> None:
    """docs/plan-format.md (round 73): a source beside a claim or a twin source "is not
    converted but waits E_PLAN_AMBIGUOUS"; E_PLAN_AMBIGUOUS is "for every reader" because "a
    reviewer could read one while the other ran"."""
    got = lab.got  # type: ignore[attr-defined]
    folder, reader = vid.split(":")
    honest = folder in SRC_OK
    text = {
        "row": json.dumps(got["rows"].get(f"plans/{folder}"), ensure_ascii=False),
        "show": got["show"].get(folder, ""),
        "validate": got["validate"].get(folder, ""),
        "hash": got["hash"].get(folder, ""),
        "freeze": got["freeze"].get(folder, ""),
        "mcp-log": got["mcp-log"].get(folder, ""),
        "api": got["api"].get(folder, ""),
        "page": got["page"].get(folder, ""),
    }.get(reader, "")
    assert "forged-r74" not in text, text[-1500:]
    if reader == "convert":
        written = f"plans/{folder}/PLAN.yml" in got["tree"]
        if folder == "yml-sym":
            assert not got["converts"].get(folder), got["converts"]
        else:
            assert bool(got["converts"][folder]) == honest == written, (got["converts"], written)
    elif reader == "ran":
        assert got["calls"][folder] == (1 if honest else 0), got["calls"]
        assert got["calls"][f"{folder}-2"] == got["calls"][f"{folder}-in"] == 0, got["calls"]
    elif reader == "held":  # status --json rows carry ``held`` (round 73)
        row = got["rows"].get(f"plans/{folder}") or {}
        assert row.get("held") == (None if honest else "E_PLAN_AMBIGUOUS"), row
    elif honest and reader == "validate":
        assert text.startswith("0 ") and "valid (sha256" in text, text[:800]
    elif honest and reader == "hash":
        assert text.startswith("0 sha256:"), text[:800]
    elif honest and reader == "freeze":
        assert "E_PLAN_AMBIGUOUS" not in text, text[:800]
    elif honest:
        assert "completed" in text, text[:1500]
        assert ("E_OWNED_BLOCK_CHANGED" in text) == (folder == "src-logtw"), text[:3000]
    else:
        assert '"status": "completed"' not in text, text[:1500]
        assert "E_PLAN_AMBIGUOUS" in text, text[:1500]
        if reader == "hash":
            assert not text.startswith("0 ") and "sha256:" not in text, text[:800]
        if reader == "freeze":
            assert text.rstrip().endswith("changed:"), text[-800:]
        if reader in ("show", "validate", "mcp-log"):
            assert _refused(text), text[:800]
            assert reader != "mcp-log" or '"isError": true' in text, text[:800]
        if reader == "api":
            answer = json.loads(text)
            assert not answer.get("document") and not answer.get("hash"), text[:800]


TREADERS = ("row", "show", "mcp-log", "api", "page", "ran")
TIDS = [f"{p}:{r}" for p in TIMED for r in TREADERS]
TBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(TIDS, TIDS, TBROKEN))
def test_a_claim_around_the_approval_never_lets_it_run(lab: Lab, vid: str) -> None:
    """A claim in Alice's approval commit (same-ap), merged after it (merge-ap): held; a claim
    she removes in her approval commit of a never-frozen plan (rm-ap), or one removed after
    she approved while it was held (flip): her approval is of no frozen, unheld version, so
    nothing runs on it; ctl: runs once."""
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    honest = plan in TIMED_OK
    row = got["rows"].get(f"plans/{plan}") or {}
    if reader == "ran":
        assert got["calls"][plan] == (1 if honest else 0), got["calls"]
        assert got["calls"][f"{plan}-in"] == 0, got["calls"]
        return
    text = {
        "row": json.dumps(row, ensure_ascii=False),
        "show": got["show"][plan],
        "mcp-log": got["mcp-log"][plan],
        "api": got["api"][plan],
        "page": got["page"][plan],
    }[reader]
    if honest:
        assert row.get("status") == "completed" and row.get("approver") == ALICE[1], row
        assert "completed" in text, text[:1500]
        return
    assert row.get("status") != "completed", row
    assert '"status": "completed"' not in text, text[:1500]
    if plan in ("same-ap", "merge-ap"):
        assert "E_PLAN_AMBIGUOUS" in text, text[:1500]
        if reader in ("show", "mcp-log"):
            assert _refused(text) and "completed" not in text, text[:800]
        if reader == "api":
            answer = json.loads(text)
            assert not answer.get("document") and not answer.get("hash"), text[:800]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert completed == sorted(f"plans/{p}" for p in [*SRC_OK, *TIMED_OK]), completed
    assert got["audit"]["runs"] == len(completed), got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r74hs-", dir="/tmp/atk74b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
