"""Round 100, approval (atk100a): REMOTE mode over a real ``git daemon`` on 127.0.0.1, the
served branch rewound, force-pushed or fed from other refs between the controller's passes,
and votes of a quorum that the branch stops showing.

Lab (one, ``writerkit.served``; policy: Alice or ``*@ops.example.com``; ``plans/t*/**`` need
three approvals, ``plans/q*/**`` two, the rest one). The agent pushes one ``rec`` plan per
variant; a pass freezes them. Then, variant by variant (each acting on the branch's tail, a
pass after every push, every pass's exit code kept):

- ``sc`` (control): Alice approves: runs once. ``qc`` (control): Alice, then Bob: runs once.
- ``qe``: Alice votes (the controller pushes ``partial``); the branch is force-pushed back to
  the commit before her vote (her vote and the ``partial`` gone: "a refusal or
  partial-quorum commit that a rewrite erases holds nothing: the next pass decides again from
  what remains", docs/approvals.md); a pass; Bob pulls and votes; a pass.
- ``qd``: ``qe`` under the daemon (``plangate run``, ``poll_interval: 0.2``): Alice votes, the
  daemon pushes ``partial``, the branch is force-pushed back, 3 s later the daemon is stopped
  (SIGTERM); Bob pulls and votes; a ``run --once`` pass.
- ``qb``: Alice votes (``partial`` pushed); Bob's vote, made on the commit before hers, is
  force-pushed over it (the two voted in parallel, hers lost); a pass.
- ``qv``: Alice votes (``partial``); the agent force-pushes the commit before her vote plus
  an edit of the plan (v2); a pass freezes v2; Bob votes; a pass.
- ``qr``: Bob rejects (a pass sees it); the agent force-pushes the commit before the
  rejection with Alice's approval on top; a pass.
- ``tf`` (three needed): Alice votes (``partial``); the agent commits, under the controller's
  name with the ``partial`` commit's message (its ``Controller-Seal:`` copied), the file with
  Bob added to ``approval.approvals`` (naming her commit); a pass; Carol votes; a pass.
- ``ra``: Alice approves v1 on a review branch ``review-ra`` (pushed, never merged); the
  agent edits the plan on main (v2), a pass freezes v2; the agent cherry-picks her review
  commit onto main; a pass.
- ``rfm``/``rrm``: Alice's approval only on ``refs/for/main`` / ``refs/remotes/origin/main``
  of the served repository (``refs/main``, first in git's look-up order, is refused by
  ``receive-pack`` as a funny ref name); two passes.
- ``sd``: Alice pushes her own plan as ``draft``; a pass reads it; the agent force-pushes the
  same tree as its own commit (her commit gone); a pass; the agent submits it
  (``pending_approval``); a pass freezes it; Alice approves her own plan; a pass.

A fresh ``git clone git://...`` is audited at the end (history alone).

Ids ``<vid>:ran`` (``rec`` calls: controls exactly one and ``completed``, attacks none),
``<vid>:audit`` (the fresh clone's valid runs: one for a control, none for an attack),
``<vid>:row`` (``status --json``: controls ``completed``; attacks not ``completed``, with the
expected code where one is due), ``<vid>:erased`` (the rewinds: the human commits the
force-push removed are not on the served ``main`` at the end: the controller pushes only what
it made and never puts back what the branch dropped), ``passes:<phase>`` (no traceback, exit 0).

Seen (round 100): 54 ids, 8 broke, one class (``{qe,qd}:{ran,audit,row,erased}``): **the
controller puts an erased vote back on the branch**. After the served
``main`` was force-pushed back to the commit before Alice's vote (her commit and the
controller's ``partial plans/qe`` gone), the next ``run --once`` exited 0, logged nothing
about a rewrite, and pushed its clone's old tip again (a fast-forward of the served branch
back to ``partial plans/qe``), so her removed vote was on ``main`` again; Bob pulled, voted,
and the plan ran (``start``/``complete plans/qe``, ``approval.approvals`` naming her erased
commit), the fresh-clone audit calling the run valid (the history now holds both votes).
The daemon (``qd``) did the same within 3 s of the force-push.
Should (docs/approvals.md, "A rewritten branch": "a refusal or partial-quorum commit that a
rewrite erases holds nothing: the next pass decides again from what remains"; SPEC §7, §15:
the controller commits and pushes only what it made): a tip the remote no longer has is
not pushed back with the commits of others under it; the vote the branch dropped is gone,
Bob's vote is one of two. Likely the "left commits without a start are pushed as before"
sync of round 92 (a commit above the remote's tip taken for one a crash left unpushed),
which cannot tell its own unpushed commit from one the remote had and dropped.

Held: a rewrite that is not a fast-forward back (Bob's parallel vote force-pushed over hers
``qb``; the rewind with a new version on top ``qv``) dropped her vote (``partial``, one of
two); an erased rejection Bob made (``qr``) withdrew the version (``E_VERSION_WITHDRAWN``);
a forged ``partial`` record under the controller's name with the seal copied (``tf``) added
no vote (two of three after Carol); her review-branch approval cherry-picked onto the agent's
v2 (``ra``) was ``E_APPROVAL_REPLAYED``; approvals on ``refs/for/main`` and
``refs/remotes/origin/main`` were never read; her draft re-made as the agent's commit by a
force-push (``sd``) stayed hers (``E_SELF_APPROVAL``); every pass exited 0.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    CAROL,
    Lab,
    brief,
    cases,
    plan_text,
    served_audit,
    until,
    valid_runs,
)
from test_round2_execution_kit import shared
from writerkit import served

RULES = """\
rules:
  - match: {paths: ["plans/t*/**"]}
    require: [{count: 3}]
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
"""
CONTROLS = ["sc", "qc"]
ATTACKS = ["qe", "qd", "qb", "qv", "qr", "tf", "ra", "rfm", "rrm", "sd"]
VIDS = CONTROLS + ATTACKS
#: the code the row of an attack names (None: no particular code, only not completed)
CODES: dict[str, str | None] = {
    "qe": None,
    "qd": None,
    "qb": None,
    "qv": None,
    "qr": "E_VERSION_WITHDRAWN",
    "tf": None,
    "ra": "E_APPROVAL_REPLAYED",
    "rfm": None,
    "rrm": None,
    "sd": "E_SELF_APPROVAL",
}
ERASING = ["qe", "qd", "qb", "qv", "qr", "sd"]


def _bgit(lab: Lab, *args: str) -> str:
    res = subprocess.run(
        ["git", "-C", str(lab.root / "served" / "origin.git"), *args],
        env=lab.env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return res.stdout.strip()


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in VIDS:
        if vid != "sd":
            lab.write(vid, plan_text(vid))
    lab.commit("agent: plans", AGENT)
    passes: list[tuple[str, int, bool, str]] = []
    erased: dict[str, list[str]] = {}
    lab.pushed = {}  # type: ignore[attr-defined]
    with served(lab) as url:

        def run(phase: str) -> None:
            res = lab.run(check=False)
            passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))

        def push(force: bool = False, ref: str = "HEAD:refs/heads/main") -> None:
            lab.git("push", "-q", *(["--force"] if force else []), "origin", ref)

        def pull() -> None:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")

        def step(phase: str, force: bool = False) -> None:
            push(force)
            run(phase)
            pull()

        step("freeze")
        # controls
        lab.approve("sc")
        lab.approve("qc")
        step("controls")
        lab.approve("qc", BOB)
        step("controls")
        # qe: her vote seen, then the branch rewound to before it; Bob votes after a pass
        base = lab.head()
        erased["qe"] = [lab.approve("qe")]
        step("qe")
        lab.git("reset", "-q", "--hard", base)
        step("qe", force=True)
        lab.approve("qe", BOB)
        step("qe")
        # qb: her vote seen; Bob's parallel vote force-pushed over it
        base = lab.head()
        erased["qb"] = [lab.approve("qb")]
        step("qb")
        lab.git("reset", "-q", "--hard", base)
        lab.approve("qb", BOB)
        step("qb", force=True)
        # qv: her vote seen; rewound with a new version on top; v2 frozen; Bob votes
        base = lab.head()
        erased["qv"] = [lab.approve("qv")]
        step("qv")
        lab.git("reset", "-q", "--hard", base)
        lab.write("qv", lab.read("qv").replace('tag: "qv"', 'tag: "qv"\n      v: 2'))
        lab.commit("agent: qv v2", AGENT)
        step("qv", force=True)
        lab.approve("qv", BOB)
        step("qv")
        # qr: Bob's rejection seen; rewound with Alice's approval on top
        base = lab.head()
        lab.set_status("qr", "rejected")
        erased["qr"] = [lab.commit("reject qr", BOB)]
        step("qr")
        lab.git("reset", "-q", "--hard", base)
        lab.approve("qr")
        step("qr", force=True)
        # tf: a forged partial record adding Bob's vote, the seal copied
        lab.approve("tf")
        step("tf")
        real = lab.git("log", "-1", "--format=%B")
        assert "partial plans/tf" in real, real
        text = lab.read("tf")
        at = re.search(r"  - by: alice@example.com\n(    .*\n)+", text)
        assert at, text
        bob = at.group(0).replace("alice@example.com", "bob@ops.example.com")
        lab.write(
            "tf",
            text.replace(at.group(0), at.group(0) + bob).replace(
                "2 more approvals", "1 more approval"
            ),
        )
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", real, who=BOT)
        step("tf")
        lab.approve("tf", CAROL)
        step("tf")
        # ra: her review-branch approval of v1 cherry-picked onto v2
        tip = lab.head()
        lab.git("checkout", "-q", "-b", "review-ra", tip)
        review = lab.approve("ra")
        lab.git("push", "-q", "origin", "review-ra")
        lab.git("checkout", "-q", "main")
        lab.git("reset", "-q", "--hard", tip)
        time.sleep(1.1)
        lab.write("ra", lab.read("ra").replace('tag: "ra"', 'tag: "ra"\n      v: 2'))
        lab.commit("agent: ra v2", AGENT)
        step("ra")
        lab.git("cherry-pick", review, who=AGENT)
        step("ra")
        # rfm, rrm: approvals only on refs that are not the branch
        tip = lab.head()
        for vid, ref in (("rfm", "refs/for/main"), ("rrm", "refs/remotes/origin/main")):
            lab.git("checkout", "-q", "--detach", tip)
            side = lab.approve(vid)
            res = subprocess.run(
                ["git", "push", "-q", "origin", f"{side}:{ref}"],
                cwd=lab.repo, env=lab.env(), capture_output=True, text=True, check=False,
            )  # fmt: skip
            lab.pushed[vid] = (ref, res.returncode, res.stderr[-300:])  # type: ignore[attr-defined]
        lab.git("checkout", "-q", "-f", "main")
        lab.git("reset", "-q", "--hard", tip)
        run("refs")
        run("refs")
        pull()
        # sd: her draft read by a pass, then re-made as the agent's commit
        base = lab.head()
        lab.write("sd", plan_text("sd", status="draft"))
        erased["sd"] = [lab.commit("alice: my plan sd", ALICE)]
        step("sd")
        if lab.head() == erased["sd"][0]:  # nothing of the controller's on top: rewrite it
            lab.git("reset", "-q", "--soft", base)
            lab.git("commit", "-q", "-m", "agent: plan sd", who=AGENT)
            step("sd", force=True)
        lab.set_status("sd", "pending_approval")
        lab.commit("agent: submit sd", AGENT)
        step("sd")
        lab.approve("sd")
        step("sd")
        # qd: qe under the daemon (``plangate run``, polling every 0.2 s)
        base = lab.head()
        erased["qd"] = [lab.approve("qd")]
        push()
        env = lab.env()
        env["REC_LOG"] = str(lab.log)
        daemon = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            seen = until(
                lambda: "partial plans/qd" in _bgit(lab, "log", "-1", "--format=%s", "main")
            )
            lab.git("push", "-q", "--force", "origin", f"{base}:refs/heads/main")
            time.sleep(3)
            lab.daemon_seen = (seen, _bgit(lab, "log", "-3", "--format=%h %an %s", "main"))  # type: ignore[attr-defined]
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=180)
        pull()
        lab.approve("qd", BOB)
        step("qd")
        run("last")
        pull()
        served_audit(lab, url, root / "fresh")
        main = set(_bgit(lab, "rev-list", "refs/heads/main").split())
        lab.erased_back = {v: [c for c in cs if c in main] for v, cs in erased.items()}  # type: ignore[attr-defined]
        lab.remote_log = _bgit(lab, "log", "--format=%h %an %s", "refs/heads/main")  # type: ignore[attr-defined]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r100-approve-atk100a", _build)


PHASES = ["freeze", "controls", "qe", "qd", "qb", "qv", "qr", "tf", "ra", "refs", "sd", "last"]
IDS = [f"{v}:{w}" for v in VIDS for w in ("ran", "audit", "row")]
IDS += [f"{v}:erased" for v in ERASING]
IDS += [f"passes:{p}" for p in PHASES]
#: qe, qd (erasedvote): fixed (2026-12-04, r100rewind): the controller pushes only commits it
#: made; a clone holding commits the remote lost (a force-push) drops them
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round100_atk100a(lab: Lab, vid: str) -> None:
    slug, what = vid.split(":")
    if slug == "passes":
        mine = [p for p in lab.passes if p[0] == what]  # type: ignore[attr-defined]
        assert mine, lab.passes  # type: ignore[attr-defined]
        for name, code, tb, err in mine:
            assert not tb and code == 0, (name, code, err)
        return
    row = lab.got_rows.get(f"plans/{slug}", {})  # type: ignore[attr-defined]
    want = 1 if slug in CONTROLS else 0
    if what == "ran":
        assert lab.ran[slug] == want, (lab.ran, brief(row), lab.remote_log[:1500])  # type: ignore[attr-defined]
        if want:
            assert row.get("status") == "completed", brief(row)
        return
    if what == "audit":
        assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
        runs = valid_runs(lab.report, slug)  # type: ignore[attr-defined]
        assert len(runs) == want, (runs, lab.audit_err)  # type: ignore[attr-defined]
        return
    if what == "row":
        if want:
            assert row.get("status") == "completed", brief(row)
            return
        assert row and row.get("status") != "completed", brief(row)
        code = CODES.get(slug)
        if code:
            assert code in json.dumps(row), brief(row)
        return
    assert what == "erased"
    assert lab.erased_back[slug] == [], (lab.erased_back, lab.remote_log[:1500])  # type: ignore[attr-defined]
