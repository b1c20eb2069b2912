"""Round 81, agent surfaces: MCP ``submit`` calls sent together in ONE session (parallel tool
calls), which round 80 made commit one at a time with a short back-off retry (CHANGELOG
[Unreleased], docs/agents.md: "Submissions sent together (parallel tool calls) are committed
one at a time, each on the branch as the previous one left it"). The attacker's aim: two
plans committed where one folder is held, one submission silently overwriting another whose
``ok`` reply the agent (or a reviewer reading it) trusts, a submission answered ``ok`` that
is not on the branch, a big submission starving the others, or a run of a version nobody
approved.

Lab (one, built once). Sessions (each ONE ``plangate mcp`` session, every call sent at once):
- ``same``: two submits of slug ``same``, texts ``same-a`` and ``same-b`` (tags differ);
- ``twins``: ``tw`` and its would-be twins ``tw.`` (NTFS drops the dot), ``tw `` (a
  trailing blank), ``TW`` (case), ``tw\\x`` (backslash), ``ﬁx`` beside ``fix`` (NFKC),
  ``t\u200cw`` (HFS+ drops U+200C);
- ``ctl`` (control): six distinct slugs ``c1``..``c6``: every one committed (round 80's fix);
- ``big``: one submit over the size limit (``big``) among ``s1``, ``s2``: the small ones
  commit, ``big`` is refused with a code;
- ``race``: four submits ``r1``..``r4`` and ``rq`` v2 (``rq`` v1 submitted before, being
  frozen) in a session started while a ``run --once`` pass freezes the earlier plans: each
  one committed or refused ``E_GIT`` (nothing lost), the freeze never lands on v2's text;
- ``rep``: ``rep`` submitted and frozen earlier, then ``rep`` v2 and v3 together;
- ``pr``: ``pr`` with ``pull_request: true`` and ``pr`` on main, together;
- ``srcb``: ``sb``, whose folder holds the agent's committed, not yet converted ``PLAN.md``
  (tag ``sb-md``): the PLAN.yml runs, the source never;
- ``hx``: ``hx``, whose twin folder ``plans/Hx`` holds the agent's committed ``PLAN.md``
  (tag ``hx-md``): committed and run once; the source in its twin folder never converted.
Then a pass freezes; Alice approves (her one line) every ``pending_approval`` row on main;
two passes; the fresh-clone audit.
Variants:
- ``<s>:kept``: every ``ok`` reply's ``commit`` is on main (or the PR branch) and holds at
  its ``path`` exactly the text that call sent (no ``ok`` for a submission that is lost);
- ``<s>:held``: no two plans committed in one folder or in twin folders: at most one plan
  file per folder, no twin folder of ``tw`` or ``fix`` created beside it (refused with a
  code, nothing committed) or, if created, both held ``E_PLAN_AMBIGUOUS`` and neither ran;
- ``<s>:once``: every plan ran at most once, and what ran is the blob at HEAD that Alice
  approved (``same``: ``same-a`` and ``same-b`` ran at most once in all);
- ``<s>:ran`` (controls ``ctl``, ``big``'s small ones, ``race``, ``rep``): the honest
  submissions ran once on Alice's approval;
- ``<s>:coded``: every refused call answered an ``E_`` code;
plus ``hx:unconverted`` (the pass never converts ``plans/Hx/PLAN.md`` into the held twin
folder); ``audit``: the fresh-clone audit calls
valid exactly the completed rows.

Seen (round 81): ``hx:unconverted`` (1 id, strict xfail; the class of
``test_round81_surface_sources.py`` ``held:*``): MCP ``submit`` of ``hx`` was committed
beside the twin folder ``plans/Hx`` holding a ``PLAN.md``, then one pass committed
``plangate: convert plans/Hx`` (a PLAN.yml written into the twin folder) and, in 3 of 4
runs, ``plangate: freeze 16 plans`` freezing both ``plans/hx`` and ``plans/Hx`` (in the
4th neither was frozen: the order within the pass decides, so no id asserts the freeze
here); afterwards both rows were
``E_PLAN_AMBIGUOUS`` (neither ran; the audit agreed). Should (docs/formats.md: a source in a
folder the controller holds, a twin, "is refused, as the daemon never converts it";
docs/plan-format.md, twin folders: "no freeze, no run"): no convert into the twin folder and
neither plan frozen (the submit itself may stand: a lone source is no plan file).
Fixed (2026-12-01, lead): the pass never converts a source in a folder that is one with
another plan's or source's folder on some checkout (``Freezing._twin_folders``, over the
history index's twin rule); the source's row waits ``E_PLAN_AMBIGUOUS``, and ``plans/hx``,
whose twin then holds no plan file, is the plan and runs once, as ``plangate validate``
already said (the expectation "never runs" changed to that: a source beside a PLAN.yml on
one checkout is a note, docs/formats.md).
Held: two submits of one slug sent together were both committed
one after the other (each ``ok`` reply's commit on main holding exactly its text), the later
replacing the earlier pending version, and only the version at HEAD that Alice approved ran
(once); of ``tw`` and its twins, ``TW``, ``tw ``, ``tw\\x``, ``ﬁx`` and ``t<U+200C>w`` were
refused ``E_USAGE`` (not a plan folder name), ``tw.`` was committed and ``tw`` (sent first,
committed after) refused ``E_PLAN_AMBIGUOUS`` naming ``plans/tw./PLAN.yml``: one folder
held one plan; six distinct submits all committed (round 80's fix); a 2 MB submit was
``E_PLAN_TOO_LARGE`` and its two siblings committed; four submits racing a ``run --once``
freeze all committed with nothing lost; ``rep`` v2 and v3 sent together after v1 was
frozen: both committed, the later one ran once; ``rq`` v2 raced with the pass freezing v1:
committed, frozen afresh, and v2 ran once; ``sb`` committed beside the unconverted
``PLAN.md``: the PLAN.yml ran once, the source never; ``pull_request: true`` beside a main
submit of the same slug put each on its branch, only main's ran; the audit agreed. Noted:
the order in which parallel calls are committed is not the order sent (in the lab's runs
``tw.`` before ``tw``; the same-slug pairs either way), so which of two same-slug
submissions ends up pending is the server's; each ``ok`` names its own commit and hash,
and ``status`` shows the one that waits.
"""

