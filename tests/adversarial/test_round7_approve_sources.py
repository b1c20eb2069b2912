"""Round 7, who may make a plan run: plan text Alice committed under the plans folder,
turned into a plan by the agent with different *bytes* but the same hashed content.

Round 5 fixed ``draft.yml`` renamed to ``PLAN.yml`` by keeping the writers of every file under
the plans folder by its bytes (git blob id). The hash, though, covers the canonical content,
not the bytes: comments, quoting, flow style, key order, the source format and whitespace do
not change it. Each variant: Alice commits a file under ``plans/<vid>/`` holding the plan's
text; the agent, in its own commit, removes it and writes the plan with different bytes; the
controller freezes (or converts and freezes) it; Alice approves alone.

- ``draft-comment``: ``draft.yml`` -> ``PLAN.yml`` with one comment line added on top.
- ``draft-flow``: ``draft.yml`` -> ``PLAN.yml`` rewritten in YAML flow style.
- ``draft-to-json``: ``draft.yml`` -> ``PLAN.json`` (the same plan as JSON), converted by the
  controller.
- ``json-indent``: ``draft.json`` (compact) -> ``PLAN.json`` indented, converted.
- ``plan-comment``: Alice's own ``PLAN.yml`` in another folder ``plans/<vid>-alice`` (never
  frozen: deleted in the same push) -> the agent's ``PLAN.yml`` here with a comment added.

Results: ``draft-comment``, ``draft-flow``, ``draft-to-json``, ``json-indent`` broke (strict
xfails): each ran on Alice's lone approval (``status`` shows her as approver, ``completed``).
``plan-comment`` held (a PLAN.yml's writers are kept by its hashed content, so a comment does
not hide them); only files that are not plans are followed by bytes. A fresh-clone
``plangate audit`` calls the four approvals valid too (strict xfail): it agrees with what ran.

Control: ``draft-same`` (``draft.yml`` renamed with identical bytes: round 5's case) is
``E_SELF_APPROVAL``; ``plain`` (the agent's own text) runs once on Alice's approval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, clone_audit, load_yaml, plan_text
from test_round2_approval_authors import shared_lab

ATTACKS = ["draft-comment", "draft-flow", "draft-to-json", "json-indent", "plan-comment"]
_WHY = (
    "round 7: plan text Alice committed under the plans folder, rewritten by the agent with"
    " other bytes but the same hashed content ({how}), is not counted as hers: the index"
    " follows her file's bytes (blob id), not its hashed content; she approves alone and it"
    " runs"
)
_HOW = {
    "draft-comment": "a comment line added",
    "draft-flow": "YAML flow style",
    "draft-to-json": "the draft.yml as PLAN.json, converted",
    "json-indent": "draft.json re-indented as PLAN.json, converted",
}
BROKEN: dict[str, object] = {}  # fixed: plan text under another name is its writer's


def _flow(text: str) -> str:
    data = load_yaml(text)
    return "\n".join(f"{k}: {json.dumps(v)}" for k, v in data.items()) + "\n"


def _approve(lab: Lab, vid: str) -> None:
    """Alice sets ``approved`` in whatever style the file is written."""
    path = lab.repo / "plans" / vid / "PLAN.yml"
    text = path.read_text()
    for old in (
        "  status: pending_approval",
        '"status": "pending_approval"',
        'status: "pending_approval"',
    ):
        if old in text:
            path.write_text(text.replace(old, old.replace("pending_approval", "approved"), 1))
            break
    else:
        raise AssertionError(f"{vid}: no pending status in {text[:300]}")
    lab.commit(f"approve {vid}", ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    texts = {vid: plan_text(vid) for vid in [*ATTACKS, "draft-same", "plain"]}
    # Alice's drafts
    for vid in ["draft-comment", "draft-flow", "draft-to-json", "draft-same"]:
        lab.write(vid, texts[vid], "draft.yml")
    lab.write("json-indent", json.dumps(load_yaml(texts["json-indent"])), "draft.json")
    lab.write("plan-comment-alice", texts["plan-comment"])
    lab.commit("alice drafts", ALICE)
    # the agent's own plans, in the same push
    for vid in ["draft-comment", "draft-flow", "draft-to-json", "draft-same"]:
        (lab.repo / "plans" / vid / "draft.yml").unlink()
    (lab.repo / "plans" / "json-indent" / "draft.json").unlink()
    (lab.repo / "plans" / "plan-comment-alice" / "PLAN.yml").unlink()
    lab.write("draft-comment", "# tidied up\n" + texts["draft-comment"])
    lab.write("draft-flow", _flow(texts["draft-flow"]))
    lab.write("draft-to-json", json.dumps(load_yaml(texts["draft-to-json"]), indent=2), "PLAN.json")
    lab.write("json-indent", json.dumps(load_yaml(texts["json-indent"]), indent=4), "PLAN.json")
    lab.write("plan-comment", "# ready\n" + texts["plan-comment"])
    lab.write("draft-same", texts["draft-same"])
    lab.write("plain", texts["plain"])
    lab.commit("agent writes plans", AGENT)
    lab.run()  # convert, freeze
    for vid in [*ATTACKS, "draft-same", "plain"]:
        _approve(lab, vid)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r7-sources", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


def test_the_same_bytes_renamed_are_hers(lab: Lab) -> None:
    assert lab.calls("draft-same") == [], lab.codes("draft-same")
    assert "E_SELF_APPROVAL" in lab.codes("draft-same")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS])
def test_text_alice_wrote_is_hers_whatever_its_bytes(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


def test_a_fresh_clone_audit_never_calls_a_rewritten_draft_approval_valid(
    lab: Lab, tmp_path: Path
) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid, report
    assert not valid & {f"plans/{v}" for v in ATTACKS}, sorted(valid)
