"""Round 21, who may make a plan run: a resume (``failed`` -> ``approved``) or the answer to
``on_failure: ask`` (``awaiting_approval`` -> ``approved``) by someone who wrote part of what
runs.

Round 14 (``test_round14_approve_gateauthor.py``) held that a *gate* approval by a writer is
``E_SELF_APPROVAL`` (co-author, notes in the folder, a move, a pinned library). docs/approvals.md
lists resumes and asks with gates ("cannot approve it or its gates"; "Gates and resumes still
need one approval"; an ask is approved "the same rules as a gate"). Here the pause is not a
gate but a failure.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval) plus ``flaky``,
an exec tool that fails on its first call for a tag and succeeds after. Each plan: action 1
``flaky`` (tag ``<vid>``), action 2 ``rec`` (tag ``<vid>-after``). Alice (no writer) approves
the plan; action 1 fails: the plan is ``failed`` (``resume-*``) or ``awaiting_approval``
(``ask-*``, action 1 has ``on_failure: ask``). Then Bob, a writer, approves:

- ``resume-coauthor`` / ``ask-coauthor``: the agent's commit adding the plan carries
  ``Co-authored-by: Bob <bob@ops.example.com>``.
- ``resume-notes``: Bob commits ``NOTES.md`` into the folder before the agent adds the plan.
- ``resume-moved`` / ``ask-moved``: Bob writes ``plans/<vid>-src``; the agent ``git mv``s it.
- ``resume-copied``: Bob writes ``plans/<vid>-src`` (a draft); the agent copies it byte for byte
  to ``plans/<vid>`` (authors by hash) and deletes the source.
- ``resume-pinned`` / ``ask-pinned``: the agent's plan pins Bob's library
  ``plans/<vid>-lib`` (action 3); approving the parent approves the pinned version Bob wrote.

Defence: Bob's approval is refused (``E_SELF_APPROVAL``): the failed action is not tried again,
``<vid>-after`` (and the library's ``<vid>-nested``) never run. Control: ``resume-ctl`` and
``ask-ctl`` (the agent's plan; Carol, no writer, resumes / answers) run ``-after`` once.

Results: see the module's ``BROKEN`` (empty: every variant held).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab
from test_round2_approval_authors import NESTED
from test_round2_execution_kit import shared

FLAKY = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
marker = os.path.join(os.environ["MARKS"], sys.argv[1])
if not os.path.exists(marker):
    open(marker, "w").close()
    sys.exit(3)
print("{}")
"""

PIN = """\
  - id: 3
    plan: {{path: plans/{tag}-lib, hash: "{pin}"}}
    why: "run the library"
"""

VIDS = [
    "resume-coauthor",
    "ask-coauthor",
    "resume-notes",
    "resume-moved",
    "ask-moved",
    "resume-copied",
    "resume-pinned",
    "ask-pinned",
]
CONTROLS = {"resume-ctl": CAROL, "ask-ctl": CAROL}
#: resumed / answered by a merge of the agent's branch that sets ``approved``
MERGED = {"merge-resume-coauthor": BOB, "merge-ask-coauthor": BOB, "merge-resume-ctl": CAROL}
BROKEN: dict[str, object] = {}


