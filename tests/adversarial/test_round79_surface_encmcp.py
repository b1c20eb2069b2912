"""Round 79, agent-facing surfaces: the MCP server and the daemon's page on plans whose
folder has a ``working-tree-encoding`` attribute (round 78 tried the CLI and the pass
only). The agent submits through MCP ``submit`` into folders whose ``.gitattributes`` line
names an encoding, Alice approves by hand in her editor's encoding, and the agent reads the
outcome through MCP ``log``, ``wait`` and ``status``; the reviewer reads the page.

Lab (one, module scope): the owner commits ``.gitattributes``: ``plans/u16/**``
``UTF-16``, ``plans/le/**`` ``UTF-16LE-BOM eol=crlf``, ``plans/u7/**`` ``UTF-7``,
``plans/jp/**`` ``ISO-2022-JP`` (a task holding ``日本``), ``plans/sj/**`` ``SHIFT-JIS``,
``plans/u32/**`` ``UTF-32``, ``plans/rot/**`` ``rot13`` (an encoding iconv cannot open),
``plans/sjbs/**`` ``SHIFT-JIS`` (the agent's task holds ``\\`` and ``~``, which SHIFT-JIS
does not carry back: git reads the checked-out 0x5C/0x7E as ``¥``/``‾``), ``plans/resub/**``
``UTF-16``; ``plans/plain`` has none (control). One MCP session per ``submit`` (a call
each), ``git status`` after them, a pass (freeze), Alice's hand approval of every plan (the
file decoded and re-encoded in its encoding, ``git add``, ``git commit``), then the agent's
MCP ``submit`` of another text to ``resub`` (Alice approved the first), two passes, then
MCP ``log``/``wait``/``status`` of each, the page and ``/api/plan/<id>`` of each, the
fresh-clone audit.
Variants (per folder ``<f>``):
- ``<f>:submitted`` the submit answered ``ok`` with the committed blob the agent's text, or
  refused with a code and committed nothing; and ``git status`` is clean after it
  (docs/operations.md: "what they write into the working tree is what git would check out
  ... so ``git status`` stays clean"; adoption refuses "text that does not convert back");
- ``<f>:ran`` the approved plan ran once (``rot``: its file is the commit's bytes, "clean as
  it is"; ``sjbs``: the text Alice's working tree never showed never runs unless she approved
  exactly it) and the row says so;
- ``<f>:mcp`` MCP ``log`` says the row's status, ``wait`` from ``pending_approval`` returns
  changed to it, ``status`` agrees;
- ``<f>:page`` the page and ``/api/plan/`` say the row's status and show the plan's text as
  written (the task, ``日本`` for ``jp``), no NUL bytes or a byte order mark;
- ``resub:{v2-never,v1-once}``: the agent's second submit after Alice's approval is refused
  or never runs on her approval; at most her version runs, once;
- ``rot:approve``: Alice's ``plangate approve`` of the rot13 plan (``git add`` cannot store
  it: "failed to encode") commits and runs once, or refuses with a code and never runs;
- the fresh-clone audit agrees with the rows, and ``git status`` is clean at the end (1).

Seen (round 79):
- ``sjbs:submitted`` (1 id): the agent's MCP ``submit`` into a ``SHIFT-JIS`` folder of a
  plan whose task holds ``\\`` and ``~`` answers ``ok`` and commits it; ``git status`` says
  `` M plans/sjbs/PLAN.yml`` right after the submit (git reads the checked-out 0x5C/0x7E back
  as ``¥``/``‾``), so Alice's working tree never shows the blob the controller froze: her
  hand approval is refused ``E_PLAN_HASH_MISMATCH`` (held: it never ran), and round 78's open
  ``sjbs-cli`` shows ``plangate approve`` would run it. Should (docs/operations.md, "Line
  ends and attributes": "what they write into the working tree is what git would check out
  ... so ``git status`` stays clean"; where the controller commits text itself, "text that
  does not convert back to the same bytes" for the names ``core.checkRoundtripEncoding``
  lists "are not committed" with ``E_ATTRIBUTE_UNSUPPORTED``): ``submit`` refuses such text
  with that code and commits nothing, as local mode's adoption does. Fixed (2026-12-01,
  r79mcpenc): every text a person or an agent wrote that the controller turns into a blob
  must come back from its checkout as the same blob (``conversion.check_checkout`` through
  ``WorkTree.check_checkouts``: MCP ``submit``, the daemon's freeze and ``convert``,
  ``plangate approve``/``reject``/``abort``); the submit answers ``E_ATTRIBUTE_UNSUPPORTED``
  naming the file, ``SHIFT-JIS`` and ``'\\' '~'``, and commits nothing, so ``sjbs`` has no
  plan: no row, no run, MCP ``log``/``status`` say "no plan", ``wait`` no status, the page
  404 (the ``sjbs`` ids check that when the submit was refused).
Held: MCP ``submit`` into ``UTF-16``, ``UTF-16LE-BOM eol=crlf``, ``UTF-7``, ``ISO-2022-JP``
(``日本``), ``SHIFT-JIS``, ``UTF-32`` and ``rot13`` folders committed exactly the agent's text
with ``git status`` clean; each ran once on Alice's hand approval in her encoding; MCP
``log``, ``wait`` (from ``pending_approval``: changed) and ``status`` and the page and
``/api/plan/`` said completed and showed the text (``日本``) without NULs or a mark; the
rot13 plan (which ``git add`` refuses) waited for an approval; the agent's second
``submit`` to the approved ``resub`` was ``E_ILLEGAL_TRANSITION`` and never ran; the audit
agreed. Noted, not a break: the controller's ``EXECUTION_LOG.md`` in a ``SHIFT-JIS`` or
``ISO-2022-JP`` folder holds ``✅``, which git cannot encode there ("failed to encode" on
checkout and on every ``git status`` once the file is touched; nothing listed modified). Decided
(r79mcpenc): the controller's own records are committed as they are (git stores them; its
checkout keeps the UTF-8 bytes iconv cannot write, which ``git status`` calls clean).
"""

