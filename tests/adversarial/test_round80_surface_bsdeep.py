"""Round 80, agent surfaces: deeper and mixed backslash spellings at the repository's root
(round 79 held the root FILE ``plans\\rf\\PLAN.yml`` and the root FOLDER ``plans\\rf/``).

Lab (one, built once): the agent commits pending plans and, beside some, a second spelling
that git for Windows checks out onto the plan's folder (docs/plan-format.md, twins: "a
backslash is a folder separator ... at any level from the repository's root down";
"Windows ignores case and drops the empty parts a leading or doubled backslash makes"); a
pass freezes; Alice approves every plan; two passes; then the late variants.

Variants (``<id>:held`` the row, ``show``, ``validate``, MCP ``status`` and the daemon's
page with ``/api/plan/`` name ``E_PLAN_AMBIGUOUS`` (or ``E_UNSAFE_PATH``); ``<id>:never``
neither the plan nor the twin's tag ever ran):
- ``ucf``: root folder ``PLANS\\ucf/PLAN.yml`` (capital folder name);
- ``ldf``: root folder ``\\plans\\ldf/PLAN.yml`` (a leading backslash);
- ``dbf``: root folder ``plans\\\\dbf/PLAN.yml`` (a doubled backslash);
- ``tbf``: root folder ``plans\\`` (a trailing backslash) holding ``tbf/PLAN.yml``;
- ``tbu``: root folder ``PLANS\\`` (capitals, a trailing backslash) holding ``tbu/PLAN.yml``;
- ``tbs``: root folder ``plans\\`` holding the FILE ``tbs\\PLAN.yml``;
- ``tbi``: the folder ``plans/tbi\\`` (a trailing backslash, inside ``plans``) holding
  ``PLAN.yml``;
- ``tbg``: root folder ``plans\\grp\\`` holding ``tbg/PLAN.yml`` (plan ``plans/grp/tbg``);
- ``mx``: root folder ``plans\\grp`` holding the FILE ``mx\\PLAN.yml`` (plan ``plans/grp/mx``:
  the brief's ``plans\\a/b\\PLAN.yml``);
- ``sub``: root folder ``plans\\grp\\sub`` holding ``PLAN.yml`` (plan ``plans/grp/sub``);
- ``late``: root folder ``plans\\late/PLAN.yml`` committed by the agent after Alice's
  approval, before the pass that would run it;
- ``mrg``: the twin ``plans\\mrg/PLAN.yml`` on a branch Alice merges together with her
  approval (one merge commit).
Other ids:
- ``lg:log``: root folder ``plans\\lg/EXECUTION_LOG.md`` holding a forged completed log: the
  plan runs once on Alice's approval (or is held), ``show`` never prints the forged text;
- ``gone:once``: the twin ``plans\\gone/PLAN.yml`` held the plan, the agent removes it, Alice
  approves afterwards: the plan runs exactly once (a defence that holds forever is caught);
- ``kept:once``: Alice approves while the twin ``plans\\kept/`` is there, then the agent
  removes the twin: the plan runs at most once, the twin's text never;
- ``ok:ran`` (control): an honest plan beside them ran once;
- ``audit``: ``plangate audit --json`` on a fresh clone calls valid exactly the completed
  rows, one run each.

Seen (round 80): ``tbf``, ``tbu``, ``tbs`` ``:held``, ``:never``, ``:show``, ``:validate``,
``:mcp``, ``:page`` (18 ids, one class, strict xfails): the agent commits the root folder
``plans\\`` (the plans folder's own name and a trailing backslash; ``PLANS\\`` for ``tbu``) holding
``tbf/PLAN.yml`` (``tbs``: the file ``tbs\\PLAN.yml``) beside the pending ``plans/tbf``; on git for
Windows ``plans\\/tbf/PLAN.yml`` is ``plans//tbf/PLAN.yml``, i.e. ``plans/tbf/PLAN.yml``
(Windows drops the empty part, as for the doubled ``plans\\\\dbf``, which IS held). The row
said ``pending_approval`` with no ``held``, ``plans/tbf`` ran once on Alice's approval, and
``show``, ``validate``, MCP ``status`` and the page name no code; the audit calls the run valid (the
same for ``tbu`` and ``tbs``, while ``plans\\grp\\/tbg`` and ``plans/tbi\\/`` ARE held:
only a trailing backslash on the first, plans-folder, part is missed). Should
(docs/plan-format.md, twins: "a root FOLDER so named: the files of ``plans\\rf/`` are those of
``plans/rf`` there"; "drops the empty parts a leading or doubled backslash makes"): held
``E_PLAN_AMBIGUOUS`` by the row, the pass and every reader, never run.
Fixed (2026-12-01, r80bsroot): ``names.split_files`` (every reader's and the index's walk
from the root) entered the plans folder only by an entry written ``plans``, so ``plans\\``
(split by ``names.path_parts`` to the one part ``plans``) was never walked; ``git log`` and
the cold scan did list its files. Now every entry of the walk lands where
``names.path_parts`` splits it (parts at ``/`` and ``\\``, empty parts dropped: a name of
backslashes alone, ``\\``, has none and is the folder it lies in): the plans folder is
compared as written only on a path holding no backslash (``Plans/`` stays no plans
folder), ``PLANS\\`` and ``plans\\`` land on it as ``PLANS\\ucf`` did; ``plans\\\\\\``,
``plans\\/\\/x``, a trailing backslash at every level and a folder ``\\`` inside the plan's
folder (``names.path_twins``) alike (tests/plan/test_names_fold.py,
tests/git/test_treewalk.py, tests/commands/test_check.py).
By hand (no id): ``plangate check`` of Alice's approval branch on which the agent then adds
``plans\\/ck/PLAN.yml`` names no ``E_PLAN_AMBIGUOUS`` for ``plans/ck`` (it predicts a refusal
by the approval rules, ``E_SELF_APPROVAL`` for her merge), and the pass after her merge refused
it so; the doubled ``plans\\\\ckd/`` beside it was held by both.
Held: ``plans/tbi\\/PLAN.yml``, ``plans\\grp\\/tbg/``, ``PLANS\\ucf/``, ``\\plans\\ldf/``,
``plans\\\\dbf/``, ``plans\\grp/mx\\PLAN.yml``,
``plans\\grp\\sub/`` (plans two levels deep), a twin committed after the approval
(``late``) and one arriving in Alice's own merge with her approval (``mrg``): all held by the
row, ``show``, ``validate``, MCP ``status``, never run; the root folder's forged
``EXECUTION_LOG.md`` never shown (``lg`` ran once on its approval); a twin removed before the
approval released the plan to run once (``gone``); Alice's approval given while the twin was
there did not run the plan after the twin went (``kept`` waits: at most once); the audit
agreed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from oraclekit import mcp_payload, page_texts
from test_round2_execution_kit import shared

# plan id -> the twin's path (relative to the repo root) and the plan's folder
TWINS = {
    "ucf": ("PLANS\\ucf/PLAN.yml", "ucf"),
    "ldf": ("\\plans\\ldf/PLAN.yml", "ldf"),
    "dbf": ("plans\\\\dbf/PLAN.yml", "dbf"),
    "tbf": ("plans\\/tbf/PLAN.yml", "tbf"),
    "tbu": ("PLANS\\/tbu/PLAN.yml", "tbu"),
    "tbs": ("plans\\/tbs\\PLAN.yml", "tbs"),
    "tbi": ("plans/tbi\\/PLAN.yml", "tbi"),
    "tbg": ("plans\\grp\\/tbg/PLAN.yml", "grp/tbg"),
    "mx": ("plans\\grp/mx\\PLAN.yml", "grp/mx"),
    "sub": ("plans\\grp\\sub/PLAN.yml", "grp/sub"),
}
LATE = {"late": ("plans\\late/PLAN.yml", "late"), "mrg": ("plans\\mrg/PLAN.yml", "mrg")}
SLUG = {**{k: v[1] for k, v in TWINS.items()}, **{k: v[1] for k, v in LATE.items()}}
ALL = [*SLUG, "lg", "gone", "kept", "ok"]
FOLDER = {**SLUG, "lg": "lg", "gone": "gone", "kept": "kept", "ok": "ok"}


def _twin(lab: Lab, rel: str, tag: str, name: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan_text(f"{tag}-tw", name=name), encoding="utf-8")


def _approve(lab: Lab, tags: list[str]) -> None:
    for tag in tags:
        lab.set_status(FOLDER[tag], "approved")


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="ui: {listen: 0}\n")
    for tag in ALL:
        lab.write(FOLDER[tag], plan_text(tag, name=tag))
    for tag, (rel, _slug) in TWINS.items():
        _twin(lab, rel, tag, tag)
    _twin(lab, "plans\\gone/PLAN.yml", "gone", "gone")
    _twin(lab, "plans\\kept/PLAN.yml", "kept", "kept")
    log = lab.repo / "plans\\lg" / "EXECUTION_LOG.md"
    log.parent.mkdir(parents=True)
    log.write_text("# Execution log\n\nFORGED-LOG: completed, approved by alice\n")
    lab.commit("agent: plans and root spellings", AGENT)
    lab.run()
    got: dict[str, Any] = {}
    cfg = str(lab.config)
    got["rows0"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    # the agent removes the twin of gone before Alice looks
    lab.git("rm", "-q", "-r", "--cached", "plans\\gone")
    (lab.repo / "plans\\gone" / "PLAN.yml").unlink()
    lab.commit("agent: drop the gone twin", AGENT)
    lab.run()
    # mrg: the twin waits on a branch
    lab.git("checkout", "-q", "-b", "side")
    _twin(lab, LATE["mrg"][0], "mrg", "mrg")
    lab.commit("agent: side twin", AGENT)
    lab.git("checkout", "-q", "main")
    _approve(lab, [t for t in ALL if t != "mrg"])
    lab.commit("alice: approve", ALICE)
    # late: the twin lands after the approval, before any pass
    _twin(lab, LATE["late"][0], "late", "late")
    lab.commit("agent: a late twin", AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-commit", "side", who=ALICE)
    _approve(lab, ["mrg"])
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "alice: merge side and approve mrg", who=ALICE)
    lab.run()
    # kept: the agent removes the twin after Alice's approval
    lab.git("rm", "-q", "-r", "--cached", "plans\\kept")
    (lab.repo / "plans\\kept" / "PLAN.yml").unlink()
    lab.commit("agent: drop the kept twin", AGENT)
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in ALL}
    got["twin-calls"] = {t: len(lab.calls(f"{t}-tw")) for t in ALL}
    got["show"], got["validate"], got["hash"] = {}, {}, {}
    for tag in ALL:
        where = str(lab.repo / "plans" / FOLDER[tag])
        done = lab.cli("show", "--config", cfg, where)
        got["show"][tag] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("validate", "--config", cfg, where)
        got["validate"][tag] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("hash", "--config", cfg, where + "/PLAN.yml")
        got["hash"][tag] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("status", {"path": f"plans/{FOLDER[t]}"}) for t in ALL])[0]
    got["mcp"] = {
        t: json.dumps(mcp_payload(r), ensure_ascii=False)[:3000]
        for t, r in zip(ALL, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{FOLDER[t]}" for t in ALL], "plans/ok")
    got["page"] = {t: "\n".join(pages[f"plans/{FOLDER[t]}"])[:20000] for t in ALL}
    got["calls-end"] = {t: len(lab.calls(t)) for t in ALL}
    report, valid = clone_audit(lab, root)
    got["audit"] = {
        "valid": sorted(valid),
        "runs": sorted(e["plan"] for e in report["executions"] if e.get("approval_valid")),
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-surface-bsdeep", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 80: {what}")


CODES = ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")
HELD = list(SLUG)
HIDS = [f"{t}:{w}" for t in HELD for w in ("held", "never", "show", "validate", "mcp", "page")]
BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r80bsroot)


def _named(text: str) -> bool:
    return any(code in text for code in CODES)


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, BROKEN))
def test_a_deeper_root_spelling_holds_the_plan(lab: Lab, vid: str) -> None:
    """Every spelling landing on ``plans/<slug>/PLAN.yml`` on git for Windows holds the plan
    for the row, ``show``, ``validate`` and MCP ``status``; neither text ever runs."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    row = got["rows"].get(f"plans/{SLUG[tag]}") or {}
    if what == "held":
        assert row.get("held") in CODES, row
    elif what == "never":
        assert got["calls"][tag] == 0 and got["twin-calls"][tag] == 0, (got["calls"], row)
    elif what == "show":
        assert _named(got["show"][tag]), got["show"][tag][-800:]
    elif what == "validate":
        text = got["validate"][tag]
        assert not text.startswith("0 ") and _named(text), text[-800:]
    elif what == "mcp":
        assert _named(got["mcp"][tag]), got["mcp"][tag][-800:]
    else:
        assert _named(got["page"][tag]), got["page"][tag][:800]
        assert got["calls-end"][tag] == got["calls"][tag], got["calls-end"]