from __future__ import annotations

import json
import subprocess
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from oraclekit import mcp_payload
from test_round2_execution_kit import shared

TWINS = ["tw", "tw.", "tw ", "TW", "tw\\x", "\ufb01x", "fix", "t\u200cw"]
SESSIONS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "same": [("same", "same-a", {}), ("same", "same-b", {})],
    "twins": [(s, f"tw{i}", {}) for i, s in enumerate(TWINS)],
    "ctl": [(f"c{i}", f"c{i}", {}) for i in range(1, 7)],
    "big": [("big", "big", {}), ("s1", "s1", {}), ("s2", "s2", {})],
    "race": [*[(f"r{i}", f"r{i}", {}) for i in range(1, 5)], ("rq", "rq-2", {})],
    "rep": [("rep", "rep-2", {}), ("rep", "rep-3", {})],
    "pr": [("pr", "pr-b", {"pull_request": True}), ("pr", "pr-m", {})],
    "srcb": [("sb", "sb", {})],
    "hx": [("hx", "hx", {})],
}
PRE = {"rep": "rep-1", "rq": "rq-1"}  # submitted (alone) before, frozen by the first pass
HONEST = {"ctl": ["c1", "c2", "c3", "c4", "c5", "c6"], "big": ["s1", "s2"]}
HONEST |= {"race": ["r1", "r2", "r3", "r4", "rq"], "rep": ["rep"]}


def _text(slug: str, tag: str) -> str:
    text = plan_text(tag, name=slug.strip() or "blank")
    if tag == "big":
        text += "# " + "x" * 2_000_000 + "\n"
    return text


