"""One fold for a plan's names (round 72): two names a checkout's file system takes for one
path are one claim. ``controller.plan.names.fold`` drops the code points HFS+ ignores (git's
``next_hfs_char``, ``core.protectHFS``), makes canonical equivalents one (NFC, NFD) and
folds case; ``plan_file_claims`` and ``plan_named_folder`` both compare by it."""

from __future__ import annotations

import re
import unicodedata

import pytest

from controller.display import HIDDEN
from controller.plan.names import (
    HFS_IGNORED,
    LOG_NAME,
    ambiguous_claims,
    fold,
    folder_verdict,
    is_log_twin,
    log_claims,
    log_twins,
    own_name,
    path_parts,
    path_twins,
    plan_file_claims,
    plan_named_folder,
    same_name,
    same_path,
    source_claims,
    source_verdict,
    split_files,
    twin_entries,
    twin_folder_verdict,
    twin_folders,
    unsafe_name,
)

#: git's utf8.c ``next_hfs_char``: the code points it skips, as HFS+ does
GIT_HFS = (0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
           0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF)  # fmt: skip


def test_the_ignored_set_is_gits_and_every_one_is_hidden() -> None:
    assert frozenset(GIT_HFS) == HFS_IGNORED
    for code in GIT_HFS:  # a name holding one is refused on its own (E_UNSAFE_PATH)
        assert HIDDEN.search(chr(code)), hex(code)
        assert unsafe_name(f"plans/x{chr(code)}y/PLAN.yml") is not None, hex(code)


@pytest.mark.parametrize("code", GIT_HFS)
@pytest.mark.parametrize("at", [0, 4, 6, 8])
def test_an_ignored_code_point_anywhere_is_the_same_name(code: int, at: int) -> None:
    name = "PLAN.yml"[:at] + chr(code) + "PLAN.yml"[at:]
    assert fold(name) == fold("PLAN.yml") == fold("plan.YML")
    assert plan_file_claims([name]) == [name]
    assert ambiguous_claims(["PLAN.yml", name]) == ["PLAN.yml", name]
    assert "no plan folder" in (plan_named_folder(f"plans/x/{name}/PLAN.yml") or "")


def test_canonical_equivalents_and_case_are_one_name() -> None:
    for a, b in [("café", unicodedata.normalize("NFD", "café")), ("Straße", "STRASSE"),
                 ("PLAN.Jſon", "plan.json"), ("\u212bx", "\u00c5X")]:  # fmt: skip
        assert fold(a) == fold(b), (a, b)
    assert "no plan folder" in (plan_named_folder("plans/k/PLAN.Jſon/z/PLAN.yml") or "")


@pytest.mark.parametrize(
    "names",
    [["PLAN.yml", "PLAN.y\u200cml"], ["PLAN.yml", "\u200dPLAN.yml"], ["PLAN.yml", "PLAN.yml\ufeff"],
     ["PLAN.yml", "PLAN\u200e.yaml"], ["PLAN.yaml", "plan.y\u202eml"]],
)  # fmt: skip
def test_a_claim_spelled_with_ignored_code_points_makes_the_folder_ambiguous(
    names: list[str],
) -> None:
    assert ambiguous_claims([*names, "EXECUTION_LOG.md", "notes.md"]) is not None


@pytest.mark.parametrize("name", ["PLAN.ymlx", "PLAN.y ml", "PLAN_yml", "PLAN.ym", "PLAN.y.ml"])
def test_other_names_claim_nothing(name: str) -> None:
    assert plan_file_claims([name]) == []
    assert ambiguous_claims(["PLAN.yml", name]) is None


def test_the_refusal_names_the_folder_with_its_hidden_characters_escaped() -> None:
    why = unsafe_name("plans/zw/PLAN.y\u200cml/PLAN.yml") or ""
    assert "no plan folder" in why and "PLAN.y\\u200cml" in why and "\u200c" not in why