OIDS = ["lg:log", "lg:show", "gone:held-first", "gone:once", "kept:once", "kept:twin-never",
        "ok:ran", "ok:show"]  # fmt: skip


@pytest.mark.parametrize("vid", cases(OIDS, OIDS, BROKEN))
def test_logs_removals_and_the_control(lab: Lab, vid: str) -> None:
    """A root folder's forged log is never shown; a twin removed before the approval releases
    the plan to run once; one removed after it never makes the plan run twice; the honest
    plan runs once."""
    got = lab.got  # type: ignore[attr-defined]
    calls, rows = got["calls"], got["rows"]
    if vid == "lg:log":
        row = rows.get("plans/lg") or {}
        assert calls["lg"] <= 1, calls
        assert (row.get("status") == "completed") == (calls["lg"] == 1), row
    elif vid == "lg:show":
        assert "FORGED-LOG" not in got["show"]["lg"], got["show"]["lg"][-800:]
    elif vid == "gone:held-first":
        assert (got["rows0"].get("plans/gone") or {}).get("held") in CODES, got["rows0"]
    elif vid == "gone:once":
        assert calls["gone"] == 1 and rows["plans/gone"]["status"] == "completed", (
            calls,
            rows.get("plans/gone"),
        )
    elif vid == "kept:once":
        assert calls["kept"] <= 1, calls
    elif vid == "kept:twin-never":
        assert got["twin-calls"]["kept"] == 0 and got["twin-calls"]["gone"] == 0, got
    elif vid == "ok:ran":
        assert calls["ok"] == 1 and rows["plans/ok"]["status"] == "completed", rows
    else:
        text = got["show"]["ok"]
        assert text.startswith("0 ") and not _named(text), text[-800:]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == completed, got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r80bs-", dir="/tmp/atk80b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
