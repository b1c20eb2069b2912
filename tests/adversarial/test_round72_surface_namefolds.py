"""Round 72, agent-facing surfaces: round 71's one rule for a plan's names
(``controller.plan.names``: the entries of a folder that are its plan file or claim to be one
compared case-insensitively, files and folders alike; a nested pin must name a plan folder by
the plan id rule) attacked with entries that are no file or folder (committed symlinks,
gitlinks), ignorable characters (one path on an HFS+ checkout, as git's ``core.protectHFS``
knows), refused names two and three levels below the plan folder, and pins to all of them.

Lab (one, module scope; two ``run --once`` passes): the agent commits, in one commit,
- hosts: ``plans/<h>/PLAN.yml`` (a ``rec`` call tagged ``<h>-host``), each beside an entry
  claiming the plan file's place: ``ctl`` (nothing), ``zw`` (a FOLDER ``PLAN.y<U+200C>ml/``
  holding an "approved" plan ``in-zw``), ``zwj`` (a folder ``<U+200D>PLAN.yml/``), ``bom``
  (``PLAN.yml<U+FEFF>/``), ``lrm`` (``PLAN<U+200E>.yaml/``: the characters HFS+ ignores and
  git's ``is_hfs_dotgit`` skips), ``gl-up`` (a gitlink ``PLAN.YML``), ``sym-lc``
  (a symlink ``plan.yml -> ../evil/PLAN.yml``), ``sym-yaml`` (a symlink ``PLAN.yaml``, same
  target), ``gl-lc``/``gl-yaml`` (a gitlink ``plan.yml``/``PLAN.yaml``, an uninitialised
  submodule), ``gl-log`` (a gitlink ``execution_log.md``: not a plan file's name, a control);
- inner folders holding an "approved" plan: ``zlog`` (``EXECUTION_LOG.md<U+200D>/``),
  ``zlog2`` (``EXECUTION<U+200C>_LOG.md/``), ``deep2`` (``a/PLAN.YML/b``), ``deep3``
  (``plan.yml/x/y``), ``deepjs`` (``k/PLAN.Jſon/z``);
- libraries ``plans/lib``, ``plans/grp/team/lib2`` (two levels), ``plans/evil`` (drafts), a
  symlink folder ``plans/libsym -> lib``, and one parent per pin, pinned by the hash
  ``plangate hash`` gives the pinned text: ``pin-ctl`` (``plans/lib``), ``pin-two``
  (``plans/grp/team/lib2``), ``pin-deep2``, ``pin-deep3``, ``pin-deepjs``, ``pin-zlog``,
  ``pin-zw`` (the inner folders), ``pin-symdir`` (``plans/libsym``), ``pin-symbeside``
  (``plans/sym-lc``), ``pin-glbeside`` (``plans/gl-lc``).
- submit folders (no plan file yet): ``sub-dir`` (a folder ``plan.yml/`` holding a note),
  ``sub-sym`` (a symlink ``plan.yml``), ``sub-updir`` (a folder ``PLAN.YAML/``); beside a plan
  file: ``sub-both`` (``PLAN.yml`` and ``PLAN.yaml``), ``sub-casedir`` (``PLAN.yaml`` and a
  folder ``Plan.yml/``); ``sub-ok`` (a README only: the control). After the first pass the
  agent calls MCP ``submit`` with a valid plan for each slug.
Alice approves every host and parent in one commit; a second pass.
Readers: ``status --json``'s row, ``show --json --config``, MCP ``log``, the daemon's
``/api/plan/<id>``, MCP ``validate`` of the parent as the agent committed it, the ``rec``
calls; the fresh-clone ``plangate audit --json``.
Must hold: a host beside a claim is E_PLAN_AMBIGUOUS on every reader and never runs (``ctl``,
``gl-log`` run once: controls); an inner folder is E_UNSAFE_PATH on the row and MCP, never
run; a parent pinning a refused, ambiguous or symlinked folder is invalid on the row and MCP
``validate`` and never starts (``pin-ctl``, ``pin-two`` run their library once: controls);
the fresh-clone audit's valid runs are the completed rows; MCP ``submit`` answers what the
controller then does: a folder the row calls E_PLAN_AMBIGUOUS is refused E_PLAN_AMBIGUOUS and
nothing is committed (``sub-ok`` is committed, pending_approval).

Seen (round 72): ``{zw,zwj,bom,lrm}:{row,show,mcp-log,api,ran}`` (20 ids, one class): a
folder named ``PLAN.yml``/``PLAN.yaml`` with a default-ignorable character in it
(``PLAN.y‌ml/``, ``‍PLAN.yml/``, ``PLAN.yml<U+FEFF>/``, ``PLAN<U+200E>.yaml/``) beside the agent's
``PLAN.yml`` is refused as a plan of its own (E_UNSAFE_PATH, an invisible character) but is no
claim on its host: the host is a plain plan on every reader (row and ``/api/plan/``
completed/alice, ``show`` frozen, MCP ``log`` its record) and Alice's approval runs it.
On a checkout that ignores those characters (HFS+, which git guards with ``core.protectHFS``)
the folder and the plan file are one path, round 71's own reason to refuse ``plan.yml/``
beside ``PLAN.yml``. Should (docs/plan-format.md: "a folder holding a plan file beside a
FOLDER (or file) named ``PLAN.yml`` or ``PLAN.yaml`` in any case ... one path on a
case-insensitive checkout ... is ``E_PLAN_AMBIGUOUS`` for every reader"): the claim compared
with ignorable characters dropped too (as identities are, docs/threat-model.md), the host
E_PLAN_AMBIGUOUS and never run.
``sub-dir:answer``, ``sub-sym:answer``, ``sub-updir:answer`` (3 ids, one class): MCP ``submit``
into a folder holding only a claim of the plan file's name (a folder ``plan.yml/`` or
``PLAN.YAML/``, a symlink ``plan.yml``) commits ``PLAN.yml`` beside it and answers ``ok: true,
submitted: true, status: pending_approval``; the row, ``show`` and MCP ``log`` then call the
folder E_PLAN_AMBIGUOUS, and it never runs (``:row`` held). The same claim beside an existing
plan file (``sub-both``, ``sub-casedir``) is refused E_PLAN_AMBIGUOUS, nothing committed.
Should (docs/plan-format.md, one rule for "which entries of a folder are its plan file or
claim to be one", E_PLAN_AMBIGUOUS "for every reader"; docs/agents.md: an invalid plan "is not
committed and comes back with its errors"): refused E_PLAN_AMBIGUOUS before the commit.
Fixed (2026-11-30, r72claims): names are compared by one fold (``controller.plan.names.fold``:
the code points HFS+ ignores, git's ``next_hfs_char`` set, dropped; NFD; case folded), used by
``plan_file_claims`` and ``plan_named_folder`` alike, so every reader (the history index, ``show``,
MCP, the page's API) finds ``zw``, ``zwj``, ``bom``, ``lrm`` E_PLAN_AMBIGUOUS, and they never run.
MCP ``submit`` asks ``ambiguous_claims`` over the folder's listing and the file it would write
(``AgentApi._check_claims``): ``sub-dir``, ``sub-sym``, ``sub-updir`` are refused
E_PLAN_AMBIGUOUS, nothing committed. Their ``:row`` ids changed with it: nothing committed, the
folder holds no plan file, so no row (or, should one appear, E_PLAN_AMBIGUOUS) is asked instead
of an E_PLAN_AMBIGUOUS row of the committed plan. (History index version 56.)
Noted, not counted: ``pin-zw``, ``pin-zlog`` and ``pin-symdir`` are refused
``E_SCHEMA_INVALID`` ("write the plan's folder ...", "is a symlink") where docs/plan-format.md
says a pin to a folder "holding a name ``status`` shows as ``E_UNSAFE_PATH``" makes the parent
invalid with ``E_UNSAFE_PATH`` (the row shows those folders E_UNSAFE_PATH): one code would
match the doc; nothing runs either way. (Since the session after round 72 they are
``E_UNSAFE_PATH``, as the doc says.)
Also tried (held, not kept as ids): MCP ``submit`` slugs ``plan.yml``, ``plan.yaml``,
``plan.json``, ``plan.toon``, ``plan.md``, ``execution_log.md`` (E_UNSAFE_PATH), ``.``, ``..``,
``...``, ``a..b``, ``.git``, ``-`` (E_USAGE); ``plan.yml.`` and ``plans`` are plans of their own;
a symlink ``PLAN.yaml`` alone is refused (E_ILLEGAL_TRANSITION "is None", an odd message).
Held: symlinks and gitlinks named ``plan.yml``/``PLAN.yaml``/``PLAN.YML`` beside the plan file
(E_PLAN_AMBIGUOUS on the row, ``show``, MCP ``log``, ``/api/plan/``; never run; ``evil`` never
run), refused names two and three levels down and the ignorable-character folders themselves
(E_UNSAFE_PATH on the row, MCP ``log``, ``/api/plan/``), every pin refused and never started,
the honest pins and hosts run once, the fresh-clone audit agrees with the rows.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, clone_audit
from mcpkit import session
from test_round2_execution_kit import shared
from test_round71_surface_foldnames import _get

ZWNJ, ZWJ = "\u200c", "\u200d"
LIB = (
    "plan:\n  name: lib {tag}\n  task: a library\n  status: {status}\n"
    "available_tools: [{{name: rec}}]\nactions:\n"
    "  - id: 1\n    tool: rec\n    why: record {tag}\n    params: {{tag: {tag}}}\n"
)
PARENT = (
    "plan:\n  name: parent {vid}\n  task: t\n  status: pending_approval\n"
    "available_tools: [{{name: rec}}]\nactions:\n"
    "  - id: 1\n    why: the library\n    plan: {{path: '{path}', hash: '{hash}'}}\n"
)
# hosts: an agent plan file Alice approves, beside an entry claiming the plan file's place
# kind: dir (a folder holding an "approved" plan), sym (a committed symlink), gl (a gitlink)
HOSTS = {
    "ctl": None,
    "zw": ("dir", f"PLAN.y{ZWNJ}ml"),
    "zwj": ("dir", f"{ZWJ}PLAN.yml"),
    "bom": ("dir", "PLAN.yml\ufeff"),
    "lrm": ("dir", "PLAN\u200e.yaml"),
    "gl-up": ("gl", "PLAN.YML"),
    "sym-lc": ("sym", "plan.yml"),
    "sym-yaml": ("sym", "PLAN.yaml"),
    "gl-lc": ("gl", "plan.yml"),
    "gl-yaml": ("gl", "PLAN.yaml"),
    "gl-log": ("gl", "execution_log.md"),
}
# folders (under plans/) holding a library that must never be a plan of its own
INNER = {
    "zlog": f"zlog/EXECUTION_LOG.md{ZWJ}",
    "zlog2": f"zlog2/EXECUTION{ZWNJ}_LOG.md",
    "deep2": "deep2/a/PLAN.YML/b",
    "deep3": "deep3/plan.yml/x/y",
    "deepjs": "deepjs/k/PLAN.Jſon/z",
}
LIBS = {"lib": "lib", "grp/team/lib2": "lib2", "evil": "evil"}
# MCP ``submit`` into a folder holding a claim of the plan file's name and no plan file yet
# (the sym/dir kinds), beside a plan file (the "both" kinds, round 69-71's refusals), or empty
SUBMITS = {
    "sub-dir": ("dir", "plan.yml"),
    "sub-sym": ("sym", "plan.yml"),
    "sub-updir": ("dir", "PLAN.YAML"),
    "sub-both": ("file", "PLAN.yaml"),
    "sub-casedir": ("both-dir", "Plan.yml"),
    "sub-ok": None,
}
PINS = {
    "pin-ctl": ("plans/lib", "lib", "lib"),
    "pin-two": ("plans/grp/team/lib2", "grp/team/lib2", "lib2"),
    "pin-deep2": ("plans/deep2/a/PLAN.YML/b", "deep2", None),
    "pin-deep3": ("plans/deep3/plan.yml/x/y", "deep3", None),
    "pin-deepjs": ("plans/deepjs/k/PLAN.Jſon/z", "deepjs", None),
    "pin-zlog": (f"plans/zlog/EXECUTION_LOG.md{ZWJ}", "zlog", None),
    "pin-zw": (f"plans/zw/PLAN.y{ZWNJ}ml", "zw-in", None),
    "pin-symdir": ("plans/libsym", "lib", None),
    "pin-symbeside": ("plans/sym-lc", "sym-lc-host", None),
    "pin-glbeside": ("plans/gl-lc", "gl-lc-host", None),
}


def _host(tag: str, status: str = "pending_approval") -> str:
    return LIB.format(tag=tag, status=status).replace("lib ", "host ", 1)


def _hash(lab: Lab, text: str, scratch: Path, tag: str) -> str:
    probe = scratch / tag / "PLAN.yml"
    probe.parent.mkdir(parents=True)
    probe.write_text(text)
    done = lab.cli("hash", str(probe))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split()[0]


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    lab.git_date = "@1796100000 +0000"
    scratch = root / "scratch"
    texts: dict[str, str] = {}
    for folder, tag in LIBS.items():
        texts[folder] = LIB.format(tag=tag, status="draft")
        lab.write(folder, texts[folder])
    for key, folder in INNER.items():
        texts[key] = LIB.format(tag=f"in-{key}", status="approved")
        lab.write(folder, texts[key])
    gl_commit = lab.head()
    for host, claim in HOSTS.items():
        texts[f"{host}-host"] = _host(f"{host}-host")
        lab.write(host, texts[f"{host}-host"])
        if claim is None:
            continue
        kind, name = claim
        if kind == "dir":
            texts[f"{host}-in"] = LIB.format(tag=f"in-{host}", status="approved")
            lab.write(f"{host}/{name}", texts[f"{host}-in"])
        elif kind == "sym":
            (lab.repo / "plans" / host / name).symlink_to("../evil/PLAN.yml")
    (lab.repo / "plans" / "libsym").symlink_to("lib")
    for sub, claim in SUBMITS.items():
        folder = lab.repo / "plans" / sub
        folder.mkdir()
        if claim is None:
            (folder / "README.md").write_text("for the agent's next plan\n")
            continue
        kind, name = claim
        if kind == "sym":
            (folder / name).symlink_to("../evil/PLAN.yml")
        elif kind == "file":
            lab.write(sub, _host(f"{sub}-old"))
            lab.write(sub, _host(f"{sub}-old-y"), name)
        else:
            if kind == "both-dir":
                lab.write(sub, _host(f"{sub}-old"), "PLAN.yaml")
            (folder / name).mkdir()
            (folder / name / "notes.md").write_text("x\n")
    hashes = {k: _hash(lab, t, scratch, k.replace("/", "_")) for k, t in texts.items()}
    shutil.rmtree(scratch)
    for vid, (path, key, _) in PINS.items():
        lab.write(f"p-{vid}", PARENT.format(vid=vid, path=path, hash=hashes[key]))
    lab.git("add", "-A")
    for host, claim in HOSTS.items():
        if claim and claim[0] == "gl":  # an uninitialised submodule: an empty folder
            (lab.repo / "plans" / host / claim[1]).mkdir()
            lab.git("update-index", "--add", "--cacheinfo",
                    f"160000,{gl_commit},plans/{host}/{claim[1]}")  # fmt: skip
    lab.git("commit", "-q", "-m", "agent: plans", who=AGENT)
    lab.run()
    parents = {v: lab.read(f"p-{v}") for v in PINS}
    before = lab.head()
    submitted = session(
        lab, [("submit", {"plan": _host(f"{sub}-new"), "slug": sub}) for sub in SUBMITS]
    )[0]
    submits = lab.git("log", "--format=%s", f"{before}..HEAD")
    for vid in PINS:
        lab.set_status(f"p-{vid}", "approved")
    for host in HOSTS:
        lab.set_status(host, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    cfg = str(lab.config)
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    ids = [*HOSTS, *[INNER[k] for k in INNER], *[f"p-{v}" for v in PINS]]
    got: dict[str, Any] = {"rows": rows, "submit": submitted, "submits": submits}
    got["show"] = {}
    for h in HOSTS:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / h))
        got["show"][h] = f"{done.returncode} {done.stdout}{done.stderr}"
    got["mcp-log"] = session(lab, [("log", {"path": f"plans/{i}"}) for i in ids])[0]
    got["mcp-validate"] = session(lab, [("validate", {"plan": parents[v]}) for v in PINS])[0]
    got["calls"] = {
        t: len(lab.calls(t))
        for t in [*LIBS.values(), *[f"{h}-host" for h in HOSTS], *[f"in-{h}" for h in HOSTS],
                  *[f"in-{k}" for k in INNER], *[f"{sub}-new" for sub in SUBMITS]]
    }  # fmt: skip
    got["started"] = {v: lab.started(f"p-{v}") for v in PINS}
    got["api"] = _api(lab, [*HOSTS, *INNER.values()])
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _api(lab: Lab, ids: list[str]) -> dict[str, str]:
    """The daemon's ``/api/plan/<id>`` of each plan id, and its page ``/`` (key ``page``)."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    out: dict[str, str] = {}
    try:
        port, lines = None, []
        while port is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise BenchError("the daemon never said where it listens: " + "".join(lines))
            lines.append(line)
            m = re.search(r'"endpoint": "ui\.listen", "address": "127\.0\.0\.1:(\d+)"', line)
            port = int(m.group(1)) if m else None
        for _ in range(80):
            if "plans/ctl" in _get(port, "/api/"):
                break
            time.sleep(0.25)
        for i in ids:
            out[i] = _get(port, f"/api/plan/plans/{quote(i)}")
        out["page"] = _get(port, "/")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-surface-namefolds", _build)


