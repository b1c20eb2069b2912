"""Round 78, bursts: round 77's strict one-line status rule that keeps the line's OWN line end
(docs/approvals.md: a plain status change is "one line rewritten as ``status: approved`` and
nothing else ... or the status value alone changed in place"; any byte beside it, "line ends"
among them, makes its committer a writer), at its edges: files without a final newline, CR
CR LF, a CR inside the rewritten line, files whose line ends are mixed, UTF-16 files (a line
end is two bytes there, a CR LF four), and an approver passing a content or line-end change
off as a status change.

Lab (one, local mode, fake commit dates). The agent commits one folder per variant (a
one-action plan calling ``rec`` with the folder's name, laid out as the variant says), then a
root ``.gitattributes`` (``working-tree-encoding=UTF-16`` for the ``u16*`` folders, ``text
eol=crlf`` too for ``u16crlf*``); those files are checked out again by git. One pass freezes
them. Bob (an allowed approver) then commits, in ONE commit, ``bobeol``'s whole file re-saved
CR LF (no other change) and ``bobmix``'s ``task:`` line alone re-ended CR LF; a pass. Alice
then edits every hand variant's working tree (in the file's own encoding) and commits them as
one approval; Bob approves ``bobeol``, ``bobmix`` (in place, his line ends kept) and
``bobhide`` (the value in place AND the whole file re-saved CR LF in the same commit);
``plangate approve`` runs as Alice on the ``cli*`` folders; two passes; a fresh-clone
``plangate audit --json``.

CONTROLS (must run exactly once, the audit lists one valid run):
- ``hand``: a plain LF file, the value changed in place; ``cli``: ``plangate approve``;
- ``nofinal``: an LF file without a final newline (the freeze appends its block, so the status
  line is never the last; the value changed in place); ``clinofinal``;
- ``crlfnofinal``: a CR LF file without a final line end; the value in place;
- ``mixlf`` / ``mixcrlf``: line ends alternate LF / CR LF through the file, the status line
  ending LF (``mixlf``) or CR LF (``mixcrlf``); the value changed in place; ``climix``:
  ``plangate approve`` on the ``mixcrlf`` layout; ``mixstrict``: the ``mixcrlf`` layout, the
  line rewritten ``status: approved`` with its CR LF kept;
- ``u16``: ``UTF-16`` (LF blob), the value in place; ``u16crlf``: ``UTF-16`` and ``text
  eol=crlf`` (the working tree CR LF in UTF-16, the blob LF), the value in place;
  ``cliu16crlf``: ``plangate approve`` on it; ``u16blobcr``: ``UTF-16``, the blob itself CR LF,
  the value in place; ``u16strict``: ``UTF-16``, the line rewritten ``status: approved``;
- ``bobmixok``: Bob's ``bobmix``-like re-ending of another plan's line is approved by ALICE
  (not its writer): runs.

ATTACKS (must never run; refused with its code, unreadable, or still waiting):
- ``nofinaldrop``: a file the agent wrote without a final newline (the freeze's block ends it
  with one); Alice's approval also drops the file's final LF (a line end beside the status);
- ``crcrlf``: a CR LF file; Alice writes ``status: approved`` ending CR CR LF;
- ``crval``: ``status:`` then a lone CR and ``    approved`` (one line to git, a value on the
  next line to YAML); ``crmid``: ``status: appr`` CR ``oved``; ``crkey``: ``sta`` CR ``tus:
  approved``;
- ``u16crlfadd``: ``UTF-16``, LF blob, no eol attribute; Alice's editor ends her status line
  CR LF (``0D 00 0A 00``): the blob's line end changed; ``u16lfdrop``: ``UTF-16`` with a CR LF
  blob; her status line ends LF;
- ``u16crlfcr``: ``UTF-16`` with ``eol=crlf``; she ends the status line CR CR LF (git keeps
  one CR in the blob);
- ``mixflip``: the mixed file; the value in place AND the ``task:`` line's end flipped LF to
  CR LF in the same commit (a line end beside the status change);
- ``mixstrictlf``: the ``mixcrlf`` layout rewritten ``status: approved`` ending LF;
- ``bobeol``: Bob re-saved the whole file CR LF (his writing), then approves it himself in
  place: ``E_SELF_APPROVAL``; ``bobmix``: Bob re-ended one line CR LF, then approves himself;
  ``bobhide``: Bob's value in place and the file re-saved CR LF in one commit.

Per variant: ``ran`` (the ``rec`` calls: 1 for a control, 0 for an attack), ``audit`` (the
fresh clone's valid runs agree), ``said`` (a control's row carries no refusal and its CLI
exited 0; an attack's row carries a code, is ``unreadable`` or still waits, never succeeded;
Bob's own approvals ``E_SELF_APPROVAL``).

Seen (round 78): nothing broken (84 ids held). Every control ran exactly once with the audit
agreeing: in-place edits of an LF file, a file the agent left without a final newline (the
freeze's appended block ends it with one, so a status line is never the last: "the last line
without a newline" cannot be reached through a frozen plan), a CR LF file without a final line
end, mixed LF / CR LF files with the status line ending either way (in place, rewritten strict
with its CR LF, ``plangate approve``), ``UTF-16`` files with LF, CR LF blobs and ``eol=crlf``
working trees (in place, strict, CLI), and Alice approving Bob's line-end-only change.
``nofinaldrop`` (the file's final LF dropped), ``u16crlfadd``, ``u16lfdrop``, ``u16crlfcr``
(line ends changed inside a UTF-16 file; under ``eol=crlf`` only the extra CR reaches the
blob), ``mixflip`` (another line's end flipped with the approval), ``mixstrictlf``: refused
``E_SELF_APPROVAL``; ``crcrlf``, ``crval``, ``crmid``, ``crkey`` (a CR inside or doubled at
the end of the status line): ``unreadable`` ``E_YAML_PARSE`` naming the CR; ``bobeol``,
``bobmix``, ``bobhide`` (Bob's line-end changes to the whole file or one line, before or with
his own approval) ``E_SELF_APPROVAL``: line ends are writing, as documented.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, identity, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

CONTROLS = ["hand", "cli", "nofinal", "clinofinal", "crlfnofinal", "mixlf", "mixcrlf",
            "climix", "mixstrict", "u16", "u16crlf", "cliu16crlf", "u16blobcr", "u16strict",
            "bobmixok"]  # fmt: skip
ATTACKS = ["nofinaldrop", "crcrlf", "crval", "crmid", "crkey", "u16crlfadd", "u16lfdrop",
           "u16crlfcr", "mixflip", "mixstrictlf", "bobeol", "bobmix", "bobhide"]  # fmt: skip
CLI = ["cli", "clinofinal", "climix", "cliu16crlf"]
BOBS = ["bobeol", "bobmix", "bobhide"]
U16 = [s for s in CONTROLS + ATTACKS if s.startswith(("u16", "cliu16"))]
EOLCRLF = ["u16crlf", "cliu16crlf", "u16crlfcr"]
PEND = "  status: pending_approval"
BROKEN: dict[str, object] = {}


def _mixed(text: str, status_crlf: bool) -> str:
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines[:-1]):
        crlf = status_crlf if line == PEND else bool(i % 2)
        out.append(line + ("\r\n" if crlf else "\n"))
    return "".join(out) + lines[-1]


def layout(slug: str) -> str:
    base = plan_text(slug)
    if slug in ("nofinal", "clinofinal", "nofinaldrop"):
        return base.rstrip("\n")
    if slug == "crlfnofinal":
        return base.rstrip("\n").replace("\n", "\r\n")
    if slug in ("crcrlf", "u16blobcr", "u16lfdrop"):
        return base.replace("\n", "\r\n")
    if slug in ("mixlf", "mixflip", "bobmix", "bobmixok"):
        return _mixed(base, False)
    if slug in ("mixcrlf", "climix", "mixstrict", "mixstrictlf"):
        return _mixed(base, True)
    return base


def _edit(slug: str, text: str) -> str | None:
    """Alice's edit of the working tree's TEXT (decoded, line ends as they are)."""
    one = {
        "nofinaldrop": ("pending_approval", "approved"),
        "crcrlf": (PEND + "\r\n", "  status: approved\r\r\n"),
        "crval": ("status: pending_approval", "status:\r    approved"),
        "crmid": ("pending_approval", "appr\roved"),
        "crkey": ("status: pending_approval", "sta\rtus: approved"),
        "u16crlfadd": (PEND + "\n", "  status: approved\r\n"),
        "u16lfdrop": (PEND + "\r\n", "  status: approved\n"),
        "u16crlfcr": (PEND + "\r\n", "  status: approved\r\r\n"),
        "mixstrict": (PEND + "\r\n", "  status: approved\r\n"),
        "mixstrictlf": (PEND + "\r\n", "  status: approved\n"),
        "u16strict": (PEND, "  status: approved"),
    }
    if slug in one:
        old, new = one[slug]
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    elif slug in CONTROLS and slug not in CLI and slug not in ("bobmixok",):
        if text.count("pending_approval") != 1:
            return None
        text = text.replace("pending_approval", "approved")
    elif slug == "bobmixok":
        text = text.replace("pending_approval", "approved")
    else:
        return None
    if slug == "nofinaldrop":  # the freeze's block ended the file with a line end: dropped
        text = text.rstrip("\r\n")
    return text


def _codec(raw: bytes) -> tuple[str, bytes]:
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return ("utf-16-le" if raw[:2] == b"\xff\xfe" else "utf-16-be"), raw[:2]
    return "utf-8", b""


def _rw(lab: Lab, slug: str, fn) -> bool:  # type: ignore[no-untyped-def]
    path = lab.repo / "plans" / slug / "PLAN.yml"
    raw = path.read_bytes()
    codec, mark = _codec(raw)
    new = fn(raw[len(mark) :].decode(codec))
    if new is None:
        return False
    path.write_bytes(mark + new.encode(codec))
    return True


def _flip_task(text: str) -> str:
    """The ``task:`` line's end flipped LF -> CR LF (or CR LF -> LF)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("task:"):
            lines[i] = line[:-1] if line.endswith("\r") else line + "\r"
            break
    return "\n".join(lines)


