"""Local mode adopts an uncommitted plan file as ``git add`` would store it (round 78): read
once, through its ``working-tree-encoding`` (git's iconv and checks), and only those bytes are
judged and committed. Before, the adoption read the raw bytes as UTF-8: a plan git stores in
``ISO-2022-JP``, ``BIG5-HKSCS``, ``UTF-32`` or ``UTF-16`` was logged ``E_YAML_PARSE`` on every
pass, one in glibc's ``UTF-7`` (``status: pending+AF8-approval``) was silently never adopted,
and bytes ``git add`` refuses said ``E_YAML_PARSE`` instead of ``E_ATTRIBUTE_UNSUPPORTED``.
The oracle is git: ``git hash-object --path``, ``git add``, ``git status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog.testing

from controller.git import iconv
from tests.support.gitcalls import git_commands, trace_git_calls
from tests.support.gitenv import ALICE, commit_all, git
from tests.support.gitkit import PLAN, controller, head_plan, subjects, write_plan

TASK = "Say hello, 日本 ~ 'q' a+b_c,"


def _iconv(text: str, encoding: str) -> bytes:
    data = iconv.convert(text.encode(), encoding, "UTF-8")
    assert data is not None, encoding
    return data


def _escaped(text: str) -> bytes:
    """ISO-2022-JP with a redundant ``ESC ( B`` before every line: bytes iconv reads, never
    writes (git stores the text)."""
    data = _iconv(text, "ISO-2022-JP")
    return b"\n".join(b"\x1b(B" + line if line else line for line in data.split(b"\n"))


#: attribute value -> (the task, the working-tree bytes of a plan text as the agent saves it)
CASES = {
    "ISO-2022-JP": (TASK, lambda text: _iconv(text, "ISO-2022-JP")),
    "ISO-2022-JP-esc": (TASK, _escaped),
    "ISO-2022-KR": ("Say hello, 한국,", lambda text: _iconv(text, "ISO-2022-KR")),
    "BIG5-HKSCS": ("Say hello, \u00ca\u0304 pair,", lambda text: _iconv(text, "BIG5-HKSCS")),
    "UTF-32": (TASK, lambda text: text.encode("utf-32")),
    "UTF-16": (TASK, lambda text: text.encode("utf-16")),
    "UTF-7": (TASK, lambda text: _iconv(text, "UTF-7")),  # glibc's spelling, as git writes
}


def _attribute(repo: Path, encoding: str, pattern: str = "plans/*/PLAN.yml") -> None:
    (repo / ".gitattributes").write_text(f"{pattern} working-tree-encoding={encoding}\n")
    commit_all(repo, "the attribute")


def _git_stores(repo: Path, path: str) -> str:
    """The text ``git add`` stores for the working-tree file (git's own conversion)."""
    blob = git(repo, "hash-object", "-w", f"--path={path}", path).strip()
    return git(repo, "cat-file", "-p", blob)


def _approve_in(repo: Path, plan: Path, encoding: str) -> None:
    """Alice sets ``status: approved`` in the file as her editor saves it and commits."""
    text = git(repo, "show", "HEAD:plans/greet/PLAN.yml")
    plan.write_bytes(_iconv(text.replace("pending_approval", "approved"), encoding))
    assert "approved" in git(repo, "diff")  # git reads her edit
    commit_all(repo, "approve", ALICE)


@pytest.mark.parametrize("case", list(CASES))
def test_an_uncommitted_plan_is_adopted_as_git_add_stores_it(repo: Path, case: str) -> None:
    encoding = case.removesuffix("-esc")
    task, encode = CASES[case]
    _attribute(repo, encoding)
    plan = write_plan(repo, text=PLAN.replace("Say hello", task))
    plan.write_bytes(encode(plan.read_text()))
    stored = _git_stores(repo, "plans/greet/PLAN.yml")  # what git add would commit
    assert task in stored
    with controller(repo) as ctl:
        ctl.run_once()
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    committed = git(repo, "show", "HEAD:plans/greet/PLAN.yml")
    assert committed.startswith(stored) and "frozen:" in committed[len(stored) :]
    assert git(repo, "status", "--porcelain") == ""  # the working tree holds git's checkout
    wrote = git(repo, "hash-object", "--path=plans/greet/PLAN.yml", "plans/greet/PLAN.yml")
    assert wrote.strip() == git(repo, "rev-parse", "HEAD:plans/greet/PLAN.yml").strip()
    _approve_in(repo, plan, encoding)
    for _ in range(2):
        with controller(repo) as ctl:
            ctl.run_once()
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert [s for s in subjects(repo) if "start" in s] == ["plangate: start plans/greet"]
    assert git(repo, "status", "--porcelain") == ""


def test_the_raw_reading_decides_nothing(repo: Path) -> None:
    """A UTF-7 file whose raw bytes read as a pending plan and git's reading as an approved
    one (a quoted task closed over the raw status line): git stores it, but it is no pending
    plan as git reads it, so it is never adopted, never frozen as the agent's approval. (A
    control: it held before too, by the freeze's second, converted reading.)"""
    _attribute(repo, "UTF-7")
    quote = "+ACI-"  # a double quote in UTF-7's base64
    hidden = "+ACIACgAgACAAcwB0AGEAdAB1AHMAOgAgAGEAcABwAHIAbwB2AGUAZA-"  # '"\n  status: approved'
    raw = PLAN.replace('"Say hello to the world"', quote + "Say hello").replace(
        "  status: pending_approval", "  status: pending_approval # " + hidden
    )
    assert raw != PLAN and "status: pending_approval #" in raw
    plan = write_plan(repo, text=raw)
    assert "status: approved" in _git_stores(repo, "plans/greet/PLAN.yml")
    with controller(repo) as ctl:
        ctl.run_once()
    assert git(repo, "ls-files", "plans") == ""  # nothing adopted
    assert plan.read_text() == raw


def test_bytes_git_add_refuses_wait_with_its_code_whatever_they_read_as(repo: Path) -> None:
    """``UTF-32`` without its mark: ``git add`` refuses it; the adoption waits ``cannot adopt
    ... E_ATTRIBUTE_UNSUPPORTED`` (it said ``E_YAML_PARSE`` "not UTF-8 text" before)."""
    _attribute(repo, "UTF-32")
    plan = write_plan(repo)
    plan.write_bytes(PLAN.encode("utf-32-le"))
    git(repo, "add", "plans/greet/PLAN.yml", check=False)
    assert git(repo, "ls-files", "plans") == ""  # git refused it
    with structlog.testing.capture_logs() as events, controller(repo) as ctl:
        ctl.run_once()
    said = [str(e.get("reason")) for e in events if e["event"] == "plan_waiting"]
    assert len(said) == 1 and "cannot adopt plans/greet/PLAN.yml" in said[0], said
    assert "E_ATTRIBUTE_UNSUPPORTED" in said[0] and "`git add` refuses it" in said[0]
    assert not [e for e in events if e["event"] == "plan_unreadable"], events
    assert git(repo, "ls-files", "plans") == ""


def test_an_uncommitted_source_is_converted_from_what_git_stores(repo: Path) -> None:
    """A ``PLAN.json`` saved in ``UTF-16`` under the attribute is converted from git's
    reading of it (it was refused "not UTF-8" before)."""
    _attribute(repo, "UTF-16", "plans/*/PLAN.*")
    source = repo / "plans" / "greet" / "PLAN.json"
    source.parent.mkdir(parents=True)
    contract = {"plan_version": 1, "goal": "Greet 日本", "inputs": {"who": "world"},
                "steps": [{"step_id": "s1", "tool": "greet", "args": {"who": "${inputs.who}"},
                           "description": "say hello"}]}  # fmt: skip
    source.write_bytes(json.dumps(contract, ensure_ascii=False).encode("utf-16"))
    with controller(repo) as ctl:
        ctl.run_once()
    assert subjects(repo)[:2] == ["plangate: freeze plans/greet", "plangate: convert plans/greet"]
    assert head_plan(repo)["plan"]["task"] == "Greet 日本"
    assert not source.exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_pass_asks_its_candidates_attributes_at_once(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three uncommitted plans: one ``git check-attr`` for the three, plus at most one for
    each commit's working-tree write (one per file before; a pass that remembers its
    answers, round 78's r78stat, asks fewer)."""
    _attribute(repo, "UTF-16")
    for slug in ("a", "b", "c"):
        plan = write_plan(repo, slug)
        plan.write_bytes(PLAN.encode("utf-16"))
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    with monkeypatch.context() as patch:
        log = trace_git_calls(tmp_path, patch)
        with controller(repo) as ctl:
            ctl.reconcile()
    made = int(git(repo, "rev-list", "--count", "HEAD")) - before
    asked = git_commands(log)
    assert len(git(repo, "ls-files", "plans").split()) == 3
    assert 1 <= asked["check-attr"] <= 1 + made, (asked, made)
