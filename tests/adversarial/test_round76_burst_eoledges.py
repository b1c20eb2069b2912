"""Round 76, bursts: round 75's line ends as git converts them (docs/operations.md, "Line
ends": git's built-in conversion, ``text``/``eol=``/``crlf`` attributes and
``core.autocrlf``/``core.eol``, applied in-process; "a ``filter=``, ``ident`` or
``working-tree-encoding`` attribute is never applied and no program an attribute names is
run: a file that differs from the commit but through them reads as edited"), at its edges.
(Since r76eolattr, 2026-12-01, ``ident`` and ``working-tree-encoding`` are applied too, as git
applies them: docs/operations.md, "Line ends and attributes".)

Lab (one, local mode, fake commit dates). The lab's ``.git/config`` defines a filter driver
``evil`` whose clean and smudge commands append a line to a marker file (then ``cat``: the
bytes unchanged). The agent commits, per variant, three folders ``<v>-h`` (approved by Alice's
one-line edit of the status value), ``<v>-c`` (``plangate approve`` as Alice) and ``<v>-n``
(never approved), one-action plans calling ``rec`` with the folder's name; every attributed
file is then checked out again so the working tree is what git would check out and ``git
status`` is clean. Variants:

- ``plain``: no attribute (the control);
- ``nest``: a ``.gitattributes`` INSIDE each plan folder (``PLAN.yml text eol=crlf``);
- ``deep``: ``plans/.gitattributes`` (``<v>-*/PLAN.yml text eol=crlf``);
- ``info``: ``.git/info/attributes`` (not in any commit) saying ``text eol=crlf``;
- ``auto``: ``text=auto eol=crlf``;
- ``mixed``: no attribute, the file committed with mixed line ends (CRLF and LF lines);
- ``mixattr``: mixed line ends written under ``text eol=crlf`` (the blob LF);
- ``filt``: ``filter=evil`` (the driver's output is its input);
- ``ident``: ``ident`` with a ``# $Id$`` comment (git expands it in the working tree);
- ``wte``: ``working-tree-encoding=ISO-8859-1`` with an ``é`` in the task;
- ``attrappr``: Alice's approval commit itself adds ``text eol=crlf`` for the three folders
  and the files are checked out again (CRLF) before ``plangate approve`` runs;
- ``crlfappr``: Alice's hand approval also rewrites the file with CRLF line ends (no
  attribute: the blob's bytes change; docs/approvals.md: "line ends" beside a status change
  make the committer a writer), so ``crlfappr-h`` must NOT run; ``-c`` and ``-n`` as usual;
- ``late``: after everything, ``core.autocrlf=true`` and then ``core.eol=crlf`` are set in
  ``.git/config`` between passes (as a user would while the daemon runs); the agent commits
  the ``late-*`` folders under it (checked out CRLF); approved as the others.

Per ``<v>``: ``hand`` (``-h`` ran once; ``crlfappr``: never, refused ``E_SELF_APPROVAL``),
``cli`` (``-c`` ran once), ``never`` (``-n`` never ran), ``clean`` (``git status`` shows none of
the variant's files changed and no row waits "uncommitted edits" forever), ``audit`` (the fresh
clone's valid runs agree). ``ident`` and ``wte`` were documented as never applied (the file read
as edited) and ``hand``/``cli``/``clean`` asserted that wait; since r76eolattr they are applied
as git applies them and held to what every other variant is (:data:`WAITS` is empty; the
expectation changed with the rule, see "Seen"). ``nofilter``: no ``plangate`` pass or ``plangate
approve`` ran the filter driver (the marker file gets no line while they run).
``ident-remedy``/``wte-remedy``: after the last pass the owner follows the wait's own remedy
("commit or discard them": ``git checkout -- plans/<v>-n``, then ``git add -A && git commit``,
which commits nothing); the next pass must not wait on ``<v>-n``.

Seen (round 76): BROKEN (4 ids, 1 class; honest work refused forever, nothing ran that should
not); FIXED (2026-12-01, r76eolattr): ``ident`` and ``working-tree-encoding`` are git built-ins
(nothing is run), so plangate applies them in-process exactly as git does
(``controller/git/conversion.py``, beside ``eol.py``: ``$Id$`` <-> ``$Id: <blob id> $``; the
blob UTF-8, the working tree in the named encoding with git's byte-order-mark rules): what it
compares, runs and writes goes through them, so these plans are frozen, ``-h`` and ``-c`` ran
once, ``-n`` never, ``git status`` stays clean and nothing waits; an encoding Python does not
know (or git cannot store) holds the plan with ``E_ATTRIBUTE_UNSUPPORTED`` naming the attribute
and its removal as the remedy. What was seen: **An ``ident`` or ``working-tree-encoding`` plan
that git calls clean waits forever** (``ident-clean``, ``wte-clean``, ``ident-remedy``,
``wte-remedy``): every pass logs ``plan_waiting`` "plans/<v>-<w>/PLAN.yml has uncommitted edits;
plangate will not overwrite them (commit or discard them)", ``plangate approve`` refuses
``E_USAGE`` "has uncommitted edits", yet ``git status`` is clean, a commit has nothing to take
and a discard checks out the same bytes, so the remedy cannot be followed; ``status --json``
says only "waiting to be frozen" (no word of the wait or the attribute). The documented
behaviour (docs/operations.md: these attributes are "never applied ... a file that differs from
the commit but through them reads as edited (the plan waits until it is committed or
discarded)") holds literally, but its promised way out does not exist. Should: the wait names
the attribute (and the row says it: ``plan_waiting`` with the attribute and "remove the
attribute"), or the plan is refused once with a code rather than waiting on a remedy git cannot
perform.
HELD: ``plain``, ``nest`` (a ``.gitattributes`` inside the plan folder), ``deep``
(``plans/.gitattributes``), ``info`` (``.git/info/attributes``), ``auto``, ``mixed`` (mixed line
ends, no attribute), ``mixattr``, ``filt`` (a filter driver whose output is its input),
``attrappr`` (the attribute added in the approval commit), ``late`` (``core.autocrlf=true`` and
``core.eol=crlf`` set between passes, new plans under them): frozen, ``-h`` and ``-c`` ran once,
``-n`` never, ``git status`` clean, no lingering wait, the fresh clone agrees; ``crlfappr-h``
(CRLF bytes slipped in with the approval) refused ``E_SELF_APPROVAL``; the filter driver never
ran during any ``plangate`` pass or ``plangate approve`` (the marker file empty after each);
``ident``/``wte`` (since r76eolattr) as the others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

VARIANTS = ["plain", "nest", "deep", "info", "auto", "mixed", "mixattr", "filt", "ident", "wte",
            "attrappr", "crlfappr", "late"]  # fmt: skip
WHO = ["h", "c", "n"]
#: variants whose plans wait as documented (none since r76eolattr: ``ident`` and
#: ``working-tree-encoding`` are applied as git applies them, and run as the others)
WAITS: tuple[str, ...] = ()
#: the variants whose wait's remedy is followed (round 76: it could not be)
REMEDIED = ("ident", "wte")


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 76: {what}")


#: fixed by r76eolattr (2026-12-01): ident-clean, wte-clean, ident-remedy, wte-remedy
BROKEN: dict[str, object] = {}


def text_of(slug: str, v: str) -> bytes:
    base = plan_text(slug)
    if v in ("mixed", "mixattr"):
        lines = base.split("\n")
        return "\n".join(x + ("\r" if i % 2 and x else "") for i, x in enumerate(lines)).encode()
    if v == "ident":
        return ("# $Id$\n" + base).encode()
    if v == "wte":
        return base.replace("attack variant", "attack variant café").encode("utf-8")
    return base.encode()


ROOT_ATTR = (
    "plans/auto-*/PLAN.yml text=auto eol=crlf\n"
    "plans/mixattr-*/PLAN.yml text eol=crlf\n"
    "plans/filt-*/PLAN.yml filter=evil\n"
    "plans/ident-*/PLAN.yml ident\n"
    "plans/wte-*/PLAN.yml working-tree-encoding=ISO-8859-1\n"
)


def _recheckout(lab: Lab, vs: list[str]) -> None:
    for v in vs:
        for w in WHO:
            (lab.repo / "plans" / f"{v}-{w}" / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".")


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    mark = root / "MARK"
    drv = f"sh -c 'echo ran >> {mark}; cat'"
    lab.git("config", "filter.evil.clean", drv)
    lab.git("config", "filter.evil.smudge", drv)
    date = date_steps(lab, 1797000000)
    date()
    for v in VARIANTS:
        if v == "late":
            continue
        for w in WHO:
            lab.write(f"{v}-{w}", text_of(f"{v}-{w}", v))
    for w in WHO:
        (lab.repo / "plans" / f"nest-{w}" / ".gitattributes").write_text("PLAN.yml text eol=crlf\n")
    (lab.repo / "plans" / ".gitattributes").write_text("deep-*/PLAN.yml text eol=crlf\n")
    (lab.repo / ".git" / "info" / "attributes").write_text("plans/info-*/PLAN.yml text eol=crlf\n")
    (lab.repo / ".gitattributes").write_text(ROOT_ATTR)
    lab.commit("agent plans", AGENT)
    _recheckout(lab, ["nest", "deep", "info", "auto", "mixattr", "filt", "ident", "wte"])
    out: dict = {"status0": lab.git("status", "--porcelain")}
    out["mark"] = {}

    def run(what: str) -> str:
        mark.unlink(missing_ok=True)
        date()
        r = lab.run()
        out["mark"][what] = mark.read_text() if mark.exists() else ""
        return r.stderr[-3000:]

    out["first"] = run("first")
    # Alice's hand approvals (and, for attrappr, the attribute in the same commit)
    date()
    for v in VARIANTS:
        if v == "late":
            continue
        path = lab.repo / "plans" / f"{v}-h" / "PLAN.yml"
        raw = path.read_bytes()
        assert raw.count(b"pending_approval") == 1, (v, raw[:200])
        raw = raw.replace(b"pending_approval", b"approved")
        if v == "crlfappr":
            raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        path.write_bytes(raw)
    with open(lab.repo / ".gitattributes", "a") as f:
        f.write("plans/attrappr-*/PLAN.yml text eol=crlf\n")
    lab.commit("approve by hand", ALICE)
    _recheckout(lab, ["attrappr"])

    def cli_all(vs: list[str]) -> None:
        mark.unlink(missing_ok=True)
        for v in vs:
            date()
            env = {**lab.env(ALICE), **identity(ALICE)}
            r = clifork.run(["approve", f"plans/{v}-c", "--config", str(lab.config)],
                            cwd=lab.repo, env=env, timeout=120)  # fmt: skip
            out.setdefault("cli", {})[v] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-600:]}
        out["mark"][f"cli-{vs[0]}"] = mark.read_text() if mark.exists() else ""

    cli_all([v for v in VARIANTS if v != "late"])
    out["a"] = run("a")
    out["b"] = run("b")
    # core.autocrlf / core.eol flipped between passes, then new plans under it
    lab.git("config", "core.autocrlf", "true")
    out["flip1"] = run("flip1")
    lab.git("config", "core.eol", "crlf")
    out["flip2"] = run("flip2")
    date()
    for w in WHO:
        lab.write(f"late-{w}", text_of(f"late-{w}", "late"))
    lab.commit("late plans", AGENT)
    _recheckout(lab, ["late"])
    out["late0"] = run("late0")
    date()
    path = lab.repo / "plans" / "late-h" / "PLAN.yml"
    path.write_bytes(path.read_bytes().replace(b"pending_approval", b"approved"))
    lab.commit("approve late by hand", ALICE)
    cli_all(["late"])
    out["late1"] = run("late1")
    out["late2"] = run("late2")
    out["porcelain"] = lab.git("status", "--porcelain")
    # the remedy the wait names: "commit or discard them" (git sees nothing to commit)
    date()
    lab.git("checkout", "-q", "--", "plans/ident-n", "plans/wte-n")
    lab.commit("commit whatever is edited", AGENT)
    rem = run("remedy")
    out["remedy"] = {v: f"plans/{v}-n/PLAN.yml has uncommitted edits" in rem for v in REMEDIED}
    out["ran"] = {f"{v}-{w}": len(lab.calls(f"{v}-{w}")) for v in VARIANTS for w in WHO}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason")}
                   for k, v in lab.status().items()}  # fmt: skip
    out["files"] = {}
    for v in VARIANTS:
        for w in WHO:
            raw = lab.git("show", f"HEAD:plans/{v}-{w}/PLAN.yml", check=False)
            out["files"][f"{v}-{w}"] = raw[-700:]
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        f"{v}-{w}": len([e for e in report.get("executions", [])
                         if e.get("plan") == f"plans/{v}-{w}" and e.get("approval_valid")])
        for v in VARIANTS for w in WHO
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-eoledges", _build)


VS = ["hand", "cli", "never", "clean", "audit"]
IDS = [f"{v}-{c}" for v in VARIANTS for c in VS] + ["filt-nofilter", "ident-remedy",
                                                     "wte-remedy"]  # fmt: skip


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_line_ends_at_the_edges(lab: Lab, vid: str) -> None:
    v, c = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    mine = {w: rows.get(f"{v}-{w}") for w in WHO}
    said = (v, mine, {w: ran[f"{v}-{w}"] for w in WHO}, out.get("cli", {}).get(v),
            out["files"][f"{v}-h"][-300:])  # fmt: skip
    wait = v in WAITS
    if c == "remedy":
        assert not out["remedy"][v], (out["remedy"], said)
    elif c == "nofilter":
        assert all(not m for k, m in out["mark"].items()), out["mark"]
    elif c == "hand":
        if v == "crlfappr":
            assert ran[f"{v}-h"] == 0, said
            assert "E_SELF_APPROVAL" in out["files"][f"{v}-h"] + json.dumps(mine), said
        else:
            assert ran[f"{v}-h"] == (0 if wait else 1), said
    elif c == "cli":
        assert ran[f"{v}-c"] == (0 if wait else 1), said
        if not wait:
            assert out["cli"][v]["rc"] == 0, said
    elif c == "never":
        assert ran[f"{v}-n"] == 0, said
    elif c == "clean":
        dirty = [x for x in out["porcelain"].splitlines() if f"plans/{v}-" in x]
        waits = [w for w, r in mine.items() if "uncommitted" in json.dumps(r)]
        if wait:
            assert waits, said
        else:
            assert not dirty and not waits, (dirty, said)
    elif c == "audit":
        for w in WHO:
            assert runs[f"{v}-{w}"] == ran[f"{v}-{w}"], (w, runs, said)
