"""Round 37, who may make a plan run: content written by a merge *inside* a merged branch.

docs/approvals.md: "For a merge, these are the identities of the commits the merge brought in
through its second parent that changed the plan" and "an evil merge ... the merger becomes a
content changer". A merge made on a pull-request branch (not on the first-parent line) can
itself write content: an evil merge (``--no-commit``, then an edit) or a conflict resolution.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent adds
``plans/<vid>``; the controller freezes it. Then, per variant, on a branch ``pr-<vid>`` from
that freeze:

- ``inner-evil``: the agent edits a param (``who: pr``); Alice merges an unrelated side branch
  ``--no-commit`` and writes ``who: alice`` into the plan inside her merge.
- ``inner-conflict``: the agent sets ``who: pr`` on ``pr``, ``who: side`` on a side branch;
  Alice merges the side branch, resolves the conflict as ``who: alice``.
- ``inner-main``: the agent sets ``who: pr``; main moves on; Alice merges ``main`` into the
  branch ``--no-commit`` and writes ``who: alice``.
- ``ff-evil``: as ``inner-evil``, but main is fast-forwarded to the branch (Alice's merge ends
  on the first-parent line).

The agent merges ``pr-<vid>`` into main ``--no-ff`` (status ``pending_approval``); the
controller freezes the new version; Alice approves it on main. Asserted: ``E_SELF_APPROVAL``,
``rec`` never runs.

- ``check`` (``test_check_predicts_the_refusal``): ``plans/chk-evil`` built like
  ``inner-evil``; after the freeze, a pull request in which the agent sets ``approved``;
  ``plangate check --base main --head <pr> --as alice@example.com`` must not predict a start
  and must name ``E_SELF_APPROVAL``; Alice merges: refused.
- ``clean-veto`` (withdraw rights): the agent sets ``who: side`` on a side branch; Mallory (no
  approver) merges it cleanly into ``pr`` (her merge writes nothing); the agent merges ``pr``;
  the controller freezes; Mallory rejects on main; Alice approves. Asserted: Mallory's
  rejection is ignored and ``rec`` runs once.

Results: every variant held (``E_SELF_APPROVAL`` for the four inner-merge writers; the
clean inner merge gave Mallory no veto; ``check`` predicted the refusal).
"""

from __future__ import annotations

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

SELF = ["inner-evil", "inner-conflict", "inner-main", "ff-evil"]
CHECK = ["chk-evil"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _who(lab: Lab, vid: str, value: str) -> None:
    text = lab.read(vid)
    lines = [ln for ln in text.split("\n") if not ln.startswith("      who:")]
    i = next(i for i, ln in enumerate(lines) if ln.startswith("      tag:"))
    lines.insert(i + 1, f'      who: "{value}"')
    lab.write(vid, "\n".join(lines))


def _build(root):  # type: ignore[no-untyped-def]
    lab = Lab(root)
    for vid in [*SELF, *CHECK, "clean-veto"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    fork = lab.head()
    for vid in ("inner-evil", "ff-evil", "chk-evil"):
        lab.git("checkout", "-q", "-b", f"side-{vid}", fork)
        (lab.repo / f"NOTE-{vid}").write_text("side\n")
        lab.commit("unrelated", AGENT)
        lab.git("checkout", "-q", "-b", f"pr-{vid}", fork)
        _who(lab, vid, "pr")
        lab.commit(f"agent edits {vid}", AGENT)
        lab.git("merge", "-q", "--no-ff", "--no-commit", f"side-{vid}", who=ALICE)
        _who(lab, vid, "alice")
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", "merge side", who=ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "pr-ff-evil")
    # conflict
    vid = "inner-conflict"
    lab.git("checkout", "-q", "-b", f"side-{vid}", fork)
    _who(lab, vid, "side")
    lab.commit("side edit", AGENT)
    lab.git("checkout", "-q", "-b", f"pr-{vid}", fork)
    _who(lab, vid, "pr")
    lab.commit("pr edit", AGENT)
    lab.git("merge", "-q", "--no-ff", f"side-{vid}", who=ALICE, check=False)
    text = lab.read(vid)
    assert "<<<<<<<" in text, text
    lines = text.split("\n")
    out, skip = [], False
    for ln in lines:
        if ln.startswith("<<<<<<<"):
            skip = True
            out.append('      who: "alice"')
            continue
        if ln.startswith(">>>>>>>"):
            skip = False
            continue
        if not skip:
            out.append(ln)
    lab.write(vid, "\n".join(out))
    lab.git("add", "-A")
    lab.git("commit", "-q", "--no-edit", who=ALICE)
    # clean-veto
    vid = "clean-veto"
    lab.git("checkout", "-q", "-b", f"side-{vid}", fork)
    _who(lab, vid, "side")
    lab.commit("side edit", AGENT)
    lab.git("checkout", "-q", "-b", f"pr-{vid}", fork)
    (lab.repo / "NOTE-cv").write_text("pr\n")
    lab.commit("pr note", AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "mallory merges side", f"side-{vid}", who=MALLORY)
    # inner-main
    vid = "inner-main"
    lab.git("checkout", "-q", "-b", f"pr-{vid}", fork)
    _who(lab, vid, "pr")
    lab.commit("pr edit", AGENT)
    lab.git("checkout", "-q", "main")
    (lab.repo / "NOTE-main").write_text("main moves\n")
    lab.commit("main moves", AGENT)
    lab.git("checkout", "-q", f"pr-{vid}")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "main", who=ALICE)
    _who(lab, vid, "alice")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "merge main", who=ALICE)
    lab.git("checkout", "-q", "main")
    for vid in ("inner-evil", "inner-conflict", "inner-main", "clean-veto", "chk-evil"):
        lab.git("merge", "-q", "--no-ff", "-m", f"merge pr {vid}", f"pr-{vid}", who=AGENT)
    lab.run()
    lab.git("checkout", "-q", "-b", "pr-chk-approve")
    lab.set_status("chk-evil", "approved")
    lab.commit("agent sets approved", AGENT)
    lab.git("checkout", "-q", "main")
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-chk-approve",
        "--as", ALICE[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    (root / "check.json").write_text(result.stdout + "\n" + result.stderr[-2000:])
    lab.git("merge", "-q", "--no-ff", "-m", "merge approve", "pr-chk-approve", who=ALICE)
    lab.run()
    lab.set_status("clean-veto", "rejected")
    lab.commit("mallory rejects", MALLORY)
    lab.run()
    lab.set_status("clean-veto", "approved")
    for vid in SELF:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-innermerge", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in SELF]
)
def test_inner_merge_writer_cannot_approve(lab: Lab, vid: str) -> None:
    assert 'who: "alice"' in lab.read(vid)
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


def test_check_predicts_the_refusal(lab: Lab) -> None:
    out = (lab.root / "check.json").read_text()
    assert "Traceback" not in out, out
    assert lab.calls("chk-evil") == [], lab.codes("chk-evil")
    assert lab.refusal("chk-evil") == "E_SELF_APPROVAL", lab.codes("chk-evil")
    assert '"outcome": "start"' not in out and "E_SELF_APPROVAL" in out, out[-3000:]


def test_clean_inner_merge_gives_no_veto(lab: Lab) -> None:
    assert len(lab.calls("clean-veto")) == 1, lab.codes("clean-veto")
