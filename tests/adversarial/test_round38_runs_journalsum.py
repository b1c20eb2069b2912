"""Round 38, one hostile tool output never starves the pass (disk bound): ``limits.
max_params_bytes`` bounds what ONE action's params resolve to (round 13: a 70 KB plan
resolving to 25 MB of params), but nothing bounds what one plan's run writes to its journal
in the state directory: every action, and every try of a retried action, journals its
resolved params anew, each up to the limit.

One lab; ``emit`` is an exec tool printing ``{"s": "yyyy..."}`` (a 60,000-character string,
under ``max_result_bytes``: the data a tool brings in); ``sink`` runs ``/bin/true``, ``fail``
runs ``/bin/false``. Each plan's action 1 is ``emit`` with one output ``s`` (``$.json.s``);
the rest pass ``$<actions[1].outputs.s>`` as 16 params (about 0.96 MB, under the 1 MiB
limit). Approved by Alice with the honest ``zz`` in one commit, one pass:

- ``fanout``: 20 ``sink`` actions after ``emit`` (an 11.5 KB plan): by hand, a 19.4 MB journal
  in under a second (500 actions, a 290 KB plan: about 485 MB per run);
- ``retries``: one ``fail`` action with ``on_failure: retry``, ``retry: {attempts: 20,
  delay: 0}``: 21 tries, each journaling its resolved params;
- ``single`` (control): one ``sink`` action: about 1 MB;
- ``nested-inputs``: action 2 is a nested plan (``plans/lib``, a draft declaring 100 inputs)
  whose ``inputs:`` pass the output 100 times (6 MB): the resolved inputs are bounded too;
- ``verify-message``: one ``emit`` action (no references at all) whose ``verify: {expect}``
  lists 3,000 failing clauses ``{path: $.json.t, equals: N}`` (``t`` a 200-character string),
  ``on_failure: retry``, ``retry: {attempts: 9, delay: 0}``: the E_VERIFY_FAILED message
  names every clause with its value (cut at about 120 characters), about 950 KB per try from
  a 122 KB plan; PLAN.yml's copy is cut, the journal's is not (by hand, 9,000 clauses: 3 MB
  per try; a 1 MiB plan: about 8 MB per try, times up to 101 tries).

Also asserted: the controller's ``fail`` commit for ``verify-message`` has a message within 64
KiB (``max_result_bytes``).

Asserted per plan: the plan's journal stays within 8 MiB (8 times ``max_params_bytes``, the
bound the round 37 test uses), or the run failed with ``E_LIMIT_EXCEEDED``; and the honest
``zz`` ran once in the same pass.

**Broke** (round 38): ``fanout`` completes with a 19.4 MB journal (from an 11.5 KB plan and one
60 KB result); ``retries`` fails (``/bin/false``, as planned) after a 20.4 MB journal;
``verify-message`` fails E_VERIFY_FAILED (as planned) after a 10.7 MB journal (10 tries, about 1
MB each); no ``E_LIMIT_EXCEEDED``. Held: ``single`` (1.1 MB), ``nested-inputs`` (fails
``E_LIMIT_EXCEEDED``, 181 KB), ``zz``. Should: bound what one run (all actions and tries) may
journal of resolved params, failing ``E_LIMIT_EXCEEDED`` past it, or journal a repeated value
once (by reference / hash); cut a journaled error message as PLAN.yml's copy is cut.

**Broke** too (round 38, found last): the outcome commit ``plangate: fail plans/verify-message``
carries the whole E_VERIFY_FAILED message in its body, uncut: a 470 KB commit message from a
122 KB plan (by hand, 9,000 clauses: 1.4 MB; a 1 MiB plan: about 4 MB, in the plans repo's
history for good). Should: cut the message in the commit as in PLAN.yml.

Fixed (round 38, the same session): one plan's journal is bounded, all its runs, actions and
tries together (``limits.max_journal_bytes``, default 8 times ``max_params_bytes``): a start,
called, end or check record that would take it past the bound is not written; a small failed
end record stands for it (``E_LIMIT_EXCEEDED``) and the run fails. Every error message (and a
check's failures, together) is journaled cut at 2,000 characters, as PLAN.yml shows it. The
controller's commit messages cut the body (and a batch's ``Plan-Note:``) at 2,000 characters
after redaction, and none passes 64 KiB (a batch that would is committed in parts).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

BOUND = 8 * 1048576
REFS = 16
NESTED = 100
CLAUSES = 3000


def _params() -> str:
    return "{" + ", ".join(f"p{j}: '$<actions[1].outputs.s>'" for j in range(REFS)) + "}"


def _plan(slug: str, tail: list[str]) -> str:
    head = (
        "  - id: 1\n    tool: emit\n    why: w\n    params: {}\n"
        "    outputs: [{name: s, path: '$.json.s'}]\n"
    )
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}, {name: sink}, {name: fail}]\n"
        "actions:\n" + head + "".join(tail)
    )


def _sink(i: int, tool: str = "sink", extra: str = "") -> str:
    head = f"  - id: {i}\n    tool: {tool}\n    why: w\n    needs: [1]\n"
    return head + f"    params: {_params()}\n{extra}"


PLANS = {
    "fanout": [_sink(i) for i in range(2, 22)],
    "retries": [_sink(2, "fail", "    on_failure: retry\n    retry: {attempts: 20, delay: 0}\n")],
    "single": [_sink(2)],
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    doc = root / "doc.json"
    doc.write_text(json.dumps({"s": "y" * 60000, "t": "y" * 200}))
    emit = root / "emit.py"
    emit.write_text("import sys\nsys.stdout.write(open(sys.argv[1]).read())\n")
    argv = json.dumps([sys.executable, str(emit), str(doc)])
    lab = Lab(
        root / "lab",
        tools=f"emit: {{kind: exec, argv: {argv}}}\n"
        "sink: {kind: exec, argv: [/bin/true]}\n"
        "fail: {kind: exec, argv: [/bin/false]}\n",
    )
    for slug, tail in PLANS.items():
        lab.write(slug, _plan(slug, tail))
    names = ", ".join(f"p{j}: ''" for j in range(NESTED))
    lab.write(
        "lib",
        f"plan:\n  name: lib\n  task: t\n  status: draft\ninputs: {{{names}}}\n"
        "available_tools: [{name: sink}]\n"
        "actions:\n  - id: 1\n    tool: sink\n    why: w\n    params: {x: 1}\n",
    )
    lab.commit("lib", AGENT)
    digest = re.search(r"sha256:[0-9a-f]{64}", lab.cli("hash", "plans/lib", cwd=lab.repo).stdout)
    assert digest, "no hash"
    refs = ", ".join(f"p{j}: '$<actions[1].outputs.s>'" for j in range(NESTED))
    nested = (
        f"  - id: 2\n    plan: {{path: plans/lib, hash: '{digest.group(0)}'}}\n"
        f"    why: w\n    needs: [1]\n    inputs: {{{refs}}}\n"
    )
    lab.write("nested-inputs", _plan("nested-inputs", [nested]))
    clauses = "\n".join(f"        - {{path: $.json.t, equals: {i}}}" for i in range(CLAUSES))
    lab.write(
        "verify-message",
        "plan:\n  name: verify-message\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}]\n"
        "actions:\n  - id: 1\n    tool: emit\n    why: w\n    params: {}\n"
        "    on_failure: retry\n    retry: {attempts: 9, delay: 0}\n"
        f"    verify:\n      expect:\n{clauses}\n",
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*PLANS, "nested-inputs", "verify-message", "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run(timeout=300)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r38-runs-journalsum", lambda root: _build(root / "j"))


def _journal_bytes(lab: Lab, slug: str) -> int:
    folder = lab.state / "journal" / quote(f"plans/{slug}", safe="")
    return sum(p.stat().st_size for p in folder.glob("*.jsonl")) if folder.exists() else 0


@pytest.mark.parametrize(
    "slug",
    [
        "fanout",
        "retries",
        "single",
        "nested-inputs",
        "verify-message",
    ],
)
def test_journal_of_one_run_bounded(lab: Lab, slug: str) -> None:
    execution = lab.plan(slug).get("execution") or {}
    assert execution.get("status") in ("completed", "failed"), execution.get("status")
    size = _journal_bytes(lab, slug)
    assert size > 0
    if "E_LIMIT_EXCEEDED" not in lab.codes(slug):
        assert size <= BOUND, size


def test_outcome_commit_message_bounded(lab: Lab) -> None:
    """The controller's own ``fail`` commit for ``verify-message``: its message stays within
    ``max_result_bytes`` (64 KiB), as PLAN.yml's copy of the error is cut."""
    rows = [r for r in lab.log_rows() if r[2] == "plangate@localhost" and "verify-message" in r[3]]
    outcome = [r for r in rows if r[3].startswith("plangate: fail ")]
    assert outcome, [r[3] for r in rows]
    assert len(outcome[0][4].encode()) <= 65536, len(outcome[0][4].encode())


def test_honest_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert (lab.plan("zz").get("execution") or {}).get("status") == "completed"
