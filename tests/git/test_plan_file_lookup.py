"""A plan id maps to its file on a branch one way for every reader (round 68): ``PLAN.yml``
or ``PLAN.yaml``, whichever is there; both there is E_PLAN_AMBIGUOUS, neither is no plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import PlanAmbiguous, UnsafePath
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.planstate import plan_file_of, plan_id_of
from controller.plan.names import pin_problem, plan_file_claims
from controller.plan.plans import PLAN_FILES, unsafe_name
from tests.support.gitkit import AGENT, PLAN, commit_all, git, write_plan


@pytest.mark.parametrize("name", PLAN_FILES)
def test_either_file_name_is_the_plans_file(name: str) -> None:
    file = plan_file_of("plans/x", [name, "EXECUTION_LOG.md"])
    assert file == f"plans/x/{name}"
    assert plan_id_of(str(file), "plans") == "plans/x"  # and back to its id


def test_a_folder_without_a_plan_file_has_none() -> None:
    assert plan_file_of("plans/x", ["EXECUTION_LOG.md", "PLAN.json", "xy"]) is None


@pytest.mark.parametrize(
    "names",
    [["PLAN.json", "plan.yml"], ["PLAN.md", "Plan.Yaml"], ["PLAN.json", "PLAN.md"],
     ["PLAN.md", "plan.MD"], ["PLAN.json", "PLAN.yml."], ["PLAN.json", "PLAN~1.JSO"]],
)  # fmt: skip
def test_a_held_source_is_held_for_the_reader_that_asks_for_its_plan(names: list[str]) -> None:
    """Round 74: MCP ``log`` and the page answered "no plan" for a source the converter
    holds E_PLAN_AMBIGUOUS (beside a claim of the plan file's place or a twin source)."""
    with pytest.raises(PlanAmbiguous, match="plans/x"):
        plan_file_of("plans/x", [*names, "EXECUTION_LOG.md"])


def test_a_source_under_a_hidden_name_is_unsafe_and_one_to_convert_is_no_plan_yet() -> None:
    with pytest.raises(UnsafePath):
        plan_file_of("plans/x", ["PLAN.js\u200con"])
    assert plan_file_of("plans/x", ["plan.json"]) is None  # E_CONVERT_UNSUPPORTED: not held


def test_both_file_names_are_ambiguous() -> None:
    with pytest.raises(PlanAmbiguous):
        plan_file_of("plans/x", PLAN_FILES)


@pytest.mark.parametrize(
    "path",
    ["plans/x/PLAN.yml/PLAN.yml", "plans/x/PLAN.yaml/y/PLAN.yml", "plans/x/PLAN.md/PLAN.yaml"],
)
def test_a_folder_named_as_a_plan_file_is_no_plan_folder(path: str) -> None:
    """Round 69: a plan id is a folder and a path naming a plan file is read as its
    folder, so a folder under a plan file's name holds no plan (E_UNSAFE_PATH where plans
    are found), and counts as that file beside a plan file of its parent (ambiguous)."""
    assert "no plan folder" in (unsafe_name(path) or "")
    assert unsafe_name("plans/x/PLAN.yml") is None and unsafe_name("plans/PLAN-x/PLAN.yml") is None
    with pytest.raises(PlanAmbiguous):
        plan_file_of("plans/x", ["PLAN.yaml", "PLAN.yml"])  # the second one a folder


@pytest.mark.parametrize(
    "path",
    [
        "plans/x/EXECUTION_LOG.md/PLAN.yml",
        "plans/x/execution_log.MD/y/PLAN.yml",
        "plans/x/PLAN.YML/PLAN.yml",
        "plans/x/plan.yml/PLAN.yml",
        "plans/x/Plan.Yaml/PLAN.yaml",
        "plans/x/plan.JSON/PLAN.yml",
    ],
)
def test_a_folder_named_as_the_record_or_a_case_variant_is_no_plan_folder(path: str) -> None:
    """Round 70: a folder at the place of the controller's record (``EXECUTION_LOG.md``) or
    named as a case variant of a plan file or source (a checkout on a case-insensitive file
    system makes ``PLAN.YML`` the plan file) was frozen as a plan of its own. One rule, the
    names compared case-insensitively; a capital letter elsewhere in a folder is fine."""
    assert "no plan folder" in (unsafe_name(path) or "")
    for fine in (
        "plans/Deploy/PLAN.yml",
        "plans/x/EXECUTION_LOG/PLAN.yml",
        "plans/PLAN.ymlx/PLAN.yml",
    ):
        assert unsafe_name(fine) is None, fine


@pytest.mark.parametrize(
    "beside", [("PLAN.yml", "plan.yml"), ("PLAN.yml", "PLAN.YML"), ("PLAN.yaml", "plan.yaml"),
               ("PLAN.yml", "Plan.Yaml"), ("plan.yml", "PLAN.YAML")],
)  # fmt: skip
def test_a_case_variant_beside_the_plan_file_is_ambiguous(beside: tuple[str, str]) -> None:
    """Round 71: a folder (or file) named as a plan file in another case beside it is one
    path on a case-insensitive checkout: the folder's names are compared as
    ``plan_named_folder`` compares them, by every reader."""
    with pytest.raises(PlanAmbiguous):
        plan_file_of("plans/x", [*beside, "EXECUTION_LOG.md"])
    assert plan_file_claims([*beside, "PLAN.json", "plan.ymlx"]) == sorted(
        beside, key=lambda n: (n not in PLAN_FILES, n)
    )


def test_a_case_variant_alone_is_no_plan_file() -> None:
    assert plan_file_of("plans/x", ["plan.yml", "EXECUTION_LOG.md"]) is None


@pytest.mark.parametrize(
    "folder",
    ["plans/x/EXECUTION_LOG.md", "plans/x/PLAN.jſon", "plans/x/plan.yml", "plans/x/PLAN.YAML",
     "plans/x/Execution_Log.MD", "plans/x/PLAN.yml", "plans/tx "],
)  # fmt: skip
def test_a_nested_pin_to_a_folder_no_reader_takes_for_a_plan_is_refused(folder: str) -> None:
    """Round 71: a nested plan's pin names a plan folder by the rule every reader finds plans
    by (``unsafe_name``), never a folder ``status``, ``show`` and MCP refuse."""
    assert pin_problem(folder) is not None
    assert pin_problem("plans/x") is None and pin_problem("plans/Deploy/a") is None


@pytest.mark.parametrize("when", ["before", "with", "after"])
@pytest.mark.parametrize("beside", ["PLAN.YML", "plan.yml", "Plan.yaml"])
def test_the_index_reads_a_case_variant_beside_the_plan_file_as_ambiguous(
    repo: Path, tmp_path: Path, beside: str, when: str
) -> None:
    """Round 71: the history index lists the plan's folder once and compares its names as
    every reader does: a FOLDER ``PLAN.YML/`` (sorting before ``PLAN.yml``), ``plan.yml/``
    (after it) or ``Plan.yaml/`` beside the plan file is E_PLAN_AMBIGUOUS whether it came
    before the plan, with it or after it; removing it makes the plan a plan again."""
    inner = repo / "plans" / "p" / beside / "PLAN.yml"
    if when == "before":
        inner.parent.mkdir(parents=True)
        inner.write_text(PLAN)
        commit_all(repo, "the folder first", AGENT)
    write_plan(repo, "p")
    if when != "after":
        inner.parent.mkdir(parents=True, exist_ok=True)
        inner.write_text(PLAN)
    commit_all(repo, "the plan", AGENT)
    if when == "after":
        inner.parent.mkdir(parents=True)
        inner.write_text(PLAN)
        commit_all(repo, "the folder after", AGENT)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    state = index.plans["plans/p"]
    assert state.ambiguous and any("E_PLAN_AMBIGUOUS" in n for n in state.notes), state
    git(repo, "rm", "-rq", f"plans/p/{beside}")
    commit_all(repo, "the folder gone", AGENT)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert not index.plans["plans/p"].ambiguous


def _claim(repo: Path, kind: str, name: str) -> None:
    """Put ``plans/p/<name>`` in the index as ``kind``: a symlink, a gitlink (an
    uninitialised submodule), a file, or a folder holding a note."""
    path = repo / "plans" / "p" / name
    if kind == "symlink":
        path.symlink_to("../q/PLAN.yml")
    elif kind == "file":
        path.write_text(PLAN)
    elif kind == "folder":
        path.mkdir()
        (path / "notes.md").write_text("x\n")
    elif kind == "gitlink":
        path.mkdir()  # an uninitialised submodule: an empty folder (``add -A`` keeps it)
    git(repo, "add", "-A")
    if kind == "gitlink":
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},plans/p/{name}")