def _plan(tag: str, extra: str = "") -> str:
    ask = "    on_failure: ask\n" if tag.startswith("ask") else ""
    return (
        f"""\
plan:
  name: "{tag}"
  task: "attack variant {tag}"
  status: pending_approval
available_tools:
  - name: rec
  - name: flaky
actions:
  - id: 1
    tool: flaky
    why: "fails on its first call"
{ask}    params:
      tag: "{tag}"
  - id: 2
    tool: rec
    why: "after the flaky step"
    params:
      tag: "{tag}-after"
"""
        + extra
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    flaky = lab.root / "flaky.py"
    flaky.write_text(FLAKY)
    marks = lab.root / "marks"
    marks.mkdir()
    argv = json.dumps([sys.executable, "-I", "-S", str(flaky), "{tag}"])
    env = json.dumps({"REC_LOG": str(lab.log), "MARKS": str(marks)})
    lab.write_config(tools=f"flaky: {{kind: exec, argv: {argv}, env: {env}}}\n")
    # Bob's writing first
    for slug in ("resume-pinned", "ask-pinned"):
        lab.write(f"{slug}-lib", NESTED.format(tag=slug))
    lab.write("resume-notes", "looks useful\n", filename="NOTES.md")
    for slug in ("resume-moved", "ask-moved"):
        lab.write(f"{slug}-src", _plan(slug))
    lab.write("resume-copied-src", _plan("resume-copied").replace("pending_approval", "draft"))
    lab.commit("bob's drafts", BOB)
    # the agent's moves, copies and plans
    for slug in ("resume-moved", "ask-moved"):
        lab.git("mv", f"plans/{slug}-src", f"plans/{slug}")
    shutil.copytree(lab.repo / "plans/resume-copied-src", lab.repo / "plans/resume-copied")
    lab.set_status("resume-copied", "pending_approval")
    lab.commit("agent moves and copies", AGENT)
    lab.git("rm", "-r", "-q", "plans/resume-copied-src")
    lab.commit("agent drops the source", AGENT)
    for slug in ("resume-pinned", "ask-pinned"):
        pin = lab.cli("hash", str(lab.repo / "plans" / f"{slug}-lib")).stdout.strip()
        assert pin.startswith("sha256:"), pin
        lab.write(slug, _plan(slug, PIN.format(tag=slug, pin=pin)))
    lab.write("resume-notes", _plan("resume-notes"))
    for slug in [*CONTROLS, "merge-resume-ctl"]:
        lab.write(slug, _plan(slug))
    lab.commit("agent adds plans", AGENT)
    for slug in ("resume-coauthor", "ask-coauthor", "merge-resume-coauthor", "merge-ask-coauthor"):
        lab.write(slug, _plan(slug))
        lab.commit(f"agent adds {slug}\n\nCo-authored-by: Bob <bob@ops.example.com>", AGENT)
    lab.run()  # freeze
    everyone = [*VIDS, *CONTROLS]
    for slug in [*everyone, *MERGED]:
        lab.approve(slug, ALICE)
    lab.run()  # action 1 fails: failed / awaiting_approval
    for slug in everyone:
        lab.approve(slug, CONTROLS.get(slug, BOB))
    checks = {}
    for slug, merger in MERGED.items():
        lab.git("checkout", "-q", "-b", f"pr-{slug}")
        lab.approve(slug, AGENT)
        lab.git("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{slug}",
            "--as", merger[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        rows = [p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{slug}"]
        checks[slug] = rows[0] if rows else {}
        lab.git("merge", "--no-ff", "-q", "-m", f"merge {slug}", f"pr-{slug}", who=merger)
    (lab.root / "checks.json").write_text(json.dumps(checks))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-resumewriter", _build)


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_control_resumes_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 2, lab.codes(vid)
    assert len(lab.calls(f"{vid}-after")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_writer_cannot_resume_or_answer(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)  # the first approval ran it once
    assert lab.calls(f"{vid}-after") == [], lab.codes(vid)
    assert lab.calls(f"{vid}-nested") == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


def test_a_merged_resume_by_a_non_writer_runs_and_was_predicted(lab: Lab) -> None:
    assert len(lab.calls("merge-resume-ctl-after")) == 1, lab.codes("merge-resume-ctl")
    check = json.loads((lab.root / "checks.json").read_text())["merge-resume-ctl"]
    assert check.get("outcome") == "start", check


@pytest.mark.parametrize("vid", ["merge-resume-coauthor", "merge-ask-coauthor"])
def test_a_writer_cannot_resume_by_merging(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-after") == [], lab.codes(vid)
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", ["merge-resume-coauthor", "merge-ask-coauthor"])
def test_check_predicts_no_resume_by_a_writer(lab: Lab, vid: str) -> None:
    check = json.loads((lab.root / "checks.json").read_text())[vid]
    assert check, "check listed no row for the plan"
    assert check.get("outcome") != "start", check
