# ruff: noqa: E501
"""Round 50, at most once, status truth and the fresh-clone audit for plan folders whose names
differ only in ways a normaliser, a case fold or a terminal would erase, or that ``show``'s
rule (round 49) writes escaped.

Lab ``tw``: one one-action ``rec`` plan per variant (its own tag), committed by the agent,
approved by Alice in one commit, then two passes; afterwards ``plangate status`` (text and
JSON) and ``plangate audit --json`` in a fresh clone of the repo.

- ``nfc`` / ``nfd``: ``plans/caf\\u00e9`` and ``plans/cafe\\u0301`` (one name in NFC and in
  NFD: two folders for git and Linux).
- ``upper`` / ``lower``: ``plans/Case`` and ``plans/case``. Since round 75 (r75twinfold) these
  two pairs are one folder each on a case-insensitive or normalising checkout: all four are
  held ``E_PLAN_AMBIGUOUS`` and never run (asserted); they ran as two plans each before.
- ``plain`` / ``nozw``: ``plans/ab``, ``plans/zw``.
- ``angstrom``: ``plans/\\u212b`` (ANGSTROM SIGN, NFC maps it to U+00C5).
- ``cjkcompat``: ``plans/\\uf900x`` (a CJK compatibility ideograph NFC maps to U+8C48).
- ``hangul``: ``plans/\\u1100\\u1161`` (conjoining jamo NFC composes to U+AC00).
- ``qacute`` / ``bslash`` (controls): ``plans/q\\u0301`` (already NFC), ``plans/a\\b``.
- ``unassigned``: ``plans/u\\u0378`` (an unassigned code point, which ``show`` escapes).
- ``pua``: ``plans/p\\ue000`` (a private-use character, category Co).
- ``nbsp``: ``plans/n\\u00a0b`` (NO-BREAK SPACE).
- ``esc`` / ``zw`` / ``braille`` / ``emsp`` (controls, with ``unassigned``, ``pua``,
  ``nbsp``): ``plans/aX<ESC>[1Db``, ``plans/z<U+200B>w``, ``plans/\\u2800x``, ``plans/a\\u2003b``: refused
  ``E_UNSAFE_PATH`` (asserted: ``rec`` ran 0 times, status names the code).

Asserted per variant: ``rec`` ran exactly once with that plan's tag, the plan is
``completed`` at HEAD, ``plangate status --json`` has its own ``completed`` row, and the
fresh clone's audit has no finding about it (``audit-*``). The audit is the promise that
git history alone proves each run.

- ``reindex-*``: after the runs, ``<state_dir>/index.sqlite`` (a cache, round 27) deleted
  and two passes: nothing runs again, no status changes.
- ``again-*``: the same version written again in a new folder ``plans/again-<v>`` and
  approved: ``E_ALREADY_EXECUTED``, ``rec`` not called again.
- ``fresh-*`` / ``twice-*``: a second controller config, same repo, a NEW state directory
  (a rebuilt host): the same version in ``plans/fresh-<v>`` approved: asserted it is refused
  (``rec`` ran once in all; docs/approvals.md: a version whose start the controller's commits
  published is ``E_ALREADY_EXECUTED``) and that a fresh clone's audit flags a second start of
  one frozen hash.
- ``lit-angstrom`` / ``lit-nfd``: folders named with the ASCII text ``\\u212b`` (approved)
  and ``cafe\\u0301`` (never approved): the escaped record of another folder.

Changed (round 76, r76uppins): a backslash in a folder name is E_UNSAFE_PATH (git for Windows
takes it for a folder separator and checks no such path out: ``plans/a\\b`` is the path
``plans/a/b`` there, a reviewer reads another folder's plan). ``bslash`` and ``lit-angstrom``,
which ran once here, are now refused with the other unsafe names (``rec`` ran 0 times, status
names the code), ``lit-nfd`` is held E_UNSAFE_PATH rather than pending, and their
``audit-*`` ids are gone (nothing runs to explain). The record's injective plan text
(``plan_text``, backslashes doubled) still reads back a history that ran them.

Broke (strict xfails):

- ``audit-nfd``, ``audit-angstrom``, ``audit-cjkcompat``, ``audit-hangul``: the controller
  runs the plan once and records ``plangate: start plans/cafe\\u0301`` (the name escaped as
  ``show`` writes a name NFC would change), and the fresh-clone audit flags its own
  freeze/start/complete commits ``controller-unexplained: subject 'plangate: start
  plans/cafe\\\\u0301' is not a plangate event for plans/cafe\\u0301`` (in a batched commit:
  ``Plan-Event ... is not a plangate event``) and exits 1: the audit and the controller
  disagree, and one agent's folder name turns the audit red for every plan.
- ``audit-lit-angstrom``: the folder named with the six ASCII characters ``\\u212b`` gets the
  same subject/``Plan:`` text as the folder named U+212B: the audit lists no run for it
  (``outcome-without-start``, ``batched commit: no single Plan: group names plans/\\u212b``).

Fixed (round 50, issue 11): ``fresh-*`` (all five, plain ASCII names too): the controller with
a new state directory ran the approved copy of a version whose start commit is on the branch
(``rec`` ran twice; ``executed.jsonl`` was the only record it read), while ``plangate check``
with that same config predicted ``E_ALREADY_EXECUTED ... already ran here as plans/ab`` for it
(control ``test_check_predicts_the_fresh_copy_refused``, held). The history index now learns
each frozen hash's first start from the start commits under the controller's name as it
applies them (cold start, rebuild, its own new commits; kept in ``memory.sqlite``), and the
controller, ``check`` and the audit read that one record (``HistoryIndex.ran_as``): the copy
is refused ``E_ALREADY_EXECUTED``.
``twice-*``: the fresh-clone audit listed that second start of one frozen hash as ``valid ->
complete``, no finding, exit 0 for it; it now flags ``started-twice`` (the start not valid,
``E_ALREADY_EXECUTED``, exit 1) — tests/approval/test_audit_started_twice.py shows it on a
history where the second start happened (here nothing runs twice any more).

Fixed (round 50, issue 11; ``audit-nfd``, ``audit-angstrom``, ``audit-cjkcompat``,
``audit-hangul``, ``audit-lit-angstrom``): the controller's commit messages name a plan in
one injective, reversible text, ``controller.git.records.plan_text`` (the path with each
backslash doubled, then ``visible``'s escapes: ``plans/cafe\\u0301`` is the NFD folder,
``plans/\\\\u212b`` the folder named with six ASCII characters, ``plans/\\u212b`` the folder
U+212B), in the subject, the ``Plan:`` trailer and each ``Plan:`` group of a batch; every
reader (``plan_event``, ``batch_groups``, ``record_events``, the history scan's
``Run-Start`` commits, the audit, status, check) reads the path back with ``plan_named``
and compares paths. A path holding no backslash is written as before.

Held: every ``*-runs-once`` row, ``again-*`` (E_ALREADY_EXECUTED with the state directory),
``reindex-*``, ``lit-nfd``, the E_UNSAFE_PATH refusals and the audit of the other names.
"""

