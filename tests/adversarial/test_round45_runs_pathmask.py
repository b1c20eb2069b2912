# ruff: noqa: E501
"""Round 45, how a run is recorded: the controller's own commit subjects and ``Plan:`` trailers
go through the redactor, so a plan folder whose name holds a word the redactor hides is
recorded under a path that is no plan (``plangate: start plans/***-upgrade``, ``Plan:
plans/***-upgrade``), and git history alone no longer proves the run: ``plangate audit`` on
the repo finds the controller's own commits ``controller-unexplained`` and fails.

The hidden words need no secret: the catalog's credentials are hidden in everything the
controller writes, and docs/execution.md names the over-hiding (a value after ``-p``: ``cp -p
a.txt b``; an env variable whose name has a credential word). Round 43 exempted only the
identity trailers (``Approved-By:``) from redaction.

Lab ``pm`` (local mode), one catalog tool per hidden word (none is used by the plans):
``db`` with ``argv`` ``postgres://postgres:postgres@db/app`` (a well-known default password),
``backup`` with ``argv`` ``[cp, -p, nightly, /backup]`` (``nightly`` hidden by the ``-p`` rule),
``shell`` with ``env: {SESSION_NAME: staging}`` (``staging`` hidden: ``session`` is a
credential word). Plans (the plain one-action ``rec`` plan), approved by Alice, run in one
pass:

- ``control``: ``plans/plain-upgrade``.
- ``catalog-pw``: ``plans/postgres-upgrade``.
- ``flag-word``: ``plans/nightly-backup``.
- ``env-word``: ``plans/staging-deploy``.
- ``whole-word``: ``plans/postgres``, beside ``stars-sibling``: a plan in a folder named
  ``plans/***`` (a hostile folder name: the redacted path of ``plans/postgres``). Both are
  recorded as ``plangate: start plans/***``; the audit still tells them apart by the files
  the commits touch (``stars-sibling`` held: it ran once and the audit proves its run with no
  finding), but ``status`` names ``plangate: complete plans/***`` as ``plans/postgres``'s
  last event and ``git log`` shows two runs of ``plans/***``.

Asserted per plan: ``rec`` ran exactly once; the controller's commits about the plan carry
``Plan: plans/<folder>`` (its real path); ``plangate audit --json`` (run in the repo, no
config: what a fresh clone proves) lists the plan's run as ``complete`` and has no finding
for it.

Broke (round 45): ``catalog-pw``, ``flag-word``, ``env-word``, ``whole-word``: the freeze, start and complete
commits say ``plangate: start plans/***-upgrade`` / ``Plan: plans/***-upgrade`` (``***-backup``,
``***-deploy``); the audit exits 1 with three ``controller-unexplained`` findings per plan
("subject 'plangate: start plans/***-upgrade' is not a plangate event for
plans/postgres-upgrade"). The plans ran once and status is right (the controller reads its
state), but the committed record does not name what ran. A plan path is no credential (it
is in the tree already): the controller's path fields (subject, ``Plan:``, ``Run-Start:``)
should be written unredacted, as the identity trailers are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

SLUGS = {
    "control": "plain-upgrade",
    "catalog-pw": "postgres-upgrade",
    "flag-word": "nightly-backup",
    "env-word": "staging-deploy",
    "whole-word": "postgres",
    "stars-sibling": "***",
}
BROKEN = {"catalog-pw", "flag-word", "env-word", "whole-word"}
TOOLS = (
    'db: {kind: exec, argv: [/bin/true, "postgres://postgres:postgres@db/app"]}\n'
    "backup: {kind: exec, argv: [cp, -p, nightly, /backup]}\n"
    "shell: {kind: exec, argv: [/bin/true], env: {SESSION_NAME: staging}}\n"
)


def _build(root: Path) -> Lab:
    (root / "pm").mkdir()
    lab = Lab(root / "pm", tools=TOOLS)
    for slug in SLUGS.values():
        lab.write(slug, plan_text(slug))
    lab.commit("plans")
    lab.run()
    for slug in SLUGS.values():
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-pathmask", _build)


@pytest.fixture(scope="module")
def audit(lab: Lab) -> dict:
    return lab.audit()[1]


def _mark(vid: str) -> list[pytest.MarkDecorator]:
    if vid not in BROKEN:
        return []
    return [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason="round 45: a plan path holding a word the redactor hides is recorded as plans/***-...",
        )
    ]


PARAMS = [pytest.param(v, id=v, marks=_mark(v)) for v in SLUGS]


@pytest.mark.parametrize("vid", [pytest.param(v, id=v) for v in SLUGS])
def test_it_ran_once(lab: Lab, vid: str) -> None:
    slug = SLUGS[vid]
    assert len(lab.calls(slug)) == 1
    assert (lab.plan(slug).get("execution") or {}).get("status") == "completed"


@pytest.mark.parametrize("vid", PARAMS)
def test_the_controller_commits_name_the_plan(lab: Lab, vid: str) -> None:
    slug = SLUGS[vid]
    bodies = [r[4] for r in lab.log_rows() if r[2] == BOT[1]]
    named = [b for b in bodies if f"Plan: plans/{slug}\n" in b + "\n"]
    # freeze, start, complete
    assert len(named) >= 3, [b.splitlines()[0] for b in bodies]


@pytest.mark.parametrize("vid", PARAMS)
def test_the_audit_proves_the_run(audit: dict, vid: str) -> None:
    plan = f"plans/{SLUGS[vid]}"
    runs = [e for e in audit.get("executions", []) if e.get("plan") == plan]
    assert [e.get("outcome") for e in runs] == ["complete"], audit
    findings = [f for f in audit.get("findings", []) if f.get("plan") == plan]
    assert findings == []
