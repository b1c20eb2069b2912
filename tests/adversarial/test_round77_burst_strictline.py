"""Round 77, bursts: round 76's strict one-line status rule (docs/approvals.md: "A plain
status change is one line rewritten as ``status: approved`` and nothing else (no comment; one
blank after the colon, none after the value, the line's indent kept: round 76), or the status
value alone changed in place"), at its edges: line ends, the old line's spelling, the key's
spelling and a content change hidden beside a strict status line.

Lab (one, local mode, fake commit dates). The agent commits one folder per variant (a
one-action plan calling ``rec`` with the folder's name). One pass freezes them. Bob (an
allowed approver) then commits, in ONE commit, ``hidy``'s status rewritten as ``status:
approved`` (strict) AND a task change in ``hidx`` and ``hidv`` (content he wrote, hidden
beside a plain approval of another plan). A pass runs ``hidy`` and freezes the new versions.
Alice then edits every hand variant's working tree and commits them as one approval;
``plangate approve`` runs as Alice on the ``cli*`` folders; Bob approves ``hidx`` (his own
content) by a strict one-line edit; two passes; a fresh-clone ``plangate audit --json``.

CONTROLS (must run exactly once, the audit lists one valid run):
- ``hand``: ``pending_approval`` rewritten ``approved`` in place; ``cli``: ``plangate approve``;
- ``oldcmt``: the agent's line ``status: pending_approval  # note``; Alice rewrites the line
  as ``status: approved`` (the comment dropped: a strict line); ``oldcmtkeep``: the value
  changed in place, the agent's comment kept;
- ``oldsq`` / ``olddq``: the agent's value quoted (``'pending_approval'`` /
  ``"pending_approval"``); Alice rewrites the line as ``status: approved`` (strict);
- ``crlf``: the whole file committed with CRLF line ends (no attribute); Alice changes the
  value in place (the line keeps its CRLF); ``clicrlf``: ``plangate approve`` on it;
- ``esckey``: the agent's key spelled ``"\\x73tatus":``; Alice changes the value in place;
  ``qkey``: the agent's ``? status`` / ``: pending_approval``; the value changed in place;
  ``cliesc`` / ``cliqkey``: ``plangate approve`` on those layouts;
- ``hidy``: Bob's strict status line (his commit also changes ``hidx``'s and ``hidv``'s task);
- ``hidv``: Bob's content, approved by Alice (not its writer) in place;
- ``mixcr``: an LF file whose status line alone the agent ended CR LF; the value changed in
  place (the line end kept); ``oldqcmt``: the agent's ``status: "pending_approval"  # note``
  rewritten ``status: approved`` (strict).

ATTACKS (must never run; the approval refused with its code, or the file unreadable):
- ``lonecr``: an LF file; Alice writes ``status: approved`` and a CR (the line now ends CRLF:
  a line end changed, docs/approvals.md "line ends");
- ``crlfdrop``: the CRLF file; Alice rewrites the status line with an LF end;
- ``crkey``: the value replaced by ``approved``, a lone CR and ``  metadata: {by: alice}``
  (one line to git, two to YAML: a key slipped in);
- ``crnext``: ``approved``, a lone CR and ``  # lgtm`` (a comment after a lone CR);
- ``keyesc``: a plain layout; Alice rewrites the line ``"\\x73tatus": approved`` (the key
  respelled: her writing); ``keydq``: ``"status": approved``; ``keyq``: ``? status`` /
  ``: approved`` (two lines);
- ``cmtmove``: the agent's ``# note`` moved from the status line onto a line of its own;
- ``nbsp``: ``status: approved`` and a no-break space (U+00A0) after the word;
- ``flowroot``: the agent's file is a flow mapping at the top level (unreadable by the rule of
  docs/operations.md); Alice changes the value in place: never runs, stays unreadable;
- ``hidx``: Bob's content change hidden in his commit beside ``hidy``'s strict line; his later
  strict approval of ``hidx`` must be refused ``E_SELF_APPROVAL`` (he wrote that version);
- ``cmtsqueeze``: the agent's ``  # note`` kept but one blank before it dropped
  (``status: approved # note``: a byte outside the value's span);
- ``escval``: ``status: "\\x61pproved"`` (the value spelled with an escape: not one word);
- ``crcr``: ``status: approved`` and two CRs before the LF.

Per variant: ``ran`` (the ``rec`` calls: 1 for a control, 0 for an attack), ``audit`` (the
fresh clone's valid runs agree), ``said`` (a control's row carries no refusal, its CLI exited
0; an attack's plan carries a refusal code, an ``unreadable`` row or still waits for an
approval, and is not succeeded).

Seen (round 77): BROKEN (6 ids, 1 class; nothing ran that changed what the plan does, the
fresh-clone audit agrees with the controller). **A status line whose line end the approver
changed is read as a plain status change** (``lonecr-{ran,audit,said}``,
``crlfdrop-{ran,audit,said}``): in an LF file Alice writes ``status: approved`` ending CR LF
(git shows ``status: approved^M``), or in a CRLF file she rewrites the status line ending LF;
either way her approval runs the plan once and the audit calls it valid. Should
(docs/approvals.md: a commit that changes a plan's own ``PLAN.yml`` "with any byte beside a
plain status change (a comment, a blank line, a reindent, a ``metadata:`` block, line ends, a
BOM, ...) makes its committer a writer of that plan"; round 76's rule "nothing after the word
but its line end" reads as the line's OWN line end): ``E_SELF_APPROVAL``, as round 76's
``crlfappr-h`` (the whole file rewritten CRLF with the approval) is. Low impact: only a CR
byte; anything after a lone CR is unreadable (``crkey``, ``crnext``, ``crcr`` held
``E_YAML_PARSE`` naming the CR). The refusal of the other attacks says "wrote or changed this
plan's content" and does not name the extra bytes (no doc promises it does).
Fixed 2026-12-01 (r77statuscr): the parse check (``yamlio.scalar_alone_changed``, handed the
raw bytes, no CR stripped) already refused both; the one-line rule beside it (``Lifecycle``'s
``_status_line_rewritten``) took a CR after the word whatever the old line ended with. The
rewritten line must now keep its own line end (CR LF, LF, or none on the last line), in the one
function the controller, a rebuilt index, the audit and ``plangate approve``'s check share
(index version 85): the 6 ids are refused ``E_SELF_APPROVAL``, never run, the audit agrees
(markers off); every control still runs once. The labs' ``Lab.set_status`` (advkit) now keeps
a CR LF line's CR, as an editor does (it dropped it: round 76's fixer had let that pass).
HELD: every control ran exactly once (a hand edit, ``plangate approve``, the agent's comment
dropped by a strict line or kept by an in-place edit, a quoted old value rewritten strict
(single, double, double with a comment), a CRLF file edited in place and approved by the CLI,
an LF file whose status line alone ends CR LF edited in place, ``"\\x73tatus"`` and ``?
status`` keys edited in place and approved by the CLI, Bob's strict line beside his content
change in other plans, Alice approving Bob's content); ``keyesc``, ``keydq``, ``keyq``,
``cmtmove``, ``cmtsqueeze``, ``escval`` refused ``E_SELF_APPROVAL``; ``hidx`` (Bob's content
hidden beside another plan's strict line, then his own strict approval) refused
``E_SELF_APPROVAL``; ``nbsp`` (a no-break space after the word) never approved; ``flowroot``
``unreadable`` ``E_SCHEMA_INVALID``; ``crkey``/``crnext``/``crcr`` ``unreadable``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, identity, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

CONTROLS = ["hand", "cli", "oldcmt", "oldcmtkeep", "oldsq", "olddq", "crlf", "clicrlf",
            "esckey", "qkey", "cliesc", "cliqkey", "hidy", "hidv", "mixcr", "oldqcmt"]  # fmt: skip
ATTACKS = ["lonecr", "crlfdrop", "crkey", "crnext", "keyesc", "keydq", "keyq", "cmtmove",
           "nbsp", "flowroot", "hidx", "cmtsqueeze", "escval", "crcr"]  # fmt: skip
CLI = {"cli": ALICE, "clicrlf": ALICE, "cliesc": ALICE, "cliqkey": ALICE}
PEND = "status: pending_approval"


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 77: {what}")


BROKEN: dict[str, object] = {}


def layout(slug: str) -> str:
    base = plan_text(slug)
    if slug in ("oldcmt", "oldcmtkeep", "cmtmove", "cmtsqueeze"):
        return base.replace(PEND, PEND + "  # note")
    if slug == "oldqcmt":
        return base.replace(PEND, 'status: "pending_approval"  # note')
    if slug == "mixcr":
        return base.replace(PEND + "\n", PEND + "\r\n")
    if slug == "oldsq":
        return base.replace(PEND, "status: 'pending_approval'")
    if slug == "olddq":
        return base.replace(PEND, 'status: "pending_approval"')
    if slug in ("crlf", "clicrlf", "crlfdrop"):
        return base.replace("\n", "\r\n")
    if slug in ("esckey", "cliesc"):
        return base.replace(PEND, '"\\x73tatus": pending_approval')
    if slug in ("qkey", "cliqkey"):
        return base.replace("  " + PEND, "  ? status\n  : pending_approval")
    if slug == "flowroot":
        return (
            '{plan: {name: "flowroot", task: "attack variant flowroot", status: pending_approval},'
            ' available_tools: [{name: rec}], actions: [{id: 1, tool: rec, why: "record",'
            ' params: {tag: "flowroot"}}]}\n'
        )
    return base


def hand_edit(slug: str, text: str) -> str | None:
    """Alice's edit of the (frozen) working tree; None: no hand edit."""
    one = {
        "hand": ("pending_approval", "approved"),
        "oldcmt": (PEND + "  # note", "status: approved"),
        "oldcmtkeep": ("pending_approval", "approved"),
        "oldsq": ("status: 'pending_approval'", "status: approved"),
        "olddq": ('status: "pending_approval"', "status: approved"),
        "crlf": ("pending_approval", "approved"),
        "esckey": ("pending_approval", "approved"),
        "qkey": ("pending_approval", "approved"),
        "hidv": ("pending_approval", "approved"),
        "lonecr": (PEND + "\n", "status: approved\r\n"),
        "crlfdrop": (PEND + "\r\n", "status: approved\n"),
        "crkey": ("pending_approval", "approved\r  metadata: {by: alice}"),
        "crnext": ("pending_approval", "approved\r  # lgtm"),
        "keyesc": (PEND, '"\\x73tatus": approved'),
        "keydq": (PEND, '"status": approved'),
        "keyq": ("  " + PEND, "  ? status\n  : approved"),
        "cmtmove": ("  " + PEND + "  # note", "  # note\n  status: approved"),
        "nbsp": (PEND, "status: approved\u00a0"),
        "flowroot": ("pending_approval", "approved"),
        "mixcr": ("pending_approval", "approved"),
        "oldqcmt": ('status: "pending_approval"  # note', "status: approved"),
        "cmtsqueeze": (PEND + "  # note", "status: approved # note"),
        "escval": ("pending_approval", '"\\x61pproved"'),
        "crcr": (PEND + "\n", "status: approved\r\r\n"),
    }
    if slug in one:
        old, new = one[slug]
        assert text.count(old) == 1, (slug, text[:300])
        return text.replace(old, new)
    return None


