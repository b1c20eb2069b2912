"""Round 69, agent-facing surfaces: round 68's one way to find a plan's file
(``controller.git.planstate.plan_file_of``: ``PLAN.yml`` or ``PLAN.yaml``, both
``E_PLAN_AMBIGUOUS``; docs/plan-format.md, docs/agents.md "``status``, ``log`` and ``wait``
find the plan's file on the branch as every reader does"), attacked with folders holding
both names, a switch from one name to the other between versions, case variants, a
``PLAN.yml`` that is a symlink to ``PLAN.yaml`` or a FOLDER beside it, and MCP ``submit``
onto folders holding the other name.

Lab (one, module scope), local mode with ``agent.identity``, fake commit dates. The agent
commits the plans; one pass freezes them; Alice approves some; the agent acts in the same
window; passes; then the late steps:

- ``bothnew``: PLAN.yml + PLAN.yaml committed together (pending);
- ``bothdone``: Alice's PLAN.yml plan ran (completed), then the agent adds an "approved"
  PLAN.yaml with another action beside it;
- ``swap``: Alice approves PLAN.yml; before the pass the agent deletes it and commits an
  edited PLAN.yaml still saying ``approved``; ``swap2``: the same in two steps (the edited
  PLAN.yaml beside hers, a pass, then her PLAN.yml deleted);
- ``symy``: after her approval, PLAN.yml replaced by a symlink to an edited "approved"
  PLAN.yaml;
- ``mvalice``: Alice approves AND renames PLAN.yml to PLAN.yaml (bytes kept) in one commit;
  ``mvalice2``: she approves, then renames in a second commit before the pass (honest);
- ``mvdone``: the agent renames a COMPLETED PLAN.yml to PLAN.yaml, bytes kept; ``mvdonea``:
  Alice does the same (honest);
- ``dirbeside``: the agent renames a completed PLAN.yml to PLAN.yaml and commits a FOLDER
  named ``PLAN.yml`` beside it holding a plan of its own and a forged "completed, approved by
  alice" EXECUTION_LOG.md: the branch then holds two plans, ``plans/dirbeside`` and
  ``plans/dirbeside/PLAN.yml`` (the ``nest-*`` ids read the second);
- ``casebeside``: an edited ``Plan.yml`` beside a pending ``PLAN.yml``; ``caseonly``: a plan
  saved only as ``PLAN.YML``;
- MCP ``submit``: an "approved" plan onto Alice's approved PLAN.yaml (``subappr``), a new
  version onto a pending PLAN.yaml (``subyaml``), a plan onto the ambiguous ``bothnew``.

Readers: the ``status --json`` row, MCP ``status``, MCP ``log``, ``show``, MCP ``wait``, and
(one daemon with ``ui.listen``) the page ``/plan/<id>`` and ``/api/plan/<id>`` of
``bothnew``, ``bothdone``, the nested plan and the two renamed completed plans.
Asserted per id: ambiguous folders are ``E_PLAN_AMBIGUOUS`` (or ``E_UNSAFE_PATH`` for the
symlink) on every reader, MCP ``log``/``wait`` as a tool error; nothing the agent changed
after an approval ran; the honest renames ran once; a reader asked for
``plans/dirbeside/PLAN.yml`` answers THAT plan (or refuses), never another plan's record;
MCP ``log`` of a byte-exact rename of a completed plan shows the controller's recorded
``execution`` (its outputs), as its own problem says ("shown as the controller recorded
it").

Broke (strict xfails):
- ``bothnew-wait``: MCP ``wait`` on a folder holding both files, asked from
  ``pending_approval``, answers at once ``{"status": null, "changed": true}`` (an agent's
  loop reads "changed" as decided) where MCP ``log`` of the same path is E_PLAN_AMBIGUOUS;
  ``bothdone-wait``, ``symy-wait``: waits out its timeout and answers ``status: null`` with
  no error. Should: E_PLAN_AMBIGUOUS, as ``log``.
- ``nest-mcp-log``, ``nest-mcp-status``, ``nest-wait``: asked for the plan
  ``plans/dirbeside/PLAN.yml`` (a folder named PLAN.yml; its own row in ``status --json``,
  pending, noted E_OWNED_BLOCK_CHANGED for the forged log; ``show`` reads it) MCP reads the
  path as the FILE of ``plans/dirbeside`` and answers that plan's record: ``completed``,
  approver alice, its log; ``wait`` from ``pending_approval`` answers at once
  ``completed``/``changed``. Should: answer the plan named (or refuse the ambiguous id).
- ``dirbeside-agree``: ``show plans/dirbeside`` says E_PLAN_AMBIGUOUS ("holds both PLAN.yml
  and PLAN.yaml", the folder counted as a file) while the row, MCP ``status`` and MCP ``log``
  read PLAN.yaml and say ``completed``. Should: one answer.
- ``mvdone-mcp-log``, ``mvdonea-mcp-log``: after a byte-exact rename of a completed PLAN.yml
  to PLAN.yaml (by the agent, or by Alice), MCP ``log`` answers ``execution: null``,
  ``outputs: {}`` while its problem says "shown as the controller recorded it" (the run's
  outputs are lost to the agent). Should: the recorded ``execution`` and outputs.

- ``mvalice``, ``mvalice2`` (honest work refused): Alice approves PLAN.yml and renames it
  PLAN.yaml with its bytes kept (``git mv``, in her approval commit or the next one before
  the pass): ``E_SELF_APPROVAL: alice@example.com wrote or changed this plan's content``,
  never runs (a byte-exact folder move after an approval runs, round 65). Should: a rename
  to the other accepted name with the bytes kept writes no content.

Fixed (2026-11-30): ``bothnew-wait``, ``bothdone-wait``, ``symy-wait`` (``wait`` finds the
file by ``plan_file_of`` outside its "no status" fallback: E_PLAN_AMBIGUOUS, as ``log``);
``nest-mcp-log``, ``nest-mcp-status``, ``nest-wait``, ``dirbeside-agree``: one rule
(``controller.plan.plans.plan_named_folder``, docs/plan-format.md): a folder named as a plan
file (or a source) is no plan folder, what it holds E_UNSAFE_PATH in the index, ``show`` and
MCP (a path naming such a folder is refused), and a plan file beside a folder named
``PLAN.yml``/``PLAN.yaml`` is E_PLAN_AMBIGUOUS for every reader; ``nest-row``, ``nest-show``,
``nest-page`` and ``nest-api`` now assert that refusal (with the forged log's note);
``mvdone-mcp-log``, ``mvdonea-mcp-log`` (the record's life follows a byte-exact rename to the
other name, ``controller.git.ownrecord``).

Held: every other reader of ``bothnew``/``bothdone``/``symy`` (E_PLAN_AMBIGUOUS or
E_UNSAFE_PATH), ``swap``/``swap2``/``symy`` never ran the edited action and carried no
approval; case variants are not plan files (``Plan.yml`` never read, ``PLAN.YML`` no plan;
since round 71 ``Plan.yml`` beside ``PLAN.yml`` makes the folder E_PLAN_AMBIGUOUS, one path
on a case-insensitive checkout: ``casebeside``'s MCP row now asserts that, not
``pending_approval``);
MCP submit keeps PLAN.yaml, refuses an approved status and an ambiguous folder; ``nest-show``
reads the nested plan with its note; the page and ``/api/plan/`` of all five (ambiguous
folders E_PLAN_AMBIGUOUS, the nested plan as itself with its note, the renamed completed
plans WITH their run's record, unlike MCP ``log``); nothing the agent wrote ran.

Fixed (2026-11-30): ``mvalice``, ``mvalice2``. A plan file a commit adds with the bytes of a
plan file it removes (all of them, or all but a plain status line: her approval made with
the move) is that file moved, whatever part of the path changed (its folder or its file's
name): no writing; in its own folder an edit in place of the same plan. The content's writers
are those of the content moved (``Lifecycle._move_source``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from mcpkit import session
from oraclekit import as_text, keyed_pages, mcp_payload, path_readers
from test_round2_execution_kit import shared

FORGED_LOG = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r69)\n"
)


def _evil(slug: str) -> str:
    return plan_text(f"{slug}-EVIL", status="approved", name=slug)


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\nui: {listen: 0}\n",
    )
    lab.git_date = "@1796100000 +0000"
    yml = ("bothdone", "swap", "swap2", "mvalice", "mvalice2", "mvdone", "mvdonea",
           "dirbeside", "casebeside", "symy")  # fmt: skip
    for s in yml:
        lab.write(s, plan_text(s))
    for s in ("subyaml", "subappr"):
        lab.write(s, plan_text(s), "PLAN.yaml")
    lab.write("bothnew", plan_text("bothnew"))
    lab.write("bothnew", plan_text("bothnew-y"), "PLAN.yaml")
    lab.write("caseonly", plan_text("caseonly"), "PLAN.YML")
    lab.write("casebeside", plan_text("casebeside-EVIL"), "Plan.yml")
    lab.commit("agent: plans", AGENT)
    lab.run()
    for s in ("bothdone", "swap", "swap2", "mvalice2", "mvdone", "mvdonea", "dirbeside", "symy"):
        lab.set_status(s, "approved")
    lab.set_status("subappr", "approved", "PLAN.yaml")
    lab.commit("alice: approve", ALICE)
    lab.set_status("mvalice", "approved")
    lab.git("add", "-A")
    lab.git("mv", "plans/mvalice/PLAN.yml", "plans/mvalice/PLAN.yaml")
    lab.commit("alice: approve mvalice, and name it PLAN.yaml", ALICE)
    lab.git("mv", "plans/mvalice2/PLAN.yml", "plans/mvalice2/PLAN.yaml")
    lab.commit("alice: PLAN.yaml is our name", ALICE)
    # the agent, in the same window
    lab.git("rm", "-q", "plans/swap/PLAN.yml")
    lab.write("swap", _evil("swap"), "PLAN.yaml")
    lab.write("swap2", _evil("swap2"), "PLAN.yaml")
    (lab.repo / "plans/symy/PLAN.yml").unlink()
    lab.write("symy", _evil("symy"), "PLAN.yaml")
    os.symlink("PLAN.yaml", lab.repo / "plans/symy/PLAN.yml")
    lab.commit("agent: other names", AGENT)
    subs = session(
        lab,
        [
            ("submit", {"plan": _evil("subappr"), "slug": "subappr"}),
            ("submit", {"plan": plan_text("subyaml-v2"), "slug": "subyaml"}),
            ("submit", {"plan": plan_text("bothnew-v2"), "slug": "bothnew"}),
        ],
    )[0]
    lab.run()
    lab.git("rm", "-q", "plans/swap2/PLAN.yml")
    lab.write("bothdone", _evil("bothdone"), "PLAN.yaml")
    lab.git("mv", "plans/mvdone/PLAN.yml", "plans/mvdone/PLAN.yaml")
    lab.git("mv", "plans/dirbeside/PLAN.yml", "plans/dirbeside/PLAN.yaml")
    lab.commit("agent: after the run", AGENT)
    lab.git("mv", "plans/mvdonea/PLAN.yml", "plans/mvdonea/PLAN.yaml")
    lab.commit("alice: PLAN.yaml for the finished one", ALICE)
    lab.write("dirbeside/PLAN.yml", plan_text("dirinner"))
    lab.write("dirbeside/PLAN.yml", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: a folder named PLAN.yml", AGENT)
    lab.run()
    lab.run()
    names = {s: f"plans/{s}" for s in (*yml, "subyaml", "subappr", "bothnew", "caseonly")}
    names["nest"] = "plans/dirbeside/PLAN.yml"
    waits = {
        "bothnew": "pending_approval",
        "bothdone": None,
        "symy": None,
        "nest": "pending_approval",
    }
    asks: list[tuple[str, dict[str, Any]]] = []
    for key, was in waits.items():
        args: dict[str, Any] = {"path": names[key], "timeout": 1}
        if was:
            args["status"] = was
        asks.append(("wait", args))
    got, waited = path_readers(lab, names, asks)
    got["submit"] = subs
    for key, reply in zip(waits, waited, strict=True):
        got[f"{key}:wait"] = reply
    got["calls"] = {
        t: len(lab.calls(t))
        for s in (*names, "bothnew-y", "bothnew-v2", "subyaml-v2", "dirinner")
        for t in (s, f"{s}-EVIL")
    }
    got.update(keyed_pages(lab, {k: names[k] for k in PAGES}, "plans/mvdonea"))
    got["agent_commits"] = lab.git("log", "--format=%ae %s", "--author=agent@example.com")
    lab.got = got  # type: ignore[attr-defined]
    return lab


PAGES = ("bothnew", "bothdone", "nest", "mvdone", "mvdonea")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-surface-planfile", _build)


# -- ambiguous folders: every reader refuses -------------------------------------------
AMB = {"bothnew": ("E_PLAN_AMBIGUOUS",), "bothdone": ("E_PLAN_AMBIGUOUS",),
       "symy": ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")}  # fmt: skip
AMB_IDS = [f"{s}-{w}" for s in AMB for w in ("row", "mcp-status", "mcp-log", "show", "wait")]
BROKEN_AMB: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(AMB_IDS, AMB_IDS, BROKEN_AMB))
def test_an_ambiguous_folder_is_refused_by_every_reader(lab: Lab, vid: str) -> None:
    slug, what = vid.split("-", 1)
    got = lab.got  # type: ignore[attr-defined]
    codes = AMB[slug]
    if what == "row":
        text = as_text(got["rows"][f"plans/{slug}"])
        assert got["rows"][f"plans/{slug}"]["status"] is None, text
    elif what == "show":
        text = got[f"{slug}:show"]
    else:
        err, answer = mcp_payload(got[f"{slug}:{what}"])
        text = as_text(answer)
        if what in ("mcp-log", "wait"):
            assert err, text[:1500]
    assert any(c in text for c in codes), text[:1500]
    assert "Traceback" not in text


# -- nothing the agent changed ran; honest renames ran once -------------------------------
RUNS = {
    "swap": {"swap": 0, "swap-EVIL": 0}, "swap2": {"swap2": 0, "swap2-EVIL": 0},
    "symy": {"symy": 0, "symy-EVIL": 0}, "bothdone": {"bothdone": 1, "bothdone-EVIL": 0},
    "bothnew": {"bothnew": 0, "bothnew-y": 0, "bothnew-v2": 0},
    "subappr": {"subappr": 1, "subappr-EVIL": 0}, "subyaml": {"subyaml": 0, "subyaml-v2": 0},
    "casebeside": {"casebeside": 0, "casebeside-EVIL": 0}, "caseonly": {"caseonly": 0},
    "mvalice": {"mvalice": 1}, "mvalice2": {"mvalice2": 1}, "mvdone": {"mvdone": 1},
    "mvdonea": {"mvdonea": 1}, "dirbeside": {"dirbeside": 1, "dirinner": 0},
}  # fmt: skip


BROKEN_RUNS: dict[str, Any] = {}


@pytest.mark.parametrize("slug", cases(list(RUNS), list(RUNS), BROKEN_RUNS))
def test_only_what_alice_approved_ran(lab: Lab, slug: str) -> None:
    calls = lab.got["calls"]  # type: ignore[attr-defined]
    assert {t: calls[t] for t in RUNS[slug]} == RUNS[slug], (slug, calls)
    row = lab.got["rows"].get(f"plans/{slug}")  # type: ignore[attr-defined]
    if slug in ("swap", "swap2"):
        assert row["status"] == "pending_approval" and row["approver"] is None, row
    if slug in ("mvalice", "mvalice2"):
        assert row["status"] == "completed" and row["approver"] == ALICE[1], row


# -- case variants and submit ------------------------------------------------------------
def test_case_variants_are_not_plan_files(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert "plans/caseonly" not in got["rows"], got["rows"].get("plans/caseonly")
    err, answer = mcp_payload(got["caseonly:mcp-log"])
    assert err and "E_USAGE" in as_text(answer), answer
    assert "casebeside-EVIL" not in got["casebeside:show"], got["casebeside:show"]
    err, answer = mcp_payload(got["casebeside:mcp-status"])
    # round 71: a case variant beside the plan file claims its place (one path on a
    # case-insensitive checkout): the folder is ambiguous, neither file read
    row = answer["plans"][0]
    assert not err and row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row), answer


SUBMIT = ["subappr", "subyaml", "bothnew"]


@pytest.mark.parametrize("slug", SUBMIT)
def test_submit_finds_the_folders_file(lab: Lab, slug: str) -> None:
    i = SUBMIT.index(slug)
    err, answer = mcp_payload(lab.got["submit"][i])  # type: ignore[attr-defined]
    commits = lab.got["agent_commits"]  # type: ignore[attr-defined]
    if slug == "subyaml":
        assert not err and answer["file"] == "plans/subyaml/PLAN.yaml", answer
        assert not (lab.repo / "plans/subyaml/PLAN.yml").exists()
        return
    code = "E_ILLEGAL_TRANSITION" if slug == "subappr" else "E_PLAN_AMBIGUOUS"
    assert err and code in as_text(answer), as_text(answer)[:1500]
    assert f"plans/{slug}" not in commits.split("agent: plans")[0], commits


# -- a folder named PLAN.yml beside PLAN.yaml --------------------------------------------
NEST = ["nest-row", "nest-show", "nest-mcp-log", "nest-mcp-status", "nest-wait", "dirbeside-agree"]
BROKEN_NEST: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(NEST, NEST, BROKEN_NEST))
def test_a_plan_folder_named_plan_yml_is_read_as_itself(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    nested = "plans/dirbeside/PLAN.yml"
    if vid == "dirbeside-agree":
        readers = (
            got["dirbeside:show"],
            got["rows"]["plans/dirbeside"],
            mcp_payload(got["dirbeside:mcp-status"])[1],
            mcp_payload(got["dirbeside:mcp-log"])[1],
        )
        amb = ["E_PLAN_AMBIGUOUS" in as_text(x) for x in readers]
        assert len(set(amb)) == 1, amb
        return
    if vid == "nest-row":  # a folder named PLAN.yml is no plan folder (fixed 2026-11-30)
        row = got["rows"][nested]
        assert row["status"] is None and row["approver"] is None, row
        assert "E_UNSAFE_PATH" in as_text(row["notes"]), row
        return
    if vid == "nest-show":
        text = got["nest:show"]
        assert "E_UNSAFE_PATH" in text and "E_OWNED_BLOCK_CHANGED" in text, text
        assert "forged-r69" not in text, text
        return
    err, answer = mcp_payload(got[f"nest:{vid[5:]}"])
    text = as_text(answer)
    if err:  # a refusal names the ambiguity, never another plan's record
        assert "E_" in text and "alice" not in text, text[:1500]
        return
    if vid == "nest-mcp-status":
        answer = answer["plans"][0]
    if vid == "nest-wait":
        assert answer["status"] == "pending_approval" and not answer["changed"], answer
    else:
        assert answer.get("plan", answer.get("path")) == nested, text[:1500]
        assert answer["status"] == "pending_approval", text[:1500]
    assert "completed" not in as_text(answer.get("status")), text[:1500]


# -- a byte-exact rename of a completed plan keeps its record ------------------------------
RENAMED = ["mvdone", "mvdonea"]
BROKEN_REN: dict[str, Any] = {}
REN_IDS = [f"{s}-{w}" for s in RENAMED for w in ("row", "mcp-log")]


@pytest.mark.parametrize("vid", cases(REN_IDS, REN_IDS, BROKEN_REN))
def test_a_renamed_completed_plan_shows_its_record(lab: Lab, vid: str) -> None:
    slug, what = vid.split("-", 1)
    got = lab.got  # type: ignore[attr-defined]
    if what == "row":
        row = got["rows"][f"plans/{slug}"]
        assert row["status"] == "completed" and row["approver"] == ALICE[1], row
        return
    err, answer = mcp_payload(got[f"{slug}:mcp-log"])
    assert not err, answer
    assert answer["status"] == "completed", answer
    assert (answer["execution"] or {}).get("status") == "completed", as_text(answer)[:1200]
    assert answer["outputs"] == {"1": {}}, as_text(answer)[:1200]


# -- the page and its JSON twin -----------------------------------------------------------
PAGE_IDS = [f"{k}-{w}" for k in PAGES for w in ("page", "api")]
BROKEN_PAGE: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(PAGE_IDS, PAGE_IDS, BROKEN_PAGE))
def test_the_page_answers_the_plan_named(lab: Lab, vid: str) -> None:
    key, what = vid.rsplit("-", 1)
    text = lab.got[f"{key}:{what}"]  # type: ignore[attr-defined]
    assert "Traceback" not in text, text[-1500:]
    assert "forged-r69" not in text and "EVIL" not in text, text[:2000]
    if key.startswith("both"):
        assert "E_PLAN_AMBIGUOUS" in text, text[:2000]
    elif key == "nest":  # no plan folder: refused, its log noted (fixed 2026-11-30)
        assert "E_UNSAFE_PATH" in text and "E_OWNED_BLOCK_CHANGED" in text, text[:2000]
    else:  # the renamed completed plan: its run's record
        assert "succeeded" in text and ALICE[1] in text, text[:2000]
