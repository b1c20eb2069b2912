"""Round 83 (runs): the controller's records under a ``working-tree-encoding`` after round 80's
ASCII marks (r80isolog): many encodings, the attribute changed mid-run (committed at a gate,
removed at a gate, set or deleted in the working tree only), failed runs' records, and the
PLAN's OWN text (its name, an action's ``why``, a parameter as written, a gate's preview)
quoted into a log whose folder cannot hold it.

docs/operations.md: "no text a person or an agent wrote is committed by the controller as a
blob whose checkout git would not give back (round 79)"; "what they write into the working tree
is what git would check out ..., so `git status` stays clean"; round 80: the controller's own
marks "are therefore written, in a record whose checkout would not give it back ..., in their
ASCII forms"; the exception: "A record quoting a tool's output that holds such a character ...
is still committed, and `git status` may list that file modified".

Lab (one, local mode). Tools: ``rec``; ``bad`` (exec: ``fail`` exits 3, ``sleep`` outlives an
action ``timeout: 1``, ``big`` prints 200,000 bytes, ``nojson`` prints no JSON, otherwise
``{}``: it never echoes its parameters); ``nope`` (a program that does not exist). Each plan
folder carries its own ``.gitattributes``.

Variants (each plan Alice approves; one pass freezes, one starts, one answers the gates):
- ``e-<enc>`` (controls, 17 encodings: ``EXECUTION_LOG.md working-tree-encoding=<enc>``):
  CP437, MACINTOSH, ISO-8859-7, KOI8-U, TIS-620, CP1255, US-ASCII, IBM037 (EBCDIC), UTF-7,
  UTF-16LE, UTF-16, GB18030, ISO-2022-JP, SHIFT-JIS, BIG5, EUC-KR, CP1252.
- ``fail``, ``tmo``, ``nf``, ``big``, ``nj`` (``PLAN.yml`` and ``EXECUTION_LOG.md`` in
  ``ISO-8859-1``): the failed tool, the timeout, the missing program, the cut output, the
  non-JSON output: the controller's failure messages in the log and the ``execution:`` block.
- ``ga`` (gated; the agent commits the ``ISO-8859-1`` attribute at the gate), ``gr`` (the
  attribute committed from the start, removed by the agent at the gate), ``wd`` (committed,
  deleted in the working tree only while the run starts, put back), ``wa`` (an uncommitted
  attribute in the working tree while the run starts, removed), ``ctl`` (gated, committed
  from the start: control).
- ``nm`` (the plan's name ``nm — named ✅``), ``wy`` (action 1's ``why: "step — one"``),
  ``pa`` (a ``bad`` parameter ``m: "x — y"``, a tool that does not echo it), ``gp`` (a gate
  whose parameter is ``"hold — on"``: the paused log's preview), all with
  ``EXECUTION_LOG.md working-tree-encoding=ISO-8859-1``; ``sj`` (the name ``sj a~b\\c`` under
  ``EXECUTION_LOG.md working-tree-encoding=SHIFT-JIS``). The plan files are UTF-8, frozen as
  written.

Checks per variant: ``ran`` (what the tools really did, once); ``clean`` (after the
controller's last commit ``git status --porcelain`` of the shared checkout names nothing in the
folder); ``giveback`` (in a fresh clone ``git hash-object --path`` of the checked-out log and
PLAN.yml is HEAD's blob, "error: failed to encode" allowed where the bytes are the blob's);
``commita`` (Alice's next ``git commit -a`` about an unrelated file
carries nothing of the folder); ``audit`` (the fresh-clone audit before it: one valid run,
no finding naming the plan). ``gp`` is checked while paused (``paused``).

Seen (round 83): **the plan's own text quoted into the log is committed where its checkout is not
given back** (``nm``, ``wy``, ``pa``, ``gp`` ``:{clean,giveback,commita}`` and ``gp:paused``, 13):
with ``plans/nm/.gitattributes`` = ``EXECUTION_LOG.md working-tree-encoding=ISO-8859-1`` and a plan
named ``nm — named ✅`` (UTF-8 PLAN.yml, frozen and approved as written), the run's log is ASCII
marks (``[ok] completed``) but its title is ``# Execution log: nm — named ✅`` in UTF-8 bytes; right
after ``plangate: complete plans/nm`` ``git status --porcelain`` prints `` M
plans/nm/EXECUTION_LOG.md`` (``git hash-object --path``: "error: failed to encode
'plans/nm/EXECUTION_LOG.md' from UTF-8 to ISO-8859-1"; the checkout read back is other text), in a
fresh clone too, and Alice's next ``git commit -a -m x`` commits the log as ``â\\x80\\x94 named
â\\x9c\\x85``. The same for an action's ``why``, a parameter shown as written, and a paused gate's
preview (``gp:paused``: `` M`` while the gate waits). Should (docs/operations.md, round 79: "no
text a person or an agent wrote is committed by the controller as a blob whose checkout git would
not give back"; "`git status` stays clean"): the plan's text is the agent's, not a tool's output
(the one exception the docs make); the plan held ``E_ATTRIBUTE_UNSUPPORTED`` at its freeze, or the
record's quoting of it made to come back. Nothing ran twice; the audit agreed. Fixed
(2026-12-01, r83logenc): where a record with the ASCII marks still would not come back, every
character the folder's encoding cannot hold (each asked alone, ``conversion.gives_back``),
whoever wrote it, is written in a reversible ASCII form at the render: the log's HTML numeric
references (``&#x2014;``, ``&`` before ``#`` as ``&#x26;``; ``logbook.escaped``), the
``execution:`` block's YAML escapes (``yamlio.Escaped``); a tool's output too (round 79/80's
exception retired). Added: ``to`` (a tool's output in the log), ``bo`` (a tool's output
captured into the ``execution:`` block, PLAN.yml in ISO-8859-1 too), ``ref`` (a ``why``
holding ``&#x2014;`` itself: ``test_lossless`` reads every one back exactly).
Held: ``sj`` (a ``~`` and ``\\`` in the name under SHIFT-JIS: given back, clean); every other
encoding (single-byte, EBCDIC, UTF-7, UTF-16, CJK multibyte, stateful ISO-2022-JP) gave back the
log and PLAN.yml; the failure records (exit code, timeout, missing program, a cut output, non-JSON)
read clean in ISO-8859-1; an attribute committed or removed at the gate re-rendered the whole log
(all ASCII, or all icons) and ``git status`` stayed clean; working-tree-only attribute edits did
not change what was committed; each action ran once.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, plan_text, valid_runs
from test_round2_execution_kit import shared

BAD = """\
import sys, time
m = sys.argv[1]
if m == "fail":
    sys.stderr.write("boom\\n")
    sys.exit(3)