@pytest.mark.parametrize("when", ["with", "after"])
@pytest.mark.parametrize("kind", ["symlink", "gitlink", "file", "folder"])
@pytest.mark.parametrize("name", ["plan.yml", "PLAN.YML", "Plan.yaml", "PLAN.y\u200cml"])
def test_the_index_counts_every_kind_of_claim_however_late(
    repo: Path, tmp_path: Path, kind: str, name: str, when: str
) -> None:
    """Round 72: a claim of the plan file's place is an entry of the folder whatever its
    kind: a symlink or gitlink ``plan.yml`` (or a lower-case file, or a folder holding no
    plan file) committed AFTER the plan was E_PLAN_AMBIGUOUS only when it came with the
    plan; added later it was never judged (only a path taken for a plan's reached the
    rejudging), and Alice's approval ran the plan. Removing it makes the plan a plan again."""
    write_plan(repo, "q")
    write_plan(repo, "p")
    if when == "with":
        _claim(repo, kind, name)
    commit_all(repo, "the plan", AGENT)
    if when == "after":
        _claim(repo, kind, name)
        commit_all(repo, "the claim after", AGENT)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    state = index.plans["plans/p"]
    assert state.ambiguous and any("E_PLAN_AMBIGUOUS" in n for n in state.notes), state
    assert state.blob is None and state.status is None, state
    assert not index.plans["plans/q"].ambiguous
    git(repo, "rm", "-rqf", f"plans/p/{name}")
    commit_all(repo, "the claim gone", AGENT)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    state = index.plans["plans/p"]
    assert not state.ambiguous and state.blob is not None, state