def _ran(got: dict[str, Any], tag: str) -> int:
    return got["calls"][tag]


BREAK_ZW = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 72: a folder named PLAN.yml with an ignorable character (U+200C/U+200D, one "
    "path on an HFS+ checkout) beside the plan file is no claim: the host is read and runs",
)
HOST_READERS = ("row", "show", "mcp-log", "api", "ran")
IGNORABLE = ("zw", "zwj", "bom", "lrm")
HIDS = [f"{h}:{r}" for h in HOSTS for r in HOST_READERS]
BROKEN: dict[str, Any] = {}  # fixed (r72claims): BREAK_ZW
RUNS = ("ctl", "gl-log")  # controls: nothing claims the plan file's place; Alice's approval runs


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, BROKEN))
def test_an_entry_claiming_the_plan_files_place_makes_the_folder_ambiguous(
    lab: Lab, vid: str
) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    runs = host in RUNS
    if reader == "row":
        row = got["rows"][f"plans/{host}"]
        if runs:
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        else:
            assert row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    elif reader == "show":
        text = got["show"][host]
        if runs:
            assert text.startswith("0 ") and '"freeze_state": "frozen"' in text, text[:800]
        else:
            assert not text.startswith("0 ") and "E_PLAN_AMBIGUOUS" in text, text[:800]
    elif reader == "mcp-log":
        result = got["mcp-log"][list(HOSTS).index(host)]["result"]
        text = result["content"][0]["text"]
        if runs:
            assert not result.get("isError") and '"status": "completed"' in text, text[:800]
        else:
            assert result.get("isError") and "E_PLAN_AMBIGUOUS" in text, text[:800]
    elif reader == "api":
        text = got["api"][host]
        assert text.startswith("200 "), text[:500]
        row = json.loads(text[4:])["row"]
        if runs:
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        else:
            assert row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    else:
        assert _ran(got, f"{host}-host") == (1 if runs else 0), got["calls"]
        assert _ran(got, f"in-{host}") == 0 and _ran(got, "evil") == 0, got["calls"]