if m == "sleep":
    time.sleep(5)
if m == "big":
    print("x" * 200000)
if m == "nojson":
    print("not json")
print("{}")
"""
ISO = "EXECUTION_LOG.md working-tree-encoding=ISO-8859-1\n"
BOTH = "PLAN.yml working-tree-encoding=ISO-8859-1\n" + ISO
ENCS = [
    "CP437", "MACINTOSH", "ISO-8859-7", "KOI8-U", "TIS-620", "CP1255", "US-ASCII", "IBM037",
    "UTF-7", "UTF-16LE", "UTF-16", "GB18030", "ISO-2022-JP", "SHIFT-JIS", "BIG5", "EUC-KR",
    "CP1252",
]  # fmt: skip
FAILS = {
    "fail": ("fail", "bad", ""),
    "tmo": ("sleep", "bad", "    timeout: 1\n"),
    "nf": ("x", "nope", ""),
    "big": ("big", "bad", ""),
    "nj": ("nojson", "bad", ""),
}
MID = ["ga", "gr", "wd", "wa", "ctl"]
TEXT = ["nm", "wy", "pa", "gp"]
#: added by the fix (r83logenc): a tool's output (``to``: the log; ``bo``: the ``execution:``
#: block's captured output, PLAN.yml in ISO-8859-1 too) and a text holding the escape's own
#: form (``ref``: read back lossless)
MORE = ["to", "bo", "ref"]
VIDS = [f"e-{e.lower()}" for e in ENCS] + list(FAILS) + MID + TEXT + ["sj"] + MORE
#: the plan text is ASCII (YAML's escape); the tool echoes the characters themselves
ECHOED = '      note: "\\u2014 tool \\u2705"\n'
REF_WHY = "a &#x2014; b — c &amp; &#38;"
GATED = {*MID, "gp"}  # the audit lists the start and the gate's approval: two valid entries
# what really ran: rec calls of <v> and <v>2
RAN = {v: (1, 0) for v in VIDS}
RAN.update({v: (0, 0) for v in ["fail", "tmo", "nf"]})
RAN.update({v: (0, 1) for v in ["big", "nj", "pa"]})
RAN.update({v: (1, 1) for v in MID})
RAN["gp"] = (1, 1)


def _bad_plan(v: str, mode: str, tool: str, extra: str = "") -> str:
    return (
        f'plan:\n  name: "{v}"\n  task: "t"\n  status: pending_approval\n'
        f"available_tools: [{{name: {tool}}}, {{name: rec}}]\nactions:\n"
        f'  - id: 1\n    tool: {tool}\n    why: "w"\n{extra}    params: {{m: "{mode}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{v}2"}}\n'
    )


def _gate(v: str, value: str = "") -> str:
    extra = f', hold: "{value}"' if value else ""
    return (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"{extra}}}\n'
    )


def _giveback(clone: Path, path: str) -> tuple[bool, str]:
    blob = subprocess.run(
        ["git", "rev-parse", f"HEAD:{path}"], cwd=clone, capture_output=True, text=True
    ).stdout.strip()
    back = subprocess.run(
        ["git", "hash-object", "--path", path, path], cwd=clone, capture_output=True, text=True
    )
    return blob == back.stdout.strip(), back.stderr.strip()[:200]


def _porcelain(cwd: Path) -> list[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain"], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if line.strip()]


def _build(root: Path) -> Lab:
    (root / "bad.py").write_text(BAD)
    py = json.dumps(sys.executable)
    lab = Lab(
        root,
        tools=(
            f"bad: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'bad.py'))}, '{{m}}']}}\n"
            "nope: {kind: exec, argv: ['/nonexistent/prog']}\n"
        ),
    )
    attrs: dict[str, str] = {}
    for e in ENCS:
        v = f"e-{e.lower()}"
        lab.write(v, plan_text(v))
        attrs[v] = f"EXECUTION_LOG.md working-tree-encoding={e}\n"
    for v, (mode, tool, extra) in FAILS.items():
        lab.write(v, _bad_plan(v, mode, tool, extra))
        attrs[v] = BOTH
    for v in MID:
        lab.write(v, plan_text(v, extra_actions=_gate(v)))
    attrs.update(gr=ISO, wd=ISO, ctl=ISO)
    lab.write("nm", plan_text("nm", name="nm — named ✅"))
    lab.write("wy", plan_text("wy").replace("record that variant wy ran", "step — one"))
    lab.write("pa", _bad_plan("pa", "x — y", "bad"))
    lab.write("gp", plan_text("gp", extra_actions=_gate("gp", "hold — on")))
    lab.write("sj", plan_text("sj", name="sj a~b\\\\c"))
    lab.write("to", plan_text("to", params=ECHOED))
    captured = '    outputs:\n      - {name: v, path: "$.json.echo.note"}\n'
    lab.write("bo", plan_text("bo", params=ECHOED) + captured)
    lab.write("ref", plan_text("ref").replace("record that variant ref ran", REF_WHY))
    attrs.update(nm=ISO, wy=ISO, pa=ISO, gp=ISO, to=ISO, bo=BOTH, ref=ISO)
    attrs["sj"] = "EXECUTION_LOG.md working-tree-encoding=SHIFT-JIS\n"
    for v, text in attrs.items():
        (lab.repo / "plans" / v / ".gitattributes").write_text(text)
    lab.commit("agent plans")
    lab.run()
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("approve all", ALICE)
    # the agent's working tree while the run starts
    (lab.repo / "plans/wd/.gitattributes").unlink()
    (lab.repo / "plans/wa/.gitattributes").write_text(ISO)
    lab.run()
    seen: dict[str, Any] = {"paused": _porcelain(lab.repo)}
    (lab.repo / "plans/wd/.gitattributes").write_text(ISO)
    (lab.repo / "plans/wa/.gitattributes").unlink()
    # at the gate: the agent commits ga's attribute and removes gr's
    (lab.repo / "plans/ga/.gitattributes").write_text(ISO)
    (lab.repo / "plans/gr/.gitattributes").unlink()
    # (each commit names its paths: ``add -A`` would sweep a log ``git status`` lists)
    lab.commit("agent: attributes at the gate", AGENT, "plans/ga", "plans/gr")
    for v in [*MID, "gp"]:
        lab.set_status(v, "approved")
    lab.commit("approve gates", ALICE, *[f"plans/{v}/PLAN.yml" for v in [*MID, "gp"]])
    lab.run()
    seen["status"] = _porcelain(lab.repo)
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    seen["clone_status"] = _porcelain(clone)
    seen["giveback"] = {
        v: [_giveback(clone, f"plans/{v}/{f}") for f in ("EXECUTION_LOG.md", "PLAN.yml")]
        for v in VIDS
    }
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    # Alice's next, unrelated commit -a
    (lab.repo / "README").write_text("plans, by Alice\n")
    lab.git("commit", "-q", "-a", "-m", "alice: readme", who=ALICE)
    seen["commita"] = lab.git("show", "--name-only", "--format=", "HEAD").split()
    seen["calls"] = {v: (len(lab.calls(v)), len(lab.calls(f"{v}2"))) for v in VIDS}
    seen["blobs"] = {
        v: (lab.git("show", f"HEAD:plans/{v}/EXECUTION_LOG.md"),
            lab.git("show", f"HEAD:plans/{v}/PLAN.yml"))
        for v in MORE
    }  # fmt: skip
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-logenc", _build)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_ran(lab: Lab, vid: str) -> None:
    assert lab.seen["calls"][vid] == RAN[vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_clean(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    dirty = [s for s in seen["status"] + seen["clone_status"] if f"plans/{vid}/" in s]
    assert not dirty, dirty


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_giveback(lab: Lab, vid: str) -> None:
    got = lab.seen["giveback"][vid]  # type: ignore[attr-defined]
    assert all(ok for ok, _ in got), got


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_commita(lab: Lab, vid: str) -> None:
    files = lab.seen["commita"]  # type: ignore[attr-defined]
    assert not [f for f in files if f.startswith(f"plans/{vid}/")], files


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, {}))
def test_audit(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    runs = valid_runs(seen["report"], vid)
    assert len(runs) == (2 if vid in GATED else 1), runs
    assert len({r["approval_commit"] for r in runs}) == len(runs), runs
    named = [f for f in seen["report"].get("findings", []) if f"plans/{vid}" in json.dumps(f)]
    assert not named, named


@pytest.mark.parametrize("vid", cases(["gp", "ctl"], ["gp", "ctl"], {}))
def test_paused(lab: Lab, vid: str) -> None:
    """While the gate waits, the paused log reads clean."""
    paused = lab.seen["paused"]  # type: ignore[attr-defined]
    assert not [s for s in paused if f"plans/{vid}/" in s], paused


def test_audit_ok(lab: Lab) -> None:
    report = lab.seen["report"]  # type: ignore[attr-defined]
    assert report.get("ok") is True, report.get("findings")


def test_lossless(lab: Lab) -> None:
    """The escaped record reads back as the very text (r83logenc): the log's HTML references
    (as Markdown reads its inline text, ``html.unescape``; in a code block,
    ``logbook.unescaped``), the ``execution:`` block's YAML escapes (the value itself)."""
    from controller.execution.logbook import unescaped

    blobs = lab.seen["blobs"]  # type: ignore[attr-defined]
    log, _ = blobs["ref"]
    why = [html.unescape(line) for line in log.splitlines() if line.startswith("**Why:**")]
    assert log.isascii() and why == [f"**Why:** {REF_WHY}"], why
    for v in ("to", "bo"):
        log, _ = blobs[v]
        assert log.isascii() and "— tool ✅" in unescaped(log), log[:600]
    block = load_yaml(blobs["bo"][1])["execution"]
    assert blobs["bo"][1].isascii(), blobs["bo"][1]
    assert block["actions"][0]["outputs"] == {"v": "— tool ✅"}, block