@pytest.mark.parametrize(("kind", "name"), [("symlink", "plan.yml"), ("folder", "PLAN.YML")])
def test_a_removed_claim_takes_its_unsafe_row_with_it(
    repo: Path, tmp_path: Path, kind: str, name: str
) -> None:
    """Round 73: a symlink ``plan.yml`` (recorded under its own path, E_UNSAFE_PATH) or a
    folder ``PLAN.YML/`` holding a plan (its own id, no plan folder) deleted by the agent kept
    its row for ever: a row for an entry no longer in the tree. The row goes with the entry;
    a folder so named that still holds a plan file keeps it."""
    write_plan(repo, "q")
    write_plan(repo, "p")
    path = repo / "plans" / "p" / name
    if kind == "symlink":
        path.symlink_to("../q/PLAN.yml")
    else:
        path.mkdir()
        (path / "PLAN.yml").write_text(PLAN)
        (path / "PLAN.yaml").write_text(PLAN)
    commit_all(repo, "the claim", AGENT)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    held = f"plans/p/{name}"
    assert index.plans[held].unsafe, sorted(index.plans)
    if kind == "folder":  # one of its two files gone: still there, still held
        git(repo, "rm", "-q", f"{held}/PLAN.yml")
        commit_all(repo, "half of it gone", AGENT)
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
        assert index.plans[held].unsafe, sorted(index.plans)
    git(repo, "rm", "-rqf", held)
    commit_all(repo, "the claim gone", AGENT)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert held not in index.plans, index.plans.get(held)
    assert not index.plans["plans/p"].ambiguous
    index.close()
    again = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    assert held not in again.plans  # saved so