IIDS = [f"{k}:{r}" for k in INNER for r in ("row", "mcp-log", "api")]


@pytest.mark.parametrize("vid", cases(IIDS, IIDS, {}))
def test_a_refused_name_at_any_depth_is_no_plan(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    key, reader = vid.split(":")
    folder = INNER[key]
    assert _ran(got, f"in-{key}") == 0, got["calls"]
    if reader == "row":
        row = got["rows"][f"plans/{folder}"]
        assert row["status"] is None and "E_UNSAFE_PATH" in json.dumps(row), row
        assert row["approver"] is None and row["frozen_hash"] is None, row
    elif reader == "api":
        text = got["api"][folder]
        row = json.loads(text[4:])["row"] if text.startswith("200 ") else {"status": None}
        assert row["status"] is None and "E_UNSAFE_PATH" in text, text[:500]
    else:
        result = got["mcp-log"][len(HOSTS) + list(INNER).index(key)]["result"]
        text = result["content"][0]["text"]
        assert result.get("isError") and "E_UNSAFE_PATH" in text, text[:800]


# the pin's refusal: E_UNSAFE_PATH for a refused name (docs/plan-format.md, nested plans);
# a pin holding an invisible character or through a symlink too (it was E_SCHEMA_INVALID
# until the session after round 72), never run
PIN_CODE = {"pin-deep2": ("E_UNSAFE_PATH",), "pin-deep3": ("E_UNSAFE_PATH",),
            "pin-deepjs": ("E_UNSAFE_PATH",),
            "pin-zlog": ("E_UNSAFE_PATH",),
            "pin-zw": ("E_UNSAFE_PATH",),
            "pin-symdir": ("E_UNSAFE_PATH",),
            "pin-symbeside": ("E_PLAN_AMBIGUOUS",),
            "pin-glbeside": ("E_PLAN_AMBIGUOUS",)}  # fmt: skip
PIDS = [f"{v}:{r}" for v in PINS for r in ("row", "mcp-validate", "ran")]


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, {}))
def test_a_nested_pin_runs_only_a_plan_folder(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    pin, reader = vid.split(":")
    want = PINS[pin][2]
    if reader == "row":
        row = got["rows"][f"plans/p-{pin}"]
        if want:
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        else:
            assert row["status"] == "invalid", row
            assert any(c in json.dumps(row) for c in PIN_CODE[pin]), row
    elif reader == "mcp-validate":
        result = got["mcp-validate"][list(PINS).index(pin)]["result"]
        answer = json.loads(result["content"][0]["text"])
        if want:
            assert answer["valid"] is True, answer
        else:
            codes = {e["code"] for e in answer["errors"]}
            assert answer["valid"] is False and codes & set(PIN_CODE[pin]), answer
    else:
        assert got["started"][pin] == bool(want), got["started"]
        if want:
            assert _ran(got, want) == 1, got["calls"]
        assert _ran(got, "evil") == 0, got["calls"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]


BREAK_SUBMIT = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 72: MCP submit into a folder holding only a claim of the plan file's name "
    "commits the plan and answers pending_approval; every other reader says E_PLAN_AMBIGUOUS",
)
SIDS = [f"{sub}:{r}" for sub in SUBMITS for r in ("answer", "row")]
SBROKEN: dict[str, Any] = {}  # fixed (r72claims): BREAK_SUBMIT
#: folders holding only a claim: the refused submission commits nothing, so no plan is there
CLAIM_ONLY = ("sub-dir", "sub-sym", "sub-updir")


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, SBROKEN))
def test_submit_answers_what_the_controller_does(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    sub, reader = vid.split(":")
    ok = SUBMITS[sub] is None
    row = got["rows"].get(f"plans/{sub}")
    if reader == "row":
        if sub in CLAIM_ONLY:  # refused before the commit (r72claims): no plan file, no row
            assert row is None or (
                row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row)
            ), row
        elif ok:
            assert row["status"] == "pending_approval", row
        else:
            assert row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row), row
        assert _ran(got, f"{sub}-new") == 0, got["calls"]
        return
    result = got["submit"][list(SUBMITS).index(sub)]["result"]
    text = result["content"][0]["text"]
    committed = f"plans/{sub}\n" in got["submits"] + "\n"
    if ok:
        assert not result.get("isError") and '"submitted": true' in text, text[:800]
        assert committed, got["submits"]
    else:
        assert result.get("isError") and "E_PLAN_AMBIGUOUS" in text, text[:800]
        assert not committed, got["submits"]


if __name__ == "__main__":
    import sys
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r72nf-", dir="/tmp/atk72b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
    del sys, subprocess
