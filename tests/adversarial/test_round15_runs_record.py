# ruff: noqa: E501
"""Round 15, what reaches the tool and what the committed record says it got.

One shared lab (local mode). The agent submits the plans below; Alice approves them all in
one commit; then, before the pass that starts them, the agent plays its working-tree moves;
then two ``run --once`` passes.

- ``py-key``: a ``python`` tool whose function takes ``idempotency_key`` (docs/execution.md:
  it "gets ``idempotency_key=`` when its signature has that parameter"); the plan passes a
  param of that name (``step:approved-key``). Defence asserted: the plan is refused, or the
  value the tool received is the value the committed EXECUTION_LOG.md records as its
  resolved params. **Broke**: the tool gets the controller's key (``step:<16 hex>``) while
  the committed log says it got ``step:approved-key``: git records a value that never
  reached the tool, and the approved value is silently replaced.
- ``py-kw``: the same param for a function without that parameter (``**kw``): held, the tool
  gets the approved value and the log records it.
- ``argv-resub``: an exec tool ``argv: [.., "{tag}", "{a}", "{b}", "x{a}y{b}z"]`` with
  ``a: "{b}"``, ``b: "{tag}"``: held, each placeholder is filled once (no value is scanned
  for another placeholder).
- ``twins``: two folders holding the same version (same hash), both approved in one commit,
  neither run before: held, the tool runs once (the second is refused).
- ``show-escape``: params ``$$<inputs.k>``, ``$$$<inputs.k>``, ``$$$$<inputs.k>``,
  ``x$$<inputs.k>y``, ``$$$$$<inputs.k>`` (escapes: the tool gets the literal text ``$<inputs.k>``
  and friends, as docs/plan-format.md says). Defence asserted: ``plangate show`` (the text a
  reviewer approves) marks no reference («...») in a param whose value the tool gets with no
  reference resolved. **Broke**: ``show`` prints ``param a = "$«$<inputs.k>»"`` (a dollar
  then the reference to ``inputs.k``, i.e. ``$kv``) for every one of them; the tool gets
  ``$<inputs.k>`` (``show --format json`` and the run agree with each other, the text view
  does not).
- ``nest-reresolve``: action 1 (``echo``) outputs the text ``$<inputs.y>`` and
  ``$<secrets.TOKEN>``; actions 2 and 3 pass them as ``inputs.x`` of a pinned nested plan whose
  own ``inputs.y`` is ``SHOULD-NOT`` and whose action sends ``$<inputs.x>``: held, the nested
  tool gets the literal text, never ``SHOULD-NOT`` or the secret.
- ``policy-link``: the agent commits garbage as ``.plangate/policy.json`` (the controller
  records its policy again) and swaps the ``.plangate`` folder of the working tree for a
  link to a folder outside the repository: held, nothing is written there.
- ``log-hardlink``: ``plans/hl/EXECUTION_LOG.md`` is a hard link to a file outside the
  repository before the run: held, that file keeps its bytes.
- ``staged``: the agent stages (``git add``) an edit of ``README``, of another plan and a new
  approved-looking plan: held, no controller commit carries them; they stay staged.
- ``skip-worktree``: the agent sets ``--skip-worktree`` on an approved PLAN.yml and edits its
  tag: held, the edited tag never reaches the tool.
- ``zz``: the honest plan beside them runs once.

Second lab, ``branch-switch``: action 1 of a plan runs ``git checkout -b side`` in the shared
working tree, action 2 records. Held: the controller keeps committing to ``main`` (no commit
of its own lands on ``side``), the plan runs once and completes on ``main``, and the next pass
refuses loudly naming the cause (E_GIT "the working tree is on branch side"), as round 9
treats a shared ``.git`` the agent broke.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

PTOOL = """import json, os
def f(tag, idempotency_key=None, **kw):
    with open(os.environ["REC_LOG"], "a") as fh:
        fh.write(json.dumps({"argv": [tag], "stdin": json.dumps({"key": idempotency_key, "kw": kw})}) + "\\n")
    return {"ok": True}