def test_a_reader_by_id_refuses_a_plan_beside_its_twin_folder() -> None:
    """Round 75: MCP ``log`` of ``plans/FCASE`` beside ``plans/fcase`` (one folder on a
    case-insensitive checkout) answered its file; every reader by id asks the twin rule."""
    from controller.git.planstate import refuse_twin

    tree = {"plans": ["FCASE", "fcase", "ok", "notes"], "plans/fcase": ["PLAN.yml"],
            "plans/FCASE": ["PLAN.yml"], "plans/ok": ["PLAN.yml"],
            "plans/Notes": ["x.md"], "plans/notes": ["PLAN.yml"]}  # fmt: skip
    for plan_id in ("plans/FCASE", "plans/fcase"):
        with pytest.raises(PlanAmbiguous, match="checkout"):
            refuse_twin(plan_id, lambda folder: tree.get(folder, []), "plans")
    refuse_twin("plans/ok", lambda folder: tree.get(folder, []), "plans")
    tree["plans"].append("Notes")  # a twin holding no plan file: no claim
    refuse_twin("plans/notes", lambda folder: tree.get(folder, []), "plans")


@pytest.mark.parametrize("back", ["same", "edited", "yaml"])
def test_a_plan_file_link_replaced_by_a_file_ends_its_hold(
    repo: Path, tmp_path: Path, back: str
) -> None:
    """Round 85 (linkheld): a PLAN.yml committed as a symlink held the plan E_UNSAFE_PATH for
    good, a regular file back or not. The hold keeps what it found (``held_from``) and a
    regular file at the path ends it, the plan taken on from there: the same bytes keep its
    status and version; another version is an edit of it; a file under the other name beside
    the link still there is no release (a claim beside it: E_PLAN_AMBIGUOUS)."""
    write_plan(repo, "p")
    commit_all(repo, "the plan", AGENT)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    found = index.plans["plans/p"]
    status, blob, plan_hash = found.status, found.blob, found.hash
    top = repo / "plans" / "p" / "PLAN.yml"
    raw = top.read_bytes()
    top.unlink()
    (repo / "plans" / "p" / "real.yml").write_bytes(raw)
    top.symlink_to("real.yml")
    commit_all(repo, "a link", AGENT)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/p"].unsafe
    assert index.plans["plans/p"].status is None
    if back == "yaml":
        (repo / "plans" / "p" / "PLAN.yaml").write_bytes(raw)
    else:
        top.unlink()
        top.write_bytes(
            raw if back == "same" else raw.replace(b"Say hello to the world", b"Say hello again", 1)
        )
    commit_all(repo, "a file again", AGENT)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    state = index.plans["plans/p"]
    if back == "yaml":
        assert state.ambiguous or state.unsafe, state
        index.close()
        return
    assert not state.unsafe and not state.ambiguous, state.notes
    assert state.held_from is None
    if back == "same":
        assert (state.status, state.blob, state.hash) == (status, blob, plan_hash)
    else:
        assert state.hash is not None and state.blob != blob
    index.close()
    again = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    assert not again.plans["plans/p"].unsafe  # saved so


def _entry(repo: Path, name: str, kind: str, raw: bytes) -> None:
    """``plans/p/<name>`` as ``kind`` (``symlink`` to ``real.yml``, ``gitlink``, ``file``
    holding ``raw``), staged; ``None``: removed."""
    path = repo / "plans" / "p" / name
    git(repo, "rm", "-rqf", "--cached", "--ignore-unmatch", f"plans/p/{name}")
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        path.rmdir()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        (repo / "plans" / "p" / "real.yml").write_bytes(raw)
        path.symlink_to("real.yml")
    elif kind == "file":
        path.write_bytes(raw)
    elif kind == "gitlink":
        (repo / "plans" / "p" / "real.yml").write_bytes(raw)
        path.mkdir()
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},plans/p/{name}")
    git(repo, "add", "-A")