def _all_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _codes(lab: Lab, slug: str) -> str:
    text = json.dumps(lab.status().get(f"plans/{slug}", {}))
    return text + lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799900000)
    date()
    for slug in CONTROLS + ATTACKS:
        lab.write(slug, layout(slug).encode())
    lab.commit("agent plans", AGENT)
    date()
    rows = [f"plans/{s}/PLAN.yml working-tree-encoding=UTF-16\n" for s in U16 if s not in EOLCRLF]
    rows += [f"plans/{s}/PLAN.yml text eol=crlf working-tree-encoding=UTF-16\n" for s in EOLCRLF]
    (lab.repo / ".gitattributes").write_text("".join(rows))
    lab.commit("agent attributes", AGENT, ".gitattributes")
    for s in U16:
        (lab.repo / "plans" / s / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", *[f"plans/{s}/PLAN.yml" for s in U16])
    out: dict = {"status0": lab.git("status", "--porcelain")}
    date()
    first = lab.run()
    date()
    _rw(lab, "bobeol", _all_crlf)
    _rw(lab, "bobmix", _flip_task)
    _rw(lab, "bobmixok", _flip_task)
    lab.commit("bob: line ends", BOB)
    date()
    mid = lab.run()
    date()
    edited = {}
    for slug in CONTROLS + ATTACKS:
        if slug in BOBS or slug in CLI:
            continue
        edited[slug] = _rw(lab, slug, lambda t, s=slug: _edit(s, t))
    _rw(lab, "mixflip", lambda t: _flip_task(t.replace("pending_approval", "approved")))
    edited["mixflip"] = True
    lab.commit("approve by hand", ALICE)
    date()
    for slug in ("bobeol", "bobmix"):
        _rw(lab, slug, lambda t: t.replace("pending_approval", "approved"))
    _rw(lab, "bobhide", lambda t: _all_crlf(t.replace("pending_approval", "approved")))
    lab.commit("bob approves", BOB)
    cli: dict = {}
    for slug in CLI:
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/{slug}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[slug] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-800:]}
    date()
    a = lab.run()
    date()
    b = lab.run()
    out.update({"first": first.stderr[-2000:], "mid": mid.stderr[-2000:], "cli": cli,
                "edited": edited, "after": (a.stderr + b.stderr)[-4000:]})  # fmt: skip
    out["porcelain"] = lab.git("status", "--porcelain")
    out["ran"] = {s: len(lab.calls(s)) for s in CONTROLS + ATTACKS}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason"),
                                              "waiting": v.get("waiting")}
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
    return shared(tmp_path_factory, "r78-lineends", _build)


