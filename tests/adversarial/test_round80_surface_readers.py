"""Round 80, the CLI's readers (docs/operations.md, "The CLI's readers do the same"):
``plangate validate``, ``hash``, ``show`` and ``freeze`` read a plan file as ``git add``
would store it and write it as git would check it out, attributes read from every place git
reads them. The attacker's aim: a hash or a text the reviewer's CLI prints that is not what
the controller freezes and runs.

Lab (one, built once). Every attribute is ``working-tree-encoding=ISO-8859-1``, chosen
because its working-tree bytes are valid UTF-8 with another meaning: the agent's task holds
the bytes ``C3 A9`` (``é`` read as UTF-8), which ``git add`` stores as ``Ã©``. A reader that
misses the attribute prints ``é`` and a hash the controller never froze. Places (``<p>``;
each attribute covers ``plans/<p>`` and ``plans/<p>f``):
- ``root``: the repository's ``.gitattributes``;
- ``nest``: a ``.gitattributes`` in each plan's own folder;
- ``info``: ``.git/info/attributes``;
- ``inc``: ``core.attributesFile`` set in a file that ``.git/config`` names by
  ``include.path``;
- ``idx``: a ``.gitattributes`` in each plan's folder that is in the index only (the agent
  deletes it from the working tree after committing it; ``git add`` reads the index's);
- ``wt``: ``.git/info/attributes`` again, the plan read through a linked worktree
  (``git worktree add``) for ``hash``/``show``/``validate``;
- ``plain`` (control): no attribute, the task a real UTF-8 ``é``.
Flow: the agent commits ``plans/<p>`` (unfrozen) and ``plans/<p>f`` frozen by the CLI's
``plangate freeze`` first; a pass freezes; Alice approves every plan (her one line edited,
``git add`` of the plan file only); two passes.
Variants per place:
- ``<p>:hash``: ``plangate hash`` of the checked-out file prints the hash the controller
  froze (the committed ``frozen.hash``);
- ``<p>:show``: ``plangate show`` prints the stored task (``Ã©``; ``é`` for ``plain``);
- ``<p>:validate``: ``plangate validate`` says valid;
- ``<p>:ran``: the plan ran once on Alice's approval (a defence refusing the attribute is
  caught here);
- ``<p>:freeze``: the CLI-frozen ``plans/<p>f`` was accepted by the controller (no hash
  mismatch, no ``invalid``) and ran once;
- ``<p>:clean``: ``git status`` names no file of the place's plans at the end.
Plus ``sym:hash``: ``plangate hash`` of a symlink outside the repo to the ``root`` plan
prints the frozen hash or refuses (never another hash), and ``audit`` (fresh clone).
Then Alice's next, unrelated ``git commit -a`` and two passes: ``records:clean`` (``git
status`` after the runs lists no controller record), ``records:untouched`` (her commit
carries none), ``records:once`` (no plan ran again), ``records:rows`` (every row completed).

Seen (round 80): ``records:clean``, ``records:untouched`` (2 ids, one class): in every
``ISO-8859-1`` folder the controller's ``EXECUTION_LOG.md`` holds ``✅``/``·``, which the
encoding cannot carry; its checkout keeps the UTF-8 bytes, and since every byte is a
Latin-1 character ``git status`` reads them back as other text and lists the log `` M``
(``failed to encode`` on each pass); Alice's next unrelated ``git commit -a`` commits every
such log as mojibake (``✅ completed`` becomes ``â\x9c\x85 completed``); nothing ran again
and the audit still agreed. Fixed (2026-12-01, r80isolog): the controller renders a record
(the log, the ``execution:`` block) with its own marks, and where that rendering's checkout
would not give it back (round 79's ``conversion.check_checkout``, asked through
``WorkTree.gives_back``) renders it again with their ASCII forms (one table,
``logbook.ASCII_MARKS``: ``[ok] completed``, ``-`` for ``·``, ``...`` for ``…``), which these
encodings hold: the log reads clean and Alice's commit carries none. Quoted tool
text keeps round 79's decision (committed as it is). The finding's "no reader notes it" did
not hold on a re-run: the fresh-clone audit listed ``log-changed`` for each log Alice's
commit changed (``ok: false``), ``status --json`` and ``show`` noted
``E_OWNED_BLOCK_CHANGED`` (the module asserts neither; tests/service/test_given_back.py
now does).
Held: the CLI's ``hash``, ``show``, ``validate`` and ``freeze`` agreed with the controller
for the attribute in the root ``.gitattributes``, a nested one, ``.git/info/attributes``,
``core.attributesFile`` through ``include.path``, a nested ``.gitattributes`` in the index
only, and a linked worktree (``Ã©`` shown, the frozen hash printed, CLI-frozen plans
accepted); every plan ran once; a symlink outside the repo printed the frozen hash; the
audit agreed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared

ENC = "working-tree-encoding=ISO-8859-1"
PLACES = ["root", "nest", "info", "inc", "idx", "wt", "plain"]
SLUGS = [s for p in PLACES for s in (p, f"{p}f")]


def _text(slug: str) -> bytes:
    return plan_text(slug).replace(f"variant {slug}", f"variant {slug} é").encode("utf-8")


def _frozen(lab: Lab, slug: str) -> str:
    data = load_yaml(lab.git("show", f"HEAD:plans/{slug}/PLAN.yml"))
    found = json.dumps(data, default=str)
    for key in ("frozen",):
        for where in (data, data.get("plan") or {}):
            if isinstance(where, dict) and isinstance(where.get(key), dict):
                return str(where[key].get("hash"))
    return f"no frozen hash in {found[:300]}"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    repo = lab.repo
    lines = [f"plans/root*/** {ENC}"]
    (repo / ".gitattributes").write_text("\n".join(lines) + "\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(
        f"plans/info*/** {ENC}\nplans/wt*/** {ENC}\n"
    )
    (root / "attrs-inc").write_text(f"plans/inc*/** {ENC}\n")
    (root / "inc.cfg").write_text(f"[core]\n\tattributesFile = {root / 'attrs-inc'}\n")
    lab.git("config", "include.path", str(root / "inc.cfg"))
    lab.commit("owner: attributes", ("Owner", "owner@example.com"))
    cfg = str(lab.config)
    got: dict[str, Any] = {"cli-freeze": {}}
    for slug in SLUGS:
        path = lab.write(slug, _text(slug))
        if slug.startswith(("nest", "idx")):
            (path.parent / ".gitattributes").write_text(f"PLAN.yml {ENC}\n")
    for slug in SLUGS:
        if slug.endswith("f"):
            done = lab.cli("freeze", "--config", cfg, str(repo / "plans" / slug / "PLAN.yml"))
            got["cli-freeze"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    lab.commit("agent: plans", AGENT)
    got["stored"] = {
        s: "Ã©" in lab.git("show", f"HEAD:plans/{s}/PLAN.yml") for s in SLUGS
    }  # fmt: skip
    for slug in ("idx", "idxf"):
        (repo / "plans" / slug / ".gitattributes").unlink()  # in the index only
    lab.run()
    wt = root / "linked"
    lab.git("worktree", "add", "-q", "--detach", str(wt), "HEAD")
    link = root / "link.yml"
    os.symlink(repo / "plans" / "root" / "PLAN.yml", link)
    got["frozen"] = {s: _frozen(lab, s) for s in SLUGS}
    got["hash"], got["show"], got["validate"] = {}, {}, {}
    for slug in SLUGS:
        base = wt if slug.startswith("wt") else repo
        where = base / "plans" / slug / "PLAN.yml"
        done = lab.cli("hash", "--config", cfg, str(where))
        got["hash"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
        done = lab.cli("show", "--config", cfg, str(where))
        got["show"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-3000:]
        done = lab.cli("validate", "--config", cfg, str(where))
        got["validate"][slug] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    done = lab.cli("hash", "--config", cfg, str(link))
    got["sym"] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    got["rows0"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    for slug in SLUGS:
        lab.set_status(slug, "approved")
        lab.git("add", f"plans/{slug}/PLAN.yml")
    lab.git("commit", "-q", "-m", "alice: approve", who=ALICE)
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["dirty"] = lab.git("status", "--porcelain").strip()
    # Alice's next, unrelated commit: `git commit -a`, as people do
    (repo / "README").write_text("plans and notes\n")
    lab.git("commit", "-q", "-a", "-m", "alice: readme", who=ALICE)
    got["alice-a"] = lab.git("show", "--stat", "--format=", "HEAD").strip()
    lab.run()
    lab.run()
    got["calls2"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["rows2"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-surface-readers", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 80: {what}")


WHATS = ("hash", "show", "validate", "ran", "freeze", "clean")
IDS = [f"{p}:{w}" for p in PLACES for w in WHATS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_the_cli_reads_what_the_controller_freezes(lab: Lab, vid: str) -> None:
    """Wherever git reads the attribute from, the CLI's hash and text are the controller's,
    its ``freeze`` is accepted, the plans run once and ``git status`` stays clean."""
    got = lab.got  # type: ignore[attr-defined]
    place, what = vid.split(":")
    want = "é" if place == "plain" else "Ã©"
    if what == "hash":
        frozen, text = got["frozen"][place], got["hash"][place]
        assert frozen.startswith("sha256") or len(frozen) >= 64, frozen
        assert text.startswith("0 ") and frozen in text, (frozen, text)
    elif what == "show":
        text = got["show"][place]
        assert text.startswith("0 ") and f"variant {place} {want}" in text, text[-1500:]
    elif what == "validate":
        assert got["validate"][place].startswith("0 "), got["validate"][place]
    elif what == "ran":
        row = got["rows"].get(f"plans/{place}") or {}
        assert got["calls"][place] == 1 and row.get("status") == "completed", (row, got["calls"])
    elif what == "freeze":
        slug = f"{place}f"
        row = got["rows"].get(f"plans/{slug}") or {}
        assert got["cli-freeze"][slug].startswith("0 "), got["cli-freeze"][slug]
        assert got["calls"][slug] == 1 and row.get("status") == "completed", (row, got["calls"])
    else:
        mine = (f"plans/{place}/PLAN.yml", f"plans/{place}f/PLAN.yml")
        dirty = [ln for ln in got["dirty"].splitlines() if ln.endswith(mine)]
        assert not dirty, got["dirty"]


RIDS = ["records:clean", "records:once", "records:rows", "records:untouched"]
RBROKEN: dict[str, Any] = {}  # records:clean, records:untouched fixed (r80isolog)


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, RBROKEN))
def test_the_controller_s_records_in_an_encoded_folder(lab: Lab, vid: str) -> None:
    """After the runs ``git status`` names no file the controller wrote; Alice's next
    unrelated ``git commit -a`` commits none of its records; no plan runs again after it and
    every row stays completed."""
    got = lab.got  # type: ignore[attr-defined]
    if vid == "records:clean":
        logs = [ln for ln in got["dirty"].splitlines() if "EXECUTION_LOG" in ln]
        assert not logs, got["dirty"]
    elif vid == "records:untouched":
        assert "EXECUTION_LOG" not in got["alice-a"], got["alice-a"]
    elif vid == "records:once":
        assert set(got["calls2"].values()) == {1}, got["calls2"]
    else:
        assert {r["status"] for r in got["rows2"].values()} == {"completed"}, got["rows2"]


def test_stored_text_is_the_attribute_s(lab: Lab) -> None:
    """The lab's premise: ``git add`` stored ``Ã©`` for every place but ``plain``."""
    got = lab.got  # type: ignore[attr-defined]
    want = {s: not s.startswith("plain") for s in SLUGS}
    assert got["stored"] == want, got["stored"]


def test_a_symlink_outside_the_repo_prints_the_frozen_hash_or_refuses(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    text = got["sym"]
    assert not text.startswith("0 ") or got["frozen"]["root"] in text, (got["frozen"], text)


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows2"].items() if r["status"] == "completed")
    assert got["valid"] == completed and got["audit"] == completed, (got["audit"], completed)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r80rd-", dir="/tmp/atk80b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