from __future__ import annotations

import json

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

#: one folder on a case-insensitive or normalising checkout (HFS+ folds NFD): held
#: E_PLAN_AMBIGUOUS both, never run, since round 75 (r75twinfold; they ran as two plans)
TWINS = {
    "nfc": "caf\u00e9",
    "nfd": "cafe\u0301",
    "upper": "Case",
    "lower": "case",
}
RUNS = {
    "plain": "ab",
    "nozw": "zw",
    "angstrom": "\u212b",
    "cjkcompat": "\uf900x",
    "hangul": "\u1100\u1161",
    "qacute": "q\u0301",
}
PENDING = {"lit-nfd": "cafe\\u0301"}  # written, never approved: must never run
REFUSED = {
    "esc": "aX\x1b[1Db",
    "braille": "\u2800x",
    "emsp": "a\u2003b",
    "zw": "z\u200bw",
    "unassigned": "u\u0378",
    "pua": "p\ue000",
    "nbsp": "n\u00a0b",
    # a backslash: the path ``a/b`` to git for Windows, held since round 76 (r76uppins)
    "lit-angstrom": "\\u212b",
    "bslash": "a\\b",
}
AGAIN = ["angstrom", "cjkcompat", "plain"]
BROKEN: dict[str, str] = {}


def _build(root):  # type: ignore[no-untyped-def]
    lab = Lab(root / "tw")
    for vid, name in {**RUNS, **TWINS, **REFUSED, **PENDING}.items():
        lab.write(name, plan_text(vid))
    lab.commit("plans")
    lab.run()
    for name in {**RUNS, **TWINS}.values():
        lab.set_status(name, "approved")
    for name in REFUSED.values():
        lab.set_status(name, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.run()
    for vid in AGAIN:  # the same version again in a new folder, approved by Alice
        lab.write(f"again-{vid}", plan_text(vid))
    lab.commit("again")
    lab.run()
    for vid in AGAIN:
        lab.set_status(f"again-{vid}", "approved")
    lab.commit("approve again", ALICE)
    lab.run()
    lab.run()
    lab.before_fresh = {v: len(lab.calls(v)) for v in RUNS}  # type: ignore[attr-defined]
    lab.status_before_fresh = lab.status()  # type: ignore[attr-defined]
    # the history index is a cache (round 27): lost, rebuilt from git by the next pass
    (lab.state / "index.sqlite").unlink()
    lab.run()
    lab.run()
    lab.after_reindex = (
        {v: len(lab.calls(v)) for v in {**RUNS, **PENDING}},
        lab.cli("status", "--json", "--config", str(lab.config)).stdout,
    )  # type: ignore[attr-defined]
    # a second controller with a fresh state directory (a rebuilt host) reads the same branch
    cfg2 = lab.root / "fresh.yml"
    cfg2.write_text(
        lab.config.read_text().replace(
            f"state_dir: {lab.state}", f"state_dir: {lab.root / 'state2'}"
        )
    )
    for vid in AGAIN:
        lab.write(f"fresh-{vid}", plan_text(vid))
    lab.commit("fresh copies")
    lab.cli("run", "--once", "--take-over", "--config", str(cfg2))  # told (round 70)
    lab.git("checkout", "-q", "-b", "pr-fresh")
    lab.set_status("fresh-plain", "approved")
    lab.commit("approve fresh-plain", ALICE)
    lab.git("checkout", "-q", "main")
    lab.check_fresh = lab.cli(
        "check", "--config", str(cfg2), "--base", "main", "--head", "pr-fresh", cwd=lab.repo
    ).stdout  # type: ignore[attr-defined]
    for vid in AGAIN:
        lab.set_status(f"fresh-{vid}", "approved")
    lab.commit("approve fresh copies", ALICE)
    for _ in range(2):
        r = lab.cli("run", "--once", "--config", str(cfg2))
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
    clone = lab.root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    r = lab.cli("audit", "--json", cwd=clone)
    lab.audit_result = (r.returncode, r.stdout, r.stderr[-2000:])  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r50-twinnames", _build)


def _p(vids: list[str]) -> list[object]:
    return [
        pytest.param(
            v,
            id=v,
            marks=[
                pytest.mark.xfail(
                    strict=True, raises=AssertionError, reason=f"round 50: {BROKEN[v]}"
                )
            ]
            if v in BROKEN
            else [],
        )
        for v in vids
    ]


@pytest.mark.parametrize("vid", _p(list(RUNS)))
def test_each_name_runs_once_with_its_own_row(lab: Lab, vid: str) -> None:
    name = RUNS[vid]
    assert lab.before_fresh[vid] == 1, lab.calls(vid)  # type: ignore[attr-defined]
    assert lab.plan(name)["plan"]["status"] == "completed", lab.plan(name)["plan"]
    rows = lab.status()
    assert rows.get(f"plans/{name}", {}).get("status") == "completed", sorted(rows)


@pytest.mark.parametrize("vid", _p([f"reindex-{v}" for v in {**RUNS, **PENDING}]))
def test_a_rebuilt_index_changes_nothing(lab: Lab, vid: str) -> None:
    tag = vid[8:]
    calls, status = lab.after_reindex  # type: ignore[attr-defined]
    assert calls[tag] == (0 if tag in PENDING else 1), calls
    name = f"plans/{({**RUNS, **PENDING})[tag]}"
    rows = {r["plan"]: r for r in json.loads(status)}
    assert rows[name]["status"] == lab.status_before_fresh[name]["status"], (
        rows[name],
        lab.status_before_fresh[name],
    )  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(list(PENDING)))