LOG_TWINS = ["execution_log.md", "EXECUTION_LOG.MD", "Execution_Log.Md", "EXECUTION_LOG.md\u200c",
             "\ufeffEXECUTION_LOG.md", "EXECUTION\u200d_LOG.md", LOG_NAME]  # fmt: skip


@pytest.mark.parametrize("name", LOG_TWINS)
def test_the_logs_name_is_folded_as_a_plan_files(name: str) -> None:
    """Round 73: ``execution_log.md`` is the plan's log on a case-insensitive checkout,
    ``EXECUTION_LOG.md<U+200C>`` on HFS+; the controller writes only the exact name, so any
    other spelling is someone else's text at the record's place (a twin)."""
    assert fold(name) == fold(LOG_NAME) and (name == LOG_NAME or is_log_twin(name))
    assert log_claims(["notes.md", name, LOG_NAME, "PLAN.yml"])[0] == LOG_NAME
    assert log_twins(["notes.md", name, LOG_NAME, "PLAN.yml"]) == (
        [] if name == LOG_NAME else [name]
    )


@pytest.mark.parametrize(
    "name", ["EXECUTION_LOG.md.bak", "EXECUTION_LOG", "EXECUTION-LOG.md", "LOG.md", "PLAN.yml"]
)
def test_other_names_are_no_claim_of_the_log(name: str) -> None:
    assert not is_log_twin(name) and log_claims([name]) == [] and log_twins([name]) == []
    assert not is_log_twin(LOG_NAME) and log_twins([LOG_NAME]) == []


#: Names NTFS makes one with another (git's ``core.protectNTFS``; round 74): the end it drops
#: (trailing dots and spaces, the unnamed stream ``::$DATA``) and the 8.3 short name.
NTFS_LOG = ["EXECUTION_LOG.md.", "EXECUTION_LOG.md ", "EXECUTION_LOG.md::$DATA",
            "execution_log.md . ", "EXECUTION_LOG.md::$data.", "EXECUT~1.MD", "execut~2.md",
            "EXECU~10.MD"]  # fmt: skip


@pytest.mark.parametrize("name", NTFS_LOG)
def test_a_name_ntfs_makes_the_log_is_a_twin_of_it(name: str) -> None:
    """Round 74: ``EXECUT~1.MD`` (the 8.3 short name of ``EXECUTION_LOG.md``, written after
    it by git's index order) and ``EXECUTION_LOG.md.`` were no claim of the log's place."""
    assert same_name(name, (LOG_NAME,)) and is_log_twin(name)
    assert log_twins(["notes.md", LOG_NAME, name]) == [name]


@pytest.mark.parametrize(
    ("names", "claims"),
    [(["PLAN.yml", "PLAN.yml."], 2), (["PLAN.yml", "PLAN.yml "], 2),
     (["PLAN.yml", "PLAN.yml::$DATA"], 2), (["PLAN.yml", "PLAN~1.YAM"], 2),
     (["PLAN.yml", "plan~1.yml"], 2), (["PLAN.yml", "PLAN~1.YM"], 1),
     (["PLAN.yml", "PLA~1.YML"], 1), (["PLAN.yml", "PLAN~X.YML"], 1)],
)  # fmt: skip
def test_one_fold_for_plan_files_sources_and_folders(names: list[str], claims: int) -> None:
    """The same names claim the plan file's, a source's and a folder's place (one function,
    :func:`same_name`), and nothing shorter or longer than NTFS's forms does."""
    assert len(plan_file_claims(names)) == claims, plan_file_claims(names)
    twin = re.sub(r"\.yml|\.YML", ".json", names[1].replace("YAM", "JSO"))
    twin = twin.replace("~1.json", "~1.jso")  # the short name's extension is 3 long
    assert len(source_claims(["PLAN.json", twin])) == claims
    assert bool(plan_named_folder(f"plans/x/{names[1]}/PLAN.yml")) == (claims == 2)


