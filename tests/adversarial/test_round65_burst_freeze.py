"""Round 65, bursts: ONE agent commit adding many plans, with bad, odd and hostile entries
among them (the freeze path in batches: one ``cat-file --batch-check`` per batch, one parse
of the plans tree; docs/performance.md), then ONE commit of Alice's approving every good
plan (a batched start commit; docs/approvals.md "Several plans in one commit").

Lab (one, local mode, fake commit dates): 30 good ``rec`` plans ``ok-01``..``ok-30`` and the
entries below in one commit; a pass; Alice approves the good and odd ones in one commit (the
bad ones too, where a file holds a status); one working-tree edit; two passes; a fresh-clone
audit.

Bad (asserted: never runs, ``status`` names the code):

- ``link``: ``plans/link`` a symlink to ``ok-01``'s folder (E_UNSAFE_PATH);
- ``filelink``: ``plans/filelink/PLAN.yml`` a symlink to ``ok-02``'s file (E_UNSAFE_PATH);
- ``gitlink``: ``plans/gitlink`` a submodule entry (mode 160000; E_UNSAFE_PATH);
- ``huge``: a 1.2 MB PLAN.yml (E_PLAN_TOO_LARGE);
- ``two``: PLAN.yml and PLAN.yaml in one folder (E_PLAN_AMBIGUOUS);
- ``badyaml``: a PLAN.yml that is no YAML (E_YAML_PARSE);
- ``wt-edit``: good and frozen, approved by Alice, then its working-tree file rewritten
  (``target: prod-DROP``, uncommitted) before the pass: never runs, waits ("has uncommitted
  edits" in ``status``).

Odd but honest (asserted: frozen, ran exactly once on Alice's approval, one freeze, one start
and one outcome in ``git log``, a valid execution in the fresh-clone audit credited to Alice):

- ``crlf``: a plan written with CRLF line ends;
- ``tr-status``: folder ``tr Plan-Status: completed`` (a trailer's text in a folder name);
- ``tr-plan``: folder ``tr Plan: plans/ok-03`` (names another plan of the batch);
- ``tr-approved``: folder ``tr Approved-By: bob@ops.example.com``;
- ``back``: folder ``back\\slash`` (a backslash: the record doubles it); since round 76
  (r76uppins) held E_UNSAFE_PATH with the bad entries (git for Windows reads it as the path
  ``back/slash`` and checks no such folder out); it froze and ran once before;
- ``ok-01``..``ok-30``.

Also asserted: the fresh-clone audit flags no controller commit (the batched freeze, start and
outcome commits with the trailer-like folder names explain themselves).

Result: every variant HELD. The bad entries each waited with their code (``status``: the
symlinks and the gitlink E_UNSAFE_PATH, ``huge`` E_PLAN_TOO_LARGE unreadable, ``two``
E_PLAN_AMBIGUOUS, ``badyaml`` E_YAML_PARSE, ``wt-edit`` "has uncommitted edits; plangate will
not overwrite them") and never ran, while the 35 good and odd plans (34 since round 76, ``back``
held) froze in the same pass and
ran once each, credited to Alice in batched commits whose ``Plan:`` groups name the
trailer-like folders exactly (``plans/back\\\\slash`` doubled as documented).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text, valid_runs
from test_round2_execution_kit import shared

OK = [f"ok-{i:02d}" for i in range(1, 31)]
ODD = {
    "crlf": "crlf",
    "tr-status": "tr Plan-Status: completed",
    "tr-plan": "tr Plan: plans/ok-03",
    "tr-approved": "tr Approved-By: bob@ops.example.com",
}
#: a backslash in a name: E_UNSAFE_PATH since round 76 (the path ``back/slash`` to git for
#: Windows); it froze and ran once before, its record doubling the backslash
NAMED = {"back": "back\\\\slash"}
BAD = {
    "link": "E_UNSAFE_PATH",
    "filelink": "E_UNSAFE_PATH",
    "gitlink": "E_UNSAFE_PATH",
    "huge": "E_PLAN_TOO_LARGE",
    "two": "E_PLAN_AMBIGUOUS",
    "badyaml": "E_YAML_PARSE",
    "wt-edit": "has uncommitted edits",
    "back": "E_UNSAFE_PATH",
}
HONEST = [*OK, *ODD]
BROKEN: dict[str, object] = {}


def plan(tag: str, target: str = "staging") -> str:
    return plan_text(tag, params=f'target: "{target}"\n')


def _build(root: Path) -> Lab:
    lab = Lab(root)
    t = int(time.time()) - 7200

    def date() -> None:
        nonlocal t
        t += 10
        lab.git_date = f"@{t} +0000"

    for v in [*OK, "wt-edit", "two"]:
        lab.write(v, plan(v))
    lab.write("two", plan("two", "prod-DROP"), "PLAN.yaml")
    lab.write(ODD["crlf"], plan("crlf").replace("\n", "\r\n"))
    for v, folder in {**ODD, **NAMED}.items():
        if v != "crlf":
            lab.write(folder, plan(v))
    lab.write("huge", plan("huge") + "# " + "x" * 1_200_000 + "\n")
    lab.write("badyaml", "plan: [unclosed\n  status: pending_approval\n")
    (lab.repo / "plans" / "link").symlink_to("ok-01")
    (lab.repo / "plans" / "filelink").mkdir()
    (lab.repo / "plans" / "filelink" / "PLAN.yml").symlink_to("../ok-02/PLAN.yml")
    date()
    lab.git("add", "-A")
    blob = lab.head()
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{blob},plans/gitlink")
    lab.git("commit", "-q", "-m", "agent: 40 plans", who=AGENT)
    date()
    lab.run()
    lab.frozen = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    for v in [*OK, "wt-edit", "two"]:
        lab.set_status(v, "approved")
    for folder in [*ODD.values(), *NAMED.values()]:
        lab.set_status(folder, "approved")
    for v in ("huge",):
        lab.set_status(v, "approved")
    date()
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "approve the batch", who=ALICE)
    path = lab.repo / "plans" / "wt-edit" / "PLAN.yml"
    path.write_text(path.read_text().replace('target: "staging"', 'target: "prod-DROP"'))
    date()
    lab.run()
    date()
    lab.run()
    lab.git_date = None
    lab.after = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    lab.report, lab.valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    lab.logtext = lab.git("log", "--format=%H%x00%B%x01")  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-freeze", _build)


def row(text: str, folder: str) -> str:
    rows = {r["plan"]: r for r in json.loads(text)}
    return json.dumps(rows.get(f"plans/{folder}"))


def folder_of(vid: str) -> str:
    return {**ODD, **NAMED}.get(vid, vid)


@pytest.mark.parametrize("vid", cases(list(BAD), list(BAD), BROKEN))  # type: ignore[arg-type]
def test_a_bad_entry_in_the_burst_is_refused_with_its_code(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert all("prod-DROP" not in c["stdin"] for c in lab.calls("ok-01") + lab.calls("ok-02"))
    folder = folder_of(vid)
    after = row(lab.after, folder)
    assert BAD[vid] in after or BAD[vid] in row(lab.frozen, folder), after
    assert f"plans/{folder}" not in lab.valid  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_each_good_plan_of_the_burst_froze_and_ran_once(lab: Lab, vid: str) -> None:
    folder = folder_of(vid)
    assert len(lab.calls(vid)) == 1, row(lab.after, folder)[:1500]
    r = json.loads(row(lab.after, folder))
    assert r and r["status"] == "completed" and r["approver"] == ALICE[1], r
    subjects = lab.subjects(folder.replace("\\", "\\\\"))  # the record doubles a backslash
    for event in ("freeze", "start", "complete"):
        assert sum(s.startswith(f"plangate: {event} ") for s in subjects) == 1, subjects
    runs = valid_runs(lab.report, folder)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


def test_the_fresh_clone_audit_flags_no_controller_commit(lab: Lab) -> None:
    bad = [f for f in lab.report.get("findings", []) if "controller" in json.dumps(f)]  # type: ignore[attr-defined]
    assert bad == [], bad[:5]