def g(tag, **kw):
    with open(os.environ["REC_LOG"], "a") as fh:
        fh.write(json.dumps({"argv": [tag], "stdin": json.dumps({"key": kw.get("idempotency_key"), "kw": kw})}) + "\\n")
    return {"ok": True}
"""
ESC = {
    "a": "$$<inputs.k>",
    "b": "$$$<inputs.k>",
    "c": "$$$$<inputs.k>",
    "d": "x$$<inputs.k>y",
    "g": "$$$$$<inputs.k>",
}
APPROVED = ["py-key", "py-kw", "argv-resub", "twin-a", "twin-b", "esc", "nest", "pol", "hl"]
APPROVED += ["skw", "zz"]


def _simple(tag: str, tool: str, params: str, extra: str = "") -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: pending_approval
{extra}available_tools:
  - name: {tool}
actions:
  - id: 1
    tool: {tool}
    why: "w"
    params: {{{params}}}
"""


def _nested(hash_: str) -> str:
    acts = ""
    for aid, out in ((2, "o"), (3, "s")):
        acts += f"""  - id: {aid}
    plan: {{path: plans/common/n, hash: "{hash_}"}}
    why: "w"
    inputs: {{x: "$<actions[1].outputs.{out}>"}}
"""
    return f"""plan:
  name: "nest"
  task: "t"
  status: pending_approval
available_tools:
  - name: echo
  - name: rec
actions:
  - id: 1
    tool: echo
    why: "w"
    params: {{o: "$$<inputs.y>", s: "$$<secrets.TOKEN>"}}
    outputs: [{{name: o, path: "$.o"}}, {{name: s, path: "$.s"}}]
{acts}"""


