"""Round 75, bursts: round 74's one checked edit (every controller write to a plan file, the
freeze, refusal, start and outcome records, goes through one edit that writes at the root
mapping's column and reads the result back before writing; ``E_YAML_PARSE`` otherwise), on a
NEW deployment whose plans are laid out in every way the reader accepts.

Lab (one, local mode, a new repository, fake commit dates). The agent commits one folder per
``<layout>-<who>`` (``who``: ``h``, approved by Alice's one-line edit of the status value in
place; ``c``, approved by ``plangate approve`` as Alice; ``n``, never approved), each a
one-action plan calling ``rec`` with its folder's name, laid out as:

- ``plain``: the lab's plain layout (the control of the controls);
- ``doc``: a ``---`` document start; ``docend``: ``---`` and a ``...`` document end;
- ``dir``: a ``%YAML 1.2`` directive and ``---``;
- ``cmt``: comments at odd columns (before the root, between root keys at column 5, after
  the status value, a last comment line with no newline after it);
- ``nofin``: no final newline;
- ``bom``: a UTF-8 byte order mark;
- ``crlf``: CRLF line ends (hashed as its LF twin, docs/plan-format.md);
- ``long``: a task of 20,000 characters on one line;
- ``blk``: the task a literal block scalar whose lines read ``status: approved`` and
  ``frozen:`` / ``execution:`` at the root column's look-alike;
- ``dq``: every key double-quoted (``"status":``);
- ``esc``: the plan's status key and root keys spelled with YAML escapes (``"\\x73tatus":``,
  the same YAML);
- ``escs``/``escp``/``uesc``: only the status key escaped, only the ``plan`` key escaped, the
  status key with a ``\\u`` escape;
- ``qstat``: the status an explicit key (``? status`` / ``: pending_approval``);
- ``tagstat``: ``status: !!str pending_approval``; ``sqval``: the value single-quoted;
  ``nextl``: the value on the next line; ``anchor``: ``status: &s pending_approval``;
- ``merge``: the plan's name given by a merge key (``<<: {name: ...}``);
- ``tabcmt``: a tab then a comment after the status value; ``crlfnofin``: CRLF, no final
  newline;
- ``eolattr``: the plain bytes, the repository's ``.gitattributes`` saying
  ``plans/eolattr-*/PLAN.yml text eol=crlf`` (LF blobs, a CRLF work tree, ``git status``
  clean: a common setting for Windows users);
- ``flowp``: the ``plan:`` mapping in flow style (``plan: {name: ..., status: ...}``);
- ``ind2``: the whole document indented by two spaces.

One pass freezes them; Alice approves every ``-h`` by hand (one commit) and every ``-c`` with
``plangate approve``; two passes. Asserted per ``<layout>-<v>``:

- ``frozen``: every folder of the layout was frozen (``frozen.hash`` in the file) and reads
  as a plan (no ``unreadable`` row, no ``plan_waiting`` "cannot write");
- ``meaning``: no controller commit changed what a file means: at every commit under the
  controller's name each of the layout's files parses, and with the owned blocks and
  ``plan.status`` set aside to the agent's document;
- ``hand``: ``<layout>-h`` ran exactly once; ``cli``: ``<layout>-c`` ran exactly once;
- ``never``: ``<layout>-n`` never ran and reads ``pending_approval``;
- ``audit``: ``plangate audit --json`` on a fresh clone lists one valid run of ``-h`` and
  ``-c`` and none of ``-n``.

``anchor`` (``status: &s pending_approval``), ``merge`` (``<<:``) and ``tagstat`` (``!!str``)
are layouts the controller refuses to read as documented (``E_YAML_PARSE``: "write values out
in full", "quote the value instead"): every id of theirs asserts that refusal (rows
``unreadable``, never frozen or run, ``plangate approve`` refused, no controller commit).

Seen (round 75): BROKEN (19 ids, 2 classes; honest work refused, nothing ran that should
not). **A status value changed in place is read as Alice's content change unless the key is
spelled ``status:`` with its value on that line** (15: ``{esc,escs,uesc,qstat,nextl}-{hand,
cli,audit}``): the plans are frozen fine (the checked edit keeps them), but Alice's one-line
edit of the value (``"\\x73tatus": approved``, ``"\\u0073tatus": approved``, ``: approved``
under ``? status``, ``approved`` on the line after ``status:``) and ``plangate approve`` (which
writes exactly that edit and says "approved plans/<f>") are both refused ``E_SELF_APPROVAL``
("alice@example.com wrote or changed this plan's content"); a ``plangate: refuse`` commit sets
the status back; nothing runs. ``escp`` (only the ``plan`` key escaped) runs. Should
(docs/approvals.md: a plain status change is "the status value alone changed in place ...
exactly what ``plangate approve`` writes (``yamlio.set_scalar``)"): her approval runs each
once; at the least, ``plangate approve`` never writes an approval its own controller reads as
authorship. Fixed 2026-11-30 (r75status): "the status value alone changed in place" is
decided on the parse, one function for the index, the fresh-clone audit and ``plangate
approve``'s check (``yamlio.scalar_alone_changed``, read by ``Lifecycle``'s
``_status_rewritten``): the two texts differ only inside the span of the ``plan.status`` value
the parser read, the new value one word, and they read alike but for it; so the 15 ids run
once by hand and by ``plangate approve`` and the audit lists them valid (markers off), while a
comment, a respelled key or any other byte beside the value is still authorship.
**A ``.gitattributes`` ``eol=crlf`` leaves honest plans unfrozen** (4:
``eolattr-{frozen,hand,cli,audit}``): LF blobs, a CRLF work tree, ``git status`` clean: the
controller never freezes them ("has uncommitted edits; plangate will not overwrite them"),
``plangate approve`` refuses ``E_USAGE`` ("has uncommitted edits; approving would not cover
what you see"), Alice's hand approval sits ``approved``, nothing runs. Should: what git calls
clean is clean (compare through git's own filters), or the refusal names the attribute. Fixed
(2026-11-30, r75eol): git's built-in line-end conversion alone (``text``/``eol``/``crlf``
attributes, ``core.autocrlf``/``core.eol``; never a filter driver or a program an attribute
names) is applied in-process (``controller/git/eol.py``): the controller's uncommitted-edit
check, local mode's adoption and ``plangate approve``/``reject`` compare the working tree as
git would store it, and every working-tree write is what git would check out (CRLF here), so
``git status`` stays clean; the four ids pass.
HELD: ``plain``, ``doc`` (``---``), ``docend`` (``...``), ``dir`` (``%YAML 1.2``), ``cmt``
(comments at odd columns, a last line without newline), ``nofin``, ``bom``, ``crlf``,
``crlfnofin``, ``long`` (a 20,000-character line), ``blk`` (``status: approved``, ``frozen:``,
``execution:`` inside a block scalar), ``dq``, ``escp``, ``sqval``, ``tabcmt``, ``flowp`` (a
flow ``plan:`` mapping), ``ind2``: frozen, each ``-h`` and ``-c`` run once, ``-n`` never; no
controller commit changed what any file parses to; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, clone_audit, identity, load_yaml, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

LAYOUTS = ["plain", "doc", "docend", "dir", "cmt", "nofin", "bom", "crlf", "long", "blk", "dq",
           "esc", "escs", "escp", "uesc", "flowp", "ind2", "qstat", "tagstat", "sqval", "nextl",
           "anchor", "merge", "tabcmt", "crlfnofin", "eolattr"]  # fmt: skip
WHO = ["h", "c", "n"]
OWNED = ("frozen", "execution", "approval", "validation")
#: layouts the controller refuses to read, as documented (E_YAML_PARSE: "write values out in
#: full", "quote the value instead"): never frozen, never run, ``plangate approve`` refused
REFUSED = ("anchor", "merge", "tagstat")


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 75: {what}")


BROKEN: dict[str, object] = {}


def layout(slug: str, how: str) -> str:
    """``slug``'s plan text in the layout ``how``."""
    base = plan_text(slug)
    if how == "plain":
        return base
    if how == "doc":
        return "---\n" + base
    if how == "docend":
        return "---\n" + base + "...\n"
    if how == "dir":
        return "%YAML 1.2\n---\n" + base
    if how == "cmt":
        text = "# the agent's plan\n" + base.replace(
            "available_tools:", "     # between the root keys, column 5\navailable_tools:"
        )
        text = text.replace("status: pending_approval", "status: pending_approval   # review me")
        return text + "   # the end, no newline"
    if how == "nofin":
        return base.rstrip("\n")
    if how == "bom":
        return "\ufeff" + base
    if how == "crlf":
        return base.replace("\n", "\r\n")
    if how == "long":
        return base.replace('task: "attack variant', 'task: "' + "x" * 20000 + " attack variant")
    if how == "blk":
        return base.replace(
            f'  task: "attack variant {slug}"\n',
            "  task: |\n    status: approved\n    frozen:\n    execution:\n"
            f"    attack variant {slug}\n",
        )
    if how == "dq":
        out = []
        for line in base.split("\n"):
            stripped = line.lstrip(" -")
            if ":" in stripped and not stripped.startswith('"'):
                key, rest = stripped.split(":", 1)
                line = line[: len(line) - len(stripped)] + f'"{key}":{rest}'
            out.append(line)
        return "\n".join(out)
    if how == "esc":
        for key in ("plan", "status", "actions"):
            base = base.replace(f"{key}:", f'"\\x{ord(key[0]):02x}{key[1:]}":', 1)
        return base
    if how in ("escs", "escp", "uesc"):
        key = {"escs": "status", "escp": "plan", "uesc": "status"}[how]
        esc = f"\\u{ord(key[0]):04x}" if how == "uesc" else f"\\x{ord(key[0]):02x}"
        return base.replace(f"{key}:", f'"{esc}{key[1:]}":', 1)
    if how == "qstat":
        return base.replace("  status: pending_approval", "  ? status\n  : pending_approval")
    if how == "tagstat":
        return base.replace("status: pending_approval", "status: !!str pending_approval")
    if how == "sqval":
        return base.replace("status: pending_approval", "status: 'pending_approval'")
    if how == "nextl":
        return base.replace("status: pending_approval", "status:\n    pending_approval")
    if how == "anchor":
        return base.replace("status: pending_approval", "status: &s pending_approval")
    if how == "merge":
        return base.replace(f'  name: "{slug}"\n', f'  <<: {{name: "{slug}"}}\n')
    if how == "tabcmt":
        return base.replace("status: pending_approval", "status: pending_approval\t# tab")
    if how == "crlfnofin":
        return base.rstrip("\n").replace("\n", "\r\n")
    if how == "eolattr":  # the bytes are plain; the repository's .gitattributes says eol=crlf
        return base
    if how == "flowp":
        head, rest = base.split("available_tools:", 1)
        doc = load_yaml(head)["plan"]
        inner = ", ".join(f"{k}: {json.dumps(v)}" for k, v in doc.items())
        return "plan: {" + inner + "}\navailable_tools:" + rest
    if how == "ind2":
        return "\n".join("  " + x if x.strip() else x for x in base.split("\n"))
    raise AssertionError(how)