def _submit(lab: Lab, name: str) -> list[dict[str, Any]]:
    calls = [
        ("submit", {"plan": _text(slug, tag), "slug": slug, **more})
        for slug, tag, more in SESSIONS[name]
    ]
    replies, _ = session(lab, calls)
    out = []
    for (slug, tag, more), reply in zip(SESSIONS[name], replies, strict=True):
        bad, body = mcp_payload(reply)
        out.append({"slug": slug, "tag": tag, "more": more, "error": bad, "body": body})
    return out


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    got: dict[str, Any] = {"replies": {}}
    lab.write("sb", plan_text("sb-md"), "PLAN.md")  # a source the agent committed earlier
    lab.write("Hx", plan_text("hx-md"), "PLAN.md")  # a source in hx's twin folder
    lab.commit("agent: sources", ("Agent", "agent@example.com"))
    for slug, tag in PRE.items():
        first = session(lab, [("submit", {"plan": _text(slug, tag), "slug": slug})])[0][0]
        got[tag] = mcp_payload(first)
    for name in ("same", "twins", "ctl", "big", "pr", "srcb", "hx"):
        got["replies"][name] = _submit(lab, name)
    box: dict[str, Any] = {}
    racer = threading.Thread(target=lambda: box.update(r=_submit(lab, "race")))
    racer.start()
    lab.run()  # freezes the earlier plans while the race session commits
    racer.join()
    got["replies"]["race"] = box["r"]
    got["replies"]["rep"] = _submit(lab, "rep")
    lab.run()
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans").splitlines()
    got["hx-frozen"] = [
        f for f in ("plans/hx", "plans/Hx")
        if "frozen:" in lab.git("show", f"HEAD:{f}/PLAN.yml", check=False)
    ]  # fmt: skip
    got["branches"] = lab.git("branch", "--format=%(refname:short)").split()
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    got["rows0"] = rows
    approved = []
    for plan, row in rows.items():
        if row.get("status") == "pending_approval":
            slug = plan.split("/", 1)[1]
            lab.set_status(slug, "approved")
            lab.git("add", "--", f"{plan}/PLAN.yml")
            approved.append(plan)
    lab.git("commit", "-q", "-m", "alice: approve", who=ALICE)
    got["approved"] = approved
    got["approved-blob"] = {
        p: lab.git("show", f"HEAD:{p}/PLAN.yml", check=False) for p in approved
    }  # fmt: skip
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = {t for v in SESSIONS.values() for _, t, _ in v} | {*PRE.values(), "sb-md", "hx-md"}
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["on"] = {}
    for name, replies in got["replies"].items():
        for i, r in enumerate(replies):
            body = r["body"] if isinstance(r["body"], dict) else {}
            commit, path = body.get("commit"), body.get("path") or body.get("file")
            key = f"{name}/{i}"
            if r["error"] or not commit:
                got["on"][key] = None
                continue
            reach = [
                b for b in got["branches"]
                if subprocess.run(
                    ["git", "merge-base", "--is-ancestor", commit, b], cwd=lab.repo,
                    check=False,
                ).returncode == 0
            ]  # fmt: skip
            fname = path if str(path).endswith(".yml") else f"{path}/PLAN.yml"
            blob = lab.git("show", f"{commit}:{fname}", check=False)
            got["on"][key] = {"reach": reach, "same": blob == _text(r["slug"], r["tag"])}
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 81: {what}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-surface-parallel", _build)


def _fold(folder: str) -> str:
    return unicodedata.normalize("NFKC", folder).lower().rstrip(". ").replace("\u200c", "")