def test_a_source_beside_its_short_name_waits_and_a_short_name_alone_says_its_name() -> None:
    held = source_verdict("plans/s", ["PLAN.json", "PLAN~1.JSO"])
    assert held is not None and held[0] == "E_PLAN_AMBIGUOUS", held
    alone = source_verdict("plans/s", ["PLAN~1.JSO"])
    assert alone is not None and alone[0] == "E_CONVERT_UNSUPPORTED" and "PLAN.json" in alone[1]


#: Folder names one with ``base`` on some checkout (round 75): case, HFS+'s ignored code
#: points, NFC/NFD, NTFS's dropped end and its 8.3 short name (a leading dot dropped first)
FOLDER_TWINS = [("FCASE", "fcase"), ("fzw", "f\u200czw"), ("rotate-keys-prod", "rotate~1"),
                ("deploy-service", "DEPLOY~2"), ("fdot", "fdot."), ("fsp", "fsp "),
                ("fads", "fads::$DATA"), ("caf\u00e9", "cafe\u0301"), (".plangate", "PLANGA~1"),
                (".plangate", ".PLANGATE"), (".git", "GIT~1")]  # fmt: skip


@pytest.mark.parametrize(("base", "twin"), FOLDER_TWINS, ids=[ascii(t) for _, t in FOLDER_TWINS])
def test_every_part_of_a_path_is_folded_as_a_file_name(base: str, twin: str) -> None:
    """``plans/fcase/`` beside ``plans/FCASE/`` is one folder on a case-insensitive
    checkout, ``PLANGA~1/`` is ``.plangate/`` where 8.3 names are on: the path compares
    part by part as a plan file's name does."""
    assert same_path(f"plans/{twin}/PLAN.yml", f"plans/{base}/PLAN.yml")
    assert same_path(f"plans/{base}", f"plans/{twin}")  # either way round
    assert twin_entries(base, ["ok", twin, base, "other"]) == [twin]
    assert not same_path(f"plans/{base}/a", f"plans/{twin}") and not same_path("a/b", "b/a")


@pytest.mark.parametrize(
    ("one", "other"), [("ab", "abc"), ("LONGNA~1", "ldot."), ("deploy", "deploy-x"),
                       ("rotate~1", "rotating"), ("x~1", "y"), ("plans", "plans/x")],
)  # fmt: skip
def test_folders_no_checkout_merges_are_apart(one: str, other: str) -> None:
    assert not same_path(one, other) and twin_entries(one, [other]) == []


def test_a_twin_folder_holding_a_plan_file_holds_the_folder() -> None:
    """The verdict every CLI reader of ``plans/FCASE`` asks (as the history index holds
    it): a twin folder with a plan file (or a claim of its place) is E_PLAN_AMBIGUOUS; one
    holding notes only is no claim."""
    held = twin_folder_verdict("plans/FCASE", {"plans/fcase": ["PLAN.yml", "notes.md"]})
    assert held is not None and held[0] == "E_PLAN_AMBIGUOUS" and "plans/fcase/PLAN.yml" in held[1]
    claim = twin_folder_verdict("plans/x", {"plans/X": ["plan.YML"]})
    assert claim is not None and "plans/X/plan.YML" in claim[1]
    assert twin_folder_verdict("plans/x", {"plans/X": ["notes.md", "EXECUTION_LOG.md"]}) is None


#: (pinned folder, a twin of it at some level under the plans folder), round 76
SPLIT = {
    "plans/fy": {"plans/fy\\PLAN.yml": "PLAN.yml"},
    "plans/fc": {"plans/FC\\PLAN.yml": "PLAN.yml"},
    "plans/fu/x": {"plans/fu\\x\\PLAN.yml": "PLAN.yml"},
    "plans/fm/x": {"plans/fm/x\\PLAN.yml": "PLAN.yml", "plans/FM/x\\plan.yaml": "plan.yaml"},
    "plans/lo": {"plans/lo\\EXECUTION_LOG.md": "EXECUTION_LOG.md"},
    "plans/ok": {"plans\\ok\\EXECUTION_LOG.md": "EXECUTION_LOG.md"},
    "plans/mb": {},
}