INNER = """plan:
  name: "inner"
  task: "t"
  status: draft
inputs:
  x: ""
  y: "SHOULD-NOT"
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: "nest-inner", v: "$<inputs.x>"}
"""


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pt").mkdir()
    (root / "pt" / "ptool.py").write_text(PTOOL)
    rec2 = [sys.executable, str(root / "lab" / "rec.py"), "{tag}", "{a}", "{b}", "x{a}y{b}z"]
    log = json.dumps(str(root / "lab" / "ran.log"))
    lab = Lab(
        root / "lab",
        tools=f"""
pyf: {{kind: python, target: "ptool:f", env: {{REC_LOG: {log}}}}}
pyg: {{kind: python, target: "ptool:g", env: {{REC_LOG: {log}}}}}
rec2: {{kind: exec, argv: {json.dumps(rec2)}, env: {{REC_LOG: {log}}}}}
""",
        extra=f"python_path: [{json.dumps(str(root / 'pt'))}]\n"
        "secrets: {env_prefix: PLANGATE_SECRET_}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": "tok-r15-record-value"}  # type: ignore[attr-defined]
    lab.write(
        "py-key", _simple("py-key", "pyf", 'tag: "py-key", idempotency_key: "step:approved-key"')
    )
    lab.write(
        "py-kw", _simple("py-kw", "pyg", 'tag: "py-kw", idempotency_key: "step:approved-key"')
    )
    lab.write(
        "argv-resub", _simple("argv-resub", "rec2", 'tag: "argv-resub", a: "{b}", b: "{tag}"')
    )
    lab.write("twin-a", plan_text("twin"))
    lab.write("twin-b", plan_text("twin"))
    esc = ", ".join(f"{k}: {json.dumps(v)}" for k, v in ESC.items())
    lab.write("esc", _simple("esc", "rec", f'tag: "esc", {esc}', extra='inputs:\n  k: "kv"\n'))
    lab.write("common/n", INNER)
    inner_hash = lab.cli("hash", str(lab.repo / "plans/common/n")).stdout.strip()
    lab.write("nest", _nested(inner_hash))
    for slug in ["pol", "hl", "skw", "zz", "other"]:
        lab.write(slug, plan_text(slug))
    lab.commit("plans", AGENT)
    lab.run()
    (lab.repo / ".plangate" / "policy.json").write_text("garbage\n")
    lab.commit("policy", AGENT)
    for slug in APPROVED:
        lab.set_status(slug, "approved")
    lab.commit("approve them", ALICE)
    lab.show_esc = lab.cli("show", str(lab.repo / "plans/esc"), "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    lab.approval = lab.head()  # type: ignore[attr-defined]
    # the agent's moves in the shared working tree
    out_pol = root / "outside-pol"
    out_pol.mkdir()
    (out_pol / "keep.txt").write_text("k\n")
    shutil.rmtree(lab.repo / ".plangate")
    os.symlink(str(out_pol), str(lab.repo / ".plangate"))
    out_hl = root / "outside-hl.txt"
    out_hl.write_text("outside\n")
    os.link(out_hl, lab.repo / "plans/hl/EXECUTION_LOG.md")
    (lab.repo / "README").write_text("staged by the agent\n")
    lab.write("other", plan_text("other").replace('tag: "other"', 'tag: "other-evil"'))
    lab.write("evil", plan_text("evil", status="approved"))
    lab.git("add", "README", "plans/other/PLAN.yml", "plans/evil/PLAN.yml")
    lab.git("update-index", "--skip-worktree", "plans/skw/PLAN.yml")
    skw = lab.repo / "plans/skw/PLAN.yml"
    skw.write_text(skw.read_text().replace('tag: "skw"', 'tag: "skw-evil"'))
    lab.passes = [lab.run(check=False).returncode for _ in range(2)]  # type: ignore[attr-defined]
    lab.outside = {  # type: ignore[attr-defined]
        "pol": sorted(p.name for p in out_pol.iterdir()),
        "hl": out_hl.read_text(),
    }
    lab.staged = lab.git("diff", "--cached", "--name-only").split()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r15-runs-record", lambda root: _build(root / "record"))


def _got(lab: Lab, tag: str) -> dict[str, Any]:
    calls = lab.calls(tag)
    assert len(calls) == 1, calls
    return dict(json.loads(calls[0]["stdin"]))


def test_the_passes_finished(lab: Lab) -> None:
    assert lab.passes == [0, 0]  # type: ignore[attr-defined]


# round 15: py-key broke (BROKE_KEY was its strict xfail); fixed since: the param name is
# the controller's for a python tool (E_PARAMS_INVALID at validation and at the call)
@pytest.mark.parametrize("vid", ["py-key", "py-kw"])
def test_the_tool_gets_what_the_record_says(lab: Lab, vid: str) -> None:
    if not lab.calls(vid):
        assert "E_" in lab.codes(vid), lab.codes(vid)
        return
    got = _got(lab, vid)["key"]
    log = lab.git("show", f"HEAD:plans/{vid}/EXECUTION_LOG.md")
    assert f'"idempotency_key": {json.dumps(got)}' in log, (got, log[-1200:])


def test_argv_placeholders_are_filled_once(lab: Lab) -> None:
    calls = lab.calls("argv-resub")
    assert len(calls) == 1
    assert calls[0]["argv"] == ["argv-resub", "{b}", "{tag}", "x{b}y{tag}z"]


def test_two_copies_approved_together_run_once(lab: Lab) -> None:
    assert len(lab.calls("twin")) == 1


# round 15: broke (strict xfail: show's text marked $$< escapes as references); fixed since:
# the text view reads references as the resolver does (rendering._highlight)
def test_show_marks_no_reference_where_none_is_resolved(lab: Lab) -> None:
    got = _got(lab, "esc")
    text = lab.show_esc  # type: ignore[attr-defined]
    for key, written in ESC.items():
        assert got[key] == written.replace("$$<", "$<", 1) or "kv" not in got[key]
        line = next(x for x in text.splitlines() if x.strip().startswith(f"param {key} = "))
        assert "«" not in line, f"show: {line.strip()!r}; the tool got {got[key]!r}"


def test_nested_inputs_are_not_resolved_again(lab: Lab) -> None:
    values = sorted(json.loads(c["stdin"])["v"] for c in lab.calls("nest-inner"))
    assert values == ["$<inputs.y>", "$<secrets.TOKEN>"], values


def test_nothing_is_written_through_links(lab: Lab) -> None:
    assert lab.outside == {"pol": ["keep.txt"], "hl": "outside\n"}  # type: ignore[attr-defined]
    assert len(lab.calls("pol")) == 1 and len(lab.calls("hl")) == 1


def test_staged_changes_of_the_agent_are_never_committed_by_the_controller(lab: Lab) -> None:
    rows = lab.git("log", "--format=%x01%ae", "--name-only", f"{lab.approval}..HEAD")  # type: ignore[attr-defined]
    for row in rows.split("\x01")[1:]:
        email, *files = [x for x in row.splitlines() if x.strip()]
        if email != BOT[1]:
            continue
        assert not {"README", "plans/other/PLAN.yml", "plans/evil/PLAN.yml"} & set(files), files
    assert {"README", "plans/other/PLAN.yml", "plans/evil/PLAN.yml"} <= set(lab.staged)  # type: ignore[attr-defined]
    assert lab.calls("other-evil") == [] and lab.calls("evil") == []


def test_a_skip_worktree_edit_never_reaches_the_tool(lab: Lab) -> None:
    assert lab.calls("skw-evil") == []
    assert len(lab.calls("skw")) <= 1


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1, lab.codes("zz")


# -- branch-switch -------------------------------------------------------------------------

GITT = """import json, os, subprocess, sys
sys.stdin.read()
subprocess.run(["git", "-C", os.environ["LAB_REPO"], *json.loads(sys.argv[1])], check=False)
print("{}")
"""


def _build_switch(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gitt.py").write_text(GITT)
    argv = json.dumps([sys.executable, str(root / "gitt.py"), "{args}"])
    repo = json.dumps(str(root / "lab" / "repo"))
    lab = Lab(
        root / "lab", tools=f"gitt: {{kind: exec, argv: {argv}, env: {{LAB_REPO: {repo}}}}}\n"
    )
    args = json.dumps(json.dumps(["checkout", "-q", "-b", "side"]))
    lab.write(
        "bs",
        f"""plan:
  name: "bs"
  task: "t"
  status: pending_approval
available_tools:
  - name: gitt
  - name: rec
actions:
  - id: 1
    tool: gitt
    why: "w"
    params: {{args: {args}}}
  - id: 2
    tool: rec
    why: "w"
    params: {{tag: "bs"}}
""",
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    lab.set_status("bs", "approved")
    lab.set_status("zz", "approved")
    lab.commit("approve", ALICE)
    first = lab.run(check=False)
    second = lab.run(check=False)
    lab.passes = [(first.returncode, ""), (second.returncode, second.stderr[-2000:])]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def switched(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r15-runs-switch", lambda root: _build_switch(root / "switch"))


def test_a_branch_switch_mid_run_commits_nothing_elsewhere(switched: Lab) -> None:
    lab = switched
    assert lab.passes[0][0] == 0  # type: ignore[attr-defined]
    assert len(lab.calls("bs")) == 1 and len(lab.calls("zz")) == 1
    assert lab.plan("bs", rev="main")["execution"]["status"] == "completed"
    mine = lab.git("log", "--format=%ae %s", "main..side")
    assert mine.strip() == "", mine
    code, err = lab.passes[1]  # type: ignore[attr-defined]
    assert code == 0 or ("E_GIT" in err and "side" in err), err
