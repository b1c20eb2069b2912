"""Round 58, object store: the readers that still read the shared ``.git/objects`` (local
mode) against what the controller, reading its own store, does.

Since round 53 the controller reads history from ``<state_dir>/objects.git``; a forged object
under a name its store already holds is never fetched again, so the controller goes on
undisturbed (right: its copy is the true one). The reviewer's tools still read the shared
store: the daemon's page (docs/operations.md: "Plan files and logs are read from the branch
at the snapshot's head (``git ls-tree``, then the blob), never from the working tree an agent
may write"), ``plangate approve``'s "uncommitted edits" check.

Lab: plain approvals (Alice), the daemon serving the page (``ui: {listen: 0}``). The agent
adds plan ``x`` whose action sends ``target: prod-db-DROP``; the controller freezes it. Then
the agent writes a one-object pack naming the frozen ``PLAN.yml`` blob for other bytes: the
same plan with ``target: staging``, its ``frozen.hash`` set to that text's own hash (so
nothing on the page looks stale). The working tree and index are untouched (they hold the
real frozen bytes; ``git status`` is clean).

- ``page-plan``: the reviewer opens ``/api/plan/plans/x`` (and ``/plan/plans/x``). Asserted:
  the page shows the params the branch holds (``prod-db-DROP``), or says something is wrong
  (a problem, ``STALE``, an error).
- ``page-hash``: asserted: the hash the page gives for the plan is the frozen hash the
  controller holds (its status row).
- ``approve-named``: Alice runs ``plangate approve plans/x`` in the shared checkout (the
  README's step 3). Asserted: it approves, or its refusal names the real cause (the object
  store: ``fsck``/object), not "uncommitted edits" of a clean checkout.
- ``page-outcome``: after the run, the agent shadows the outcome commit's ``PLAN.yml`` and
  ``EXECUTION_LOG.md`` blobs with ``prod-db-DROP`` written as ``staging``. Asserted: the
  page says what ran (``prod-db-DROP``) or shows a problem.
- ``controller-says``: asserted: some pass of the controller names the forged shared store
  (``E_GIT`` or ``fsck``) while the packs are there (it needs none of those objects, so it
  could stay silent; the operator is then never told).
- ``status``: ``plangate status --json`` (no daemon, so without the lock) gives the frozen
  hash the controller holds.
- ``show``: ``plangate show plans/x/PLAN.yml`` in the shared checkout shows ``prod-db-DROP``.
- ``runs-approved``: Alice approves by editing the status line and committing in the shared
  checkout; asserted: the controller runs exactly what her commit holds (``prod-db-DROP``),
  once, and the pass does not stop (nothing the branch needs is forged).

Seen: ``page-plan`` and ``page-hash`` BROKE (strict xfails): the page showed ``target:
staging`` with hash ``H(staging)`` and no warning while the branch, and the controller, hold
``prod-db-DROP``; the reviewer who reads the page and flips the status line approves a
target she never saw (``runs-approved``: it ran, as the branch says it should).
``page-outcome`` BROKE: after ``prod-db-DROP`` ran, the page said ``staging`` ran (params,
log, the tool's echoed result), no problem shown. ``approve-named`` BROKE: ``E_USAGE ... has
uncommitted edits; approving would not cover what you see`` on a clean checkout (``git
status`` says nothing to commit): the honest approver is stopped under a wrong name.
``controller-says`` BROKE: every pass exits 0 and says nothing while the shared store holds
the packs (the controller needs none of those objects), so nobody is told to ``git fsck``.
Held: ``runs-approved`` (the controller ran what her commit holds, once; its own store is
whole), ``status`` (the real frozen hash), ``show`` (it reads the working tree:
``prod-db-DROP``).

Fixed (2026-11-29): every object read from a store the controller did not verify (a person's
``approve``/``show``/``status``/``audit`` in the shared checkout, GitPython's ``cat-file``, the
scans' ``cat-file --batch`` streams) is hashed against its name, and paths are walked through
checked trees instead of git's ``<commit>:<path>``; a mismatch is ``E_GIT`` naming the object
and the object store, remedy ``git fsck`` and fetching it again from a clone
(``approve-named``). The daemon's page (plan, log, audit, commit pages) reads the controller's
own store, as the controller does (``page-plan``, ``page-hash``, ``page-outcome``). The intake
hashes the shared store's copy of each blob a new commit replaces (the version the approver
read there) and the pass logs ``shared_store.forged`` (``E_GIT``, the names, ``git fsck``)
when one does not match; the controller goes on with its own copies (``controller-says``).

Fix direction (as the attacker wrote it): the page (and ``approve``'s edit check) read objects
through the controller's store, or check each object they read against its name (read, then
rehash) and say ``E_GIT ... run git fsck``; the pass could compare the shared store's copies of
the tip's plan files with its own and warn.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from oraclekit import ui_daemon
from test_round2_execution_kit import shared
from test_round53_approve_packshadow import shadow
from test_round61_surface_page import _get

VIDS = [
    "page-plan",
    "page-hash",
    "approve-named",
    "runs-approved",
    "page-outcome",
    "controller-says",
    "status",
    "show",
]
BROKEN: dict[str, object] = {}  # all fixed (2026-11-29), see the module docstring


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.config.write_text(lab.config.read_text() + "ui: {listen: 0}\n")
    lab.write("x", plan_text("x", params='target: "prod-db-DROP"\n'))
    lab.commit("agent adds x", AGENT)
    lab.run()
    frozen_blob = lab.head("HEAD:plans/x/PLAN.yml")
    real = lab.read("x")
    benign = real.replace("prod-db-DROP", "staging")
    scratch = root / "benign.yml"
    scratch.write_text(benign)
    own = lab.cli("hash", str(scratch)).stdout.strip().split()[-1]
    benign = re.sub(r"(\n  hash: )\S+", lambda m: m.group(1) + own, benign, count=1)
    scratch.write_text(benign)
    forged = lab.git("hash-object", "-w", str(scratch)).strip()
    shadow(lab, frozen_blob, forged)
    lab.row_hash = lab.status()["plans/x"]["hash"]  # type: ignore[attr-defined]
    lab.real_hash = re.search(r"\n  hash: (\S+)", real).group(1)  # type: ignore[attr-defined, union-attr]
    shown = lab.cli("show", "plans/x/PLAN.yml", "--config", str(lab.config), cwd=lab.repo)
    lab.shown = shown.stdout  # type: ignore[attr-defined]
    lab.git_status = lab.git("status", "--porcelain")  # type: ignore[attr-defined]
    lab.api, lab.html = _page(lab)  # type: ignore[attr-defined]
    time.sleep(1.1)
    approve = lab.cli("approve", "plans/x", "--config", str(lab.config), cwd=lab.repo)
    lab.approve_out = (approve.returncode, approve.stdout + approve.stderr)  # type: ignore[attr-defined]
    if approve.returncode != 0:  # she flips the line by hand
        lab.approve("x", ALICE)
    lab.passes = [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    # what ran, as the page tells it after the agent shadows the outcome's blobs
    for name in ("PLAN.yml", "EXECUTION_LOG.md"):
        blob = lab.head(f"HEAD:plans/x/{name}")
        text = lab.git("cat-file", "blob", blob).replace("prod-db-DROP", "staging")
        scratch.write_text(text)
        shadow(lab, blob, lab.git("hash-object", "-w", str(scratch)).strip())
    lab.after_api, lab.after_html = _page(lab)  # type: ignore[attr-defined]
    lab.after_passes = [lab.run(check=False)]  # type: ignore[attr-defined]
    return lab


def _page(lab: Lab) -> tuple[str, str]:
    """The daemon's page for ``plans/x`` (the daemon started for the read, on a port of its
    own choosing, then stopped)."""
    with ui_daemon(lab, lab.config, "plans/x") as port:
        return _get(port, "/api/plan/plans/x")[2], _get(port, "/plan/plans/x")[2]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-readers", _build)


def _check(lab: Lab, vid: str) -> None:
    api = json.loads(lab.api)  # type: ignore[attr-defined]
    if vid == "page-plan":
        params = api["document"]["actions"][0]["params"]
        flagged = api.get("problems") or "STALE" in lab.html  # type: ignore[attr-defined]
        assert params.get("target") == "prod-db-DROP" or flagged, (params, api.get("problems"))
    elif vid == "page-hash":
        assert api["hash"] == lab.row_hash, (api["hash"], lab.row_hash)  # type: ignore[attr-defined]
    elif vid == "approve-named":
        assert lab.git_status == "", lab.git_status  # type: ignore[attr-defined]
        code, out = lab.approve_out  # type: ignore[attr-defined]
        assert code == 0 or re.search(r"fsck|object", out), out
    elif vid == "runs-approved":
        for result in lab.passes:  # type: ignore[attr-defined]
            assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[
                -1500:
            ]
        ran = lab.calls("x")
        assert len(ran) == 1 and json.loads(ran[0]["stdin"])["target"] == "prod-db-DROP", ran
    elif vid == "status":
        assert lab.row_hash == lab.real_hash, (lab.row_hash, lab.real_hash)  # type: ignore[attr-defined]
    elif vid == "show":
        assert "prod-db-DROP" in lab.shown and "staging" not in lab.shown, lab.shown  # type: ignore[attr-defined]
    elif vid == "page-outcome":
        after = json.loads(lab.after_api)  # type: ignore[attr-defined]
        shown = json.dumps(after) + lab.after_html  # type: ignore[attr-defined]
        assert "prod-db-DROP" in shown or after.get("problems"), after.get("problems")
    elif vid == "controller-says":
        passes = lab.passes + lab.after_passes  # type: ignore[attr-defined]
        said = " ".join(r.stderr for r in passes)
        assert re.search(r"E_GIT|fsck", said), "no pass named the forged shared store"


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_what_the_readers_say(lab: Lab, vid: str) -> None:
    _check(lab, vid)