#: (the plan file's name, the link's kind, the steps: each a commit of entries put as kinds,
#: then what the index must say: "held" (unsafe or ambiguous), "ambiguous", "kept" (released,
#: the version, status and hash the hold found, at that file), "free" (released, a plan)).
_RENAMES = {
    "yaml": ("PLAN.yml", "symlink", [({"PLAN.yml": "none", "PLAN.yaml": "file"}, "kept")]),
    "gitlink": ("PLAN.yml", "gitlink", [({"PLAN.yml": "none", "PLAN.yaml": "file"}, "kept")]),
    "yml": ("PLAN.yaml", "symlink", [({"PLAN.yaml": "none", "PLAN.yml": "file"}, "kept")]),
    "later": (
        "PLAN.yml", "symlink", [({"PLAN.yml": "none"}, "gone"), ({"PLAN.yaml": "file"}, "free")]
    ),
    "linkleft": (
        "PLAN.yml",
        "symlink",
        [({"PLAN.yml": "none", "PLAN.yaml": "symlink"}, "held"), ({"PLAN.yaml": "file"}, "free")],
    ),
    "bothlinks": (
        "PLAN.yml",
        "gitlink",
        [({"PLAN.yaml": "symlink"}, "held"), ({"PLAN.yml": "none"}, "held"),
         ({"PLAN.yaml": "none", "PLAN.yml": "file"}, "kept")],
    ),
    "twin": (
        "PLAN.yml",
        "symlink",
        [({"PLAN.yaml": "file"}, "ambiguous"), ({"PLAN.yml": "none"}, "free")],
    ),
    "twinfile": (  # the link a regular file again beside the twin: the twin rule alone
        "PLAN.yml",
        "symlink",
        [({"PLAN.yaml": "file"}, "ambiguous"), ({"PLAN.yml": "file"}, "twin"),
         ({"PLAN.yaml": "none"}, "kept")],
    ),
    "besidefile": (  # round 72's claim: a link PLAN.yaml beside the regular PLAN.yml
        "PLAN.yml",
        "",
        [({"PLAN.yaml": "symlink"}, "held"), ({"PLAN.yaml": "none"}, "kept")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(_RENAMES))
def test_a_plan_file_link_removed_for_a_file_under_either_name_ends_its_hold(
    repo: Path, tmp_path: Path, case: str
) -> None:
    """Round 87 (linkrename): a PLAN.yml committed as a symlink or gitlink, then the link
    removed and the plan back as a regular PLAN.yaml alone, stayed held E_UNSAFE_PATH for
    good (a killed run never recovered, a frozen plan's approval never run). The hold ends
    when the folder holds one regular plan file alone, whatever its name, judged as a rename
    (the link's removal in the same commit: the version the hold found) or a new file; a
    link left under either name keeps it, a file beside the link is a twin."""
    name, kind, steps = _RENAMES[case]
    folder = repo / "plans" / "p"
    write_plan(repo, "p")
    if name != "PLAN.yml":
        (folder / "PLAN.yml").rename(folder / name)
    raw = (folder / name).read_bytes()
    commit_all(repo, "the plan", AGENT)
    index = HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                         controller_email="plangate@localhost")  # fmt: skip
    gitrepo = GitRepo(repo)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    found = index.plans["plans/p"]
    status, blob, plan_hash = found.status, found.blob, found.hash
    if kind:
        _entry(repo, name, kind, raw)
        commit_all(repo, "a link", AGENT)
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
        assert index.plans["plans/p"].unsafe
    for step, (entries, want) in enumerate(steps):
        for entry, how in entries.items():
            _entry(repo, entry, how, raw)
        if not any(how in ("symlink", "gitlink") for how in entries.values()):
            git(repo, "rm", "-qf", "--ignore-unmatch", "plans/p/real.yml")
        commit_all(repo, f"step {step}", AGENT)
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
        state = index.plans.get("plans/p")
        if want == "gone":
            assert state is None, state
            continue
        assert state is not None, (step, want)
        if want == "held":
            assert state.unsafe and any("E_UNSAFE_PATH" in n for n in state.notes), state
        elif want == "ambiguous":
            assert state.ambiguous, state
        elif want == "twin":
            assert state.ambiguous and not state.unsafe, state
        else:
            assert not state.unsafe and not state.ambiguous, (step, state.notes)
            assert state.held_from is None and state.hash == plan_hash, state
        if want == "kept":
            assert (state.status, state.blob) == (status, blob), state
            assert (repo / state.file).is_file() and not (repo / state.file).is_symlink()
    index.close()