from __future__ import annotations

import codecs
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import PLANGATE, session
from oraclekit import mcp_payload, page_texts
from test_round2_execution_kit import shared

ENC = {
    "u16": "UTF-16",
    "le": "UTF-16LE-BOM",
    "u7": "UTF-7",
    "jp": "ISO-2022-JP",
    "sj": "SHIFT-JIS",
    "u32": "UTF-32",
    "rot": "rot13",
    "sjbs": "SHIFT-JIS",
    "resub": "UTF-16",
}
PY = {"UTF-16LE-BOM": "utf-16", "UTF-7": "utf-7", "rot13": "utf-8"}
TASKS = {"jp": "日本 jp", "sjbs": "a \\\\ b ~ c"}
FOLDERS = [*ENC, "plain"]


def _text(slug: str) -> str:
    text = plan_text(slug)
    if slug in TASKS:
        text = text.replace(f'task: "attack variant {slug}"', f'task: "{TASKS[slug]}"')
    return text


def _approve(lab: Lab, slug: str) -> None:
    """Alice's editor: the file read and saved in its folder's encoding, one line changed."""
    path = lab.repo / "plans" / slug / "PLAN.yml"
    codec = PY.get(ENC.get(slug, ""), ENC.get(slug, "utf-8")).lower()
    raw = path.read_bytes()
    text = raw.decode(codec)
    text = text.replace("status: pending_approval", "status: approved", 1)
    out = text.encode(codec)
    if codec == "utf-16" and raw[:2] == b"\xff\xfe" and out[:2] != b"\xff\xfe":
        out = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    path.write_bytes(out)


def _submit(lab: Lab, slug: str, text: str) -> tuple[bool, Any, str]:
    tip = lab.head()
    reply = session(lab, [("submit", {"plan": text, "slug": slug})])[0][0]
    bad, body = mcp_payload(reply)
    made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
    return bad, body, made


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    lines = [f"plans/{s}/** working-tree-encoding={e}" for s, e in ENC.items()]
    lines[1] += " eol=crlf"
    (lab.repo / ".gitattributes").write_text("\n".join(lines) + "\n")
    lab.commit("owner: attributes", ("Owner", "owner@example.com"))
    lab.run()
    got: dict[str, Any] = {"submit": {}, "blob": {}, "dirty": {}}
    for slug in FOLDERS:
        bad, body, made = _submit(lab, slug, _text(slug))
        got["submit"][slug] = {"error": bad, "body": json.dumps(body, ensure_ascii=False)[:1500]}
        got["submit"][slug]["made"] = made
        shown = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml", check=False)
        got["blob"][slug] = shown == _text(slug)
    for slug in FOLDERS:
        got["dirty"][slug] = lab.git("status", "--porcelain", "--", f"plans/{slug}").strip()
    lab.run()
    for slug in FOLDERS:
        if slug != "rot" and (lab.repo / "plans" / slug / "PLAN.yml").exists():
            _approve(lab, slug)
            lab.git("add", f"plans/{slug}/PLAN.yml")
    lab.git("commit", "-q", "-m", "alice: approve", who=ALICE)
    # git add cannot store a rot13 file ("failed to encode"): Alice uses plangate approve
    done = subprocess.run(
        [PLANGATE, "approve", "--config", str(lab.config), "plans/rot"], cwd=lab.repo,
        env=lab.env(ALICE), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    got["rot-approve"] = f"{done.returncode} {done.stdout}{done.stderr}"[-1500:]
    v2 = (
        _text("resub")
        .replace("attack variant resub", "second text")
        .replace('tag: "resub"', 'tag: "resub-v2"')
    )
    got["resub"] = _submit(lab, "resub", v2)
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in [*FOLDERS, "resub-v2"]}
    got["dirty-end"] = lab.git("status", "--porcelain").strip()
    calls = []
    for slug in FOLDERS:
        calls.append(("log", {"path": f"plans/{slug}"}))
        calls.append(
            ("wait", {"path": f"plans/{slug}", "status": "pending_approval", "timeout": 2})
        )
        calls.append(("status", {"path": f"plans/{slug}"}))
    replies = session(lab, calls)[0]
    got["mcp"] = {}
    for i, slug in enumerate(FOLDERS):
        got["mcp"][slug] = [
            json.dumps(mcp_payload(r), ensure_ascii=False) for r in replies[3 * i : 3 * i + 3]
        ]
    pages = page_texts(lab, [f"plans/{s}" for s in FOLDERS], "plans/plain")
    got["page"] = {s: pages[f"plans/{s}"] for s in FOLDERS}
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-surface-encmcp", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 79: {what}")


