"""Round 76, bursts: round 75's plain status change decided on the parse (docs/approvals.md:
"the two texts differ only inside the span of the ``plan.status`` value, the new value is one
word (plain or quoted) and both read as the same document apart from it"; "Any byte outside
that span (a comment, the key respelled, a blank) is still its committer's writing"), at its
edges.

Lab (one, local mode, fake commit dates). The agent commits one folder per variant (a
one-action plan calling ``rec`` with the folder's name); Bob (an allowed approver) commits
``bobauth``. One pass freezes them. Then, in this order, one commit each: Alice adds a comment
line to ``authcmt`` (no status change); Bob changes ``bobcontent``'s task (a new version he
wrote); Bob changes ``bobsame``'s task AND sets its status ``approved`` in one commit. A pass
freezes the new versions. Alice then edits every hand variant's working tree and commits them
as one approval; ``plangate approve`` runs as Alice on the ``cli*`` folders and as Bob on
``bobauth``; two passes; a fresh-clone ``plangate audit --json``.

Variants (agent layout / what the approver's commit does):

CONTROLS (must run exactly once, the audit lists one valid run):
- ``hand``: Alice rewrites ``status: pending_approval`` as ``status: approved``;
- ``cli``: ``plangate approve`` as Alice;
- ``keepcmt``: the agent's line has ``# review me``; Alice changes the value, keeps the comment;
- ``dropcmt``: the same agent line; Alice rewrites the line as ``status: approved`` (no comment);
- ``dqnew`` / ``sqnew``: Alice writes ``"approved"`` / ``'approved'`` (one word, quoted);
- ``dqold``: the agent wrote ``"pending_approval"``; Alice changes the word inside the quotes;
- ``flowp``: the agent's ``plan:`` is a flow mapping; Alice changes the value in place;
- ``clicmt`` / ``cliq`` / ``cliflow``: ``plangate approve`` on the commented, quoted and flow
  layouts;
- ``bobcontent``: Bob wrote the current version (a task change); Alice approves by hand.

ATTACKS (must never run; the approval refused with its code, or the file unreadable):
- ``addcmt``: ``status: approved  # lgtm`` (a comment added beside the value);
- ``chgcmt``: the agent's ``# review me`` becomes ``# reviewed`` with the value;
- ``cmtelse``: the value changed and a comment line added at the top of the file;
- ``blank2``: ``status:  approved`` (a blank added before the value);
- ``trail``: ``status: approved `` (a blank after it);
- ``tag``: ``status: !!str approved``; ``anchor``: ``status: &a approved``;
  ``alias``: ``status: *a`` (no anchor);
- ``multidoc``: the value changed and a second document (another plan) appended after
  ``---``; ``emptydoc``: the value changed and a bare ``---`` appended;
- ``dupkey``: the value changed and a second ``status: approved`` line added;
- ``dupfirst``: a ``status: approved`` line inserted BEFORE the untouched pending one;
- ``flowsw``: in the flow layout, the value replaced by ``approved, task: "evil"``
  (the span swallows another key);
- ``mlval``: the value changed to a two-line plain scalar (``approved`` and a deeper line);
- ``authcmt``: Alice's earlier comment-only commit made her a writer; her later plain
  approval must be refused;
- ``bobsame``: Bob's content change and status ``approved`` in one commit (an author's
  content change passed off as an approval);
- ``bobauth``: Bob wrote the plan; ``plangate approve`` as Bob must refuse;
- ``agent``: the agent (no approver) changes the value in place himself.

Per variant: ``ran`` (the ``rec`` calls: 1 for a control, 0 for an attack), ``audit`` (the
fresh clone's valid runs agree), ``said`` (a control's row is no refusal; an attack's plan
carries a refusal code, an ``unreadable`` row, or the CLI refused with ``E_SELF_APPROVAL``).
More attacks added once the blanks ran: ``nlcmt`` (the value's span replaced by ``approved``,
a newline and an indented comment line), ``blankline`` (``approved`` and a newline: a blank
line after it), ``tabpre`` (``status: <TAB>approved``), ``nlact`` (``approved``, a newline and
a commented-out action ``#  - {id: 2, tool: rec, ...}``: round 71's wrapped action),
``crcmt``/``cract`` (the same comment or action after a lone CR: one line to git, two to
YAML), ``trailtab`` (``approved`` and a tab).

Seen (round 76): BROKEN (12 ids, 1 class; nothing ran that changed what the plan does, the
fresh-clone audit agrees with the controller). **A blank or a tab beside the new status value
is read as a plain status change** (``{blank2,trail,tabpre,trailtab}-{ran,audit,said}``):
Alice's approval ``status:  approved`` (two blanks), ``status: approved `` (a trailing blank),
``status: <TAB>approved`` or ``status: approved<TAB>`` is not her writing; her approval runs
the plan once and the audit calls it valid. Should (docs/approvals.md: "Any byte outside that
span (a comment, the key respelled, a blank) is still its committer's writing"; "A plain
status change is one line rewritten as ``status: approved``"): refused ``E_SELF_APPROVAL`` as
the comment, blank-line and other variants are; the bytes all sit where the OLD value's span
was, so the check seems to compare against the old span only, not the new value's. Low
impact (whitespace only; no comment or content slipped in that way: ``nlcmt``, ``blankline``,
``nlact``, ``crcmt``, ``cract`` held), but the documented rule is not what is enforced.
Fixed 2026-12-01 (r76statusblank): the parse check (``yamlio.scalar_alone_changed``) already
refused them; the bytes passed through the one-line rule beside it (``Lifecycle``'s
``_status_line_rewritten``), which took blanks and tabs around the key, the colon and the
value. The rewritten line must now read exactly ``status: <word>`` (plain or quoted, one blank
after the colon, nothing after the word but its line end), the old line's indent kept, in the one
function the controller, a rebuilt index, the audit and ``plangate approve``'s check share
(index version 76): the 12 ids are refused ``E_SELF_APPROVAL``, never run, the audit agrees
(markers off); every control still runs once.
HELD: every control ran exactly once (hand edit, ``plangate approve``, a comment kept or
dropped, ``"approved"``/``'approved'``, a quoted old value, a flow ``plan:`` mapping, the CLI
on the commented/quoted/flow layouts, Alice approving Bob's new version); ``addcmt``,
``chgcmt``, ``cmtelse``, ``nlcmt``, ``blankline``, ``nlact``, ``crcmt``, ``cract``,
``authcmt`` refused ``E_SELF_APPROVAL``; ``tag``, ``anchor``, ``alias``, ``multidoc``,
``emptydoc``, ``dupkey``, ``dupfirst``, ``mlval`` never ran (unreadable or refused);
``flowsw`` never ran; ``bobsame`` (an author's content change with its approval) never ran;
``bobauth`` refused by the CLI ``E_SELF_APPROVAL``; the agent's own status edit never ran;
``rec`` for ``other`` (the second document's plan) never ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, identity, load_yaml, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

CONTROLS = ["hand", "cli", "keepcmt", "dropcmt", "dqnew", "sqnew", "dqold", "flowp", "clicmt",
            "cliq", "cliflow", "bobcontent"]  # fmt: skip
ATTACKS = ["addcmt", "chgcmt", "cmtelse", "blank2", "trail", "tag", "anchor", "alias",
           "multidoc", "emptydoc", "dupkey", "dupfirst", "flowsw", "mlval", "authcmt",
           "bobsame", "bobauth", "agent", "nlcmt", "blankline", "tabpre", "nlact", "crcmt",
           "cract", "trailtab"]  # fmt: skip
CLI = {"cli": ALICE, "clicmt": ALICE, "cliq": ALICE, "cliflow": ALICE, "bobauth": BOB}
PEND = "status: pending_approval"


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 76: {what}")


BROKEN: dict[str, object] = {}


def layout(slug: str) -> str:
    base = plan_text(slug)
    if slug in ("keepcmt", "dropcmt", "chgcmt", "clicmt"):
        return base.replace(PEND, PEND + "  # review me")
    if slug in ("dqold", "cliq"):
        return base.replace(PEND, 'status: "pending_approval"')
    if slug in ("flowp", "cliflow", "flowsw"):
        head, rest = base.split("available_tools:", 1)
        doc = load_yaml(head)["plan"]
        inner = ", ".join(f"{k}: {json.dumps(v) if k != 'status' else v}" for k, v in doc.items())
        return "plan: {" + inner + "}\navailable_tools:" + rest
    return base


def hand_edit(slug: str, text: str) -> str | None:
    """The approver's edit of the (frozen) working tree; None: no hand edit."""
    one = {
        "hand": ("pending_approval", "approved"),
        "keepcmt": ("pending_approval", "approved"),
        "dropcmt": (PEND + "  # review me", "status: approved"),
        "dqnew": ("pending_approval", '"approved"'),
        "sqnew": ("pending_approval", "'approved'"),
        "dqold": ('"pending_approval"', '"approved"'),
        "flowp": ("pending_approval", "approved"),
        "bobcontent": ("pending_approval", "approved"),
        "addcmt": ("pending_approval", "approved  # lgtm"),
        "chgcmt": ("pending_approval  # review me", "approved  # reviewed"),
        "blank2": (PEND, "status:  approved"),
        "trail": (PEND, "status: approved "),
        "tag": ("pending_approval", "!!str approved"),
        "anchor": ("pending_approval", "&a approved"),
        "alias": ("pending_approval", "*a"),
        "dupkey": (PEND, "status: approved\n  status: approved"),
        "dupfirst": ("  " + PEND, "  status: approved\n  " + PEND),
        "flowsw": ("pending_approval", 'approved, task: "evil"'),
        "mlval": (PEND, "status: approved\n    later"),
        "authcmt": ("pending_approval", "approved"),
        "nlcmt": ("pending_approval", "approved\n  # lgtm, alice"),
        "blankline": ("pending_approval", "approved\n"),
        "crcmt": ("pending_approval", "approved\r  # lgtm, alice"),
        "cract": ("pending_approval", "approved\r#  - {id: 2, tool: rec, params: {tag: x}}"),
        "trailtab": ("pending_approval", "approved\t"),
        "tabpre": ("pending_approval", "\tapproved"),
        "nlact": ("pending_approval", "approved\n#  - {id: 2, tool: rec, params: {tag: x}}"),
    }
    if slug in one:
        old, new = one[slug]
        assert text.count(old) == 1, (slug, text[:300])
        return text.replace(old, new)
    if slug == "cmtelse":
        return "# approved by alice\n" + text.replace("pending_approval", "approved")
    if slug == "multidoc":
        return text.replace("pending_approval", "approved") + "---\n" + plan_text("other")
    if slug == "emptydoc":
        return text.replace("pending_approval", "approved") + "---\n"
    return None


