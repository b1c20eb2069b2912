"""Round 26, ``plangate check`` against the controller when the approver is the merge's
*committer* (``approval.identity: committer``) and when ``--as`` spells the merger another way.

docs/approvals.md: ``check`` "simulates the merge with ``git merge-tree`` and an unreachable
merge commit authored by ``--as``" and "decides with the controller's own function, so the
prediction is the controller's decision". Config: the bench's plus ``identity: committer``,
``identity_aliases: {plus_tags: ["*@ops.example.com"], people: [[carol@ops.example.com,
c.jones@corp.example]]}`` and ``plans/two-*`` needing two approvals. The agent writes
``plans/ci-<vid>`` (the ``*-writer`` plans: Carol writes them, her own commit); the
controller freezes; on a pull request branch ``pr-<vid>`` the agent sets ``approved``;
``plangate check --base main --head pr-<vid> --as <value> --format json`` is recorded; then
the merger merges it ``--no-ff`` locally (author and committer the merger); the controller runs.

- ``carol``: Carol (ops, no writer) merges: the controller starts it.
- ``carol-applied``: the agent's plan was committed by Carol (she applied the agent's patch:
  author agent, committer Carol); Carol merges: ``E_SELF_APPROVAL``.
- ``spelled``: the agent's plan, ``--as "Carol <CAROL@ops.example.com>"``; Carol merges.
- ``plus``: the agent's plan, ``--as carol+ci@ops.example.com``; ``carol+ci`` merges.
- Carol's own plans, Carol merges (the controller refuses ``E_SELF_APPROVAL``), ``--as``:
  ``spelled-writer`` ``Carol <carol@ops.example.com>``; ``tight-writer``
  ``Carol<carol@ops.example.com>``; ``spaced-writer`` ``carol @ ops.example.com``;
  ``alias-writer`` ``c.jones@corp.example`` (merges as c.jones); ``plus-writer``
  ``carol+ci@ops.example.com`` (merges as carol+ci); ``angle-writer``
  ``<carol@ops.example.com>``; ``comment-writer`` ``carol@ops.example.com (Carol)``;
  ``quoted-writer`` ``"Carol" <carol@ops.example.com>``; ``zwsp-writer`` with U+200B;
  ``fw-writer`` fullwidth ``ｃarol``; ``upper-writer`` ``CAROL@OPS.EXAMPLE.COM.``.
- ``two-cm`` (needs two): Carol approves (``partial``); then a commit authored by Alice and
  committed by Carol sets ``approved`` again: under ``identity: committer`` it is Carol's
  second approval: asserted one vote, nothing runs.
- ``mv``/``cp``: ``plans/two-mv``/``plans/two-cp`` hold Alice's collected vote (``partial``);
  a pull request ``git mv``s the plan to ``plans/two-mvd`` (or copies it to
  ``plans/two-cpd``) and sets ``approved``; ``check --as carol`` is recorded; Carol merges.
- ``au-*`` (a second lab, the bench's config: ``identity: author``, no aliases): Carol writes
  the plans; the agent sets ``approved`` on a pull request; ``check --as`` as in
  ``spelled-writer``/``tight-writer`` (``au-plain``: ``carol@ops.example.com``, control);
  Carol merges. And ``two-vote`` there (``plans/two-*`` needs two): the agent's plan; Carol
  votes on main (``partial``); a pull request sets ``approved``; ``check --as "Carol
  <carol@ops.example.com>"``; Carol merges: the controller keeps one vote (``partial``).

Asserted: ``check`` predicts ``start`` exactly when the controller started the plan (the
writer plans: never; the controller refuses ``E_SELF_APPROVAL``); moved/copied plans run at
most once.

Results: BROKE (strict xfails): ``spelled-writer``, ``tight-writer``, ``au-spelled-writer``,
``au-tight-writer``, ``test_check_counts_one_person_once`` (check counts Carol's second
approval as a second person and predicts ``start``; the controller stays ``partial``).
``plangate check --as "Carol <carol@ops.example.com>"`` takes the whole
value as the merger's address: ``counted`` shows ``Carol carol@ops.example.com`` (with
``Carol<carol@...>``: ``Carolcarol@ops.example.com``), an identity no commit of Carol's
carries (docs/approvals.md: one that is no plain mailbox "never approves"); no ``E_`` code; it
matches the ``*@ops.example.com`` glob, is not Carol the writer, and ``check`` predicts
``start``. When Carol merges, the controller refuses ``E_SELF_APPROVAL``. ``check`` should
read the mailbox of a ``Name <addr>`` value as git does, or refuse the value with an ``E_``
code. Held: every other variant (``quoted-writer`` is predicted ``E_APPROVER_NOT_ALLOWED`` as
``Carol" carol@...``: not a start, though the controller's code is ``E_SELF_APPROVAL``;
``spelled`` agrees only because the plan is not Carol's; ``two-cm`` keeps one vote; ``mv``/``cp``:
the vote does not follow the plan, check and controller both say ``partial``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

CASES: dict[str, tuple[str, tuple[str, str]]] = {
    "carol": (CAROL[1], CAROL),
    "carol-applied": (CAROL[1], CAROL),
    "spelled": ("Carol <CAROL@ops.example.com>", CAROL),
    "plus": ("carol+ci@ops.example.com", ("Carol", "carol+ci@ops.example.com")),
    "spelled-writer": ("Carol <carol@ops.example.com>", CAROL),
    "spaced-writer": ("carol @ ops.example.com", CAROL),
    "alias-writer": ("c.jones@corp.example", ("C. Jones", "c.jones@corp.example")),
    "plus-writer": ("carol+ci@ops.example.com", ("Carol", "carol+ci@ops.example.com")),
    "angle-writer": ("<carol@ops.example.com>", CAROL),
    "comment-writer": ("carol@ops.example.com (Carol)", CAROL),
    "quoted-writer": ('"Carol" <carol@ops.example.com>', CAROL),
    "tight-writer": ("Carol<carol@ops.example.com>", CAROL),
    "zwsp-writer": ("carol\u200b@ops.example.com", CAROL),
    "fw-writer": ("\uff43arol@ops.example.com", CAROL),
    "upper-writer": ("CAROL@OPS.EXAMPLE.COM.", CAROL),
}
MOVES = {"mv": "two-mv", "cp": "two-cp"}
WRITTEN_BY_CAROL = [
    "carol-applied",
    *(v for v in CASES if v.endswith("-writer")),
]
ALIASES = (
    "identity: committer\n"
    "identity_aliases:\n"
    '  plus_tags: ["*@ops.example.com"]\n'
    "  people: [[carol@ops.example.com, c.jones@corp.example]]\n"
    "rules:\n"
    '  - match: {paths: ["plans/two-*"]}\n'
    "    require: [{count: 2}]\n"
)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    g = lab.git
    for slug in ["two-cm", *MOVES.values()]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds two-cm", AGENT)
    for vid in CASES:
        lab.write(f"ci-{vid}", plan_text(f"ci-{vid}"))
        if vid in WRITTEN_BY_CAROL[1:]:
            lab.commit(f"carol writes {vid}", CAROL)
        elif vid == "carol-applied":
            g("add", "-A")
            env_who = {
                "GIT_AUTHOR_NAME": AGENT[0],
                "GIT_AUTHOR_EMAIL": AGENT[1],
            }
            lab.extra_env = env_who
            g("commit", "-q", "-m", "carol applies the agent's patch", who=CAROL)
            lab.extra_env = {}
        else:
            lab.commit(f"agent adds {vid}", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    checks: dict[str, Any] = {}
    for vid, (as_, merger) in CASES.items():
        slug = f"ci-{vid}"
        g("checkout", "-q", "-b", f"pr-{vid}")
        lab.set_status(slug, "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", as_, "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        try:
            rows = [
                p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{slug}"
            ]
        except ValueError:
            rows = []
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:] + result.stderr[-2000:]}
        g("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=merger)
        lab.run()
    (lab.root / "checks.json").write_text(json.dumps(checks))
    # quorum under identity: committer: Carol's vote, then Alice's patch applied by Carol
    lab.approve("two-cm", CAROL)
    for src in MOVES.values():
        lab.approve(src, ALICE)
    lab.run()
    for vid, src in MOVES.items():
        dst = f"{src}d"
        g("checkout", "-q", "-b", f"pr-{vid}")
        if vid == "mv":
            g("mv", f"plans/{src}", f"plans/{dst}")
        else:
            lab.write(dst, lab.read(src))
        lab.set_status(dst, "approved")
        lab.commit(f"agent moves/copies {src} and sets approved", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", CAROL[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        rows = [p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{dst}"]
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:] + result.stderr[-2000:]}
        g("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=CAROL)
    (lab.root / "checks.json").write_text(json.dumps(checks))
    time.sleep(1.05)
    lab.set_status("two-cm", "approved")
    g("add", "-A")
    lab.extra_env = {"GIT_AUTHOR_NAME": ALICE[0], "GIT_AUTHOR_EMAIL": ALICE[1]}
    g("commit", "-q", "-m", "approve two-cm (Alice's patch, applied by Carol)", who=CAROL)
    lab.extra_env = {}
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-checkident", _build)


def _check(lab: Lab, vid: str) -> dict[str, Any]:
    return json.loads((lab.root / "checks.json").read_text())[vid]


_SPELL = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 26: check --as 'Carol <carol@ops.example.com>' (or 'Carol<carol@...>') reads "
    "the merger as the identity 'Carol carol@ops.example.com' / 'Carolcarol@ops.example.com' "
    "(no E_ code), counts it as an approver and not as the plan's writer, and predicts start; "
    "the controller refuses E_SELF_APPROVAL",
)
#: What round 26 found (fixed: --as takes git's "Name <address>" as its mailbox).
FOUND = {"spelled-writer": _SPELL, "tight-writer": _SPELL}
BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in CASES]
)
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    check = _check(lab, vid)
    started = lab.started(f"ci-{vid}")
    predicted = check.get("outcome") == "start"
    assert predicted == started, (json.dumps(check)[:3000], lab.codes(f"ci-{vid}"))


@pytest.mark.parametrize("vid", WRITTEN_BY_CAROL)
def test_writer_merge_is_refused(lab: Lab, vid: str) -> None:
    assert lab.calls(f"ci-{vid}") == [], lab.codes(f"ci-{vid}")
    assert "E_SELF_APPROVAL" in lab.codes(f"ci-{vid}"), lab.codes(f"ci-{vid}")


def test_plain_merge_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ci-carol")) == 1, lab.codes("ci-carol")


def test_committer_quorum_counts_carol_once(lab: Lab) -> None:
    approval = lab.plan("two-cm").get("approval") or {}
    assert lab.calls("two-cm") == [], lab.codes("two-cm")
    assert len(approval.get("approvals") or []) <= 1, lab.codes("two-cm")


@pytest.mark.parametrize("vid", list(MOVES))
def test_check_agrees_on_a_moved_or_copied_voted_plan(lab: Lab, vid: str) -> None:
    dst = f"{MOVES[vid]}d"
    check = _check(lab, vid)
    started = lab.started(dst)
    assert (check.get("outcome") == "start") == started, (json.dumps(check)[:3000], lab.codes(dst))
    assert len(lab.calls(MOVES[vid])) <= 1, lab.codes(dst)


AUTHOR_CASES = {"au-plain": CAROL[1], **{f"au-{k}": v[0] for k, v in CASES.items() if k in FOUND}}


def _build_author(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/two-*"]}\n    require: [{count: 2}]\n'
    )
    g = lab.git
    for vid in AUTHOR_CASES:
        lab.write(f"ci-{vid}", plan_text(f"ci-{vid}"))
    lab.commit("carol writes plans", CAROL)
    lab.write("two-vote", plan_text("two-vote"))
    lab.commit("agent writes two-vote", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("two-vote", CAROL)
    lab.run()  # partial: Carol's vote
    time.sleep(1.05)
    g("checkout", "-q", "-b", "pr-two-vote")
    lab.set_status("two-vote", "approved")
    lab.commit("agent sets approved two-vote", AGENT)
    g("checkout", "-q", "main")
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-two-vote",
        "--as", "Carol <carol@ops.example.com>", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    rows = [p for p in json.loads(result.stdout)["plans"] if p["plan"] == "plans/two-vote"]
    vote_check = rows[0] if rows else {"raw": result.stdout[-2000:]}
    g("merge", "--no-ff", "-q", "-m", "merge pr-two-vote", "pr-two-vote", who=CAROL)
    checks: dict[str, Any] = {}
    for vid, as_ in AUTHOR_CASES.items():
        g("checkout", "-q", "-b", f"pr-{vid}")
        lab.set_status(f"ci-{vid}", "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", as_, "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        rows = [p for p in json.loads(result.stdout)["plans"] if p["plan"] == f"plans/ci-{vid}"]
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:]}
        g("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=CAROL)
    lab.run()
    checks["two-vote"] = vote_check
    (lab.root / "checks.json").write_text(json.dumps(checks))
    return lab


@pytest.fixture(scope="module")
def author_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r26-checkident-author", _build_author)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in AUTHOR_CASES],
)
def test_check_predicts_the_refusal_under_identity_author(author_lab: Lab, vid: str) -> None:
    check = _check(author_lab, vid)
    assert check.get("outcome") != "start", json.dumps(check)[:3000]
    assert not author_lab.started(f"ci-{vid}"), author_lab.codes(f"ci-{vid}")
    assert "E_SELF_APPROVAL" in author_lab.codes(f"ci-{vid}"), author_lab.codes(f"ci-{vid}")


def test_check_counts_one_person_once(author_lab: Lab) -> None:
    check = _check(author_lab, "two-vote")
    approval = author_lab.plan("two-vote").get("approval") or {}
    assert approval.get("status") == "partial", author_lab.codes("two-vote")
    assert author_lab.calls("two-vote") == [], author_lab.codes("two-vote")
    assert check.get("outcome") != "start", json.dumps(check)[:3000]