def _row(got: dict[str, Any], slug: str) -> dict[str, Any]:
    return got["rows"].get(f"plans/{slug}") or {}


SIDS = [f"{f}:{w}" for f in FOLDERS for w in ("submitted", "ran", "mcp", "page")]
SJBS_WHY = (
    "MCP submit commits into a SHIFT-JIS folder a text (\\\\, ~) git reads back as other "
    "text: git status calls the file modified right after the submit"
)
SBROKEN: dict[str, Any] = {}
HELD = {"sjbs": "pending_approval"}  # Alice's hand approval of what she saw: hash mismatch


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, SBROKEN))
def test_mcp_and_the_page_on_an_encoded_folder(lab: Lab, vid: str) -> None:
    """Every folder: the submit committed exactly the agent's text with ``git status`` clean
    after it, or refused with a code committing nothing; the approved plan ran once (or,
    ``sjbs``, never: Alice approved text her working tree showed, not the blob); MCP
    ``log``/``wait``/``status`` and the page say the row's status; the page shows the text."""
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    row = _row(got, slug)
    want = HELD.get(slug, "completed")
    if what != "submitted" and got["submit"][slug]["error"]:
        _refused_folder_has_no_plan(got, slug, what)
        return
    if what == "submitted":
        sub = got["submit"][slug]
        if sub["error"]:
            assert "E_" in sub["body"] and not sub["made"], sub
            return
        assert got["blob"][slug], (slug, sub)
        assert got["dirty"][slug] == "", (slug, got["dirty"][slug])
        return
    if what == "ran":
        assert row.get("status") == want, row
        assert got["calls"][slug] == (1 if want == "completed" else 0), got["calls"]
        return
    if what == "mcp":
        log, wait, status = (json.loads(x) for x in got["mcp"][slug])
        assert not log[0] and log[1]["status"] == want, log
        assert not wait[0] and wait[1]["status"] == want, wait
        assert wait[1]["changed"] == (want != "pending_approval"), wait
        assert not status[0] and want in json.dumps(status[1]), status
        return
    page, api = got["page"][slug]
    assert want in page and want in api, (page[:600], api[:600])
    assert "\x00" not in page and "\\u0000" not in api and "\ufeff" not in page, slug
    task = TASKS.get(slug, f"attack variant {slug}").replace("\\\\", "\\")
    assert task in page or task.replace("\\", "&#92;") in page or slug == "sjbs", page[:1500]


def _refused_folder_has_no_plan(got: dict[str, Any], slug: str, what: str) -> None:
    """A refused submit committed nothing: no row, no run, MCP and the page name no plan."""
    if what == "ran":
        assert _row(got, slug) == {} and got["calls"][slug] == 0, (_row(got, slug), got["calls"])
    elif what == "mcp":
        log, wait, status = (json.loads(x) for x in got["mcp"][slug])
        for reply in (log, status):
            assert reply[0] and "no plan" in reply[1] and "completed" not in reply[1], reply
        assert not wait[0] and wait[1]["status"] is None, wait  # no committed status
    else:
        page, api = got["page"][slug]
        assert "HTTP 404" in page and "E_NOT_FOUND" in api, (page[:600], api[:600])


RIDS = ["resub:v2-never", "resub:v1-once", "rot:approve"]


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, {}))
def test_a_second_submit_after_approval_never_runs(lab: Lab, vid: str) -> None:
    """The agent's MCP ``submit`` of another text to ``resub`` (UTF-16) after Alice approved
    the first is refused (``E_ILLEGAL_TRANSITION``) and commits nothing; the second text never
    runs, the first once. ``rot`` (rot13, which ``git add`` cannot store): Alice's
    ``plangate approve`` of the file whose bytes are the commit's either commits her approval
    (then it ran once) or refuses with a code (then it never ran)."""
    got = lab.got  # type: ignore[attr-defined]
    if vid == "resub:v2-never":
        bad, body, made = got["resub"]
        assert bad and "E_ILLEGAL_TRANSITION" in body and not made, got["resub"]
        assert got["calls"]["resub-v2"] == 0, got["calls"]
    elif vid == "resub:v1-once":
        assert got["calls"]["resub"] == 1, got["calls"]
    else:
        text, row = got["rot-approve"], _row(got, "rot")
        if text.startswith("0 "):
            assert row.get("status") == "completed" and got["calls"]["rot"] == 1, (text, row)
        else:
            assert "E_" in text and got["calls"]["rot"] == 0, (text, row)


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]
    assert got["dirty-end"] == "", got["dirty-end"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r79enc-", dir="/tmp/atk79b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