@pytest.mark.parametrize("folder", list(SPLIT))
def test_a_backslash_splits_a_files_own_name_into_a_folder(folder: str) -> None:
    """Round 77: a FILE ``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` to git for Windows,
    as a folder ``plans/bs\\x`` is ``plans/bs/x`` (round 76): the file is found as an entry
    of ``plans/fy`` by the one split (:func:`path_parts`), from the root down (a root file
    ``plans\\ok\\EXECUTION_LOG.md``), through twin folders (``plans/FM/x\\plan.yaml``); a
    claim of the plan file's place there, and a file of another folder (``mb\\x\\PLAN.yml``,
    ``lone\\PLAN.yml``) none."""
    tree = _tree("plans/fy/PLAN.yml", "plans/fc/PLAN.yml", "plans/fu/x/PLAN.yml",
                 "plans/fm/x/PLAN.yml", "plans/lo/PLAN.yml", "plans/ok/PLAN.yml",
                 "plans/mb/PLAN.yml", "plans/FM/x\\plan.yaml")  # fmt: skip
    tree["plans"] += ["fy\\PLAN.yml", "FC\\PLAN.yml", "fu\\x\\PLAN.yml", "lo\\EXECUTION_LOG.md",
                      "lone\\PLAN.yml", "mb\\x\\PLAN.yml"]  # fmt: skip
    tree["plans/fm"] += ["x\\PLAN.yml"]
    tree[""] += ["plans\\ok\\EXECUTION_LOG.md"]
    names = lambda place: tree.get(place, [])  # noqa: E731
    found = split_files(folder, names, "plans")
    assert found == SPLIT[folder]
    claims = [path for path, name in found.items() if plan_file_claims([name])]
    verdict = twin_folder_verdict(folder, {}, found)
    assert (verdict is not None) == bool(claims), verdict
    assert verdict is None or (verdict[0] == "E_PLAN_AMBIGUOUS" and claims[0] in verdict[1])


UP_TWINS = [("plans/Team/x", "plans/team/x"), ("plans/team/x", "plans/Team/x"),
            ("plans/longteamname/x", "plans/longte~1/x"),
            ("plans/longte~1/x", "plans/longteamname/x"),
            ("plans/A/b/c", "plans/a/b/C"), ("plans/g/H/x", "plans/g/h/x"),
            ("plans/bs/x", "plans/bs\\x"), ("plans/a/b/c", "plans/a\\b/c")]  # fmt: skip


@pytest.mark.parametrize(("path", "twin"), UP_TWINS, ids=[ascii(t) for _, t in UP_TWINS])
def test_a_folders_twins_are_found_at_every_level(path: str, twin: str) -> None:
    """Round 76: the folders one with a plan's at ANY level under the plans folder (a pin
    checked the last name only: ``plans/team/x`` of ``plans/Team/x`` ran), found by listing
    each level; the plans folder itself is compared as written."""
    tree = {path: ["PLAN.yml"], twin: ["PLAN.yml"], "plans/other/x": ["PLAN.yml"]}
    tree["Plans/" + path.partition("/")[2]] = ["PLAN.yml"]  # the plans folder's: apart

    def names_in(folder: str) -> list[str]:
        below = {p[len(folder) + 1 :].split("/")[0] for p in tree if p.startswith(f"{folder}/")}
        return sorted(below)

    assert path_twins(path, names_in) == [twin]
    assert same_path(path, twin) and same_path(twin, path)
    assert path_twins("plans/other/x", names_in) == []