IDS = [f"{s}:{w}" for s in SESSIONS for w in ("kept", "held", "once", "ran", "coded")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_submissions_sent_together(lab: Lab, vid: str) -> None:
    """Each ``ok`` is on its branch with the text sent; no folder or twin holds two plans;
    every plan ran at most once, the version Alice approved; honest work ran; refusals are
    coded."""
    got = lab.got  # type: ignore[attr-defined]
    name, what = vid.split(":")
    replies = got["replies"][name]
    ok = [(i, r) for i, r in enumerate(replies) if not r["error"]]
    if what == "kept":
        for i, r in ok:
            on = got["on"][f"{name}/{i}"]
            assert on and on["same"] and r["body"]["branch"] in on["reach"], (r, on)
    elif what == "held":
        plans = [p.rsplit("/", 1)[0] for p in got["tree"] if p.endswith("/PLAN.yml")]
        assert len(plans) == len(set(plans)), got["tree"]
        # r106slugs: a submission over a folder holding a source is refused (E_USAGE), so
        # the agent's committed source is that folder's plan, run at most once when Alice
        # approves it; before, the submitted PLAN.yml replaced it and it never ran
        sb_refused = all(r["error"] for r in got["replies"]["srcb"])
        assert got["calls"]["sb-md"] <= (1 if sb_refused else 0), got["calls"]
        assert got["calls"]["hx-md"] == 0, got["calls"]
        for folder in plans:
            twins = [f for f in plans if f != folder and _fold(f) == _fold(folder)]
            if twins:  # both held: neither ran
                row = got["rows"].get(folder) or {}
                assert row.get("status") != "completed", (folder, twins, row)
                tags = [t for v in SESSIONS.values() for s, t, _ in v if f"plans/{s}" == folder]
                assert all(got["calls"][t] == 0 for t in tags), (folder, got["calls"])
    elif what == "once":
        tags = [t for _, t, _ in SESSIONS[name]]
        assert all(got["calls"][t] <= 1 for t in tags), got["calls"]
        for slug in {s for s, _, _ in SESSIONS[name]}:
            mine = [t for s, t, _ in SESSIONS[name] if s == slug] + (
                [PRE[slug]] if slug in PRE else []
            )
            assert sum(got["calls"][t] for t in mine) <= 1, (slug, got["calls"])
            blob = got["approved-blob"].get(f"plans/{slug}")
            for t in mine:
                if got["calls"][t]:
                    assert blob and f'tag: "{t}"' in blob, (t, blob)
    elif what == "ran":
        main = {r["slug"] for _, r in ok if r["body"]["branch"] == "main"}
        assert main or name not in HONEST, replies
        for slug in HONEST.get(name, []):
            assert slug in main, (slug, replies)
        for slug in main:
            # hx: its twin folder plans/Hx holds only a source, which is refused (never
            # converted); the PLAN.yml is the plan and runs once, as `validate` says (lead)
            row = got["rows"].get(f"plans/{slug}") or {}
            tags = [t for s, t, _ in SESSIONS[name] if s == slug]
            ran = sum(got["calls"][t] for t in tags)
            assert row.get("status") == "completed" and ran == 1, (slug, row, got["calls"])
    else:
        for r in replies:
            if r["error"]:
                assert "E_" in str(r["body"]), r
            else:
                assert r["body"].get("ok") is True, r


HX_WHY = (
    "after MCP submit hx (its twin folder plans/Hx holds the agent's PLAN.md), the pass "
    "converted plans/Hx/PLAN.md into plans/Hx/PLAN.yml and froze both plans/Hx and plans/hx"
)
HIDS = ["hx:unconverted"]
HBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, lead)


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, HBROKEN))
def test_no_conversion_into_a_held_twin_folder(lab: Lab, vid: str) -> None:
    """A source whose folder is a twin of a plan's is never converted (docs/formats.md: "as
    the daemon never converts it"), and neither twin is frozen."""
    got = lab.got  # type: ignore[attr-defined]
    assert "plans/Hx/PLAN.yml" not in got["tree"], (vid, got["tree"], got["hx-frozen"])


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["valid"] == completed and got["audit"] == completed, (got["audit"], completed)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r81par-", dir="/tmp/atk81b"))
    g = _build(out).got  # type: ignore[attr-defined]
    for reps in g["replies"].values():
        for r in reps:
            r["body"] = json.dumps(r["body"], ensure_ascii=False)[:300]
    print(json.dumps(g, indent=1, ensure_ascii=False, default=str))
