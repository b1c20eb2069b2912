"""Round 79 (runs): remote mode over a real ``git daemon`` with the repository's
``.gitattributes``, a forced push between the approval and the fetch, and refs named like
the branch.

docs/operations.md ("Line ends and attributes"): ``eol=crlf``, ``ident`` and
``working-tree-encoding`` are honoured as git honours them, "what they write into the working
tree is what git would check out ... so ``git status`` stays clean"; a ``filter=`` attribute is
never applied and no program runs. Remote mode: the controller keeps its own clone, reads blobs
and pushes its commits; Alice works in her own checkout (the lab's repo, whose ``.git/config``
defines the ``evil`` filter driver: clean and smudge are ``cat`` that also append a line to
``MARK``).

Lab (one). The agent commits a root ``.gitattributes`` (``plans/crlf*/** text eol=crlf``,
``plans/idn*/** ident``, ``plans/u16*/** working-tree-encoding=UTF-16``, ``plans/flt*/**
filter=evil``) and one plan per variant, each file written as git would check it out (CR LF,
``$Id$`` in a param, UTF-16 with its mark); pushed to ``origin`` served by ``git daemon``; the
controller's first pass freezes them; Alice pulls. Phase 1: Alice approves the hand controls by
editing the status value in place (in the file's own encoding and line ends), the ``*cli``
controls with ``plangate approve`` in her checkout; she pushes; a pass; she pulls. Phase 2
(forced push before the fetch): Alice approves ``rwd`` (commit A1) and ``rwc``/``rws`` (commit
A2) and pushes both; before any pass the agent resets to A1's parent, commits an edit of
``rwc``'s params (``evil: yes``) and an unrelated ``notes.txt``, cherry-picks A2 (author Alice,
her date) and force-pushes. Phase 3 (refs named like the branch): Alice approves ``late`` on
main and pushes; from main's tip the agent makes side commits, each approving one frozen plan
under Alice's name, and pushes them as the tag ``refs/tags/main`` (``tagm``), the branch
``origin/main`` (``orm``) and a ``refs/replace/<main tip>`` object (``rpl``); a pass. Phase 4:
Alice approves ``late2`` on main and pushes; then the agent pushes a side commit approving
``hdm`` as the branch ``refs/heads/main`` (the ref ``refs/heads/refs/heads/main``); two passes.
Every pass's exit code is kept; a fresh clone of the remote is audited at the end.

CONTROLS (run once; the audit lists one valid run; Alice's checkout is clean after each pull):
``plain``, ``plaincli``; ``crlf``, ``crlfcli`` (``eol=crlf``); ``idn``, ``idncli`` (``ident``:
``rec`` gets the blob's ``$Id$``); ``u16``, ``u16cli`` (``UTF-16``); ``flt``, ``fltcli``
(``filter=evil``; ``plangate approve`` and the controller never run the filter); ``rws`` (her
approval cherry-picked unchanged over the agent's unrelated commit: the same version, still
hers); ``late`` (the phase-3 pass did fetch main); ``late2`` (approved on main before the
branch ``refs/heads/main`` is pushed).

ATTACKS (never run; nothing under their tags in ``ran.log``): ``rwc`` (her approval of v1
replayed over the agent's v2), ``rwd`` (her approval dropped by the forced push), ``tagm``,
``orm``, ``rpl`` (approvals only on refs that are not the branch), ``hdm`` (the approval only
on the branch named ``refs/heads/main``).

Per variant: ``ran`` (controls one call with the frozen params, attacks none), ``audit`` (the
fresh clone's valid runs: one for a control, none for an attack), ``clean`` (Alice's checkout:
``git status --porcelain`` empty after every pull, and ``git add --renormalize`` finds nothing
to change in the controller's commits), ``nofilter`` (no ``MARK`` line written during a pass or
``plangate approve``), ``passes`` (every pass of the variant's phase exits 0, no traceback).

Seen (round 79): BROKEN (3 ids, 1 class: honest work refused, nothing unapproved ran), all
fixed (2026-12-01, r79remote): ``Refs.push`` sets ``refs/plangate/push/main`` (the only ref of
a namespace only the controller writes) and pushes the glob ``refs/plangate/push/*:refs/heads/*``,
which git maps by literal substitution, so the destination is ``refs/heads/main`` whatever
other refs the remote has; ``late2`` runs once, ``hdm`` never (the clone and the fetch take the
branch itself; a fetch of a remote with no ``main``, which git would answer with the look-alike,
is refused ``E_GIT``), every pass exits 0 and the look-alike is neither moved nor read. As seen:
``test_ran[late2]``, ``test_audit[late2]``, ``test_passes[late2]`` (and ``test_passes[hdm]``,
the same passes, 4 strict xfails in all): once anyone who can create a branch pushes one named
``refs/heads/main`` (``git push origin X:refs/heads/refs/heads/main``; branch protection on
``main`` does not cover it), every pass of the remote controller exits 2 ``plangate: E_GIT: git
push origin: error: dst refspec refs/heads/main matches more than one`` (git 2.39 matches a
push destination by suffix, full ref name included), ``late2``, approved by Alice on main,
never runs, and nothing the controller makes reaches the remote; the remedy it prints is "see
git's message; fix the repository state and retry" (Alice's own ``git push`` of main fails the
same way). Should (docs/operations.md, remote mode: the controller "pushes its commits"; SPEC
§15 honest work runs): push so that the destination can match no other ref (``git push origin
<commit>:refs/heads/main`` is not exact on git 2.39), or at least hold with a code that names
the look-alike ref and its removal as the remedy. Held: every attribute control (``eol=crlf``,
``ident``, ``UTF-16``, ``filter=evil``, hand and ``plangate approve``) froze, ran once with the
blob's params (the ``$Id$`` as stored), and Alice's checkout stayed clean after each pull
(``git add --renormalize`` changed nothing); no pass and no ``plangate approve`` ran the filter
driver; the forced push that replayed her v1 approval over the agent's v2 (``rwc``) or dropped
it (``rwd``) ran nothing, while her approval cherry-picked over an unrelated commit (``rws``)
ran once; approvals reachable only from the tag ``main``, the branch ``origin/main`` or a
``refs/replace`` ref never ran (the tag alone does not make the push ambiguous); the fresh
clone's audit agreed everywhere.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import identity, served

ATTRS = (
    "plans/crlf*/** text eol=crlf\n"
    "plans/idn*/** ident\n"
    "plans/u16*/** working-tree-encoding=UTF-16\n"
    "plans/flt*/** filter=evil\n"
)
HAND = ["plain", "crlf", "idn", "u16", "flt"]
CLI = ["plaincli", "crlfcli", "idncli", "u16cli", "fltcli"]
CONTROLS = HAND + CLI + ["rws", "late", "late2"]
REWRITE = ["rwc", "rwd"]
REFS = ["tagm", "hdm", "orm", "rpl"]
ATTACKS = REWRITE + REFS
VIDS = CONTROLS + ATTACKS


def _text(vid: str) -> str:
    note = "$Id$" if vid.startswith("idn") else "n"
    return (
        f'plan:\n  name: "{vid}"\n  task: "remote {vid}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "record {vid}"\n    params:\n      tag: "{vid}"\n      note: "{note}"\n'
    )


def _encode(vid: str, text: str) -> bytes:
    if vid.startswith("crlf"):
        return text.replace("\n", "\r\n").encode()
    if vid.startswith("u16"):
        return text.encode("utf-16")
    return text.encode()


def _decode(vid: str, data: bytes) -> str:
    return data.decode("utf-16") if vid.startswith("u16") else data.decode()


def _approve_hand(lab: Lab, vid: str) -> None:
    path = lab.repo / "plans" / vid / "PLAN.yml"
    text = _decode(vid, path.read_bytes())
    assert "  status: pending_approval" in text, text[:300]
    text = text.replace("  status: pending_approval", "  status: approved", 1)
    path.write_bytes(text.encode("utf-16") if vid.startswith("u16") else text.encode())


def _marks(lab: Lab) -> int:
    mark = lab.root / "MARK"
    return len(mark.read_text().splitlines()) if mark.exists() else 0


def _clean(lab: Lab, when: str) -> None:
    out = lab.git("status", "--porcelain")
    lab.dirty.append((when, out))  # type: ignore[attr-defined]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.dirty, lab.passes, lab.filter_runs, lab.cli_out = [], [], [], {}  # type: ignore[attr-defined]
    mark = root / "MARK"
    lab.git("config", "filter.evil.clean", f"sh -c 'echo clean >> {mark}; cat'")
    lab.git("config", "filter.evil.smudge", f"sh -c 'echo smudge >> {mark}; cat'")
    (lab.repo / ".gitattributes").write_text(ATTRS)
    for vid in VIDS:
        lab.write(vid, _encode(vid, _text(vid)))
    lab.commit("plans and attributes")
    with served(lab) as url:

        def run(when: str) -> None:
            before = _marks(lab)
            res = lab.run(check=False)
            lab.passes.append((when, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))  # type: ignore[attr-defined]
            lab.filter_runs.append((when, _marks(lab) - before))  # type: ignore[attr-defined]

        def pull(when: str) -> None:
            lab.git("pull", "-q", "--rebase", "origin", "refs/heads/main")
            _clean(lab, when)

        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        run("freeze")
        pull("freeze")
        # phase 1: the controls
        for vid in HAND:
            _approve_hand(lab, vid)
        lab.commit("approve hand controls", ALICE)
        for vid in CLI:
            lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
            before = _marks(lab)
            res = lab.cli("approve", f"plans/{vid}", "--config", str(lab.config), cwd=lab.repo)
            lab.extra_env = {}  # type: ignore[attr-defined]
            lab.cli_out[vid] = (res.returncode, res.stdout + res.stderr, _marks(lab) - before)  # type: ignore[attr-defined]
        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        run("phase1")
        pull("phase1")
        # phase 2: a forced push between her approval and the fetch
        _approve_hand(lab, "rwd")
        a1 = lab.commit("approve rwd", ALICE)
        _approve_hand(lab, "rwc")
        _approve_hand(lab, "rws")
        a2 = lab.commit("approve rwc rws", ALICE)
        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        lab.git("reset", "-q", "--hard", f"{a1}^")
        path = lab.repo / "plans" / "rwc" / "PLAN.yml"
        path.write_text(
            path.read_text().replace('      note: "n"\n', '      note: "n"\n      evil: "yes"\n')
        )
        (lab.repo / "notes.txt").write_text("agent notes\n")
        lab.commit("agent: tidy", AGENT)
        lab.git("cherry-pick", "--allow-empty", a2, who=AGENT)
        lab.git("push", "-q", "--force", "origin", "HEAD:refs/heads/main")
        run("phase2")
        pull("phase2")
        # phase 3: approvals on refs named like the branch
        _approve_hand(lab, "late")
        lab.commit("approve late", ALICE)
        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        tip = lab.head()
        pushed = {}
        for vid, ref in (
            ("tagm", "refs/tags/main"),
            ("orm", "refs/heads/origin/main"),
            ("rpl", f"refs/replace/{tip}"),
        ):
            lab.git("checkout", "-q", "--detach", tip)
            _approve_hand(lab, vid)
            side = lab.commit(f"approve {vid}", ALICE)
            res = subprocess.run(
                ["git", "push", "-q", "origin", f"{side}:{ref}"],
                cwd=lab.repo, env=lab.env(), capture_output=True, text=True, check=False,
            )  # fmt: skip
            pushed[vid] = (ref, res.returncode, res.stderr[-300:])
        lab.pushed = pushed  # type: ignore[attr-defined]
        lab.git("checkout", "-q", "main")
        run("phase3")
        pull("phase3")
        # phase 4: a branch whose name is the branch's full ref name
        _approve_hand(lab, "late2")
        lab.commit("approve late2", ALICE)
        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        tip = lab.head()
        lab.git("checkout", "-q", "--detach", tip)
        _approve_hand(lab, "hdm")
        side = lab.commit("approve hdm", ALICE)
        lab.git("push", "-q", "origin", f"{side}:refs/heads/refs/heads/main")
        lab.git("checkout", "-q", "main")
        lab.git("reset", "-q", "--hard", tip)
        run("phase4")
        run("phase4b")
        pull("phase4")
        lab.git("add", "--renormalize", ".")
        lab.renorm = lab.git("status", "--porcelain")  # type: ignore[attr-defined]
        lab.git("reset", "-q")
        clone = root / "fresh"
        subprocess.run(["git", "clone", "-q", url, str(clone)], env=lab.env(), check=True)
        out = lab.cli("audit", "--json", cwd=clone)
        lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
        lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]
        lab.rows = lab.status()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-remoteattrs", _build)


BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r79remote): the run and the audit
NONE: dict[str, Any] = {}
PASS_BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r79remote)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_ran(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    if vid in CONTROLS:
        assert len(calls) == 1, (lab.cli_out.get(vid), lab.codes(vid)[-1500:])  # type: ignore[attr-defined]
        got = json.loads(calls[0]["stdin"])
        note = "$Id$" if vid.startswith("idn") else "n"
        assert got.get("note") == note and "evil" not in got, got
    else:
        assert calls == [], (calls, lab.codes(vid)[-1500:])


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == (1 if vid in CONTROLS else 0), (runs, lab.audit_err)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, NONE))
def test_clean(lab: Lab, vid: str) -> None:
    dirty = [(w, o) for w, o in lab.dirty if f"plans/{vid}/" in o]  # type: ignore[attr-defined]
    assert dirty == [], dirty
    assert f"plans/{vid}/" not in lab.renorm, lab.renorm  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, NONE))
def test_nofilter(lab: Lab, vid: str) -> None:
    assert all(n == 0 for _, n in lab.filter_runs), lab.filter_runs  # type: ignore[attr-defined]
    if vid in CLI:
        code, out, marks = lab.cli_out[vid]  # type: ignore[attr-defined]
        assert code == 0 and marks == 0, (code, marks, out[-800:])


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, PASS_BROKEN))
def test_passes(lab: Lab, vid: str) -> None:
    phases = (
        ("phase4", "phase4b")
        if vid in ("hdm", "late2")
        else ("freeze", "phase1", "phase2", "phase3")
    )
    bad = [p for p in lab.passes if p[0] in phases and (p[1] != 0 or p[2])]  # type: ignore[attr-defined]
    assert bad == [], bad