def test_a_backslash_is_a_separator_to_git_for_windows_and_an_unsafe_name() -> None:
    """``plans/bs\\x`` is the path ``plans/bs/x`` to git for Windows (``is_dir_sep``),
    which checks no such folder out: the name is held E_UNSAFE_PATH, and its folder is the
    twin of ``plans/bs/x`` (round 76: ``bs/x`` ran beside it)."""
    assert path_parts("plans/bs\\x") == ["plans", "bs", "x"]
    assert same_path("plans/bs\\x", "plans/BS/x") and not same_path("plans/bs\\x", "plans/bs")
    assert same_path("plans/\\x", "plans/x") and same_path("plans/x\\", "plans/X")  # none empty
    for path in ("plans/bs\\x/PLAN.yml", "plans/x\\/PLAN.yml", "plans/a\\b/c/PLAN.yml"):
        why = unsafe_name(path)
        assert why is not None and "backslash" in why, path
    assert unsafe_name("plans/bs/x/PLAN.yml") is None


UP_TWINS = [("plans/Team/x", "plans/team/x"), ("plans/A/b/c", "plans/a/b/c"),
            ("plans/g/H/x", "plans/g/h/x"), ("plans/Q/R/x", "plans/q/r/x"),
            ("plans/zw/x", "plans/z\u200cw/x"), ("plans/longteamname/x", "plans/longte~1/x"),
            ("plans/dt/x", "plans/dt./x"), ("plans/caf\u00e9/x", "plans/cafe\u0301/x")]  # fmt: skip


def _tree(*folders: str) -> dict[str, list[str]]:
    """Each folder's entries, as a listing of the repository ("" its root) gives them."""
    tree: dict[str, list[str]] = {}
    for folder in folders:
        parts = folder.split("/")
        for at in range(len(parts)):
            entries = tree.setdefault("/".join(parts[:at]), [])
            entries += [parts[at]] if parts[at] not in entries else []
    return tree


@pytest.mark.parametrize(("base", "twin"), UP_TWINS, ids=[ascii(t) for _, t in UP_TWINS])
def test_twin_folders_are_compared_at_every_level(base: str, twin: str) -> None:
    """Round 76: a folder one with a plan's ABOVE the plan's own folder (``plans/team/x`` of
    ``plans/Team/x``, two levels up, in the middle, HFS+, 8.3, NTFS, NFD) is its twin, as
    the history index compares whole paths; a folder of another path is none."""
    tree = _tree(base, twin, "plans/ok", "plans/Team/y")
    names = lambda folder: tree.get(folder, [])  # noqa: E731
    assert twin_folders(base, names, "plans") == [twin]
    assert twin_folders(twin, names, "plans") == [base]
    assert twin_folders("plans/ok", names, "plans") == []


def test_the_plans_folder_is_compared_as_written() -> None:
    """``Plans/ok`` is outside the plans folder ``plans``: no twin of ``plans/ok`` (the index
    reads no plan there); walked from the root, it is one."""
    tree = _tree("plans/ok", "Plans/ok")
    names = lambda folder: tree.get(folder, [])  # noqa: E731
    assert twin_folders("plans/ok", names, "plans") == []
    assert twin_folders("plans/ok", names, ".") == ["Plans/ok"]
    assert twin_folders("other/x", names, "plans") == []  # outside: from the root


#: a folder's own entries git for Windows writes onto its plan file -> the name there
OWN = {"\\PLAN.yml": "PLAN.yml", "\\\\PLAN.yml": "PLAN.yml", "\\plan.YML.": "plan.YML.",
       "PLAN.yml\\": "PLAN.yml", "\\PLAN.yaml": "PLAN.yaml"}  # fmt: skip


