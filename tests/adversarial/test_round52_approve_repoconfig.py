"""Round 52, self-approval through the shared repository's own ``.git/config``: rename-pairing
settings that decide whether git pairs a moved file with its source.

docs/threat-model.md: "The repository's own config (local and worktree scopes, and files they
include) chooses nothing for the controller"; docs/approvals.md / round 50: "a plan's writers
follow its bytes through git's whole-tree rename/copy pairing wherever they are parked". In
local mode the agent writes ``.git/config``. A fresh clone has none of it, so whatever the
controller decides under such a key the fresh-clone ``plangate audit`` must decide too.

Config: the bench's. Each lab sets its keys with ``git config`` in the watched repository
(``diff.renameLimit=1``; ``merge.renameLimit=1``; ``diff.renames=false`` with
``merge.renames=false`` and ``status.renames=false``; ``diff.renames=copies``;
``core.bigFileThreshold=1``; ``include.path=limit.cfg`` naming ``.git/limit.cfg`` that sets
``diff.renameLimit=1``; a control lab with none). Alice (an allowed approver) commits each
``plans/<vid>a/PLAN.yml`` as ``draft``.
Then the agent, in its own commits:

- ``park``: ``git mv plans/parka parked/park`` (out of the plan paths), then a later commit
  moves it back to ``plans/parkb`` with an edit of ``plan.task`` and adds two note files.
- ``parkfile``: the same with the lone file (``parked/parkfile.yml``) moved back into
  ``plans/parkfileb/PLAN.yml`` with the edit, in that same commit.
- ``othername``: ``plans/othernamea/PLAN.yml`` renamed to ``plans/othernamea/NOTES.yml`` in
  the parking commit (a file name the index reads as no plan), then moved with the edit to
  ``plans/othernameb/PLAN.yml`` in the same commit as ``park``'s return.
- ``mv2``: ``plans/mv2a`` and ``plans/mv2xa`` (both Alice's) moved to ``plans/mv2b`` /
  ``plans/mv2xb`` with an edit each in ONE commit.
- ``nest``: Alice's ``plans/nesta`` moved with an edit below the agent's plan
  ``plans/host`` (``plans/host/nest``) in one commit that also adds two note files; Alice
  approves ``plans/host`` (round 42: a moved plan's folder writers are carried to every
  folder above its new place).

The agent sets the moved plans ``pending_approval``; the controller freezes; Alice approves
each ``<vid>b`` (``host`` for ``nest``); two passes; then ``git clone`` of the repository and
``plangate audit --json`` in the clone.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never runs, the fresh-clone audit
lists no run.

Seen: under ``diff.renameLimit=1`` (set directly or through an included file) the
controller lost Alice as a writer of the plans the agent had parked out of the plan paths
and moved back (``park``, ``parkfile``, ``othername``): it started them on her own approval,
``rec`` ran, and the fresh-clone audit (no such config) flags ``start-without-approval``
(``E_SELF_APPROVAL``). ``mv2`` and ``nest`` (moves between plan folders) held under every
key, and every variant held under the other keys. ``pr`` (the return inside a merged pull
request, ``_build_pr``): the controller started it on Alice's approval and ``plangate check
--as alice`` in the watched repository predicted ``start``.

Fixed (round 52, issue 11): the rename/copy pairing of parked plan bytes
(``Lifecycle._pair_parked``) gives git its limit on the command line, ``-l7000``
(``lifecycle.PARKED_RENAME_LIMIT``, the number git's own merge uses), so the repository's
``diff.renameLimit`` (set directly or through ``include.path``) chooses nothing and a commit
of 1,001 + 1,001 files is still paired. Past 7,000 files on each side git pairs only exact
renames (documented limit, as for merges).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

CONFIGS = {
    "control": [],
    "difflimit": [("diff.renameLimit", "1")],
    "mergelimit": [("merge.renameLimit", "1")],
    "norenames": [
        ("diff.renames", "false"),
        ("merge.renames", "false"),
        ("status.renames", "false"),
    ],
    "copies": [("diff.renames", "copies")],
    "bigfile": [("core.bigFileThreshold", "1")],
    "includelimit": [("include.path", "limit.cfg")],
}
VIDS = ["park", "parkfile", "othername", "mv2", "nest"]
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 52: diff.renameLimit in the watched repository's .git/config stops the "
    "controller carrying a moved plan's writers (self-approval runs; the fresh-clone audit "
    "says E_SELF_APPROVAL)",
)
FOUND: set[tuple[str, str]] = set()  # round 52: fixed (see the docstring)


def _edit(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace('task: "attack variant', 'task: "tidied attack variant'))


def _approved(vid: str) -> str:
    return "host" if vid == "nest" else f"{vid}b"


def _build(root: Path, keys: list[tuple[str, str]]) -> Lab:
    lab = Lab(root)
    (lab.repo / ".git" / "limit.cfg").write_text("[diff]\n\trenameLimit = 1\n")
    for key, value in keys:
        lab.git("config", key, value)
    for slug in ["parka", "parkfilea", "othernamea", "mv2a", "mv2xa", "nesta"]:
        lab.write(slug, plan_text(slug[:-1], status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.write("host", plan_text("host"))
    lab.commit("agent writes host", AGENT)
    lab.run()
    (lab.repo / "parked").mkdir()
    lab.git("mv", "plans/parka", "parked/park")
    lab.git("mv", "plans/parkfilea/PLAN.yml", "parked/parkfile.yml")
    lab.git("mv", "plans/othernamea/PLAN.yml", "plans/othernamea/NOTES.yml")
    lab.commit("agent parks three plans", AGENT)
    lab.git("mv", "parked/park", "plans/parkb")
    _edit(lab.repo / "plans/parkb/PLAN.yml")
    (lab.repo / "plans/parkfileb").mkdir()
    lab.git("mv", "parked/parkfile.yml", "plans/parkfileb/PLAN.yml")
    _edit(lab.repo / "plans/parkfileb/PLAN.yml")
    (lab.repo / "plans/othernameb").mkdir()
    lab.git("mv", "plans/othernamea/NOTES.yml", "plans/othernameb/PLAN.yml")
    _edit(lab.repo / "plans/othernameb/PLAN.yml")
    (lab.repo / "notes").mkdir()
    for i in range(2):
        (lab.repo / f"notes/n{i}.txt").write_text(f"note {i}\n" * 5)
    lab.commit("agent brings them back tidied", AGENT)
    for src, dst in [("mv2a", "mv2b"), ("mv2xa", "mv2xb")]:
        lab.git("mv", f"plans/{src}", f"plans/{dst}")
        _edit(lab.repo / f"plans/{dst}/PLAN.yml")
    lab.commit("agent renames two plans", AGENT)
    lab.git("mv", "plans/nesta", "plans/host/nest")
    _edit(lab.repo / "plans/host/nest/PLAN.yml")
    for i in range(2):
        (lab.repo / f"notes/m{i}.txt").write_text(f"more {i}\n" * 5)
    lab.commit("agent nests a plan below host", AGENT)
    for slug in ["parkb", "parkfileb", "othernameb", "mv2b", "mv2xb"]:
        lab.set_status(slug, "pending_approval")
    lab.commit("agent submits", AGENT)
    lab.run()
    for vid in VIDS:
        lab.set_status(_approved(vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(fresh)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=fresh)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.fresh_audit = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module", params=list(CONFIGS))
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    name = request.param
    built = shared(tmp_path_factory, f"r52-repoconfig-{name}", lambda r: _build(r, CONFIGS[name]))
    built.cfg_name = name  # type: ignore[attr-defined]
    return built


@pytest.fixture(params=VIDS)
def vid(request: pytest.FixtureRequest, lab: Lab) -> str:
    if (lab.cfg_name, request.param) in FOUND:  # type: ignore[attr-defined]
        request.applymarker(BROKE)
    return str(request.param)


def test_her_moved_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = _approved(vid)
    tag = "host" if vid == "nest" else vid
    assert lab.calls(tag) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    runs = [
        e
        for e in lab.fresh_audit.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{_approved(vid)}"
    ]
    assert runs == [], runs


def _build_pr(root: Path) -> Lab:
    """``pr``: under ``diff.renameLimit=1``, Alice's draft ``plans/pka`` parked by the agent on
    main; the return with the edit and two note files is on branch ``pr``, merged ``--no-ff``
    by Bob; a pass; Alice approves on branch ``appr``; ``plangate check --config ... --base
    main --head appr --as alice@example.com`` in the watched repository; fast-forward; two
    passes."""
    lab = Lab(root)
    lab.git("config", "diff.renameLimit", "1")
    lab.write("pka", plan_text("pk", status="draft"))
    lab.commit("alice writes her plan", ALICE)
    lab.run()
    (lab.repo / "parked").mkdir()
    lab.git("mv", "plans/pka", "parked/pk")
    lab.commit("agent parks it", AGENT)
    lab.git("checkout", "-q", "-b", "pr")
    lab.git("mv", "parked/pk", "plans/pkb")
    _edit(lab.repo / "plans/pkb/PLAN.yml")
    (lab.repo / "notes").mkdir()
    for i in range(2):
        (lab.repo / f"notes/n{i}.txt").write_text(f"note {i}\n" * 5)
    lab.commit("agent brings it back", AGENT)
    lab.set_status("pkb", "pending_approval")
    lab.commit("agent submits", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=BOB)
    lab.run()
    lab.git("checkout", "-q", "-b", "appr")
    lab.set_status("pkb", "approved")
    lab.commit("alice approves", ALICE)
    lab.git("checkout", "-q", "main")
    args = ["check", "--config", str(lab.config), "--base", "main", "--head", "appr"]
    result = lab.cli(*args, "--as", "alice@example.com", "--format", "json", cwd=lab.repo)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.check_out = result.stdout  # type: ignore[attr-defined]
    lab.git("merge", "-q", "--ff-only", "appr")
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def prlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-repoconfig-pr", _build_pr)


def test_a_merged_return_is_not_hers_to_approve(prlab: Lab) -> None:
    assert prlab.calls("pk") == [], prlab.codes("pkb")
    assert "E_SELF_APPROVAL" in prlab.codes("pkb"), prlab.codes("pkb")


def test_check_does_not_predict_her_start(prlab: Lab) -> None:
    out = prlab.check_out  # type: ignore[attr-defined]
    assert '"outcome": "start"' not in out, out
    assert "E_SELF_APPROVAL" in out, out