def test_a_lookalike_never_approved_stays_pending(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == []
    row = lab.status().get(f"plans/{PENDING[vid]}", {})
    assert "E_UNSAFE_PATH" in json.dumps(row), row  # a backslash (round 76: it was pending)
    _code, out, _err = lab.audit_result  # type: ignore[attr-defined]
    execs = [
        e for e in json.loads(out).get("executions", []) if f"plans/{PENDING[vid]}" == e.get("plan")
    ]
    assert not execs, execs[:2]


@pytest.mark.parametrize("vid", _p(list(TWINS)))
def test_twin_folders_are_held_and_never_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == []
    row = lab.status().get(f"plans/{TWINS[vid]}", {})
    assert "E_PLAN_AMBIGUOUS" in json.dumps(row), row


@pytest.mark.parametrize("vid", _p(list(REFUSED)))
def test_unsafe_names_are_refused(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == []
    row = lab.status().get(f"plans/{REFUSED[vid]}", {})
    assert "E_UNSAFE_PATH" in json.dumps(row), row


@pytest.mark.parametrize("vid", _p([f"again-{v}" for v in AGAIN] + [f"fresh-{v}" for v in AGAIN]))
def test_the_same_version_again_is_refused(lab: Lab, vid: str) -> None:
    tag = vid.split("-", 1)[1]
    if vid.startswith("again-"):
        assert lab.before_fresh[tag] == 1, lab.calls(tag)  # type: ignore[attr-defined]
        assert "E_ALREADY_EXECUTED" in json.dumps(lab.status_before_fresh.get(f"plans/{vid}")), (
            lab.status_before_fresh.get(f"plans/{vid}")
        )  # type: ignore[attr-defined]
        return
    assert len(lab.calls(tag)) == 1, lab.calls(tag)
    assert "E_ALREADY_EXECUTED" in lab.codes(vid), lab.codes(vid)[-1500:]


def test_check_predicts_the_fresh_copy_refused(lab: Lab) -> None:
    """Control: ``plangate check`` with the new state directory's config predicts what the
    promise says (E_ALREADY_EXECUTED, read from the start commits in history)."""
    assert "E_ALREADY_EXECUTED" in lab.check_fresh, lab.check_fresh  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p([f"twice-{v}" for v in AGAIN]))
def test_fresh_clone_audit_flags_a_version_started_twice(lab: Lab, vid: str) -> None:
    code, out, _err = lab.audit_result  # type: ignore[attr-defined]
    report = json.loads(out)
    name = f"plans/fresh-{vid[6:]}"
    if len(lab.calls(vid[6:])) < 2:
        return  # it did not run twice: nothing to flag
    findings = [f for f in report.get("findings", []) if name in json.dumps(f, ensure_ascii=False)]
    assert findings and code != 0, (
        code,
        [e for e in report.get("executions", []) if name in json.dumps(e)][:1],
    )


@pytest.mark.parametrize("vid", _p([f"audit-{v}" for v in RUNS]))
def test_fresh_clone_audit_explains_the_run(lab: Lab, vid: str) -> None:
    _code, out, err = lab.audit_result  # type: ignore[attr-defined]
    assert "Traceback" not in err, err
    name = f"plans/{RUNS[vid[6:]]}"
    report = json.loads(out)
    text = json.dumps(report, ensure_ascii=False)
    findings = [
        f
        for f in report.get("findings", report.get("flags", []))
        if name in json.dumps(f, ensure_ascii=False)
    ]
    assert not findings, findings[:3]
    assert any(e.get("plan") == name for e in report.get("executions", [])), text[-1500:]
