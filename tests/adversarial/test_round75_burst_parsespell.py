"""Round 75, bursts: round 74's first-start rule (a first start decides by what the head's
plan files PARSE to; ``git grep`` only narrows the files read to those holding the key's
letters or a backslash; a controller-named commit with a parent vouches only for the runs of
plans whose folder it changed) against squashes whose records parse but whose BYTES a text
search may miss, and against vouching commits that touch a folder trivially.

Lab (one, local mode, fake commit dates; round 74's ``test_round74_burst_squashspell.build``):
the agent adds ``f-01``..``f-08`` and the gated ``fg-1``; Alice's review merge approves
``f-01``..``f-04`` and ``fg-1``; four complete, ``fg-1`` pauses at its gate. Cloned once per
``<shape>-<state>`` (``key``: a new state directory holding only the old ``commit.key``;
``new``: an empty one). In every shape the agent replaces main by ONE parentless commit of its
own whose tree is main's with every plan file rewritten (same parse, same hashes) as:

- ``esc``: the owned keys and the plan's ``status`` spelled with YAML escapes in double
  quotes (``"\\x65xecution":``, ``"\\x66rozen":``, ``"\\x73tatus":``);
- ``uesc``: the same with ``\\u`` escapes (``"\\u0065xecution":``);
- ``qkey``: every owned key an explicit key (``? execution`` / ``:``);
- ``oflow``: every owned block a flow mapping on its key's line (``execution: {...}``);
- ``bom``: a UTF-8 byte order mark before every file;
- ``u16``: every file UTF-16 (LE, with its BOM): no byte of it matches ``execution``;
- ``bin``: the files as they are, a ``.gitattributes`` marking ``PLAN.yml`` ``binary``;
- ``eol``: the files as they are, a ``.gitattributes`` giving ``PLAN.yml`` ``eol=crlf`` (LF
  blobs, a CRLF work tree);
- ``cr``: every file in CR-only line ends (one "line" for ``grep``);
- ``flow``: every file one JSON document (a flow mapping at the top level: unreadable by the
  docs, so nothing may run of it);
- ``bottouch`` (``new``): the ``plain`` squash, then ONE commit under the controller's name
  (unsealed, with a parent) adding ``plans/<f>/.keep`` to every plan folder: the folders
  "changed" by a controller-named commit, no record made by it;
- ``botmerge`` (``new``): the same ``.keep`` commit made on a side branch off the squash,
  merged into main by the agent (``--no-ff``): the vouching commit behind a second parent.

A refusal (``E_HISTORY_REWRITTEN`` / ``E_STORAGE``) is answered with ``--take-over``. Then
Alice approves ``fg-1``'s gate, re-approves ``f-01`` (completed) and approves ``f-06`` in the
file's own spelling; two passes. Asserted per clone (``<shape>-<state>-<v>``):

- ``start``: refused with its code (``key``: ``E_HISTORY_REWRITTEN``, ``new``:
  ``E_STORAGE``), the take-over starts; a shape whose files read ``unreadable`` (``cr``, and
  ``u16`` if the loader refuses UTF-16) starts with every row ``unreadable``; ``flow``'s
  records are read (refused, taken over) and its rows read ``unreadable`` too (r75eol);
- ``done``: ``f-01``..``f-04`` ran once in all (nothing reran);
- ``gate``: ``fg-1``'s action 1 once, action 2 at most once;
- ``ctl``: ``f-06`` once (never where its file is unreadable), ``f-05``/``f-07``/``f-08`` never;
- ``audit``: a fresh clone's ``plangate audit --json``: no valid run of the unapproved, ``f-06``
  as the tool ran it, no valid start of ``f-01``/``fg-1`` on the squashed line;
- ``flow-new-row``: every row of the flow-root squash reads ``unreadable``.

Seen (round 75): BROKEN (5 ids, 3 classes; nothing ran twice anywhere). **Alice's status change
in place on an escaped status key is her content** (``esc-key-ctl``, ``esc-new-ctl``,
``uesc-new-ctl``): after the take-over, her one-line edit ``"\\x73tatus": pending_approval`` to
``"\\x73tatus": approved`` of ``f-06`` is refused ``E_SELF_APPROVAL`` ("wrote or changed this
plan's content"); ``f-06`` never runs (the sibling ``test_round75_burst_checkededit.py`` shows
``plangate approve``'s own edit refused the same way). Should (docs/approvals.md: a plain status
change is "the status value alone changed in place ... exactly what ``plangate approve``
writes"): her approval runs it once.
Fixed 2026-11-30 (r75status): the plain status
change is decided on the parse (``yamlio.scalar_alone_changed``: only the ``plan.status``
value's span differs, the new value one word, the documents alike but for it), whatever the
key's spelling; ``f-06`` runs once in the three clones (markers off).
**A ``.gitattributes`` ``eol=crlf`` stalls every write**
(``eol-new-ctl``): LF blobs, a CRLF work tree, ``git status`` clean: every plan the controller
must write waits "has uncommitted edits; plangate will not overwrite them" (``plan_waiting``
each pass); ``f-06`` never runs. Should: git's own view (no edits) is the work tree's state, or
the wait names the attribute. Fixed (2026-11-30, r75eol): git's built-in line-end conversion
alone (never a filter driver) is applied in-process (``controller/git/eol.py``): a file git
calls clean is clean to the controller, and its working-tree writes are what git would check
out; ``f-06`` runs once. **A flow-mapping root is no ``unreadable`` row** (``flow-new-row``):
the plan files as one JSON document: the first start reads their records (refused ``E_STORAGE``,
good) and the controller cannot write them ("the top level of the file must be a block mapping
to be edited", ``E_PLAN_NOT_FROZEN``), but ``status --json`` says
``approved``/``pending_approval``/``null``. Should (docs/operations.md, "Plans that cannot carry
a status": "a list or a JSON/flow mapping at the top level ... ``unreadable`` in ``plangate
status``"). Fixed (2026-11-30, r75eol): the history index notes a version whose top level parses
but is no block mapping (``PlanState.unwritable``, index version 71) and every reader's row
check (``Controller._blocker``) judges it: ``unreadable`` with its code; ``flow-new-start`` now
asserts the refusal and the take-over with those rows. HELD: every respelled squash is refused
as round 74's are (``key`` ``E_HISTORY_REWRITTEN``, ``new`` ``E_STORAGE``) and the take-over
reruns nothing: ``\\x``/``\\u`` escaped keys, ``? execution`` explicit keys, owned blocks as
flow mappings, a UTF-8 BOM, the files marked ``binary`` / ``-text -diff`` in ``.gitattributes``
(``git grep`` still read them), ``eol=crlf``, the flow root; UTF-16 (``not UTF-8 text``) and
CR-only files (the CR rule) are unreadable: nothing starts, nothing reruns; ``bottouch`` (a
controller-named ``.keep`` commit in every folder) and ``botmerge`` (the same behind a merge's
second parent) still refuse ``E_STORAGE``: the trivial touch vouches for no run.
``f-05``/``f-07``/``f-08`` never ran, no audit called a run of ``f-01``/``fg-1`` on the squashed
line valid.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import AGENT, BOT, Lab, cases, load_yaml, plan_text
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone
from test_round74_burst_squashspell import F, _plan_files, build

CLONES = ["esc-key", "esc-new", "uesc-new", "qkey-new", "oflow-new", "bom-new", "u16-key",
          "u16-new", "bin-new", "cr-new", "flow-new", "bottouch-new", "botmerge-new",
          "eol-new"]  # fmt: skip


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 75: {what}")


BROKEN: dict[str, object] = {}
OWNED = ("frozen", "execution", "approval", "validation")


def _esc(word: str, u: bool) -> str:
    return '"' + (f"\\u{ord(word[0]):04x}" if u else f"\\x{ord(word[0]):02x}") + word[1:] + '"'


def respell(text: str, shape: str) -> str | bytes:
    """``text`` (a plan file) respelled as ``shape``: the same YAML, other bytes."""
    if shape == "flow":
        return json.dumps(load_yaml(text)) + "\n"
    if shape == "bom":
        return "\ufeff" + text
    if shape == "u16":
        return "\ufeff".encode("utf-16-le") + text.encode("utf-16-le")
    if shape == "cr":
        return text.replace("\n", "\r")
    if shape == "oflow":
        doc = load_yaml(text)
        out, skip = [], False
        for line in text.split("\n"):
            top = re.match(r"^([a-z_]+):", line)
            if top:
                skip = top.group(1) in OWNED
                if skip:
                    out.append(f"{top.group(1)}: {json.dumps(doc[top.group(1)])}")
                    continue
            if not (skip and line.startswith(" ")):
                out.append(line)
        return "\n".join(out)
    out = []
    in_plan = False
    for line in text.split("\n"):
        top = re.match(r"^([a-z_]+):(.*)$", line)
        if top:
            in_plan = top.group(1) == "plan"
        st = re.match(r"^  status:(.*)$", line) if in_plan else None
        if top and top.group(1) in OWNED:
            key, rest = top.groups()
            line = (f"? {key}\n:{rest}" if shape == "qkey" else
                    _esc(key, shape == "uesc") + ":" + rest)  # fmt: skip
        elif st and shape in ("esc", "uesc"):
            line = "  " + _esc("status", shape == "uesc") + ":" + st.group(1)
        out.append(line)
    return "\n".join(out)


def _approve_any(clone: Clone, slugs: list[str]) -> None:
    """Alice's approval in the file's own spelling and encoding (patched into the build)."""
    from advkit import ALICE

    for slug in slugs:
        path = next((clone.repo / "plans" / slug).glob("PLAN.y*ml"))
        raw = path.read_bytes()
        enc = "utf-16" if raw[:2] == b"\xff\xfe" else "utf-8"
        text = raw.decode(enc)
        pat = r"""((?:^|[\n\r{,])\s*['"]?(?:\\x73|\\u0073|s)tatus['"]? ?:\s*['"]?)([a-z_]+)"""
        text, n = re.subn(pat, r"\1approved", text, count=1)
        assert n == 1, text[:300]
        path.write_bytes(text.encode("utf-16-le") if enc == "utf-16" else text.encode())
        if enc == "utf-16":
            path.write_bytes(b"\xff\xfe" + text.lstrip("\ufeff").encode("utf-16-le"))
    clone.git("add", "-A")
    clone.git("commit", "-q", "-m", "approve " + " ".join(slugs), who=ALICE)


def _keep(clone: Clone) -> None:
    for path in _plan_files(clone.repo):
        (path.parent / ".keep").write_text("")
    clone.git("add", "-A")
    clone.git("commit", "-q", "-m", "plangate: record policy", who=BOT)


def shape_squash(clone: Clone, shape: str, p0_tree: str) -> None:
    g = clone.git
    for path in _plan_files(clone.repo):
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        if shape in ("bin", "bottouch", "botmerge", "eol"):
            continue
        new = respell(text, shape)
        path.write_bytes(new if isinstance(new, bytes) else new.encode())
    if shape == "bin":
        (clone.repo / ".gitattributes").write_text("PLAN.yml binary\n*.yml -text -diff\n")
    elif shape == "eol":  # LF blobs, CRLF in the work tree
        (clone.repo / ".gitattributes").write_text("PLAN.yml text eol=crlf\n")
    g("add", "-A")
    tree = g("write-tree").strip()
    g("reset", "-q", "--hard", g("commit-tree", tree, "-m", "import", who=AGENT).strip())
    if shape in ("eol",):  # the work tree checked out again under the attributes
        for path in _plan_files(clone.repo):
            path.unlink()
        g("checkout", "-q", "--", ".")
    if shape == "bottouch":
        _keep(clone)
    elif shape == "botmerge":
        g("checkout", "-q", "-b", "side")
        _keep(clone)
        g("checkout", "-q", "main")
        g("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
        g("branch", "-q", "-D", "side")


def _build(root: Path) -> Lab:
    import test_round74_burst_squashspell as ss

    # the build's approval, in every spelling of this module; put back after it (a worker
    # that builds round 74's lab after this one used it there: 61 errors, `!!str` missed)
    kept, ss._approve = ss._approve, _approve_any
    try:
        return build(root, CLONES, shape_squash, 1793000000)
    finally:
        ss._approve = kept


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-parsespell", _build)


def test_the_spellings_keep_the_yaml() -> None:
    text = plan_text("x") + "frozen:\n  hash: h\nexecution:\n  status: completed\n"
    for shape in ("esc", "uesc", "qkey", "oflow", "bom", "cr", "flow"):
        new = respell(text, shape)
        assert isinstance(new, str)
        assert load_yaml(new.lstrip("\ufeff")) == load_yaml(text), shape
    u16 = respell(text, "u16")
    assert isinstance(u16, bytes) and b"execution" not in u16
    assert load_yaml(u16.decode("utf-16")) == load_yaml(text)


VS = ["start", "done", "gate", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS] + ["flow-new-row"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_squash_spelled_past_grep_reruns_nothing(lab: Lab, vid: str) -> None:
    shape, state, v = vid.split("-", 2)
    out = lab.out[f"{shape}-{state}"]  # type: ignore[attr-defined]
    ran, rows, runs = out["ran"], out["rows"], out["runs"]
    said = (ran, rows, out["first"]["err"][-700:], out.get("take"), out["after"]["err"][-900:])
    unreadable = rows.get("f-01", {}).get("status") == "unreadable"
    if v == "start":
        assert out["final_rc"] == 0 and out["after"]["rc"] == [0, 0], said
        if unreadable:
            assert shape in ("cr", "u16", "flow"), said
            assert all(r.get("status") == "unreadable" for r in rows.values()), said
        if not unreadable or shape == "flow":  # a flow root's records are read: refused
            code = "E_HISTORY_REWRITTEN" if state == "key" else "E_STORAGE"
            assert out["first"]["rc"] != 0 and code in out["first"]["err"], said
            assert out["take"]["rc"] == 0, said
    elif v == "done":
        assert {s: ran[s] for s in F[:4]} == {s: 1 for s in F[:4]}, said
    elif v == "gate":
        assert ran["fg-1-1"] == 1 and ran["fg-1-2"] <= 1, said
    elif v == "ctl":
        # a flow root cannot be frozen; nor, since round 113, a plan whose committed
        # attributes mark it ``binary`` (no diff shows its lines: E_ATTRIBUTE_UNSUPPORTED)
        six = 0 if unreadable or shape in ("flow", "bin") else 1
        want = {"f-05": 0, "f-06": six, "f-07": 0, "f-08": 0}
        assert {s: ran[s] for s in want} == want, said
    elif v == "row":  # docs/operations.md: a flow mapping at the top level reads unreadable
        assert all(r.get("status") == "unreadable" for r in rows.values()), said
    elif v == "audit":
        assert runs["f-05"] == runs["f-07"] == runs["f-08"] == 0, (runs, said)
        assert runs["f-06"] == ran["f-06"], (runs, said)
        assert runs["f-01"] == 0 and runs["fg-1"] == 0, (runs, said)
