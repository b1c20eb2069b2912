"""Round 70, approval side: round 69's byte-exact moves (docs/approvals.md, "Who changed the
content": a plan file a commit adds with the bytes of a plan file it removes, all but a plain
status line, is that file moved, no writing, whether the folder or the file name changes; the
content's writers are those of the content moved, by hash, and the source folder's are
carried to the new one; ``Lifecycle._move_source``). Can a writer's bytes, or a folder's
writers, be laundered through a move, a swap or a move over another plan?

Lab (one, local mode, fake dates). The writer here is Bob (``bob@ops.example.com``, an allowed
approver), so that laundering matters: Bob writes a plan, or a ``NOTES.md`` in a plan's
folder; Alice (an approver, no writer) moves things; Bob then approves. P0 freezes every
plan; Alice's moves are committed (one commit each), P1; Bob's (or Alice's) approvals, P2.
Every plan's ``rec`` tag is the folder it was first written in.

Bob approves (asserted: nothing Bob wrote or noted ran; his approval refused
``E_SELF_APPROVAL``; no valid run in the controller-side and fresh-clone audits):

- ``mv-folder``: Bob's own plan, its folder moved by Alice byte for byte (``git mv``).
- ``mv-yaml``: Bob's own plan renamed ``PLAN.yml`` -> ``PLAN.yaml`` by Alice.
- ``mv-both``: Bob's own plan moved to another folder AND renamed ``PLAN.yaml`` by Alice.
- ``mv-notes``: the agent's plan with Bob's ``NOTES.md``; Alice moves the whole folder.
- ``mv-leave``: the agent's plan with Bob's ``NOTES.md``; Alice moves only ``PLAN.yml`` to a
  new folder (the note stays behind): the source folder's writers are carried.
- ``swap-stay``: folder ``swap-stay`` holds the agent's plan Y and Bob's note, ``swap-stay-o``
  the agent's plan X; Alice swaps the two ``PLAN.yml`` in one commit; Bob approves
  ``swap-stay`` (X, now beside his note).
- ``swap-carry``: the same swap; Bob approves the folder that received Y from his noted folder.
- ``onto``: Bob's pending plan Z in ``onto``; Alice ``git mv -f``s the agent's plan X over it
  (the folder never emptied: Bob committed a file into it); Bob approves.
- ``bob-mvappr``: Bob moves his own plan byte for byte and sets ``approved`` in that commit.
- ``mv-merge``: Bob's own plan moved by Alice on her branch, merged ``--no-ff`` by Alice.
- ``json-mv``: Bob commits ``PLAN.json`` holding YAML plan text (a source that does not
  convert); before any pass Alice moves it to another folder as ``PLAN.yml``.
- ``json-ren``: the same, renamed ``PLAN.yml`` in its own folder.
- ``amb-mv``: Bob's folder holds ``PLAN.yml`` and ``PLAN.yaml`` (ambiguous); Alice moves the
  ``PLAN.yml`` out to a folder of its own.
- ``ps-param`` / ``ps-param-yaml``: the agent's plan has a param line ``status:
  pending_approval``; BOB moves its folder (or renames it ``PLAN.yaml``) and changes that param
  line to ``status: approved`` in the same commit (hashed content: a new version, frozen at
  P1; one line spelled like a plain status line), then approves it.
- ``nest-mv``: Bob's nested plan ``nest-mv/child/PLAN.yml`` moved up by Alice to a folder.

Honest (asserted: ran once, approver alice, both audits valid):

- ``h-mvappr-both``: Alice moves the agent's plan to a new folder AND renames it
  ``PLAN.yaml``, approving in the same commit.
- ``h-swap``: Alice swaps two agent plans (no notes), then approves one of them.
- ``h-merge``: Alice moves the agent's plan on her branch, merges it ``--no-ff``, approves;
  ``h-merge-ff``: the same fast-forwarded.
- ``h-squash``: her move on her branch, ``merge --squash``ed onto main; she approves.
- ``h-merge-appr``: her move approving the plan in the move commit, on her branch, merged
  ``--no-ff`` (her pull request that moves and approves).
- ``h-rot``: Alice rotates three agent plans in one commit (a -> b -> c -> a, the first
  folder renamed too), then approves one.
- ``h-swapappr``: Alice swaps two agent plans and approves one in that commit.
- ``h-json-ren``: the agent's ``PLAN.json`` holding YAML text, renamed ``PLAN.yml`` by Alice
  before any pass; she approves after the freeze.

Seen (round 70): ``h-swap``, ``h-rot``, ``h-merge``, ``h-merge-appr`` BROKE (honest work
refused): her swap of two agent plans (byte for byte, one commit), her rotation of three, and
her byte-exact folder move on her branch merged ``--no-ff`` (approving later, or in the move
commit) each make her a writer: her approval is ``E_SELF_APPROVAL`` (the same move
fast-forwarded, ``h-merge-ff``, or squash-merged, ``h-squash``, and moves to a new folder or
name run). ``h-swapappr`` BROKE: her swap approving one plan in the same commit is
``E_PLAN_HASH_MISMATCH`` ("the approving commit also changed the plan's content") where a move
approved in its commit runs (``h-mvappr-both``). Should: a swap or rotation keeping the bytes
is a move (docs: "plans trading folders, a rotation of three"), writes nothing, and takes "an
approval made with the move"; a move on a merged branch writes nothing as on the line. Held:
every Bob id (his content, his note in the source folder, his note in the destination folder,
his plan moved over, his sources renamed, his ambiguous and nested plans moved out:
``E_SELF_APPROVAL``, nothing ran); ``h-mvappr-both``, ``h-merge-ff``, ``h-squash`` and
``h-json-ren`` ran, hers. The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): ``h-swap``, ``h-rot``, ``h-swapappr``, ``h-merge``, ``h-merge-appr``. One
move rule (docs/approvals.md, "Who changed the content"): a plan file a commit adds OR
rewrites whose new bytes are (all but a plain status line) the old bytes of another plan file
the same commit removes or whose content it changes is that content moved
(``Lifecycle._move_source``; a file whose content stays is copied), and the folder a swap
takes a plan from counts as left, its writers going with the plan (``_moved_out_in_place``).
A merged branch's commit is asked with its whole plans folder (``_merged_move``, in
``_changers`` and ``_producers``): its move writes and makes nothing, as on the line. An
approval made with a move approves the version moved, whether into a new folder or a swap
(not "changed in the approving commit"). Every Bob id is still refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BenchError, Lab, cases, clone_audit, valid_runs
from pairkit import pair_plan
from policykit import DatedClock
from test_round2_execution_kit import shared

BOB_IDS = [
    "mv-folder",
    "mv-yaml",
    "mv-both",
    "mv-notes",
    "mv-leave",
    "swap-stay",
    "swap-carry",
    "onto",
    "bob-mvappr",
    "mv-merge",
    "json-mv",
    "json-ren",
    "amb-mv",
    "nest-mv",
    "ps-param",
    "ps-param-yaml",
]
HONEST = [
    "h-mvappr-both", "h-swap", "h-merge", "h-merge-ff", "h-rot", "h-swapappr", "h-json-ren",
    "h-squash", "h-merge-appr",
]  # fmt: skip
#: the folder (slug) approved, its file, and every content tag that must not run
TARGET = {
    "mv-folder": ("mv-folder-new", "PLAN.yml", ["mv-folder"]),
    "mv-yaml": ("mv-yaml", "PLAN.yaml", ["mv-yaml"]),
    "mv-both": ("mv-both-new", "PLAN.yaml", ["mv-both"]),
    "mv-notes": ("mv-notes-new", "PLAN.yml", ["mv-notes"]),
    "mv-leave": ("mv-leave-new", "PLAN.yml", ["mv-leave"]),
    "swap-stay": ("swap-stay", "PLAN.yml", ["swap-stay", "swap-stay-o"]),
    "swap-carry": ("swap-carry-o", "PLAN.yml", ["swap-carry", "swap-carry-o"]),
    "onto": ("onto", "PLAN.yml", ["onto", "onto-src"]),
    "bob-mvappr": ("bob-mvappr-new", "PLAN.yml", ["bob-mvappr"]),
    "mv-merge": ("mv-merge-new", "PLAN.yml", ["mv-merge"]),
    "h-mvappr-both": ("h-mvappr-both-new", "PLAN.yaml", ["h-mvappr-both"]),
    "h-swap": ("h-swap", "PLAN.yml", ["h-swap-o"]),
    "h-merge": ("h-merge-new", "PLAN.yml", ["h-merge"]),
    "h-merge-ff": ("h-merge-ff-new", "PLAN.yml", ["h-merge-ff"]),
    "json-mv": ("json-mv-new", "PLAN.yml", ["json-mv"]),
    "json-ren": ("json-ren", "PLAN.yml", ["json-ren"]),
    "amb-mv": ("amb-mv-new", "PLAN.yml", ["amb-mv", "amb-mv-y"]),
    "nest-mv": ("nest-mv-new", "PLAN.yml", ["nest-mv-child"]),
    "ps-param": ("ps-param-new", "PLAN.yml", ["ps-param"]),
    "ps-param-yaml": ("ps-param-yaml", "PLAN.yaml", ["ps-param-yaml"]),
    "h-rot": ("h-rot", "PLAN.yml", ["h-rot-c"]),
    "h-swapappr": ("h-swapappr", "PLAN.yml", ["h-swapappr-o"]),
    "h-json-ren": ("h-json-ren", "PLAN.yml", ["h-json-ren"]),
    "h-squash": ("h-squash-new", "PLAN.yml", ["h-squash"]),
    "h-merge-appr": ("h-merge-appr-new", "PLAN.yml", ["h-merge-appr"]),
}
BROKEN: dict[str, object] = {}


def _status_param_plan(tag: str) -> str:
    """The agent's plan whose action has a param named ``status`` (a line spelled as a status
    line, inside hashed content)."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "agent: set the ticket {tag}"\n    params:\n      tag: "{tag}"\n'
        "      status: pending_approval\n"
    )


