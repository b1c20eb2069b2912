"""Round 82, agent surfaces: plan SOURCES (``PLAN.md``/``PLAN.json``) whose folder is one
with another plan's or source's folder on some checkout, after round 81's fix ("the pass
never converts a plan source in a folder that is one with another plan's or source's
folder": the source's row waits ``E_PLAN_AMBIGUOUS`` and the PLAN.yml beside it is the
plan; docs/formats.md, ``convert`` and "In a plan folder: the daemon converts").

Lab (one, built once). Every source is the plan text of ``plan_text(<tag>)`` (a ``PLAN.md``
as plain YAML, a ``PLAN.json`` as its JSON), the tool ``rec`` recording its tag.
Pass 1 (the agent's commit A, plus uncommitted files: local mode adopts and converts them):
- ``ss``: ``plans/ss/PLAN.md`` and ``plans/SS/PLAN.json`` committed together (two SOURCES in
  case twins); ``nf``: ``plans/nfﬁ/PLAN.md`` and ``plans/nffi/PLAN.json`` (NFKC twins);
  ``sn``: ``plans/shortname-long/PLAN.md`` and ``plans/SHORTN~1/PLAN.json`` (an 8.3 short
  name); ``bt``: ``plans/bt\\/PLAN.md`` (a folder named ``bt`` plus a backslash) and
  ``plans/bt/PLAN.json``: each pair must convert NEITHER source, both rows
  ``E_PLAN_AMBIGUOUS``, nothing run;
- ``uc``: ``plans/UC/PLAN.json`` committed, ``plans/uc/PLAN.md`` written and never
  committed (its twin reached by an uncommitted source): at most one of the two converted,
  never both; at most one ever runs;
- ``uy``: ``plans/UY/PLAN.yml`` committed, ``plans/uy/PLAN.md`` uncommitted: the PLAN.yml is
  the plan (runs once after Alice's approval), the source never converted nor run;
- ``nt``: an ActionPlan ``plans/nt/PLAN.json`` with a ``nested_plan`` step 2 (converted to
  ``plans/nt/step-2/PLAN.yml``) beside the agent's committed ``plans/nt/STEP-2/PLAN.yml``
  (the nested plan's folder's twin): nothing written into a twin of a committed folder (no
  conversion, or no ``step-2`` beside ``STEP-2``), the inner tag never run on its own;
- ``rm``: ``plans/rm/PLAN.md`` and ``plans/RM/PLAN.json`` (held in pass 1); in pass 2 the
  agent removes ``plans/RM``: ``rm`` is converted exactly once, then runs once after
  Alice's approval (a control: a twin removed releases the source);
- ``lt``: ``plans/lt/PLAN.md`` alone (converted and frozen in pass 1); in pass 2 the agent
  commits the twin SOURCE ``plans/LT/PLAN.json``: ``LT`` never converted nor run, ``lt``
  runs at most once after Alice's approval;
- ``ly``: ``plans/ly/PLAN.md`` alone, converted in pass 1; pass 2 the agent commits
  ``plans/LY/PLAN.yml`` (a twin PLAN.yml after the conversion): neither runs (two plans,
  ``E_PLAN_AMBIGUOUS``: docs/plan-format.md, twin folders);
- controls: ``ok`` (``PLAN.md`` alone), ``okj`` (``PLAN.json`` alone), ``ux`` (an
  uncommitted ``PLAN.md`` alone), ``cy`` (``plans/cy/PLAN.md`` beside ``plans/CY/PLAN.yml``:
  the PLAN.yml is the plan): each converted (or CY frozen) and run exactly once after
  Alice's approval.
After pass 2 Alice approves every ``pending_approval`` row (``plangate approve``), two passes.

Variants per shape ``<s>``: ``<s>:convert`` (the convert commits in history are those
allowed), ``<s>:row`` (``status --json`` rows: the refused ones ``E_PLAN_AMBIGUOUS``),
``<s>:ran`` (what ``rec`` recorded: zero or once as above), ``<s>:show`` (``plangate show``
of the source or folder names ``E_PLAN_AMBIGUOUS`` for a held pair, shows the plan for a
control), ``<s>:readers`` (``validate``, ``hash`` and ``freeze --check`` of both sources of a
held pair name its code, or warn: never "valid" and a hash the controller never freezes),
``<s>:audit`` (the fresh clone's audit calls exactly the runs valid).

Seen (round 82): 13 ids, 3 classes, all fixed (2026-12-01, r82twinsrc): the daemon's source
finder holds a source whose folder is one with another folder holding a plan file or a source
(``SourceFinder.twins``, the history index's ``FolderTwins``; ``E_PLAN_AMBIGUOUS`` before
``E_UNSAFE_PATH``), so the pass, the status rows and ``check`` read one verdict; every file a
conversion writes is judged by it (``SourceFinder.twin_problem``: ``nt`` waits, nothing
written); the CLI's ``held_problem`` counts a twin folder's source as its PLAN.yml. Expectation
changed: ``nt:row``, with no conversion ``plans/nt/STEP-2`` is the agent's own plan, run once
on Alice's approval; ``plans/nt`` waits ``E_PLAN_AMBIGUOUS``. Was: nothing ran that should not,
the audit agreed. **The CLI's readers call a source valid whose twin folder holds another SOURCE**
(``ss``, ``nf``, ``sn``, ``bt`` ``:{readers,show}``, 8): with ``plans/ss/PLAN.md`` and
``plans/SS/PLAN.json`` committed together (or the NFKC pair ``nfﬁ``/``nffi``, the 8.3 pair
``shortname-long``/``SHORTN~1``, and ``plans/bt/PLAN.json`` beside the unsafe ``plans/bt\\``),
the pass logs ``plan_waiting`` "E_PLAN_AMBIGUOUS: plans/ss is one folder with plans/SS on
some checkout: PLAN.md is not converted" and never converts either, yet ``plangate
validate`` of each says "valid (sha256:...)", ``hash`` prints that hash, ``freeze --check``
"a plan source, not written: the controller converts it to PLAN.yml and freezes that as
sha256:..." and ``show`` prints the plan "waiting to be frozen" (exit 0, no warning). Round
81's fix covered a source beside a twin folder holding a PLAN.yml (``held``), not two
sources. Should (docs/formats.md, "Checking a source before committing it": "a source the
daemon would not convert (two sources, a twin, a claim of the plan file's place beside it)
is its folder's code, as its row says (``E_PLAN_AMBIGUOUS``; ``hash``, ``show`` and
``freeze`` answer the same"): ``E_PLAN_AMBIGUOUS`` from every reader. **Such a source has no
row** (``ss``, ``nf``, ``sn``, ``bt`` ``:row``, 4): ``plangate status`` (text and ``--json``)
lists neither folder of the pair at all (MCP ``status plans/ts``: ``E_USAGE`` "no plan ... on
the watched branch"), while the pass logs it waiting. Should (CHANGELOG round 81, docs/formats.md:
"the daemon leaves the source alone, its row waits ``E_PLAN_AMBIGUOUS``"; "``plangate
status`` shows ``cannot convert plans/x/PLAN.json: E_...``"): a row per source with the code.
**A conversion's nested plan is written into a twin folder** (``nt:convert``, 1): the agent
commits the ActionPlan ``plans/nt/PLAN.json`` (step 2 a ``nested_plan``) beside its own
``plans/nt/STEP-2/PLAN.yml``; the pass commits ``plangate: convert plans/nt`` with
``plans/nt/step-2/PLAN.yml``, a twin of ``STEP-2`` by the controller's own commit; then
``plans/nt`` is ``invalid`` (E_PLAN_AMBIGUOUS line 19) and both ``step-2``/``STEP-2`` are
held (nothing ran). Should (docs/formats.md: a source whose PLAN.yml "would be
``E_PLAN_AMBIGUOUS`` by the controller's own commit ... waits ``E_PLAN_AMBIGUOUS`` and
nothing is written into the folder"; CHANGELOG round 81 "never converted"): no conversion,
the source waiting with the code.
Held: no pair of twin sources was converted or run (case, NFKC, 8.3, backslash); an
uncommitted source beside a committed twin source (``uc``) or PLAN.yml (``uy``) was never
converted, the committed one alone ran once; a twin removed (``rm``) released the source,
converted exactly once and run once; a twin source (``lt``) or PLAN.yml (``ly``) arriving
after the conversion was never converted, ``lt`` ran once, ``ly``/``LY`` both held; the
controls (``ok``, ``okj``, ``ux``, ``cy``) converted (``CY`` frozen) and ran once; the
fresh-clone audit agreed everywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 82: {what}")


HELD_PAIRS = {  # shape: ((folder, file, tag), (folder, file, tag))
    "ss": (("ss", "PLAN.md", "ss"), ("SS", "PLAN.json", "ss-b")),
    "nf": (("nfﬁ", "PLAN.md", "nf"), ("nffi", "PLAN.json", "nf-b")),
    "sn": (("shortname-long", "PLAN.md", "sn"), ("SHORTN~1", "PLAN.json", "sn-b")),
    "bt": (("bt\\", "PLAN.md", "bt"), ("bt", "PLAN.json", "bt-b")),
}
SHAPES = [*HELD_PAIRS, "uc", "uy", "nt", "rm", "lt", "ly", "ok", "okj", "ux", "cy"]
CONTROLS = {"ok": "ok", "okj": "okj", "ux": "ux", "cy": "cy-b", "rm": "rm", "uy": "uy-b"}


def _json(tag: str) -> str:
    return json.dumps(load_yaml(plan_text(tag)), indent=2) + "\n"


def _src(lab: Lab, folder: str, name: str, tag: str) -> None:
    lab.write(folder, _json(tag) if name == "PLAN.json" else plan_text(tag), name)


def _ap(tag: str) -> str:
    inner = {
        "plan_version": 1,
        "plan_id": f"plan:{tag}-inner",
        "title": f"{tag}-inner",
        "workspace_id": "/w",
        "steps": [
            {"step_number": 1, "action": {"type": "rec", "tag": f"{tag}-inner"}, "description": "i"}
        ],
    }
    outer = {
        "plan_version": 1,
        "plan_id": f"plan:{tag}",
        "title": tag,
        "workspace_id": "/w",
        "steps": [
            {"step_number": 1, "action": {"type": "rec", "tag": tag}, "description": "first"},
            {
                "step_number": 2,
                "action": {"type": "nested_plan", "plan": inner},
                "description": "n",
            },
        ],
    }
    return json.dumps(outer, indent=2) + "\n"


def _out(done: subprocess.CompletedProcess[str]) -> str:
    return f"{done.returncode} {done.stdout}{done.stderr}"[-1500:]


def _rows(lab: Lab) -> dict[str, Any]:
    done = lab.cli("status", "--json", "--config", str(lab.config))
    return {r["plan"]: r for r in json.loads(done.stdout)}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    cfg = str(lab.config)
    for pair in HELD_PAIRS.values():
        for folder, name, tag in pair:
            _src(lab, folder, name, tag)
    _src(lab, "UC", "PLAN.json", "uc-b")
    lab.write("UY", plan_text("uy-b"))
    lab.write("nt", _ap("nt"), "PLAN.json")
    lab.write("nt/STEP-2", plan_text("nt-b"))
    _src(lab, "rm", "PLAN.md", "rm")
    _src(lab, "RM", "PLAN.json", "rm-b")
    _src(lab, "lt", "PLAN.md", "lt")
    _src(lab, "ly", "PLAN.md", "ly")
    _src(lab, "ok", "PLAN.md", "ok")
    _src(lab, "okj", "PLAN.json", "okj")
    _src(lab, "cy", "PLAN.md", "cy")
    lab.write("CY", plan_text("cy-b"))
    lab.commit("agent: sources", AGENT)
    _src(lab, "uc", "PLAN.md", "uc")  # never committed
    _src(lab, "uy", "PLAN.md", "uy")
    _src(lab, "ux", "PLAN.md", "ux")
    got: dict[str, Any] = {"pass1": _out(lab.run())}
    got["rows1"] = _rows(lab)
    shows: dict[str, str] = {}
    for shape, pair in HELD_PAIRS.items():
        folder, name, _ = pair[0]
        shows[shape] = _out(
            lab.cli("show", "--config", cfg, str(lab.repo / "plans" / folder / name))
        )
        shows[shape + "-b"] = _out(
            lab.cli("validate", "--config", cfg, str(lab.repo / "plans" / pair[1][0] / pair[1][1]))
        )
    got["shows"] = shows
    readers: dict[str, list[str]] = {}
    for shape, pair in HELD_PAIRS.items():
        readers[shape] = [
            _out(lab.cli(*verb, "--config", cfg, str(lab.repo / "plans" / folder / name)))
            for folder, name, _ in pair
            for verb in (("validate",), ("hash",), ("freeze", "--check"))
        ]
    got["readers"] = readers
    # pass 2: the twin removed, the late twins
    lab.git("rm", "-rq", "plans/RM")
    _src(lab, "LT", "PLAN.json", "lt-b")
    lab.write("LY", plan_text("ly-b"))
    lab.commit("agent: late twins, a twin removed", AGENT)
    got["pass2"] = _out(lab.run())
    rows = _rows(lab)
    got["rows2"] = rows
    approved = {}
    for plan, row in rows.items():
        if row.get("status") == "pending_approval":
            approved[plan] = _out(
                subprocess.run(
                    [lab_cli(), "approve", "--config", cfg, plan],
                    cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
                )
            )  # fmt: skip
    got["approved"] = approved
    lab.run()
    lab.run()
    got["rows"] = _rows(lab)
    tags = ["ss", "ss-b", "nf", "nf-b", "sn", "sn-b", "bt", "bt-b", "uc", "uc-b", "uy", "uy-b"]
    tags += ["nt", "nt-inner", "nt-b", "rm", "rm-b", "lt", "lt-b", "ly", "ly-b"]
    tags += ["ok", "okj", "ux", "cy", "cy-b"]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["converts"] = lab.git(
        "log", "--format=%s", "--author=plangate", "--grep=^plangate: convert"
    ).splitlines()
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans").splitlines()
    got["dirty"] = lab.git("status", "--porcelain", "--untracked-files=all").strip()
    showok = {}
    for shape in ("ok", "okj", "cy", "ux"):
        folder = "CY" if shape == "cy" else shape
        showok[shape] = _out(lab.cli("show", "--config", cfg, str(lab.repo / "plans" / folder)))
    got["showok"] = showok
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"])
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def lab_cli() -> str:
    from mcpkit import PLANGATE

    return PLANGATE


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r82-surface-twinsources", _build)


IDS = [f"{s}:{w}" for s in SHAPES for w in ("convert", "row", "ran", "audit")]
IDS += [f"{s}:show" for s in [*HELD_PAIRS, "ok", "okj", "cy", "ux"]]
IDS += [f"{s}:readers" for s in HELD_PAIRS]
BROKEN: dict[str, Any] = {}  # round 82's 13 fixed (2026-12-01, r82twinsrc)


def _converted(got: dict[str, Any], folder: str) -> bool:
    return f"plangate: convert plans/{folder}" in got["converts"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_sources_in_twin_folders(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    shape, what = vid.split(":")
    calls, rows = got["calls"], got["rows"]
    if what == "convert":
        if shape in HELD_PAIRS:
            (a, _, _), (b, _, _) = HELD_PAIRS[shape]
            assert not _converted(got, a) and not _converted(got, b), got["converts"]
        elif shape == "uc":
            assert not (_converted(got, "uc") and _converted(got, "UC")), got["converts"]
        elif shape == "uy":
            assert not _converted(got, "uy"), got["converts"]
        elif shape == "nt":
            twins = [p for p in got["tree"] if p.lower().startswith("plans/nt/step-2/")]
            assert len({p.split("/")[2] for p in twins}) == 1, got["tree"]
        elif shape == "rm":
            assert got["converts"].count("plangate: convert plans/rm") == 1, got["converts"]
            assert not _converted(got, "RM"), got["converts"]
        elif shape in ("lt", "ly"):
            assert _converted(got, shape) and not _converted(got, shape.upper()), got["converts"]
        elif shape == "cy":
            assert not _converted(got, "cy"), got["converts"]
        else:
            assert got["converts"].count(f"plangate: convert plans/{shape}") == 1, got
    elif what == "row":
        if shape in HELD_PAIRS:
            for folder, _, _ in HELD_PAIRS[shape]:
                row = rows.get(f"plans/{folder}") or {}
                assert "E_PLAN_AMBIGUOUS" in json.dumps(row, ensure_ascii=False), (folder, rows)
                assert row.get("status") != "completed", row
        elif shape in ("lt", "ly"):
            twin = rows.get(f"plans/{shape.upper()}") or {}
            assert twin.get("status") != "completed", rows
            if shape == "ly":
                assert "E_PLAN_AMBIGUOUS" in json.dumps(rows.get("plans/ly")), rows.get("plans/ly")
        elif shape in CONTROLS:
            folder = {"cy": "CY", "uy": "UY"}.get(shape, shape)
            assert (rows.get(f"plans/{folder}") or {}).get("status") == "completed", rows
        elif shape == "uc":
            done = [
                p
                for p in ("plans/uc", "plans/UC")
                if (rows.get(p) or {}).get("status") == "completed"
            ]
            assert len(done) <= 1, rows
        else:  # nt: the parent waits; a nested twin written by a conversion never runs
            mine = {p: r for p, r in rows.items() if p.startswith("plans/nt")}
            assert (mine.get("plans/nt") or {}).get("status") != "completed", mine
            if "plans/nt/step-2" in mine:  # the conversion wrote the twin: neither runs
                assert all(r.get("status") != "completed" for r in mine.values()), mine
            else:  # STEP-2 is the agent's own plan (Alice approved it: it may run, r82twinsrc)
                assert "E_PLAN_AMBIGUOUS" in json.dumps(mine.get("plans/nt")), mine
    elif what == "ran":
        if shape in HELD_PAIRS:
            (_, _, a), (_, _, b) = HELD_PAIRS[shape]
            assert calls[a] == 0 == calls[b], calls
        elif shape == "uc":
            assert calls["uc"] + calls["uc-b"] <= 1, calls
        elif shape == "nt":
            assert calls["nt-b"] == 0 or calls["nt-inner"] == 0, calls
            assert calls["nt"] <= 1 and calls["nt-b"] <= 1, calls
        elif shape == "lt":
            assert calls["lt"] <= 1 and calls["lt-b"] == 0, calls
        elif shape == "ly":
            assert calls["ly"] == 0 == calls["ly-b"], calls
        elif shape in CONTROLS:
            assert calls[CONTROLS[shape]] == 1, calls
            others = {"cy": "cy", "uy": "uy", "rm": "rm-b"}.get(shape)
            if others:
                assert calls[others] == 0, calls
    elif what == "readers":
        for text in got["readers"][shape]:
            refused = not text.startswith("0 ")
            assert refused or "E_PLAN_AMBIGUOUS" in text or "warning" in text, text
            assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text or "warning" in text, text
    elif what == "show":
        text = got["shows"].get(shape) if shape in HELD_PAIRS else got["showok"][shape]
        if shape in HELD_PAIRS:
            for said in (text, got["shows"][shape + "-b"]):
                assert "E_PLAN_AMBIGUOUS" in said or "E_UNSAFE_PATH" in said, said
        else:
            assert text.startswith("0 "), text
    else:
        ran = sorted(p for p, r in rows.items() if r.get("status") == "completed")
        assert got["valid"] == ran and got["audit"] == ran, (got["audit"], ran)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk82b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r82tw-", dir="/tmp/atk82b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