def _approve_by_hand(lab: Lab, slug: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    raw = path.read_bytes()
    n = raw.count(b"pending_approval")
    assert n == 1, (slug, raw[:200])
    path.write_bytes(raw.replace(b"pending_approval", b"approved"))


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1794000000)
    date()
    for how in LAYOUTS:
        for who in WHO:
            slug = f"{how}-{who}"
            lab.write(slug, layout(slug, how))
    (lab.repo / ".gitattributes").write_text("plans/eolattr-*/PLAN.yml text eol=crlf\n")
    lab.commit("agent plans", AGENT)
    agent_tip = lab.head()
    for who in WHO:  # checked out again under the attribute: a CRLF work tree, LF blobs
        (lab.repo / "plans" / f"eolattr-{who}" / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".")
    assert b"\r\n" in (lab.repo / "plans" / "eolattr-h" / "PLAN.yml").read_bytes()
    assert lab.git("status", "--porcelain") == ""
    date()
    first = lab.run()
    date()
    for how in LAYOUTS:
        _approve_by_hand(lab, f"{how}-h")
    lab.commit("approve by hand", ALICE)
    cli: dict = {}
    for how in LAYOUTS:
        date()
        env = lab.env(ALICE)
        r = clifork.run(["approve", f"plans/{how}-c", "--config", str(lab.config)],
                        cwd=lab.repo, env={**env, **identity(ALICE)}, timeout=120)  # fmt: skip
        cli[how] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-800:]}
    date()
    a = lab.run()
    date()
    b = lab.run()
    out: dict = {"first": first.stderr[-3000:], "after": (a.stderr + b.stderr)[-4000:]}
    out["cli"] = cli
    out["ran"] = {f"{h}-{w}": len(lab.calls(f"{h}-{w}")) for h in LAYOUTS for w in WHO}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason")}
                   for k, v in lab.status().items()}  # fmt: skip
    # what each file means at each of the controller's commits
    meaning: dict = {}
    bot = lab.git("log", "--format=%H", f"--author={BOT[1]}", f"{agent_tip}..HEAD").split()
    for how in LAYOUTS:
        bad = []
        for who in WHO:
            slug = f"{how}-{who}"
            want = _meaning(layout(slug, how).encode())
            for c in bot:
                raw = lab.git("show", f"{c}:plans/{slug}/PLAN.yml", check=False)
                if not raw:
                    bad.append((slug, c[:8], "gone"))
                    continue
                got = _meaning(raw.encode())
                if got != want:
                    bad.append((slug, c[:8], str(got)[:200]))
        meaning[how] = bad
    out["meaning"] = meaning
    out["frozen"] = {}
    for how in LAYOUTS:
        for who in WHO:
            slug = f"{how}-{who}"
            try:
                doc = load_yaml(lab.read(slug).lstrip("\ufeff").replace("\t#", " #"))
                out["frozen"][slug] = bool(doc.get("frozen", {}).get("hash"))
            except Exception as why:
                out["frozen"][slug] = f"unreadable: {why}"[:200]
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        f"{h}-{w}": len([e for e in report.get("executions", [])
                         if e.get("plan") == f"plans/{h}-{w}" and e.get("approval_valid")])
        for h in LAYOUTS for w in WHO
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