VS = ["ran", "audit", "said"]
IDS = [f"{s}-{v}" for s in CONTROLS + ATTACKS for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_status_line_end_at_the_edges(lab: Lab, vid: str) -> None:
    slug, v = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, row = out["ran"][slug], out["runs"][slug], out["rows"].get(slug)
    said = (slug, row, ran, runs, out["cli"].get(slug), out["edited"].get(slug),
            out["codes"][slug][-600:])  # fmt: skip
    honest = slug in CONTROLS
    if v == "ran":
        assert ran == (1 if honest else 0), said
    elif v == "audit":
        assert runs == ran == (1 if honest else 0), said
    elif honest:
        assert out["edited"].get(slug, True), said
        assert row and row["status"] not in ("unreadable", "invalid"), said
        assert "E_SELF_APPROVAL" not in out["codes"][slug], said
        if slug in CLI:
            assert out["cli"][slug]["rc"] == 0, said
    else:
        assert out["edited"].get(slug, True), said
        text = out["codes"][slug] + json.dumps(row)
        assert "E_" in text or (row or {}).get("status") in ("unreadable", "pending_approval"), said
        assert (row or {}).get("status") not in ("succeeded", "running", "completed"), said
        if slug in BOBS:
            assert "E_SELF_APPROVAL" in text, said