def _rw(lab: Lab, slug: str, fn) -> None:  # type: ignore[no-untyped-def]
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_bytes(fn(path.read_bytes().decode()).encode())


def _codes(lab: Lab, slug: str) -> str:
    text = json.dumps(lab.status().get(f"plans/{slug}", {}))
    return text + lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799000000)
    date()
    for slug in CONTROLS + ATTACKS:
        lab.write(slug, layout(slug).encode())
    lab.commit("agent plans", AGENT)
    date()
    first = lab.run()
    date()
    _rw(lab, "hidy", lambda t: t.replace(PEND, "status: approved"))
    for s in ("hidx", "hidv"):
        _rw(lab, s, lambda t: t.replace("attack variant", "bob's variant", 1))
    lab.commit("approve hidy", BOB)
    date()
    mid = lab.run()
    date()
    for slug in CONTROLS + ATTACKS:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        new = hand_edit(slug, path.read_bytes().decode())
        if new is not None:
            path.write_bytes(new.encode())
    lab.commit("approve by hand", ALICE)
    date()
    _rw(lab, "hidx", lambda t: t.replace(PEND, "status: approved"))
    lab.commit("approve hidx", BOB)
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
    out["porcelain"] = lab.git("status", "--porcelain")
    out["ran"] = {s: len(lab.calls(s)) for s in CONTROLS + ATTACKS}
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
    return shared(tmp_path_factory, "r77-strictline", _build)


VS = ["ran", "audit", "said"]
IDS = [f"{s}-{v}" for s in CONTROLS + ATTACKS for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_strict_status_line_at_the_edges(lab: Lab, vid: str) -> None:
    slug, v = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, row = out["ran"][slug], out["runs"][slug], out["rows"].get(slug)
    said = (slug, row, ran, runs, out["cli"].get(slug), out["codes"][slug][-600:])
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
    else:
        text = out["codes"][slug] + json.dumps(row)
        assert "E_" in text or (row or {}).get("status") in ("unreadable", "pending_approval"), said
        assert (row or {}).get("status") not in ("succeeded", "running"), said
        if slug == "hidx":
            assert "E_SELF_APPROVAL" in text, said