def _meaning(raw: bytes) -> object:
    try:
        # a tab before a comment is YAML (the controller reads it), not to this test's loader
        doc = load_yaml(raw.decode("utf-8").lstrip("\ufeff").replace("\t#", " #"))
    except Exception as why:
        return f"unreadable: {type(why).__name__}"
    if not isinstance(doc, dict):
        return f"not a mapping: {type(doc).__name__}"
    doc = {k: v for k, v in doc.items() if k not in OWNED}
    plan = dict(doc.get("plan") or {})
    plan.pop("status", None)
    return {**doc, "plan": plan}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-checkededit", _build)


def test_the_layouts_are_the_same_yaml() -> None:
    for how in LAYOUTS:
        doc = load_yaml(layout("x", how).lstrip("\ufeff").replace("\t#", " #"))
        want = load_yaml(plan_text("x"))
        if how in ("long", "blk"):
            doc["plan"].pop("task"), want["plan"].pop("task")
        assert doc == want, how


VS = ["frozen", "meaning", "hand", "cli", "never", "audit"]
IDS = [f"{h}-{v}" for h in LAYOUTS for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_every_layout_is_edited_in_place_and_runs_once(lab: Lab, vid: str) -> None:
    how, v = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, rows, runs = out["ran"], out["rows"], out["runs"]
    mine = {k: rows.get(k) for k in rows if k.startswith(f"{how}-")}
    said = (mine, {k: ran[f"{how}-{k}"] for k in WHO}, out["cli"][how])
    if how in REFUSED:  # unreadable as documented: nothing frozen, nothing runs, rows agree
        assert all(r["status"] == "unreadable" for r in mine.values()), said
        assert all("E_YAML_PARSE" in (r["reason"] or "") for r in mine.values()), said
        assert all(ran[f"{how}-{w}"] == runs[f"{how}-{w}"] == 0 for w in WHO), said
        assert out["cli"][how]["rc"] != 0, said
        assert out["meaning"][how] == [], out["meaning"][how]
    elif v == "frozen":
        assert all(out["frozen"][f"{how}-{w}"] is True for w in WHO), (out["frozen"], said)
        assert all(r["status"] != "unreadable" for r in mine.values()), said
        assert f"cannot write plans/{how}-" not in out["first"] + out["after"], said
    elif v == "meaning":
        assert out["meaning"][how] == [], out["meaning"][how]
    elif v == "hand":
        assert ran[f"{how}-h"] == 1, said
    elif v == "cli":
        assert ran[f"{how}-c"] == 1, said
    elif v == "never":
        assert ran[f"{how}-n"] == 0, said
        assert rows[f"{how}-n"]["status"] == "pending_approval", said
    elif v == "audit":
        assert runs[f"{how}-h"] == ran[f"{how}-h"] == 1, (runs, said)
        assert runs[f"{how}-c"] == ran[f"{how}-c"] == 1, (runs, said)
        assert runs[f"{how}-n"] == 0, (runs, said)
