"""Round 81, agent surfaces: ``plangate freeze`` / ``freeze --check`` on plan SOURCES (round
80: "``freeze`` never writes into a plan source", docs/plan-format.md "Freezing"), the
CLI's readers under attributes whose size or bytes differ from what ``git add`` stores
(round 80: "read a plan file as ``git add`` would store it"), ``convert -o plans`` into
attributed or symlinked folders, and ``reject``/``abort`` in attributed folders.

Lab (one, built once, ``limits.max_plan_bytes: 20000``). Folders (``<f>``):
- ``md``: a plain-YAML ``PLAN.md``; ``mdchk``: the same, ``freeze --check`` only;
- ``json``: a ``PLAN.json`` (the plan as JSON);
- ``u16md``: a ``PLAN.md`` under ``working-tree-encoding=UTF-16`` (nested attribute);
- ``crlfmd``: a ``PLAN.md`` under ``eol=crlf``; ``idmd``: a ``PLAN.md`` under ``ident``
  whose task holds ``$Id$``;
- ``side``: ``PLAN.md`` (tag ``side-md``) beside ``PLAN.yml`` (tag ``side``): the
  controller runs PLAN.yml; ``freeze plans/side/PLAN.md`` must leave both files as they
  are and never print the PLAN.md's hash as the plan's without a warning;
- ``twin``: ``PLAN.md`` beside ``plan.MD`` (held ``E_PLAN_AMBIGUOUS``); ``held``: a
  ``PLAN.md`` in ``plans/held`` beside a twin folder ``plans/Held`` holding a PLAN.yml;
- ``u32``: a PLAN.yml under ``working-tree-encoding=UTF-32`` whose working-tree file is
  over the limit (4 bytes a character) while what git stores is under it (an honest plan:
  the CLI must agree with the controller, which runs it);
- ``u16cjk``: a PLAN.yml under ``working-tree-encoding=UTF-16`` of CJK text: under the
  limit in the working tree (2 bytes a character), over it as git stores it (3 bytes): the
  controller never freezes it, so the CLI must not call it valid nor print a hash;
- ``cvt``: ``plangate convert src.md -o plans`` into ``plans/cvt`` whose committed
  ``.gitattributes`` says ``working-tree-encoding=UTF-16``: the file written must be what
  git would check out (``git status`` lists it as new only, and the blob ``git add``
  stores is the converted plan, which runs);
- ``lnk``: ``convert -o plans`` where ``plans/lnk`` is a symlink to a folder outside the
  repository: nothing written outside the repository (refused, or written nowhere else);
- ``rej``: a frozen PLAN.yml under ``working-tree-encoding=UTF-16``, Bob ``reject``s it;
  ``abt``: same, approved by Alice, then Bob ``abort``s before any pass: neither runs and
  ``git status`` stays clean.
Variants per folder: ``<f>:untouched`` (the source's bytes unchanged by ``freeze``),
``<f>:hash`` (``freeze`` printed the hash the controller froze, or refused with a code and
the controller never ran it), ``<f>:ran`` (ran once, or never where the plan is held,
rejected, aborted or too large), ``<f>:clean`` (``git status`` names no file of the folder);
plus ``side:check`` (``freeze --check`` of ``plans/side/PLAN.md``) and ``side:hashcli``
(``plangate hash`` of it): the hash printed is the controller's, or comes with the warning
that the controller runs PLAN.yml; ``held:unwritten`` (the pass commits no conversion into
the held folder ``plans/held``); ``audit``
(fresh clone).

Seen (round 81): 4 ids, 2 classes (strict xfails). **A source beside PLAN.yml gets a hash
the controller never freezes** (``side:hash``, ``side:check``, ``side:hashcli``): ``plangate
freeze plans/side/PLAN.md`` and ``freeze --check`` exit 0 printing "a plan source, not
written: the controller converts it to PLAN.yml and freezes that as sha256:0e6b..." and
``plangate hash`` prints that hash, with no warning, while the controller runs the
PLAN.yml beside it (frozen ``sha256:4f76...``, tag ``side``) and never converts the source
(``side-md`` never ran); ``validate`` of the same file does warn "PLAN.yml is beside it: the
controller runs that file and converts no source in its folder". Should (docs/formats.md,
"Checking a source before committing it": "Beside a PLAN.yml it warns that the controller
runs that file"; docs/plan-format.md "Freezing": "print the hash the controller will
freeze"): the same warning from ``freeze``/``--check``/``hash`` (or exit 1), never "the
controller ... freezes that as" a hash it will not freeze. **The pass converts a source in
a held twin folder and freezes both twins** (``held:unwritten``): the
agent commits ``plans/held/PLAN.md`` and ``plans/Held/PLAN.yml`` together; ``validate`` and
``freeze`` of the source answer ``E_PLAN_AMBIGUOUS`` (plans/Held is its twin), yet one pass
commits ``plangate: freeze plans/Held``, ``plangate: convert plans/held`` (PLAN.yml written
into the held folder) and ``plangate: freeze plans/held``; only then are both rows
``E_PLAN_AMBIGUOUS`` (nothing ran; the audit agreed). The freeze of the twins was seen in
every run of this lab but not in every run of the parallel module's ``hx``, so only the
conversion is asserted. Should (docs/formats.md, ``convert``:
"A source in a folder the controller holds (a twin or a claim beside it ...) is refused, as
the daemon never converts it"; docs/plan-format.md, twin folders: "both plans are
``E_PLAN_AMBIGUOUS`` (the history index: no freeze, no run ...)"; "nothing is written into
the folder"): no convert, no freeze of either twin. The promise's runs held.
Fixed (2026-12-01, lead): ``freeze`` and ``hash`` of a source beside a PLAN.yml print the
warning ``validate`` prints (the controller runs that file and converts no source there),
and ``freeze`` says "not written; the controller would not convert it" (exit 0, as
``validate``); the pass never converts a source in a folder that is one with another plan's
or source's folder on some checkout (``Freezing._twin_folders``, the history index's twin
rule): the source's row waits ``E_PLAN_AMBIGUOUS`` and ``plans/Held``, whose twin then
holds no plan file, is the plan, as ``validate`` already said (the expectation that
``held-b`` never runs changed to "at most once": a source beside a PLAN.yml on one checkout
is a note, docs/formats.md).
Held: ``freeze`` and ``--check`` never wrote into a ``PLAN.md``/``PLAN.json`` source (plain,
UTF-16, CR LF, ``ident``) and printed the hash the controller then froze, and each ran
once; a twin source pair and a twin folder were refused ``E_PLAN_AMBIGUOUS`` by
``freeze``/``validate``; a UTF-32 PLAN.yml over the limit in the working tree but not as
stored was valid and frozen by the CLI to the controller's hash (written back as UTF-32)
and ran; a UTF-16 CJK plan under the limit in the working tree but over it as stored was
``E_PLAN_TOO_LARGE`` for the CLI as for the controller; ``convert -o plans`` into a UTF-16
folder wrote what git checks out (the blob the converted plan, which ran), into a symlinked
folder ``E_USAGE`` "outside" (nothing written outside); ``reject`` and ``abort`` in UTF-16
folders committed, left ``git status`` clean, and neither plan ran; the audit agreed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared

BOB = ("Bob", "bob@ops.example.com")
SRC = {
    "md": "PLAN.md",
    "mdchk": "PLAN.md",
    "json": "PLAN.json",
    "u16md": "PLAN.md",
    "crlfmd": "PLAN.md",
    "idmd": "PLAN.md",
    "side": "PLAN.md",
    "twin": "PLAN.md",
    "held": "PLAN.md",
    "u32": "PLAN.yml",
    "u16cjk": "PLAN.yml",
}
ATTR = {
    "u16md": "PLAN.md working-tree-encoding=UTF-16",
    "crlfmd": "PLAN.md eol=crlf",
    "idmd": "PLAN.md ident",
    "u32": "PLAN.yml working-tree-encoding=UTF-32",
    "u16cjk": "PLAN.yml working-tree-encoding=UTF-16",
    "cvt": "PLAN.yml working-tree-encoding=UTF-16",
    "rej": "PLAN.yml working-tree-encoding=UTF-16",
    "abt": "PLAN.yml working-tree-encoding=UTF-16",
}
FOLDERS = [*SRC, "cvt", "lnk", "rej", "abt"]
HASH = re.compile(r"sha256:[0-9a-f]{64}")


def _text(slug: str) -> str:
    text = plan_text(slug)
    if slug == "idmd":
        text = text.replace(f"variant {slug}", f"variant {slug} $Id$")
    if slug == "u32":
        text += "# " + "a" * 8000 + "\n"  # 8 KB stored, 32 KB in UTF-32
    if slug == "u16cjk":
        text += "# " + "漢" * 8000 + "\n"  # 24 KB stored, 16 KB in UTF-16
    return text


def _decodes(path: Path, enc: str) -> bool:
    try:
        return "plan:" in path.read_bytes().decode(enc)
    except (OSError, UnicodeDecodeError):
        return False


def _out(done: subprocess.CompletedProcess[str]) -> str:
    return f"{done.returncode} {done.stdout}{done.stderr}"[-1500:]


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
        "limits: {max_plan_bytes: 20000}\n",
    )
    repo, cfg = lab.repo, str(lab.config)
    for slug, attr in ATTR.items():
        folder = repo / "plans" / slug
        folder.mkdir(parents=True)
        (folder / ".gitattributes").write_text(attr + "\n")
    (root / "outside").mkdir()
    os.symlink(root / "outside", repo / "plans" / "lnk")
    lab.commit("owner: attributes", ("Owner", "owner@example.com"))
    got: dict[str, Any] = {"freeze": {}, "check": {}, "untouched": {}, "validate": {}}
    for slug, name in SRC.items():
        text = _text(slug)
        if name == "PLAN.json":
            text = json.dumps(load_yaml(text), indent=2) + "\n"
        if name.endswith(".md"):  # a markdown file holds its plan in a fence (round 113)
            text = f"```yaml\n{text}```\n"
        path = repo / "plans" / slug / name
        path.parent.mkdir(parents=True, exist_ok=True)
        enc = {"u16md": "utf-16", "u32": "utf-32", "u16cjk": "utf-16"}.get(slug, "utf-8")
        data = text.encode(enc)
        if slug == "crlfmd":
            data = text.replace("\n", "\r\n").encode()
        path.write_bytes(data)
    lab.write("side", plan_text("side-md"), "PLAN.md")
    lab.write("side", plan_text("side"), "PLAN.yml")
    lab.write("twin", plan_text("twin-b"), "plan.MD")
    lab.write("Held", plan_text("held-b"), "PLAN.yml")
    (repo / "cvt.md").write_text(f"```yaml\n{plan_text('cvt')}```\n")
    (repo / "lnk.md").write_text(f"```yaml\n{plan_text('lnk')}```\n")
    for slug, name in SRC.items():
        path = repo / "plans" / slug / name
        before = path.read_bytes()
        if slug != "mdchk":
            got["freeze"][slug] = _out(lab.cli("freeze", "--config", cfg, str(path)))
        got["check"][slug] = _out(lab.cli("freeze", "--check", "--config", cfg, str(path)))
        got["validate"][slug] = _out(lab.cli("validate", "--config", cfg, str(path)))
        got["untouched"][slug] = path.read_bytes() == before
    got["side-yml"] = (repo / "plans" / "side" / "PLAN.yml").read_text()
    side = str(repo / "plans" / "side" / "PLAN.md")
    got["side-hash"] = _out(lab.cli("hash", "--config", cfg, side))
    got["u32-back"] = _decodes(repo / "plans" / "u32" / "PLAN.yml", "utf-32")
    got["convert"] = {
        "cvt": _out(lab.cli("convert", "--config", cfg, "-o", "plans", "cvt.md", cwd=repo)),
        "lnk": _out(lab.cli("convert", "--config", cfg, "-o", "plans", "lnk.md", cwd=repo)),
    }
    os.rename(repo / "cvt.md", root / "cvt.md")
    os.rename(repo / "lnk.md", root / "lnk.md")
    got["outside"] = sorted(str(p.relative_to(root)) for p in (root / "outside").rglob("*"))
    got["cvt-back"] = _decodes(repo / "plans" / "cvt" / "PLAN.yml", "utf-16")
    got["cvt-status"] = lab.git("status", "--porcelain", "--untracked-files=all").strip()
    for slug in ("rej", "abt"):
        lab.write(slug, plan_text(slug).encode("utf-16"))
    lab.commit("agent: plans", AGENT)
    got["stored-cvt"] = lab.git("show", "HEAD:plans/cvt/PLAN.yml", check=False)
    lab.run()
    got["frozen"] = {}
    for slug in [*FOLDERS, "Held"]:
        shown = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)
        data = load_yaml(shown) if shown else {}
        got["frozen"][slug] = str(((data or {}).get("frozen") or {}).get("hash"))
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    got["rows0"] = rows
    for slug in ("cvt", "lnk", "rej", "abt"):
        where = str(repo / "plans" / slug / "PLAN.yml")
        got["freeze"][slug] = _out(lab.cli("hash", "--config", cfg, where))
    got["reject"] = _out(
        subprocess.run(
            [*lab_cli(), "reject", "--config", cfg, "-m", "no", "plans/rej"],
            cwd=repo, env=lab.env(BOB), capture_output=True, text=True, check=False,
        )
    )  # fmt: skip
    got["dirty-rej"] = lab.git("status", "--porcelain").strip()
    approved = {}
    for plan, row in rows.items():
        if row.get("status") == "pending_approval" and plan != "plans/rej":
            approved[plan] = _out(
                subprocess.run(
                    [*lab_cli(), "approve", "--config", cfg, plan],
                    cwd=repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
                )
            )  # fmt: skip
    got["approved"] = approved
    got["abort"] = _out(
        subprocess.run(
            [*lab_cli(), "abort", "--config", cfg, "-m", "stop", "plans/abt"],
            cwd=repo, env=lab.env(BOB), capture_output=True, text=True, check=False,
        )
    )  # fmt: skip
    got["dirty-abt"] = lab.git("status", "--porcelain").strip()
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*FOLDERS, "side-md", "twin-b", "held-b"]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["dirty"] = lab.git("status", "--porcelain", "--untracked-files=all").strip()
    got["held-log"] = lab.git("log", "--format=%an: %s", "--", "plans/held").strip()
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def lab_cli() -> list[str]:
    from mcpkit import PLANGATE

    return [PLANGATE]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-surface-sources", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 81: {what}")


RUN = ("md", "mdchk", "json", "u16md", "crlfmd", "idmd", "side", "u32", "cvt")
SIDE_WHY = (
    "freeze, freeze --check and hash of plans/side/PLAN.md beside PLAN.yml exit 0 and print "
    "'the controller converts it to PLAN.yml and freezes that as <hash>' (or the hash) with no "
    "warning; the controller runs PLAN.yml (another hash) and never converts the source"
)
HELD_WHY = (
    "the pass converted plans/held/PLAN.md (its twin folder plans/Held holds a PLAN.yml; "
    "validate and freeze say E_PLAN_AMBIGUOUS, 'as the daemon never converts it') (both "
    "twins were frozen too in this lab's runs; the freeze depends on the order within the pass)"
)
IDS = [f"{f}:{w}" for f in FOLDERS for w in ("untouched", "hash", "ran", "clean")]
IDS += ["side:check", "side:hashcli", "held:unwritten"]
BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, lead): SIDE_WHY and HELD_WHY


def _said(text: str, frozen: str) -> bool:
    """Exit 0 naming the hash the controller froze; a hash printed beside a PLAN.yml only
    with the warning that the controller runs that file."""
    return text.startswith("0 ") and (frozen in text or "warning" in text)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_freeze_and_readers_on_sources_and_attributes(lab: Lab, vid: str) -> None:
    """A source is never written and its printed hash is the controller's; a held, too
    large or outside plan is refused with a code and never frozen or run; honest plans run
    once; rejects and aborts stop the run and leave ``git status`` clean."""
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    row = got["rows"].get(f"plans/{slug}") or {}
    frozen = got["frozen"].get(slug, "None")
    if what == "untouched":
        if slug in SRC and slug != "u32":
            assert got["untouched"][slug], slug
        elif slug == "u32":  # a PLAN.yml: frozen in place, written back as UTF-32
            assert got["u32-back"], slug
        elif slug == "cvt":
            assert got["cvt-back"] and got["stored-cvt"].startswith("# Converted"), got
        elif slug == "lnk":
            assert got["outside"] == [] and "E_" in got["convert"]["lnk"], got["convert"]
        else:
            assert got[f"dirty-{slug}"] == "", got[f"dirty-{slug}"]
    elif what == "hash":
        text = got["check"][slug] if slug == "mdchk" else got["freeze"][slug]
        if slug in RUN:
            assert frozen.startswith("sha256:") and _said(text, frozen), (frozen, text)
        elif slug in ("rej", "abt"):
            assert frozen in text, (frozen, text)
        else:
            assert not text.startswith("0 ") and "E_" in text, text
    elif what == "check":
        assert _said(got["check"]["side"], got["frozen"]["side"]), got["check"]["side"]
    elif what == "hashcli":
        assert _said(got["side-hash"], got["frozen"]["side"]), got["side-hash"]
    elif what == "unwritten":
        assert "convert" not in got["held-log"], got["held-log"]
    elif what == "ran":
        if slug in RUN:
            assert got["calls"][slug] == 1 and row.get("status") == "completed", (row, got)
            assert got["calls"]["side-md"] == 0, got["calls"]
        else:
            # held-b (plans/Held/PLAN.yml) is the plan: the source in its twin folder
            # plans/held is refused, never converted, so it runs as `validate` says (lead)
            others = got["calls"]["twin-b"]
            assert got["calls"][slug] == 0 == others, got["calls"]
            assert got["calls"]["held-b"] <= 1, got["calls"]
            assert row.get("status") != "completed", row
    else:
        mine = [ln for ln in got["dirty"].splitlines() if f"plans/{slug}/" in ln]
        assert not mine, got["dirty"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["valid"] == completed and got["audit"] == completed, (got["audit"], completed)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r81src-", dir="/tmp/atk81b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
