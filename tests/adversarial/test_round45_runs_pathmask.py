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

Lab ``pm-id``: the same record through the controller's hex trailers. The catalog has ``cache``
with the URL ``redis://:12345@cache/0`` (a common default password, five digits). Alice makes
her approval commit of ``plans/ground`` with an id holding ``12345`` (she varies a line of the
message: about 29,000 tries, well under a second; with that password about one approval in
29,000 does it by chance); ``plans/id-control`` is approved by an ordinary commit.

- ``approval-commit-id``: asserted as above (ran once; ``Approval-Commit: <id>`` in the
  controller's commits; the audit proves the run with no finding). ``id-control`` held.

Broke (round 45): ``approval-commit-id``: the start and complete commits say
``Approval-Commit: 7db205eda7***c7fa...`` and the audit flags ``start-without-approval:
Approval-Commit 7db205eda7***c7fa... is not the approval request 7db205eda71234...``: the run
the controller made on a valid approval reads as unapproved in git history.

Broke (round 45): ``catalog-pw``, ``flag-word``, ``env-word``, ``whole-word``: the freeze, start and complete
commits say ``plangate: start plans/***-upgrade`` / ``Plan: plans/***-upgrade`` (``***-backup``,
``***-deploy``); the audit exits 1 with three ``controller-unexplained`` findings per plan
("subject 'plangate: start plans/***-upgrade' is not a plangate event for
plans/postgres-upgrade"). The plans ran once and status is right (the controller reads its
state), but the committed record does not name what ran. A plan path is no credential (it
is in the tree already): the controller's path fields (subject, ``Plan:``, ``Run-Start:``)
should be written unredacted, as the identity trailers are.

**Fixed** (the same session): the controller's commit subjects (fixed words and the plan's
path) and the trailers it takes from git or makes itself (``Plan``, ``Plan-Hash``,
``Plan-Status``, ``Plan-Event``, ``Approval-Commit``, ``Run-Start``, ``Policy-Hash``,
``Controller``, and round 43's identity trailers) are written unredacted, still on one line
with hidden characters escaped (``git/message.py``, ``GIT_TRAILERS``): they come from
history, so hiding them hid nothing and broke the audit. The body and every other trailer
stay redacted.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
from advkit import ALICE, BOT, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

SLUGS = {
    "control": "plain-upgrade",
    "catalog-pw": "postgres-upgrade",
    "flag-word": "nightly-backup",
    "env-word": "staging-deploy",
    "whole-word": "postgres",
    "stars-sibling": "***",
}
#: every variant held since the fix (the docstring)
BROKEN: set[str] = set()
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


PASSWORD = "12345"


def _ground_commit(lab: Lab, message: str, who: tuple[str, str], want: str) -> str:
    """Commit the staged tree as ``who`` with an id holding ``want`` (a nonce line varied)."""
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    stamp = f"{int(time.time())} +0000"
    head = (
        f"tree {tree}\nparent {lab.head()}\nauthor {who[0]} <{who[1]}> {stamp}\n"
        f"committer {who[0]} <{who[1]}> {stamp}\n\n"
    )
    for nonce in range(50_000_000):
        body = f"{head}{message}\n\nnonce {nonce}\n"
        raw = body.encode()
        sha = hashlib.sha1(b"commit %d\0" % len(raw) + raw).hexdigest()
        if want in sha:
            break
    made = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=body).strip()
    if made != sha:
        raise BenchError(f"git made {made}, not {sha}")
    lab.git("update-ref", "refs/heads/main", sha)
    return sha


def _build_id(root: Path) -> Lab:
    (root / "pmid").mkdir()
    lab = Lab(
        root / "pmid",
        tools=f'cache: {{kind: exec, argv: [/bin/true, "redis://:{PASSWORD}@cache/0"]}}\n',
    )
    for slug in ("ground", "id-control"):
        lab.write(slug, plan_text(slug))
    lab.commit("plans")
    lab.run()
    lab.set_status("ground", "approved")
    lab.approval_id = _ground_commit(lab, "approve ground", ALICE, PASSWORD)  # type: ignore[attr-defined]
    lab.approve("id-control", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def idlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-pathmask-id", _build_id)


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(
            "ground",
            id="approval-commit-id",
        ),
        pytest.param("id-control", id="id-control"),
    ],
)
def test_the_hex_trailers_name_the_approval(idlab: Lab, slug: str) -> None:
    assert len(idlab.calls(slug)) == 1
    approval = idlab.plan(slug)["approval"]["commit"]
    if slug == "ground":
        assert approval == idlab.approval_id  # type: ignore[attr-defined]
    bodies = [r[4] for r in idlab.log_rows() if r[2] == BOT[1] and f"Plan: plans/{slug}\n" in r[4]]
    with_id = [b for b in bodies if f"Approval-Commit: {approval}" in b]
    assert len(with_id) >= 2, bodies
    _, report = idlab.audit()
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{slug}"]
    assert [e.get("outcome") for e in runs] == ["complete"], report
    assert [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"] == []