@pytest.mark.parametrize("name", OWN, ids=ascii)
def test_a_folders_own_entry_split_to_one_part_is_that_part(name: str) -> None:
    """Round 79: git for Windows hands ``plans/tb/\\PLAN.yml`` to Win32, which drops the empty
    parts around a backslash: the entry IS ``PLAN.yml`` there (:func:`own_name`), a claim of
    the plan file's place for every reader of the folder's listing, as ``tw\\PLAN.yml`` above
    it is (:func:`split_files`); the log's and a source's alike."""
    assert own_name(name) == OWN[name]
    assert plan_file_claims(["PLAN.yml", name]) == ["PLAN.yml", name]
    verdict = folder_verdict("plans/tb", ["PLAN.yml", name])
    assert verdict is not None and verdict[0] == "E_PLAN_AMBIGUOUS", verdict
    log = name.replace("PLAN", "EXECUTION_LOG").replace("plan", "execution_log")
    log = log.replace(".yml", ".md").replace(".YML", ".MD").replace(".yaml", ".md")
    assert log_twins(["EXECUTION_LOG.md", log]) == [log] and is_log_twin(log), log
    source = name.replace(".yml", ".json").replace(".YML", ".JSON").replace(".yaml", ".toon")
    assert source_claims([source]) == [source], source


#: names that split to another name, or to a folder and a name (a path into a folder below,
#: judged there by :func:`split_files`): no claim of this folder's plan file
NOT_OWN = {"\\NOTES.md": "NOTES.md", "\\PLAN.yml.bak": "PLAN.yml.bak", "tw\\PLAN.yml": None,
           "x\\\\PLAN.yml": None, "PLAN\\yml": None, "\\": None}  # fmt: skip


@pytest.mark.parametrize("name", NOT_OWN, ids=ascii)
def test_an_entry_split_to_another_name_or_to_more_parts_claims_nothing(name: str) -> None:
    assert own_name(name) == (NOT_OWN[name] or name)
    assert plan_file_claims(["PLAN.yml", name]) == ["PLAN.yml"]
    assert log_twins(["EXECUTION_LOG.md", name]) == []


def test_a_backslash_folder_landing_on_the_plan_folder_brings_its_entries() -> None:
    """Round 79 (the lead): the root FOLDER ``plans\\rf`` IS ``plans/rf`` to git for Windows,
    so its entries are that folder's (its ``PLAN.yml`` a claim of the plan file's place);
    ``PLANS\\rf`` and a folder ``plans/ab\\x`` alike; ``plans\\rg`` lands on no plan here."""
    tree: dict[str, list[str]] = {
        "": ["plans", "plans\\rf", "PLANS\\ab", "plans\\rg"],
        "plans": ["rf", "ab", "rg"],
        "plans/ab": ["x", "x\\y"],
        "plans\\rf": ["PLAN.yml", "notes.md", "\\EXECUTION_LOG.md"],
        "PLANS\\ab": ["x"],
        "PLANS\\ab/x": ["PLAN.yml"],
        "plans/ab/x\\y": ["plan.yaml"],
        "plans\\rg": ["notes.md"],
    }
    names = lambda place: tree.get(place, [])  # noqa: E731
    assert split_files("plans/rf", names, "plans") == {
        "plans\\rf/PLAN.yml": "PLAN.yml",
        "plans\\rf/notes.md": "notes.md",
        "plans\\rf/\\EXECUTION_LOG.md": "EXECUTION_LOG.md",
    }
    assert split_files("plans/ab/x", names, "plans") == {
        "PLANS\\ab/x/PLAN.yml": "PLAN.yml",
        "plans/ab/x\\y": "y",  # a name that splits into the folder: an entry of it
    }
    assert split_files("plans/ab/x/y", names, "plans") == {"plans/ab/x\\y/plan.yaml": "plan.yaml"}
    assert split_files("plans/rg", names, "plans") == {"plans\\rg/notes.md": "notes.md"}
    assert twin_folder_verdict("plans/rg", {}, split_files("plans/rg", names, "plans")) is None


