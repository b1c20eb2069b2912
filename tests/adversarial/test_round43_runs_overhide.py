"""Round 43, how a run is recorded: the redactor's over-hiding of an ordinary URL user name
(docs/execution.md: "an ordinary user name (``deploy``, ``postgres``) is hidden too, in every
output (harmless: a word shown as ``***``, never a leak)") reaches the controller's own record.

Lab ``o`` (local mode): the catalog holds an unrelated exec tool ``clone`` whose ``argv`` has
``https://carol@git.example/r.git`` (a clone URL whose user part is the word ``carol``).
Plan ``a`` is approved by Carol (``carol@ops.example.com``, an allowed approver) and runs.

Asserted: the controller's start and complete commits name the approver (``Approved-By:
carol@ops.example.com``), and so does ``status --json`` (``approver``), as PLAN.yml's
``approval.by`` and ``plangate audit`` do.

Broke (round 43): both trailers say ``Approved-By: ***@ops.example.com`` and status says
``approver: ***@ops.example.com``: the record of who approved the run is rewritten by the
redactor because a catalog URL's user name is the local part of the approver's address
(PLAN.yml and the audit still say ``carol@ops.example.com``: the committed record disagrees
with itself). The controller's identities (approver, author, trailers) should not pass
through the over-hiding meant for tool output.

Fixed (round 43): a URL's user part is a credential only when the URL has no password and it
looks like a token (16 characters or more: ``toolspec.url_credentials``), so ``carol`` is no
longer hidden anywhere; and identity trailers (``Approved-By:``, ``Aborted-By:``:
``git.message.IDENTITY_TRAILERS``) are written unredacted (a git identity already in
history: hiding it hides nothing), so ``status``, which reads them, names the approver too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import CAROL, Lab, plan_text
from test_round2_execution_kit import shared

CLONE = 'clone: {kind: exec, argv: ["/bin/true", "https://carol@git.example/r.git"]}\n'


def _build(root: Path) -> Lab:
    (root / "o").mkdir()
    lab = Lab(root / "o", tools=CLONE)
    lab.write("a", plan_text("a"))
    lab.commit("plan a")
    lab.run()
    lab.approve("a", CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-overhide", _build)


def test_the_run_completed_and_plan_yml_names_carol(lab: Lab) -> None:
    data = lab.plan("a")
    assert (data.get("execution") or {}).get("status") == "completed"
    assert data["approval"]["by"] == CAROL[1]
    assert len(lab.calls("a")) == 1


def test_the_trailers_and_status_name_the_approver(lab: Lab) -> None:
    bodies = [r[4] for r in lab.log_rows() if r[2] == "plangate@localhost"]
    approved = [
        line for body in bodies for line in body.splitlines() if line.startswith("Approved-By:")
    ]
    assert approved, bodies
    assert all(line == f"Approved-By: {CAROL[1]}" for line in approved), approved
    assert lab.status()["plans/a"]["approver"] == CAROL[1]