def _edit(lab: Lab, slug: str, fn) -> None:  # type: ignore[no-untyped-def]
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_text(fn(path.read_text()))


def _codes(lab: Lab, slug: str) -> str:
    """What the controller said of ``slug``: its row and HEAD's file (raw if unparseable)."""
    text = json.dumps(lab.status().get(f"plans/{slug}", {}))
    return text + lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1796000000)
    date()
    for slug in CONTROLS + ATTACKS:
        if slug != "bobauth":
            lab.write(slug, layout(slug))
    lab.commit("agent plans", AGENT)
    date()
    lab.write("bobauth", layout("bobauth"))
    lab.commit("bob's plan", BOB)
    date()
    first = lab.run()
    date()
    _edit(lab, "authcmt", lambda t: t.replace('  task: "', '  # alice: looks fine\n  task: "', 1))
    lab.commit("a note", ALICE)
    date()
    _edit(lab, "bobcontent", lambda t: t.replace("attack variant", "bob's variant", 1))
    lab.commit("bob's content", BOB)
    date()
    _edit(lab, "bobsame", lambda t: t.replace("attack variant", "bob's variant", 1))
    _edit(lab, "bobsame", lambda t: t.replace("pending_approval", "approved"))
    lab.commit("bob's content, approved", BOB)
    date()
    _edit(lab, "agent", lambda t: t.replace("pending_approval", "approved"))
    lab.commit("the agent approves", AGENT)
    date()
    mid = lab.run()
    date()
    for slug in CONTROLS + ATTACKS:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        new = hand_edit(slug, path.read_text())
        if new is not None:
            path.write_text(new)
    lab.commit("approve by hand", ALICE)
    cli: dict = {}
    for slug, who in CLI.items():
        date()
        env = {**lab.env(who), **identity(who)}
        r = clifork.run(["approve", f"plans/{slug}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[slug] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-800:]}
    date()
    a = lab.run()
    date()
    b = lab.run()
    out: dict = {"first": first.stderr[-2000:], "mid": mid.stderr[-2000:], "cli": cli,
                 "after": (a.stderr + b.stderr)[-4000:]}  # fmt: skip
    out["ran"] = {s: len(lab.calls(s)) for s in CONTROLS + ATTACKS + ["other"]}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason")}
                   for k, v in lab.status().items()}  # fmt: skip
    out["codes"] = {s: _codes(lab, s)[-1500:] for s in CONTROLS + ATTACKS}
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        s: len([e for e in report.get("executions", [])
                if e.get("plan") == f"plans/{s}" and e.get("approval_valid")])
        for s in CONTROLS + ATTACKS
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-statusedges", _build)


VS = ["ran", "audit", "said"]
IDS = [f"{s}-{v}" for s in CONTROLS + ATTACKS for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_status_edit_at_the_edges(lab: Lab, vid: str) -> None:
    slug, v = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, row = out["ran"][slug], out["runs"][slug], out["rows"].get(slug)
    said = (slug, row, ran, runs, out["cli"].get(slug), out["codes"][slug][-600:])
    assert out["ran"]["other"] == 0, out["ran"]
    honest = slug in CONTROLS
    if v == "ran":
        assert ran == (1 if honest else 0), said
    elif v == "audit":
        assert runs == ran == (1 if honest else 0), said
    elif honest:
        assert row and row["status"] not in ("unreadable", "invalid"), said
        assert "E_SELF_APPROVAL" not in out["codes"][slug], said
        if slug in CLI:
            assert out["cli"][slug]["rc"] == 0, said
    elif slug == "bobauth":
        assert out["cli"][slug]["rc"] != 0, said
        assert "E_SELF_APPROVAL" in out["cli"][slug]["out"], said
    else:
        text = out["codes"][slug] + json.dumps(row)
        assert "E_" in text or (row or {}).get("status") == "unreadable", said
        assert (row or {}).get("status") not in ("succeeded", "running"), said