#: (a file committed from the repository's root, the plan folder it lands on; round 80):
#: the root folder ``plans\\`` (the plans folder's name and a trailing backslash) and the
#: next spellings of it: capitals, three backslashes, a folder ``\\`` below it, a trailing
#: backslash at every level, a folder ``\\`` at the root or in the plan's own folder
ROOT_FOLDERS = [("plans\\/tbf/PLAN.yml", "plans/tbf"), ("PLANS\\/tbu/PLAN.yml", "plans/tbu"),
                ("plans\\/tbs\\PLAN.yml", "plans/tbs"), ("plans\\\\\\/t3/PLAN.yml", "plans/t3"),
                ("plans\\/\\/te/PLAN.yml", "plans/te"), ("plans\\/tv\\/PLAN.yml\\", "plans/tv"),
                ("plans\\/g\\/tg\\/PLAN.yml", "plans/g/tg"), ("\\/plans/tr/PLAN.yml", "plans/tr"),
                ("plans/tz/\\/PLAN.yml", "plans/tz"),
                ("plans/tw/\\/\\\\/PLAN.yml", "plans/tw")]  # fmt: skip


def _files_tree(*files: str) -> dict[str, list[str]]:
    """Each folder's entries for these files (paths split at ``/`` only, as git's tree)."""
    tree: dict[str, list[str]] = {}
    for file in files:
        parts = file.split("/")
        for at in range(len(parts)):
            entries = tree.setdefault("/".join(parts[:at]), [])
            entries += [parts[at]] if parts[at] not in entries else []
    return tree


@pytest.mark.parametrize(("file", "folder"), ROOT_FOLDERS, ids=[ascii(f) for f, _ in ROOT_FOLDERS])
def test_a_path_lands_where_its_parts_split_empty_parts_dropped(file: str, folder: str) -> None:
    """Round 80: git for Windows writes ``plans\\/tbf/PLAN.yml`` to ``plans//tbf/PLAN.yml``,
    i.e. ``plans/tbf/PLAN.yml``: every walk of a path asks one split (:func:`path_parts`,
    empty parts dropped, a name of backslashes alone none), so the file claims the plan
    file's place of ``folder`` (:func:`split_files`, or a twin folder, :func:`twin_folders`),
    whatever part carries the backslash; the root folder ``plans\\`` was entered by nobody
    (only a trailing backslash on the plans folder's own part was missed)."""
    assert same_path(file, f"{folder}/PLAN.yml")
    tree = _files_tree(file, f"{folder}/PLAN.yml", "plans/ok/PLAN.yml", "Plans/ok/PLAN.yml")
    names = lambda place: tree.get(place, [])  # noqa: E731
    twins = {t: names(t) for t in twin_folders(folder, names, "plans")}
    split = split_files(folder, names, "plans")
    claims = {f"{t}/{n}" for t, listed in twins.items() for n in plan_file_claims(listed)}
    assert claims | {p for p, n in split.items() if plan_file_claims([n])} == {file}, (twins, split)
    verdict = twin_folder_verdict(folder, twins, split)
    assert verdict is not None and verdict[0] == "E_PLAN_AMBIGUOUS", verdict
    # round 84: ``Plans/ok/PLAN.yml`` claims ``plans/ok``'s plan file (the plans folder's
    # spelling, as a split name does); it is no twin FOLDER of a plan (no plan is read there)
    assert split_files("plans/ok", names, "plans") == {"Plans/ok/PLAN.yml": "PLAN.yml"}
    assert not twin_folders("plans/ok", names, "plans")


def test_a_name_of_backslashes_alone_has_no_part() -> None:
    """A folder ``\\`` is the folder it lies in on git for Windows; a root FILE ``plans\\`` or
    ``\\`` lands on no plan's folder (no part of it is a name in one) and breaks no walk."""
    assert path_parts("\\") == [] and path_parts("\\\\") == [] and path_parts("") == []
    assert path_parts("plans\\") == ["plans"] and same_path("plans\\", "plans")
    assert same_path("plans\\/\\/x", "plans/x") and same_path("\\", "")
    assert own_name("\\") == "\\" and own_name("plans\\") == "plans"
    tree = {"": ["plans", "plans\\", "\\"], "plans": ["ok"], "plans/ok": ["PLAN.yml"]}
    names = lambda place: tree.get(place, [])  # noqa: E731
    assert split_files("plans/ok", names, "plans") == {}
    assert twin_folders("plans/ok", names, "plans") == []
