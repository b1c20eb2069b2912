"""Round 75, agent-facing surfaces: the CLI's WRITERS (``approve``, ``reject``, ``abort``,
``freeze``, ``convert``) and readers on folders the controller holds by their NAME
(``E_UNSAFE_PATH``: a name beginning or ending with a blank, an invisible character), each
beside the base it reads as; nested pins naming such folders (quoted, so YAML keeps the
blank); ``plangate check`` of a pull request adding twin folders; MCP ``submit`` slugs.

Lab (one, module scope; five ``run --once`` passes):
- pass 1: the agent commits ``plans/a-sp`` and ``plans/a-sp `` (``rec a-sp-tw``),
  ``plans/a-zw`` and ``plans/a-<U+200C>zw``, ``plans/a-lead`` and ``plans/ a-lead``; the
  library ``plans/lib-plan`` with twins ``plans/lib-plan `` (held), ``plans/lib-plan.``
  (a plan of its own on Linux) and ``plans/lib-<U+200C>plan`` (held); ``plans/ok``;
  sources ``plans/c-ok/PLAN.json`` (the control) and ``plans/c-sp /PLAN.json``;
- pass 2: parents pinning by hash (path quoted): ``pin-ok`` (``plans/lib-plan``),
  ``pin-sp``/``pin-sptrim`` (``"plans/lib-plan "`` by its own hash / by the base's),
  ``pin-zw``/``pin-zwfold`` (``plans/lib-<U+200C>plan`` likewise), ``pin-dot``/
  ``pin-dottrim`` (``plans/lib-plan.`` likewise);
- Alice, in her working tree, runs ``plangate approve``, ``approve --force``, ``abort``,
  ``freeze``, ``show``, ``hash``, ``reject -m`` on each held folder (``<base>:<verb>``),
  ``convert``/``validate`` on the held source and MCP ``log`` of it; the lab then resets
  main to before her commands;
- pass 3: Alice approves ``ok``, ``c-ok``'s PLAN.yml and every parent;
- passes 4-5: a pull request (the agent) adds, ``approved``, ``plans/T-CASE``,
  ``plans/t-dot.``, ``plans/t-case~1``, ``plans/t-sp `` beside main's frozen ``t-case``,
  ``t-dot``, ``t-83``, ``t-sp``; Alice approves the bases on the branch; ``plangate check``
  (``--as alice``) predicts; Alice merges ``--no-ff``;
- MCP ``submit`` with the slugs ``"a-sp "``, ``"a-sp"``, ``"t-case~1"``, ``"s-x."``,
  ``"S-CASE"``.
Must hold: a folder held by its name is held by every CLI command (E_UNSAFE_PATH, no
document or hash, nothing written, no commit); a held source is held on its row and by the
CLI; a pin naming a held folder makes its parent invalid E_UNSAFE_PATH and a pin never
trims (``pin-dottrim`` E_PLAN_HASH_MISMATCH); ``check`` predicts what the merge does; only
the slugs the rule allows are committed; the fresh-clone audit agrees with the rows.

Seen (round 75):
- ``{a-sp,a-zw,a-lead}:{approve,approve-force,abort,freeze,show,hash,reject}`` (21 ids, one
  class): for ``plans/a-sp ``, ``plans/a-<U+200C>zw`` and ``plans/ a-lead`` (rows held
  E_UNSAFE_PATH, "rename the folder") Alice's CLI acts as on a plan: ``plangate reject -m
  ... "plans/a-sp "`` COMMITS her rejection into the held folder (subject ``reject plans/a-sp``
  as git shows it, the blank gone: it reads as a rejection of ``plans/a-sp``; for the U+200C
  folder the subject holds the raw invisible character, where the controller's own commits
  escape it); ``freeze`` writes ``frozen:`` into the folder's PLAN.yml (exit 0); ``show``
  prints the twin's document ("Task: attack variant a-sp-tw") and hash; ``hash`` prints it;
  ``approve`` (with or without ``--force``) refuses ``E_PLAN_NOT_FROZEN`` "wait for the
  controller to freeze it" (it never will) and ``abort`` ``E_ILLEGAL_TRANSITION``. Should
  (round 74: one folder verdict "read by every CLI path (``validate``, ``hash``, ``show``,
  ``freeze``, ``approve`` ...)"; docs/plan-format.md: "The controller writes nothing into a
  folder it holds"): E_UNSAFE_PATH, nothing written or committed. Nothing ran (the controller
  never freezes the folder). Fixed (2026-11-30, r75heldnames): the folder's name is part of
  its one verdict (``names.name_verdict`` in ``folder_verdict``; ``plans.name_problem``, the
  index's ``unsafe_name`` over the path relative to the work tree), asked by ``read_plan``
  and by ``approve``/``reject``/``abort`` (``named_plan_file``) before anything is read or
  committed: E_UNSAFE_PATH and why ("rename the folder"), nothing written.
- ``c-sp:{row,convert,validate,mcp-log}`` (4 ids): ``plans/c-sp /PLAN.json`` has no status
  row at all (the plan-file folders so named have an E_UNSAFE_PATH row); ``plangate convert``
  of it prints the converted PLAN.yml (exit 0), ``validate`` says ``valid (sha256:...)``, MCP
  ``log`` says ``E_USAGE: no plan plans/c-sp`` (trimmed). Should (round 74: a held source's
  row carries ``held``; one verdict for a plan file and its source alike): E_UNSAFE_PATH on
  the row and every reader. The daemon never converts it (held). Fixed (2026-11-30,
  r75heldnames): ``source_verdict`` judges the folder's name first (the row is held
  E_UNSAFE_PATH), ``convert`` asks ``held_problem``, and MCP no longer trims a path (its
  ``_plan_id``): E_UNSAFE_PATH on the row and every reader.
Held: every pin naming ``"plans/lib-plan "`` or ``plans/lib-<U+200C>plan`` (by its own hash
or by the base's) is invalid E_UNSAFE_PATH and never runs; ``pin-dottrim`` is
E_PLAN_HASH_MISMATCH (no trimming of a trailing dot), ``pin-dot`` runs ``lib-plan.``'s own
plan once, ``pin-ok`` the library once; ``check`` predicted ``start`` for each base (each ran
once) and ``refuse``/``held`` for each twin as the rows then said (none ran); MCP ``submit``
refused ``"a-sp "``, ``"t-case~1"``, ``"S-CASE"`` (E_USAGE, nothing committed); the
fresh-clone audit agrees. Noted, not counted: ``submit`` slug ``"s-x."`` commits
``plans/s-x./PLAN.yml``, a path git for Windows refuses to check out (a reviewer on Windows
cannot check out the branch); a lone ``plans/ldot.`` runs (the folder-alias module).
Changed (2026-11-30, r75twinfold: folder names fold as plan file names do, the folder-alias
module's ``*:base-held``): ``plans/lib-plan`` sits beside its twin folders (``lib-plan ``,
``lib-<U+200C>plan``, ``lib-plan.``), so ``pin-ok``, ``pin-dot`` and ``pin-dottrim`` are
E_PLAN_AMBIGUOUS and no library runs; the bases ``t-case``, ``t-dot``, ``t-sp`` beside their
pull request's twin folders are held (``check`` says ``held``/``refuse``, none runs;
``t-83`` has no twin and runs); MCP ``submit`` of ``a-sp`` beside ``plans/a-sp `` is refused
E_PLAN_AMBIGUOUS.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from checkkit import pinning
from mcpkit import PLANGATE, session
from test_round2_execution_kit import shared

# folders held E_UNSAFE_PATH by their name, each beside the base its name trims or folds to
HELD = {"a-sp": "a-sp ", "a-zw": "a-\u200czw", "a-lead": " a-lead"}
# twins the pull request adds beside a plan frozen on main
PR_TWINS = {"t-case": "T-CASE", "t-dot": "t-dot.", "t-83": "t-case~1", "t-sp": "t-sp "}
LIB = "lib-plan"
LIBZW = "lib-\u200cplan"
# parent -> (the pin's path, written quoted; the folder whose hash it pins, None: LIB's)
PINS: dict[str, tuple[str, str | None]] = {
    "pin-ok": (f"plans/{LIB}", None),
    "pin-sp": (f"plans/{LIB} ", f"{LIB} "),
    "pin-sptrim": (f"plans/{LIB} ", None),
    "pin-zw": (f"plans/{LIBZW}", LIBZW),
    "pin-zwfold": (f"plans/{LIBZW}", None),
    "pin-dot": (f"plans/{LIB}.", f"{LIB}."),
    "pin-dottrim": (f"plans/{LIB}.", None),
}
VERBS: dict[str, tuple[str, ...]] = {
    "approve": ("approve",),
    "approve-force": ("approve", "--force"),
    "abort": ("abort",),
    "freeze": ("freeze",),
    "show": ("show",),
    "hash": ("hash",),
    "reject": ("reject", "-m", "not this one"),  # last: it may write
}


def _hash(lab: Lab, folder: str) -> str:
    """The plan hash of the folder's PLAN.yml, by the hash ``plangate hash`` prints: from its
    text, since the CLI refuses a folder held for its name (E_UNSAFE_PATH, r75heldnames)."""
    from controller.plan.plans import parse_text

    text = (lab.repo / "plans" / folder / "PLAN.yml").read_text(encoding="utf-8")
    return str(parse_text(text, Path("PLAN.yml")).hash)


def _as(lab: Lab, who: tuple[str, str], *args: str) -> str:
    env = lab.env(who)
    env["REC_LOG"] = str(lab.log)
    done = subprocess.run(
        [PLANGATE, *args], cwd=lab.repo, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    return f"{done.returncode} {done.stdout}{done.stderr}"


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for base, twin in HELD.items():
        lab.write(base, plan_text(base))
        lab.write(twin, plan_text(f"{base}-tw", name=base))
    for base in PR_TWINS:
        lab.write(base, plan_text(base))
    lab.write(LIB, plan_text(LIB))
    lab.write(f"{LIB} ", plan_text(f"{LIB}-tw"))
    lab.write(f"{LIB}.", plan_text(f"{LIB}-dot"))
    lab.write(LIBZW, plan_text(f"{LIB}-zw"))
    lab.write("c-ok", json.dumps(dict(load_yaml(plan_text("c-ok"))), indent=1), "PLAN.json")
    lab.write("c-sp ", json.dumps(dict(load_yaml(plan_text("c-sp"))), indent=1), "PLAN.json")
    lab.write("ok", plan_text("ok"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for vid, (path, twin) in PINS.items():
        digest = _hash(lab, twin or LIB)
        lab.write(vid, pinning(vid, json.dumps(path, ensure_ascii=False), digest))
    lab.commit("agent: parents", AGENT)
    lab.run()
    time.sleep(1.1)
    got: dict[str, Any] = {"cli": {}}
    # Alice's CLI on the held folders (the folder she was shown)
    tip = tip2 = lab.head()
    for base, twin in HELD.items():
        where = f"plans/{twin}"
        for verb, args in VERBS.items():
            text = _as(lab, ALICE, *args[:1], "--config", cfg, *args[1:], where)
            before, tip2 = tip2, lab.head()
            made = lab.git("log", "--format=%an %s", f"{before}..{tip2}").strip()
            dirty = lab.git("status", "--porcelain", "--", "plans").strip()
            lab.git("checkout", "-q", "--", "plans")
            got["cli"][f"{base}:{verb}"] = f"{text}\ndirty: {dirty}\ncommits: {made}"
    src = str(lab.repo / "plans" / "c-sp " / "PLAN.json")
    got["cli"]["c-sp:convert"] = _as(lab, ALICE, "convert", "--config", cfg, src)
    got["cli"]["c-sp:validate"] = _as(lab, ALICE, "validate", "--config", cfg, "plans/c-sp ")
    replies = session(lab, [("log", {"path": "plans/c-sp "}), ("status", {})])[0]
    got["cli"]["c-sp:mcp-log"] = json.dumps(replies[0], ensure_ascii=False)
    got["cli"]["c-sp:mcp-status"] = json.dumps(replies[1], ensure_ascii=False)
    got["cli-commits"] = lab.git("log", "--format=%an %s", f"{tip}..HEAD").splitlines()
    got["cli-dirty"] = lab.git("status", "--porcelain", "--untracked-files=all")
    lab.git("reset", "-q", "--hard", tip)
    lab.git("clean", "-qfdx", "plans")
    for plan in ["ok", *PINS]:
        lab.set_status(plan, "approved")
    conv = lab.repo / "plans" / "c-ok" / "PLAN.yml"
    text = conv.read_text()
    conv.write_text(text.replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("alice: approve", ALICE)
    lab.run()
    # a pull request: twins beside plans frozen on main; Alice approves the bases on it
    lab.git("checkout", "-q", "-b", "pr")
    for base, twin in PR_TWINS.items():
        lab.write(twin, plan_text(f"{base}-tw", "approved", name=base))
    lab.commit("agent: twins", AGENT)
    for base in PR_TWINS:
        lab.set_status(base, "approved")
    lab.commit("alice: approve on the branch", ALICE)
    done = lab.cli(
        "check", "--config", cfg, "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    got["check-rc"], got["check-err"] = done.returncode, done.stderr[-2000:]
    got["check"] = {p["plan"]: p for p in json.loads(done.stdout or '{"plans": []}')["plans"]}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = ["ok", "c-ok", "c-sp", LIB, f"{LIB}-tw", f"{LIB}-dot", f"{LIB}-zw", *PINS]
    tags += [t for b in [*HELD, *PR_TWINS] for t in (b, f"{b}-tw")]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    subs = [("submit", {"plan": plan_text(f"s-{i}"), "slug": s}) for i, s in
            enumerate(["a-sp ", "a-sp", "t-case~1", "s-x.", "S-CASE"])]  # fmt: skip
    got["submit"] = [json.dumps(r, ensure_ascii=False) for r in session(lab, subs)[0]]
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-surface-namewriters", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 75: {what}")


WRITE_WHY = "the CLI's writers and readers act on a folder the controller holds E_UNSAFE_PATH"
CIDS = [f"{b}:{v}" for b in HELD for v in VERBS]
CBROKEN: dict[str, Any] = {}  # fixed (r75heldnames): was _xf(WRITE_WHY) for every id


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, CBROKEN))
def test_the_cli_holds_a_folder_held_by_its_name(lab: Lab, vid: str) -> None:
    """Alice's ``plangate approve|abort|freeze|show|hash|reject`` of ``plans/a-sp ``,
    ``plans/a-<U+200C>zw``, ``plans/ a-lead`` (each held E_UNSAFE_PATH by the row, "rename
    the folder"; beside ``plans/a-sp`` & co. it reads as): refused E_UNSAFE_PATH as the row
    says (round 74: one folder verdict "read by every CLI path"), no document or hash,
    nothing written into the folder, no commit."""
    got = lab.got  # type: ignore[attr-defined]
    base = vid.split(":")[0]
    row = got["rows"][f"plans/{HELD[base]}"]
    assert row.get("held") == "E_UNSAFE_PATH", row
    text = got["cli"][vid]
    answer, _, tail = text.partition("\ndirty: ")
    dirty, _, made = tail.partition("\ncommits: ")
    assert not made.strip(), text[-600:]
    assert not dirty.strip(), text[-600:]
    assert "E_UNSAFE_PATH" in answer, answer[:600]
    assert "sha256:" not in answer and f"{base}-tw" not in answer, answer[:600]


SRC_WHY = "a source in a folder held by its name: no row, and the CLI converts and validates it"
SIDS = ["c-sp:row", "c-sp:convert", "c-sp:validate", "c-sp:mcp-log", "c-sp:never", "c-ok:ran"]
SBROKEN: dict[str, Any] = {}  # fixed (r75heldnames): c-sp:{row,convert,validate} _xf(SRC_WHY),
# c-sp:mcp-log "MCP log of a source held by its name: 'no plan', E_USAGE"


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, SBROKEN))
def test_a_source_in_a_folder_held_by_its_name(lab: Lab, vid: str) -> None:
    """``plans/c-sp /PLAN.json`` (the folder's name ends with a blank): never converted nor run
    by the daemon; its row, ``plangate convert``, ``validate`` and MCP ``log`` say
    E_UNSAFE_PATH (round 74: "one verdict on a plan folder, plan file and source alike").
    Control: ``plans/c-ok/PLAN.json`` is converted, approved and runs once."""
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    if plan == "c-ok":
        assert got["calls"]["c-ok"] == 1 and got["rows"]["plans/c-ok"]["status"] == "completed"
        return
    if reader == "never":
        assert got["calls"]["c-sp"] == 0, got["calls"]
        assert not [t for t in got["subjects"] if "c-sp" in t], got["subjects"]
        return
    if reader == "row":
        row = got["rows"].get("plans/c-sp ")
        assert row and row.get("held") == "E_UNSAFE_PATH", sorted(got["rows"])
        return
    text = got["cli"][vid]
    assert "E_UNSAFE_PATH" in text and "sha256:" not in text, text[:600]
    assert "tool:" not in text, text[:600]


# r75twinfold (round 75): ``lib-plan`` sits beside its twin folders (``lib-plan ``,
# ``lib-<U+200C>plan``, ``lib-plan.``), one folder on a folding checkout: no pin of any of them
# runs (the former controls ``pin-ok``, ``pin-dot`` are E_PLAN_AMBIGUOUS now)
PIN_RUNS: dict[str, tuple[str, int]] = {}
TWIN_HELD = ("pin-ok", "pin-dot", "pin-dottrim")
PIDS = [f"{p}:{w}" for p in PINS for w in ("row", "ran")]


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, {}))
def test_a_pin_names_a_folder_by_the_id_rule(lab: Lab, vid: str) -> None:
    """Parents pinning (quoted) ``"plans/lib-plan "`` or ``"plans/lib-<U+200C>plan"`` by that
    folder's hash or by ``plans/lib-plan``'s (a reader that trims or folds would find the
    base): invalid E_UNSAFE_PATH, never run; ``"plans/lib-plan."`` by the base's hash:
    invalid (E_PLAN_HASH_MISMATCH: no trimming); controls ``pin-ok`` and ``pin-dot`` (the
    folder ``lib-plan.``'s own hash: a folder of its own on Linux) run their pin once."""
    got = lab.got  # type: ignore[attr-defined]
    parent, what = vid.split(":")
    row = got["rows"][f"plans/{parent}"]
    if parent in PIN_RUNS:
        tag, runs = PIN_RUNS[parent]
        assert row["status"] == "completed", row
        assert got["calls"][tag] == runs, got["calls"]
        return
    assert row["status"] == "invalid", row
    code = "E_PLAN_AMBIGUOUS" if parent in TWIN_HELD else "E_UNSAFE_PATH"
    assert code in (row.get("reason") or ""), row
    if what == "ran":
        assert got["calls"][f"{LIB}-tw"] == got["calls"][f"{LIB}-zw"] == 0, got["calls"]
        assert got["calls"][LIB] == 0, got["calls"]  # round 75: no pin of a twin runs


TIDS = [f"{b}:{w}" for b in PR_TWINS for w in ("check-base", "check-twin", "ran")]


@pytest.mark.parametrize("vid", cases(TIDS, TIDS, {}))
def test_check_agrees_with_the_controller_on_twin_folders(lab: Lab, vid: str) -> None:
    """A pull request adding, as ``approved``, ``plans/T-CASE``, ``plans/t-dot.``,
    ``plans/t-case~1``, ``plans/t-sp `` beside plans frozen on main that Alice approves on
    the branch: ``plangate check`` says what the merge then does (the base ``start``, runs
    once; the twin never frozen, ``refuse``, or ``held`` E_UNSAFE_PATH; never runs)."""
    got = lab.got  # type: ignore[attr-defined]
    base, what = vid.split(":")
    twin = PR_TWINS[base]
    # r75twinfold: a base beside its twin folder is held (``t-case~1`` is the 8.3 short name
    # of ``t-case``, not of ``t-83``: ``t-83`` has no twin and runs)
    held = base != "t-83"
    if what == "check-base":
        entry = got["check"].get(f"plans/{base}")
        assert entry and (entry["outcome"] in ("held", "refuse") if held else "start"), entry
        assert (got["rows"][f"plans/{base}"]["status"] == "completed") is not held
    elif what == "check-twin":
        entry = got["check"].get(f"plans/{twin}")
        row = got["rows"][f"plans/{twin}"]
        assert entry and entry["outcome"] in ("refuse", "held"), entry
        assert row["status"] != "completed", row
        if row.get("held"):
            assert entry["outcome"] == "held", (entry, row)
            assert row["held"] in {p["code"] for p in entry["problems"]}, (entry, row)
    else:
        assert got["calls"][base] == (0 if held else 1), got["calls"]
        assert got["calls"][f"{base}-tw"] == 0, got["calls"]


SUBS = ["a-sp ", "a-sp", "t-case~1", "s-x.", "S-CASE"]
UIDS = [f"submit-{i}" for i in range(len(SUBS))]


@pytest.mark.parametrize("vid", cases(UIDS, UIDS, {}))
def test_mcp_submit_slugs(lab: Lab, vid: str) -> None:
    """MCP ``submit`` with the slugs ``"a-sp "`` (a blank end), ``"t-case~1"`` (an 8.3 short
    name), ``"S-CASE"``: refused E_USAGE, nothing committed; ``"a-sp"`` (the agent's own
    pending plan) and ``"s-x."`` (by the slug rule) committed at exactly that folder."""
    got = lab.got  # type: ignore[attr-defined]
    i = int(vid.split("-")[1])
    slug, text = SUBS[i], got["submit"][i]
    if slug == "s-x.":
        assert '\\"submitted\\": true' in text, text[:600]
        assert f'\\"path\\": \\"plans/{slug}\\"' in text, text[:600]
    elif slug == "a-sp":  # r75twinfold: beside its twin ``plans/a-sp `` it is held
        assert '"isError": true' in text and "E_PLAN_AMBIGUOUS" in text, text[:600]
    else:
        assert '"isError": true' in text and "E_USAGE" in text, text[:600]
        made = sorted(t for t in got["subjects"] if t.startswith("Agent Submit plan"))
        assert made == ["Agent Submit plan plans/s-x."], made


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r75nw-", dir="/tmp/atk75b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
