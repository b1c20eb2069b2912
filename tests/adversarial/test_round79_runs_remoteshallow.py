"""Round 79 (runs): a remote that serves a shallow history. docs/threat-model.md: "a shallow
repository is refused by the audit and by the controller (history cut off cannot say who
wrote what)" (``E_GIT``, ``git fetch --unshallow``); round 79 asks it of REMOTE mode, where the
controller makes its own clone from whatever the forge serves.

Lab (one). History: the agent commits ``plans/ag`` (``rec`` tag ``ag``), ALICE commits her own
plan ``plans/own`` (tag ``own``), Bob commits an unrelated ``notes.txt``. ``git daemon`` serves
three bare repositories of it: ``full.git`` (the whole history), ``d1.git`` (``git clone --bare
--depth 1``: Bob's commit is the boundary, so both plans look added by Bob) and ``d2.git``
(``--depth 2``: Alice's commit is the boundary). For each, a fresh controller (its own config
and state directory, remote mode on that url) makes a pass (freeze); Alice clones that url,
sets both plans ``approved`` in one commit and pushes; two more passes. Only the ``rec`` calls
made during each repository's passes are counted.

Variants (per served repository ``<r>`` of ``full``, ``d1``, ``d2``): ``<r>-own`` (ATTACK:
Alice's approval of the plan she wrote must never run, ``E_SELF_APPROVAL`` or the shallow
history refused ``E_GIT``); ``<r>-ag`` (``full-ag`` is the CONTROL: the agent's plan runs once;
on a shallow remote it may run once or be held, never twice); ``<r>-passes`` (no pass
traceback; on ``full`` every pass exits 0; on a shallow remote the docs' refusal: a non-zero
exit naming ``E_GIT``).

Seen (round 79): BROKEN (3 ids, 2 classes), all fixed (2026-12-01, r79remote): no pass judges
or runs from history git holds shallow (``Refs.check_complete`` reads the ``shallow`` file of
the clone, a linked worktree's git directory and local mode's store; ``GitRepo.clone_bare``
refuses a clone that comes back shallow and does not keep it, so every pass on ``d1.git`` and
``d2.git`` exits 2 ``E_GIT`` "the remote serves main as a shallow history" with the remedy
``git fetch --unshallow`` in the repository it serves, freezing, running and pushing nothing;
``Refs.fetch`` refuses a fetch git rejects for a boundary the clone never saw, and an existing
clone with ``shallow`` is refused when opened). As seen: ``d1-own`` (self-approval through a
shallow remote): the forge serves ``d1.git``, a ``--depth 1`` copy whose boundary is Bob's unrelated
commit, so the whole tree looks added by Bob; a fresh remote controller cloned it (its clone
has ``shallow``), froze ``plans/own``, and on ALICE's approval of the plan SHE wrote committed
``start``/``complete plans/own``: ``rec`` ran ``own`` once (``full.git``, the same history
whole, refused ``E_SELF_APPROVAL``; so did ``d2.git``, whose boundary is her own commit).
``d1-passes``, ``d2-passes``: every pass on the shallow remotes exited 0, froze and pushed.
Should (docs/threat-model.md, "``plangate audit`` of a shallow clone": "a shallow repository
is refused by the audit and by the controller (history cut off cannot say who wrote what)",
``E_GIT`` with the remedy ``git fetch --unshallow``; SPEC §15 "none of whom wrote it"): the
remote controller refuses a clone or fetch that comes back shallow, ``E_GIT``, and runs
nothing until the remote serves its whole history. Held: ``full-own``/``d2-own`` never ran
(``E_SELF_APPROVAL``); ``full-ag`` ran once (control); ``d1-ag`` ran once, ``d2-ag`` was
refused ``E_SELF_APPROVAL`` (Alice, the boundary's author, looked like its writer: the safe
side); no traceback anywhere. Not asserted: the audit (a fresh clone of a shallow remote is
itself shallow, which the audit refuses).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port, identity, wait_for

REPOS = ["full", "d1", "d2"]
VIDS = [f"{r}-{k}" for r in REPOS for k in ("own", "ag", "passes")]


def _set_approved(path: Path) -> None:
    path.write_text(path.read_text().replace("  status: pending_approval", "  status: approved", 1))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("ag", plan_text("ag"))
    lab.commit("agent plan", AGENT)
    lab.write("own", plan_text("own"))
    lab.commit("alice plan", ALICE)
    (lab.repo / "notes.txt").write_text("n\n")
    lab.commit("notes", BOB)
    served = root / "served"
    served.mkdir()
    src, env = f"file://{lab.repo}", lab.env()
    for name, extra in (("full", []), ("d1", ["--depth", "1"]), ("d2", ["--depth", "2"])):
        subprocess.run(
            ["git", "clone", "-q", "--bare", *extra, src, str(served / f"{name}.git")],
            env=env, check=True,
        )  # fmt: skip
    port = free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={served}", "--listen=127.0.0.1", f"--port={port}", str(served)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    lab.outcome, lab.ran, lab.pushed = {}, {}, {}  # type: ignore[attr-defined]
    base = lab.config.read_text()
    try:
        wait_for(port)
        for r in REPOS:
            url = f"git://127.0.0.1:{port}/{r}.git"
            remote = f"remote: {{url: {json.dumps(url)}, branch: main}}\n"
            state = f"state_dir: {root / ('state-' + r)}\n"
            text = base.replace(f"repo: {lab.repo}\n", remote)
            lab.config.write_text(text.replace(f"state_dir: {lab.state}\n", state))
            start = len(lab.log.read_text().splitlines()) if lab.log.exists() else 0
            passes = [lab.run(check=False)]
            work = root / f"alice-{r}"
            subprocess.run(["git", "clone", "-q", url, str(work)], env=env, check=True)
            for slug in ("ag", "own"):
                _set_approved(work / "plans" / slug / "PLAN.yml")
            aenv = {**env, **identity(ALICE)}
            subprocess.run(["git", "commit", "-qam", "approve"], cwd=work, env=aenv, check=True)
            push = subprocess.run(
                ["git", "push", "-q", "origin", "HEAD:refs/heads/main"],
                cwd=work, env=aenv, capture_output=True, text=True, check=False,
            )  # fmt: skip
            lab.pushed[r] = (push.returncode, push.stderr[-500:])  # type: ignore[attr-defined]
            passes += [lab.run(check=False) for _ in range(2)]
            rows = lab.log.read_text().splitlines()[start:] if lab.log.exists() else []
            tags = [json.loads(x)["argv"][0] for x in rows if x.strip()]
            lab.ran[r] = tags  # type: ignore[attr-defined]
            lab.outcome[r] = [(p.returncode, p.stderr[-1500:]) for p in passes]  # type: ignore[attr-defined]
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(timeout=180)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-remoteshallow", _build)


BROKEN: dict[str, Any] = {}  # all fixed (2026-12-01, r79remote)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_shallow_remote(lab: Lab, vid: str) -> None:
    r, kind = vid.split("-")
    tags, out = lab.ran[r], lab.outcome[r]  # type: ignore[attr-defined]
    if kind == "own":
        assert "own" not in tags, (tags, out[-1][1][-800:])
    elif kind == "ag":
        assert tags.count("ag") == (1 if r == "full" else tags.count("ag")) <= 1, (tags, out)
        assert tags.count("ag") <= 1, tags
    else:
        assert all("Traceback" not in err for _, err in out), out
        if r == "full":
            assert [c for c, _ in out] == [0, 0, 0], out
        else:
            assert all(c != 0 and "E_GIT" in err for c, err in out), (out, lab.pushed[r])  # type: ignore[attr-defined]
