"""Plan folders one folder on some checkout hold each other (round 75): every part of a plan's
path is compared as its file's name is (:func:`controller.plan.names.same_path`), so
``plans/fcase/`` beside ``plans/FCASE/`` is a claim of the plan file's place, as
``plans/FCASE/plan.yml`` is (rounds 71, 72): neither plan is read, frozen or run, however late
the twin came; the one left is read afresh when the other goes. A log in such a folder is
the plan's log's twin (round 73's ``log_claimed``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from tests.support.gitkit import AGENT, PLAN, commit_all, git, write_plan

#: (base, twin): case, HFS+'s ignored code point, NTFS's 8.3 short name and dropped end,
#: a twin one level up (``plans/Team/x`` is ``plans/team/x`` on a Mac), and the one folder
#: ``plans/bs\\x``, the path ``plans/bs/x`` to git for Windows (round 76; itself E_UNSAFE_PATH)
PAIRS = [("FCASE", "fcase"), ("fzw", "f\u200czw"), ("rotate-keys-prod", "rotate~1"),
         ("fdot", "fdot."), ("Team/x", "team/x"), ("bs/x", "bs\\x")]  # fmt: skip


def _index(tmp_path: Path) -> HistoryIndex:
    return HistoryIndex(tmp_path / "index.sqlite", plans_dir="plans",
                        controller_email="plangate@localhost")  # fmt: skip


def _scan(repo: Path, tmp_path: Path) -> HistoryIndex:
    """A fresh index object on the same file each time: its twins found from a loaded one."""
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index


@pytest.mark.parametrize("when", ["with", "after"])
@pytest.mark.parametrize(("base", "twin"), PAIRS, ids=[ascii(t) for _, t in PAIRS])
def test_a_twin_folder_holds_the_plan_however_late(
    repo: Path, tmp_path: Path, base: str, twin: str, when: str
) -> None:
    write_plan(repo, "ok")
    write_plan(repo, base)
    if when == "after":
        commit_all(repo, "the plan", AGENT)
        index = _scan(repo, tmp_path)
        assert not index.plans[f"plans/{base}"].ambiguous
        index.close()
    write_plan(repo, twin)
    commit_all(repo, "the twin", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert state.ambiguous and state.status is None and state.blob is None, state
    assert any("E_PLAN_AMBIGUOUS" in n and "checkout" in n for n in state.notes), state.notes
    other = index.plans[f"plans/{twin}"]
    assert other.ambiguous or other.unsafe, other
    assert not index.plans["plans/ok"].ambiguous
    index.close()
    shutil.rmtree(repo / "plans" / twin.split("/")[0])
    commit_all(repo, "the twin gone", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert not state.ambiguous and state.blob is not None and state.hash, state
    index.close()


@pytest.mark.parametrize(("one", "other"), [("ab", "abc"), ("LONGNA~1", "ldot."),
                                            ("deploy", "deploy-x"), ("x~1", "y")])  # fmt: skip
def test_folders_no_checkout_merges_are_two_plans(
    repo: Path, tmp_path: Path, one: str, other: str
) -> None:
    write_plan(repo, one)
    write_plan(repo, other)
    commit_all(repo, "two plans", AGENT)
    index = _scan(repo, tmp_path)
    assert not index.plans[f"plans/{one}"].ambiguous
    assert not index.plans[f"plans/{other}"].ambiguous


@pytest.mark.parametrize("when", ["before", "with", "after"])
@pytest.mark.parametrize(("base", "twin"), [("Ship", "ship"), ("archive-logs-daily", "archiv~1"),
                                            ("lgzw", "lg\u200czw")])  # fmt: skip
def test_a_log_in_a_twin_folder_claims_the_plans_log(
    repo: Path, tmp_path: Path, base: str, twin: str, when: str
) -> None:
    """Round 75: a forged log in ``plans/ship/`` IS ``plans/Ship``'s log on a case-insensitive
    checkout: the plan's record is claimed (every reader notes it), before or after the plan
    came; gone again, it is not."""
    log = repo / "plans" / twin / "EXECUTION_LOG.md"
    if when == "before":
        log.parent.mkdir(parents=True)
        log.write_text("# forged\n")
        commit_all(repo, "notes", AGENT)
    write_plan(repo, base)
    if when == "with":
        log.parent.mkdir(parents=True)
        log.write_text("# forged\n")
    commit_all(repo, "the plan", AGENT)
    if when == "after":
        log.parent.mkdir(parents=True)
        log.write_text("# forged\n")
        commit_all(repo, "notes", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert state.log_claimed and state.has_record() and not state.ambiguous, state
    index.close()
    shutil.rmtree(log.parent)
    commit_all(repo, "tidy", AGENT)
    assert not _scan(repo, tmp_path).plans[f"plans/{base}"].log_claimed


def test_a_plan_file_in_a_twin_folder_is_a_claim_not_a_plan_of_its_own(
    repo: Path, tmp_path: Path
) -> None:
    """The twin's own file at its base's place: a plan in each folder (both held), and a
    third folder one with them both counts too."""
    write_plan(repo, "Dup")
    write_plan(repo, "dup")
    write_plan(repo, "DUP", PLAN.replace("world", "mars"))
    commit_all(repo, "three", AGENT)
    index = _scan(repo, tmp_path)
    for name in ("Dup", "dup", "DUP"):
        assert index.plans[f"plans/{name}"].ambiguous, name


#: (base, the backslash FILE under plans/ that git for Windows writes into it; round 77)
SPLIT = [("fy", "fy\\PLAN.yml"), ("fc", "FC\\PLAN.yml"), ("fa", "fa\\PLAN.yaml"),
         ("fu/x", "fu\\x\\PLAN.yml"), ("fm/x", "fm/x\\PLAN.yml")]  # fmt: skip


@pytest.mark.parametrize("when", ["before", "with", "after"])
@pytest.mark.parametrize(("base", "file"), SPLIT, ids=[ascii(f) for _, f in SPLIT])
def test_a_backslash_file_holds_the_plan_however_late(
    repo: Path, tmp_path: Path, base: str, file: str, when: str
) -> None:
    """Round 77: the FILE ``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` on git for Windows
    (``names.split_files``): a claim of ``plans/fy``'s plan file, E_PLAN_AMBIGUOUS however
    late it came, and no plan of its own; gone, the plan is read afresh."""
    twin = repo / "plans" / file
    twin.parent.mkdir(parents=True, exist_ok=True)
    if when == "before":
        twin.write_text(PLAN.format(name="tw", status="pending_approval"))
        commit_all(repo, "notes", AGENT)
    write_plan(repo, "ok")
    write_plan(repo, base)
    if when == "with":
        twin.write_text(PLAN.format(name="tw", status="pending_approval"))
    commit_all(repo, "the plan", AGENT)
    if when == "after":
        twin.write_text(PLAN.format(name="tw", status="pending_approval"))
        commit_all(repo, "the twin", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert state.ambiguous and state.blob is None, state
    assert any(file in n for n in state.notes if n.startswith("E_PLAN_AMBIGUOUS")), state.notes
    assert sorted(index.plans) == sorted(["plans/ok", f"plans/{base}"])
    assert not index.plans["plans/ok"].ambiguous
    index.close()
    twin.unlink()
    commit_all(repo, "the twin gone", AGENT)
    state = _scan(repo, tmp_path).plans[f"plans/{base}"]
    assert not state.ambiguous and state.blob is not None, state


@pytest.mark.parametrize("when", ["with", "after"])
@pytest.mark.parametrize("file", ["lo\\EXECUTION_LOG.md", "LO\\execution_log.md"])
def test_a_backslash_log_file_claims_the_plans_log(
    repo: Path, tmp_path: Path, file: str, when: str
) -> None:
    """Round 77: a forged FILE ``plans/lo\\EXECUTION_LOG.md`` (``LO\\execution_log.md``) IS
    ``plans/lo``'s log on git for Windows: its record is claimed, as a log in a twin folder
    is; gone, it is not."""
    write_plan(repo, "lo")
    log = repo / "plans" / file
    if when == "with":
        log.write_text("# forged\n")
    commit_all(repo, "the plan", AGENT)
    if when == "after":
        log.write_text("# forged\n")
        commit_all(repo, "notes", AGENT)
    index = _scan(repo, tmp_path)
    assert index.plans["plans/lo"].log_claimed, index.plans["plans/lo"]
    index.close()
    log.unlink()
    commit_all(repo, "tidy", AGENT)
    assert not _scan(repo, tmp_path).plans["plans/lo"].log_claimed


#: (base, a file from the repository's root that git for Windows writes onto its plan file:
#: a ROOT file, split at its backslashes, or a file of the plan's own folder named with an
#: empty first part, ``plans/tb/\\PLAN.yml``; round 79); a root FOLDER ``plans\\`` (``PLANS\\``)
#: holding the plan's folder or its file, or a folder ``\\`` below it (round 80)
ROOTED = [("rt", "PLANS\\rt\\PLAN.yml"), ("rl", "plans\\rl\\PLAN.yml"),
          ("ra", "\\plans\\ra\\PLAN.yml"), ("rm/x", "plans\\rm\\x\\PLAN.yaml"),
          ("tb", "plans/tb/\\PLAN.yml"), ("ea", "plans/ea/\\\\plan.YML."),
          ("tbf", "plans\\/tbf/PLAN.yml"), ("tbu", "PLANS\\/tbu/PLAN.yml"),
          ("tbs", "plans\\/tbs\\PLAN.yml"), ("te", "plans\\/\\/te/PLAN.yml")]  # fmt: skip


@pytest.mark.parametrize("when", ["before", "with", "after", "after-scan"])
@pytest.mark.parametrize(("base", "file"), ROOTED, ids=[ascii(f) for _, f in ROOTED])
def test_a_root_or_own_backslash_file_holds_the_plan_however_late(
    repo: Path, tmp_path: Path, base: str, file: str, when: str
) -> None:
    """Round 79: the root FILE ``plans\\rl\\PLAN.yml`` (``PLANS\\rt\\PLAN.yml``, a leading or
    doubled backslash) and the file ``plans/tb/\\PLAN.yml`` of the plan's own folder are
    ``plans/<base>/PLAN.yml`` on git for Windows: E_PLAN_AMBIGUOUS however late they came,
    found by a cold scan (the walk reads the root listing) and by ``git log`` after a scan
    (``history_paths``); gone, the plan is read afresh. An honest root file is no claim."""
    twin = repo / file
    twin.parent.mkdir(parents=True, exist_ok=True)
    (repo / "plans\\ok-notes.md").write_text("notes\n")
    if when == "before":
        twin.write_text(PLAN.replace("world", "mars"))
        commit_all(repo, "notes", AGENT)
    write_plan(repo, "ok")
    write_plan(repo, base)
    if when == "with":
        twin.write_text(PLAN.replace("world", "mars"))
    commit_all(repo, "the plan", AGENT)
    if when == "after-scan":
        assert not _scan(repo, tmp_path).plans[f"plans/{base}"].ambiguous
    if when.startswith("after"):
        twin.write_text(PLAN.replace("world", "mars"))
        commit_all(repo, "the twin", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert state.ambiguous and state.blob is None, state
    assert any(n.startswith("E_PLAN_AMBIGUOUS") for n in state.notes), state.notes
    assert sorted(index.plans) == sorted(["plans/ok", f"plans/{base}"])
    assert not index.plans["plans/ok"].ambiguous
    index.close()
    twin.unlink()
    commit_all(repo, "the twin gone", AGENT)
    state = _scan(repo, tmp_path).plans[f"plans/{base}"]
    assert not state.ambiguous and state.blob is not None, state


#: a root file, a file of the plan's folder (round 79), a file of the root folder ``plans\\``
#: or ``plans\\lo`` (round 80): each ``plans/lo/EXECUTION_LOG.md`` on git for Windows
ROOT_LOGS = ["plans\\lo\\EXECUTION_LOG.md", "plans/lo/\\EXECUTION_LOG.md",
             "plans\\/lo/EXECUTION_LOG.md", "plans\\lo/EXECUTION_LOG.md"]  # fmt: skip


@pytest.mark.parametrize("when", ["with", "after", "after-scan"])
@pytest.mark.parametrize("file", ROOT_LOGS)
def test_a_root_or_own_backslash_log_claims_the_plans_log(
    repo: Path, tmp_path: Path, file: str, when: str
) -> None:
    """Round 79: a forged root FILE ``plans\\lo\\EXECUTION_LOG.md`` (round 77's open
    ``root:log-noted``) and ``plans/lo/\\EXECUTION_LOG.md`` ARE ``plans/lo``'s log on git
    for Windows: its record is claimed; gone, it is not. Round 80: so are the file
    ``lo/EXECUTION_LOG.md`` of the root folder ``plans\\`` and ``EXECUTION_LOG.md`` of the
    root folder ``plans\\lo`` (the index looked for a backslash in the file's own name)."""
    write_plan(repo, "lo")
    log = repo / file
    log.parent.mkdir(parents=True, exist_ok=True)
    if when == "with":
        log.write_text("# forged\n")
    commit_all(repo, "the plan", AGENT)
    if when == "after-scan":
        assert not _scan(repo, tmp_path).plans["plans/lo"].log_claimed
    if when.startswith("after"):
        log.write_text("# forged\n")
        commit_all(repo, "notes", AGENT)
    index = _scan(repo, tmp_path)
    assert index.plans["plans/lo"].log_claimed, index.plans["plans/lo"]
    index.close()
    log.unlink()
    commit_all(repo, "tidy", AGENT)
    assert not _scan(repo, tmp_path).plans["plans/lo"].log_claimed


@pytest.mark.parametrize("when", ["before", "before-warm", "with", "after"])
@pytest.mark.parametrize(("base", "twin"), PAIRS, ids=[ascii(t) for _, t in PAIRS])
def test_a_claim_folder_in_a_twin_folder_holds_the_plan(
    repo: Path, tmp_path: Path, base: str, twin: str, when: str
) -> None:
    """Round 94: a twin folder that is no plan, holding only a FOLDER named as the plan file
    (``plans/YA/PLAN.yml/x.txt`` beside ``plans/ya/PLAN.yml``), claims the plan file's place:
    found from the tree at the commit read, whenever it came. ``before-warm``: the claim
    indexed by an earlier scan, so the index loaded from its file seeds the twin filter
    from the tree of the commit adding the plan (no commit's changes saw the claim)."""
    write_plan(repo, "ok")
    claim = repo / "plans" / twin / "PLAN.yml" / "x.txt"
    if when.startswith("before"):
        claim.parent.mkdir(parents=True)
        claim.write_text("notes\n")
        commit_all(repo, "the claim", AGENT)
        if when == "before-warm":
            _scan(repo, tmp_path).close()
    write_plan(repo, base)
    if when == "after":
        commit_all(repo, "the plan", AGENT)
        index = _scan(repo, tmp_path)
        assert not index.plans[f"plans/{base}"].ambiguous
        index.close()
    if not when.startswith("before"):
        claim.parent.mkdir(parents=True)
        claim.write_text("notes\n")
    commit_all(repo, "the claim", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert state.ambiguous and state.status is None and state.blob is None, state
    assert not index.plans["plans/ok"].ambiguous
    index.close()
    shutil.rmtree(repo / "plans" / twin.split("/")[0])
    commit_all(repo, "the claim gone", AGENT)
    index = _scan(repo, tmp_path)
    state = index.plans[f"plans/{base}"]
    assert not state.ambiguous and state.blob is not None and state.hash, state
    index.close()


#: (folders seen, the plan folder asked, whether a twin may be there) for the twin filter
FILTER = [
    (["ya", "ok"], "ya", False),
    (["ya", "YA/PLAN.yml"], "ya", True),
    (["YA", "ya"], "YA", True),
    (["ya", "ya./x"], "ya", True),
    (["fzw", "f\u200czw"], "fzw", True),
    (["rotate-keys-prod", "rotate~1"], "rotate-keys-prod", True),
    (["team/x", "Team/y"], "team/x", True),
    (["team/x", "team/X"], "team/x", True),
    (["team/x", "other/X"], "team/x", False),
    (["team/x", "team/bs\\x"], "team/x", True),
    (["a\\b", "ya"], "ya", True),
    (["ya", "yb"], "y~1", True),
]


@pytest.mark.parametrize(("seen", "asked", "may"), FILTER)
def test_the_twin_filter_lists_where_another_spelling_was_seen(
    seen: list[str], asked: str, may: bool
) -> None:
    """The filter that spares a cold scan a listing of the plans folder per new plan
    (:class:`controller.git.twins.SeenFolders`) says "none" only where no level of the plan's
    path was seen in another spelling of one fold and no folder on the way holds a name
    compared always (8.3, backslash); and what it clears, a listing finds no twin of."""
    from controller.git.twins import SeenFolders
    from controller.plan.names import twin_folders

    filt = SeenFolders()
    for path in seen:
        filt.add_file(f"{path}/PLAN.yml".split("/"))
    assert filt.may_twin(asked.split("/")) is may
    tree: dict[str, set[str]] = {"": set()}
    for path in [*seen, asked]:
        parts = path.split("/")
        for at in range(len(parts)):
            tree.setdefault("/".join(parts[:at]), set()).add(parts[at])
            tree.setdefault("/".join(parts[: at + 1]), set())
    found = twin_folders(asked, lambda place: sorted(tree.get(place, ())))
    if not may:
        assert found == [], found