def _codes(lab: Lab, slug: str, name: str) -> str:
    text = lab.codes(slug)
    if name != "PLAN.yml":
        text += lab.git("show", f"HEAD:plans/{slug}/{name}", check=False)
    return text


def _approve(lab: Lab, slug: str, name: str = "PLAN.yml") -> None:
    """Set the status as a human does, in the file's own spelling (YAML or JSON text)."""
    path = lab.repo / "plans" / slug / name
    text = path.read_text()
    if text.lstrip().startswith("{"):
        new = re.sub(r'"status": "[a-z_]+"', '"status": "approved"', text, count=1)
        if new == text:
            raise BenchError(f"no status in {path}")
        path.write_text(new)
    else:
        lab.set_status(slug, "approved", name)


def _note(lab: Lab, slug: str) -> None:
    (lab.repo / "plans" / slug / "NOTES.md").write_text("bob: check the host first\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = DatedClock(lab, AGENT)
    bob_plans = ["mv-folder", "mv-yaml", "mv-both", "onto", "bob-mvappr", "mv-merge"]
    agent_plans = [
        "mv-notes", "mv-leave", "swap-stay", "swap-stay-o", "swap-carry", "swap-carry-o",
        "onto-src", "h-mvappr-both", "h-swap", "h-swap-o", "h-merge", "h-merge-ff",
        "h-squash", "h-merge-appr",
    ]  # fmt: skip
    for s in agent_plans:
        lab.write(s, pair_plan(s))
    for s in ("ps-param", "ps-param-yaml"):
        lab.write(s, _status_param_plan(s))
    c.commit("agent: plans", AGENT)
    for s in bob_plans:
        lab.write(s, pair_plan(s))
    for s in ("mv-notes", "mv-leave", "swap-stay", "swap-carry-o"):
        _note(lab, s)
    # swap-carry: Bob's note is in swap-carry (holding Y); the approved folder is swap-carry-o
    # Bob's plan under a child folder; an ambiguous folder of Bob's
    lab.write("nest-mv", pair_plan("nest-mv"))
    lab.write("nest-mv/child", pair_plan("nest-mv-child"))
    lab.write("amb-mv", pair_plan("amb-mv"))
    lab.write("amb-mv", pair_plan("amb-mv-y"), "PLAN.yaml")
    for s in ("json-mv", "json-ren"):
        lab.write(s, pair_plan(s), "PLAN.json")  # YAML text under a source's name
    c.commit("bob: my plans, and review notes", BOB)
    for s in ("h-rot-a", "h-rot-b", "h-rot-c", "h-swapappr", "h-swapappr-o"):
        lab.write(s, pair_plan(s))
    lab.write("h-json-ren", pair_plan("h-json-ren"), "PLAN.json")
    c.commit("agent: more plans", AGENT)
    # before any pass (no conversion yet): Alice names the sources PLAN.yml
    (lab.repo / "plans" / "json-mv-new").mkdir()
    git = lab.git
    git("mv", "plans/json-mv/PLAN.json", "plans/json-mv-new/PLAN.yml")
    c.commit("alice: it is a plan, name it so", ALICE)
    for s in ("json-ren", "h-json-ren"):
        git("mv", f"plans/{s}/PLAN.json", f"plans/{s}/PLAN.yml")
        c.commit(f"alice: name {s} PLAN.yml", ALICE)
    c.run()  # P0: freezes
    # Alice's moves
    git("mv", "plans/mv-folder", "plans/mv-folder-new")
    c.commit("alice: tidy mv-folder", ALICE)
    git("mv", "plans/mv-yaml/PLAN.yml", "plans/mv-yaml/PLAN.yaml")
    c.commit("alice: name it PLAN.yaml", ALICE)
    (lab.repo / "plans" / "mv-both-new").mkdir()
    git("mv", "plans/mv-both/PLAN.yml", "plans/mv-both-new/PLAN.yaml")
    c.commit("alice: move and rename", ALICE)
    git("mv", "plans/mv-notes", "plans/mv-notes-new")
    c.commit("alice: move the folder", ALICE)
    (lab.repo / "plans" / "mv-leave-new").mkdir()
    git("mv", "plans/mv-leave/PLAN.yml", "plans/mv-leave-new/PLAN.yml")
    c.commit("alice: move the plan, keep the notes", ALICE)
    for a, b in (
        ("swap-stay", "swap-stay-o"),
        ("swap-carry", "swap-carry-o"),
        ("h-swap", "h-swap-o"),
    ):
        pa, pb = lab.repo / "plans" / a / "PLAN.yml", lab.repo / "plans" / b / "PLAN.yml"
        ta, tb = pa.read_bytes(), pb.read_bytes()
        pa.write_bytes(tb)
        pb.write_bytes(ta)
        c.commit(f"alice: swap {a} and {b}", ALICE)
    # h-rot: a rotation of three; h-swapappr: a swap approving one of them in that commit
    rot = [lab.repo / "plans" / f"h-rot-{x}" / "PLAN.yml" for x in "abc"]
    texts = [p.read_bytes() for p in rot]
    for i, p in enumerate(rot):
        p.write_bytes(texts[i - 1])
    git("mv", "plans/h-rot-a", "plans/h-rot")
    c.commit("alice: rotate", ALICE)
    pa, pb = (lab.repo / "plans" / x / "PLAN.yml" for x in ("h-swapappr", "h-swapappr-o"))
    ta, tb = pa.read_bytes(), pb.read_bytes()
    pa.write_bytes(tb)
    pb.write_bytes(ta)
    lab.set_status("h-swapappr", "approved")
    c.commit("alice: swap, approve", ALICE)
    # amb-mv: Bob's PLAN.yml moved out of his ambiguous folder; nest-mv: his child plan moved up
    (lab.repo / "plans" / "amb-mv-new").mkdir()
    git("mv", "plans/amb-mv/PLAN.yml", "plans/amb-mv-new/PLAN.yml")
    c.commit("alice: one plan per folder", ALICE)
    (lab.repo / "plans" / "nest-mv-new").mkdir()
    git("mv", "plans/nest-mv/child/PLAN.yml", "plans/nest-mv-new/PLAN.yml")
    c.commit("alice: the child is a plan of its own", ALICE)

    # ps-param*: BOB moves the agent's plan and sets the param line ``status:`` to approved
    # (hashed content: a new version), the plan's own status line untouched
    def param_approved(path: Path) -> None:
        text = path.read_text()
        path.write_text(
            text.replace("      status: pending_approval\n", "      status: approved\n")
        )

    git("mv", "plans/ps-param", "plans/ps-param-new")
    param_approved(lab.repo / "plans" / "ps-param-new" / "PLAN.yml")
    c.commit("bob: move ps-param", BOB)
    git("mv", "plans/ps-param-yaml/PLAN.yml", "plans/ps-param-yaml/PLAN.yaml")
    param_approved(lab.repo / "plans" / "ps-param-yaml" / "PLAN.yaml")
    c.commit("bob: name it PLAN.yaml", BOB)
    git("mv", "-f", "plans/onto-src/PLAN.yml", "plans/onto/PLAN.yml")
    c.commit("alice: use the agent's plan in onto", ALICE)
    # Bob moves his own plan and approves it in one commit
    git("mv", "plans/bob-mvappr", "plans/bob-mvappr-new")
    lab.set_status("bob-mvappr-new", "approved")
    c.commit("bob: move and approve", BOB)
    # mv-merge / h-merge: moved on Alice's branch, merged --no-ff
    for s in ("mv-merge", "h-merge"):
        c.git("checkout", "-q", "-b", f"alice/{s}", "main", who=ALICE)
        git("mv", f"plans/{s}", f"plans/{s}-new")
        c.commit(f"alice: move {s}", ALICE)
        c.git("checkout", "-q", "main", who=ALICE)
        c.git("merge", "-q", "--no-ff", "-m", f"merge alice/{s}", f"alice/{s}", who=ALICE)
    c.git("checkout", "-q", "-b", "alice/h-merge-ff", "main", who=ALICE)
    git("mv", "plans/h-merge-ff", "plans/h-merge-ff-new")
    c.commit("alice: move h-merge-ff", ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    c.git("merge", "-q", "--ff-only", "alice/h-merge-ff", who=ALICE)
    # h-squash: her move squash-merged; h-merge-appr: her move approving in its commit, merged
    c.git("checkout", "-q", "-b", "alice/h-squash", "main", who=ALICE)
    git("mv", "plans/h-squash", "plans/h-squash-new")
    c.commit("alice: move h-squash", ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    c.git("merge", "-q", "--squash", "alice/h-squash", who=ALICE)
    c.commit("alice: move h-squash (squashed)", ALICE)
    c.git("checkout", "-q", "-b", "alice/h-merge-appr", "main", who=ALICE)
    git("mv", "plans/h-merge-appr", "plans/h-merge-appr-new")
    lab.set_status("h-merge-appr-new", "approved")
    c.commit("alice: move and approve h-merge-appr", ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    c.git(
        "merge", "-q", "--no-ff", "-m", "merge alice/h-merge-appr", "alice/h-merge-appr", who=ALICE
    )
    # h-mvappr-both: move to a new folder, rename, and approve in one commit
    (lab.repo / "plans" / "h-mvappr-both-new").mkdir()
    git("mv", "plans/h-mvappr-both/PLAN.yml", "plans/h-mvappr-both-new/PLAN.yaml")
    lab.set_status("h-mvappr-both-new", "approved", "PLAN.yaml")
    c.commit("alice: move, rename, approve", ALICE)
    c.run()  # P1
    lab.p1 = {v: _codes(lab, TARGET[v][0], TARGET[v][1]) for v in TARGET}  # type: ignore[attr-defined]
    for v in BOB_IDS:
        if v == "bob-mvappr":
            continue
        slug, name, _tags = TARGET[v]
        _approve(lab, slug, name)
        c.commit(f"bob: approve {slug}", BOB)
    for v in ("h-swap", "h-merge", "h-merge-ff", "h-rot", "h-json-ren", "h-squash"):
        slug, name, _tags = TARGET[v]
        _approve(lab, slug, name)
        c.commit(f"alice: approve {slug}", ALICE)
    c.run()  # P2
    c.run()  # P3
    lab.status()
    lab.final = {v: _codes(lab, TARGET[v][0], TARGET[v][1]) for v in TARGET}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-moves", _build)


@pytest.mark.parametrize("vid", cases(BOB_IDS, BOB_IDS, BROKEN))  # type: ignore[arg-type]
def test_a_move_launders_no_writer(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    ran = {t: len(lab.calls(t)) for t in tags}
    assert not any(ran.values()), (ran, lab.final[vid][:1500])  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.final[vid], lab.final[vid][:1500]  # type: ignore[attr-defined]
    assert valid_runs(lab.report, slug) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_move_writes_nothing(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    assert [len(lab.calls(t)) for t in tags] == [1], lab.final[vid][:1500]  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, slug)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*BOB_IDS, *HONEST])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    slug, _name, tags = TARGET[vid]
    fresh = valid_runs(lab.fresh, slug)  # type: ignore[attr-defined]
    assert len(fresh) == sum(len(lab.calls(t)) for t in tags), (fresh, lab.final[vid][:800])  # type: ignore[attr-defined]
    assert len(valid_runs(lab.report, slug)) == len(fresh)  # type: ignore[attr-defined]
