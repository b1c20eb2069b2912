"""Round 77, bursts: round 76's ``ident`` and ``working-tree-encoding`` applied in-process
(docs/operations.md, "Line ends and attributes": "An encoding Python does not know (or one git
itself cannot store a file in ...) is never guessed at: a plan whose file differs from the
commit under it is held with its code (... ``E_ATTRIBUTE_UNSUPPORTED`` ...), and ``plangate
approve`` refuses with that code; a file whose bytes are the commit's is clean as it is"), at
its edges: iconv-only names and aliases, names the two converters read differently, text an
encoding cannot hold, a forged ``$Id: ... $`` in the blob, overrides, and the attribute added
with the approval.

Lab (one, local mode, fake commit dates). The agent commits, per variant ``<v>``, three
folders ``<v>-h`` (approved by Alice's edit of the status value in the working tree's own
encoding), ``<v>-c`` (``plangate approve`` as Alice) and ``<v>-n`` (never approved),
one-action UTF-8 plans calling ``rec`` with the folder's name, WITHOUT attributes; a second
agent commit adds the attributes (root ``.gitattributes``, nested ones, ``.git/info/
attributes``) and every file is checked out again by git (so the working tree is what git
writes). One pass freezes them; Alice commits her hand approvals; ``plangate approve`` on each
``-c``; two passes; a fresh-clone ``plangate audit --json``. Variants:

- ``u16`` (``UTF-16``), ``alias16`` (``UTF16``), ``u16le`` (``UTF-16LE``), ``u16lebom``
  (``UTF-16LE-BOM``, which the doc names as handled), ``latin87`` (``ISO_8859-1:1987``, an
  iconv spelling of Latin-1) with an ``é`` in the task;
- ``sjis``: ``SHIFT-JIS`` with ``¥`` and ``‾`` in the task (git's iconv writes them as bytes
  0x5C and 0x7E and reads them back: ``git status`` clean; Python's ``shift_jis`` reads those
  bytes as ``\\`` and ``~``); ``sjisq``: the ``¥`` right before the closing quote of the task
  (Python's reading becomes ``"...\\"``: a quote escaped, the string runs on);
- ``eucjp`` (``EUC-JP`` with ``～`` U+FF5E: iconv writes 0x8FA2B7, Python reads ``~``),
  ``big5`` (``BIG5`` with ``¯``: Python reads ``‾``), ``gbk`` (``GBK`` with ``€``: iconv writes
  0x80, which Python's ``gbk`` cannot decode): the same question in other tables;
- ``big5sl``: ``BIG5`` with ``／`` (U+FF0F): iconv writes 0xA1FE and Python reads that back
  as ``／`` (clean to both), but Python WRITES ``／`` as 0xA241, which iconv reads as ``∕``
  (U+2215): whatever plangate writes into the working tree must still be what git reads;
- ``nestoff``: root ``ident``, a nested ``PLAN.yml -ident`` in each folder, ``# $Id$`` in the
  plan (git does not expand it); ``infooff``: root ``working-tree-encoding=UTF-16``,
  ``.git/info/attributes`` ``-working-tree-encoding`` (the working tree stays UTF-8);
- ``encappr``: no attribute until Alice's approval commit adds
  ``working-tree-encoding=UTF-16`` for the three folders (her ``-h`` file saved in UTF-16 by
  her editor; the three checked out again before ``plangate approve``);
- ``beappr``: ``UTF-16``; Alice's editor saves her approval big-endian with its own mark
  (git stores the same blob apart from the status: a plain status change, must run);
  ``u8bom``: ``working-tree-encoding=UTF-8``; Alice's editor adds a UTF-8 byte order mark
  with her approval (the blob now starts with it: her writing, docs/approvals.md "a BOM";
  ``-h`` must never run and its row carries a code);
- ``ucs2`` (``UCS-2``: iconv converts it, Python does not know it): HELD
  (``E_ATTRIBUTE_UNSUPPORTED``, ``-h`` and ``-c`` never ran) until r77iconv; handled since
  (see below);
- LOOSE (git itself cannot convert: it writes the blob's bytes and cannot ``git add`` an
  edit; Python knows the name): ``rot13`` (a text transform), ``uesc`` (``unicode_escape``,
  with a ``\\x41`` and an ``é`` in the task), ``latinx`` (``ISO-8859-1`` with ``日本`` in the
  task: git cannot write it), ``idforge`` (``ident`` added after the agent committed
  ``# $Id: forged $``): nothing unapproved runs, at most once, the CLI refuses with a code if
  it refuses, and whatever ran is what the agent committed.

Per ``<v>``: ``hand`` (``-h`` ran once; HELD: never, and the row names the code), ``cli``
(``-c`` ran once and ``plangate approve`` exited 0; HELD: never, the CLI refused with the
code), ``never`` (``-n`` never ran), ``clean`` (no row waits "uncommitted edits" while ``git
status`` calls the variant's files clean, and for a handled variant none is dirty),
``audit`` (the fresh clone's valid runs equal what ran), ``task`` (HEAD's task of each folder
is the agent's, read as git reads the blob: nothing rewritten by a conversion; not
``latinx-h``, which Alice's own ``git add`` mangled, see below).

Seen (round 77): BROKEN (15 ids, 1 class; honest work refused forever, nothing ran that should
not, the fresh-clone audit agrees; FIXED 2026-12-01, r77iconv: ``working-tree-encoding`` is
converted with git's own converter, glibc's iconv through ``ctypes``
(``controller/git/iconv.py``, called by ``controller/git/conversion.py`` with git's
``reencode_string_len`` rules), both ways, so the bytes git writes read back as git reads
them; an encoding iconv cannot open, or no glibc iconv, is ``E_ATTRIBUTE_UNSUPPORTED``).
**A SHIFT-JIS (EUC-JP, BIG5, GBK) plan that ``git status`` calls clean waits "has uncommitted
edits" forever** (``{sjis,sjisq,eucjp,big5,gbk}-{hand,cli,clean}``): the agent's task
holds ``¥`` and ``‾``; git (iconv's ``SHIFT-JIS``) writes them as bytes 0x5C and
0x7E and reads those back as ``¥`` and ``‾`` (``git status`` clean, Alice's hand approval
commits only the status), but plangate reads the working tree with Python's ``shift_jis``,
which maps 0x5C/0x7E to ``\\``/``~``: the ``-h`` row says "waiting: plans/sjis-h/PLAN.yml has
uncommitted edits; plangate will not overwrite them (commit or discard them)" on every pass
(approved, never run), ``-c``/``-n`` stay "waiting to be frozen", and ``plangate approve``
refuses ``E_USAGE`` "has uncommitted edits". The remedy cannot be followed (git has nothing to
commit; a discard checks out the same bytes). ``eucjp`` (``～``), ``big5`` (``¯``) and
``gbk`` (``€``, bytes Python's ``gbk`` cannot even decode: still "uncommitted edits", not
``E_ATTRIBUTE_UNSUPPORTED``) wait the same way. Round 76's class again, through names both
converters know but read differently. Should (docs/operations.md, "Line ends and
attributes": "A plan file ``git status`` calls clean is clean to the controller", and "An
encoding Python does not know ... is never guessed at"): decode as git does, or treat a
name whose Python codec is not git's (``SHIFT-JIS``/``SJIS``/``CP932``-like tables) as
unsupported: ``E_ATTRIBUTE_UNSUPPORTED`` with its remedy, not a wait nobody can end.
BROKEN (3 ids, 1 class; honest work refused, a conversion's text committed as the approver's,
nothing ran that should not, the fresh-clone audit agrees; FIXED 2026-12-01, r77iconv: the
freeze writes what git's iconv writes, 0xA1FE, the same fix). **plangate writes a working tree
git reads as other text** (``big5sl-{hand,clean,task}``): the agent's task ``a ／ b`` under
``working-tree-encoding=BIG5``; git checks out 0xA1FE, which Python reads back as ``／`` (clean
to both, so it is frozen), but plangate's freeze writes the file with Python's ``big5``
(0xA241), which git reads as ``∕`` (U+2215): ``git status`` then calls the file modified;
Alice's honest hand approval (edit the value, ``git add``, commit) commits the task
``a ∕ b``, bytes she never wrote, so her approval is not a plain status change and the row
waits "has uncommitted edits" (approved, never run); ``-c`` ran once (``plangate approve``
commits in-process) but leaves ``git status`` dirty after it. Should (docs/operations.md:
"what they write into the working tree is what git would check out (... the named encoding),
so ``git status`` stays clean"): write what git would check out (or hold the name
``E_ATTRIBUTE_UNSUPPORTED``), never bytes git reads as another text.
HELD: ``u16``, ``alias16`` (``UTF16``), ``u16le``, ``u16lebom`` (``UTF-16LE-BOM``),
``latin87`` (``ISO_8859-1:1987``), ``nestoff`` (a nested ``-ident``), ``infooff``
(``.git/info/attributes`` ``-working-tree-encoding``), ``encappr`` (the attribute added in the
approval commit, her file saved UTF-16), ``beappr`` (her editor's big-endian UTF-16): frozen,
``-h`` and ``-c`` ran once, ``-n`` never, ``git status`` clean, no wait, the fresh clone agrees;
``u8bom`` (a UTF-8 BOM slipped into the blob with the approval) refused ``E_SELF_APPROVAL``;
``ucs2`` was held ``E_ATTRIBUTE_UNSUPPORTED`` on the row and by the CLI with its remedy
(Python knows no ``UCS-2``); since r77iconv it is HANDLED: git converts it (glibc's ``UCS-2``,
host byte order without a mark), so its plans are clean to ``git status``, must run as the
others and no longer are held (the expectation changed with the converter); ``rot13``
and ``uesc`` (git cannot convert: it writes the blob's bytes and its own ``git add`` of a hand
edit dies "failed to encode") were frozen as clean and ``-c`` ran once as committed;
``latinx`` (``日本`` under ``ISO-8859-1``: git cannot write it and calls the file modified):
``-c`` ran once the agent's task; ``-h`` (Alice's ``git add`` read the raw UTF-8 as Latin-1,
a C1 control in the blob) ``unreadable`` ``E_YAML_PARSE``, never ran; ``idforge`` (``ident``
added over a blob holding ``$Id: forged $``: git itself calls the files modified) ``-c``
refused ``E_USAGE`` "has uncommitted edits" as git sees them, ``-h`` (her ``git add`` cleaned
the ``$Id`` with her approval) refused ``E_PLAN_NOT_FROZEN``, nothing ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, load_yaml, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

ENC = {"u16": "UTF-16", "alias16": "UTF16", "u16le": "UTF-16LE", "u16lebom": "UTF-16LE-BOM",
       "latin87": "ISO_8859-1:1987", "sjis": "SHIFT-JIS", "sjisq": "SHIFT-JIS",
       "ucs2": "UCS-2", "rot13": "rot13", "uesc": "unicode_escape",
       "latinx": "ISO-8859-1", "beappr": "UTF-16", "u8bom": "UTF-8",
       "eucjp": "EUC-JP", "big5": "BIG5", "gbk": "GBK", "big5sl": "BIG5"}  # fmt: skip
VARIANTS = [*ENC, "nestoff", "infooff", "encappr", "idforge"]
HANDLED = ["u16", "alias16", "u16le", "u16lebom", "latin87", "sjis", "sjisq", "nestoff",
           "infooff", "encappr", "beappr", "u8bom", "eucjp", "big5", "gbk", "big5sl",
           "ucs2"]  # fmt: skip
#: handled, but Alice's hand approval slips a byte order mark into the blob: her writing
BOMMED = ["u8bom"]
#: held E_ATTRIBUTE_UNSUPPORTED: none since r77iconv (``ucs2`` was: Python knows no UCS-2,
#: git's iconv converts it, so it is handled as git handles it)
HELD: list[str] = []
LOOSE = ["rot13", "uesc", "latinx", "idforge"]
WHO = ["h", "c", "n"]


#: the round's breaks (18 ids, 2 classes) are fixed (r77iconv): no id expected to fail
BROKEN: dict[str, object] = {}


TASK = {"latin87": "café", "sjis": "yen ¥ over ‾ end", "sjisq": "yen ¥", "uesc": "a \\\\x41 é",
        "latinx": "日本", "eucjp": "wave ～ end", "big5": "macron ¯ end",
        "gbk": "euro € end", "big5sl": "a ／ b"}  # fmt: skip


def text_of(v: str, slug: str) -> str:
    base = plan_text(slug)
    if v in TASK:
        base = base.replace(f'task: "attack variant {slug}"', f'task: "{TASK[v]}"')
    if v == "nestoff":
        base = "# $Id$\n" + base
    if v == "idforge":
        base = "# $Id: forged $\n" + base
    return base


def attributes() -> str:
    rows = [f"plans/{v}-*/PLAN.yml working-tree-encoding={e}\n" for v, e in ENC.items()]
    rows.append("plans/nestoff-*/PLAN.yml ident\n")
    rows.append("plans/idforge-*/PLAN.yml ident\n")
    rows.append("plans/infooff-*/PLAN.yml working-tree-encoding=UTF-16\n")
    return "".join(rows)


def _approve_bytes(raw: bytes) -> bytes | None:
    for enc in ("ascii", "utf-16-le", "utf-16-be"):
        old, new = "pending_approval".encode(enc), "approved".encode(enc)
        if raw.count(old) == 1:
            return raw.replace(old, new)
    return None


def _recheckout(lab: Lab, vs: list[str]) -> None:
    for v in vs:
        for w in WHO:
            (lab.repo / "plans" / f"{v}-{w}" / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".", check=False)


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799500000)
    date()
    for v in VARIANTS:
        for w in WHO:
            lab.write(f"{v}-{w}", text_of(v, f"{v}-{w}").encode())
    lab.commit("agent plans", AGENT)
    date()
    for w in WHO:
        (lab.repo / "plans" / f"nestoff-{w}" / ".gitattributes").write_text("PLAN.yml -ident\n")
    (lab.repo / ".gitattributes").write_text(attributes())
    (lab.repo / ".git" / "info" / "attributes").write_text(
        "plans/infooff-*/PLAN.yml -working-tree-encoding\n"
    )
    nested = [f"plans/nestoff-{w}/.gitattributes" for w in WHO]
    lab.commit("agent attributes", AGENT, ".gitattributes", *nested)
    _recheckout(lab, [v for v in VARIANTS if v != "encappr"])
    out: dict = {"status0": lab.git("status", "--porcelain")}
    out["wt0"] = {v: (lab.repo / "plans" / f"{v}-n" / "PLAN.yml").read_bytes()[:80].hex()
                  for v in VARIANTS}  # fmt: skip
    date()
    out["first"] = lab.run().stderr[-3000:]
    date()
    out["hand"] = {}
    for v in VARIANTS:
        path = lab.repo / "plans" / f"{v}-h" / "PLAN.yml"
        new = _approve_bytes(path.read_bytes())
        out["hand"][v] = new is not None
        if new is not None and v not in LOOSE:
            # encappr: her editor saves the file as UTF-16 as the attribute she adds says
            if v == "encappr":
                new = new.decode().encode("utf-16")
            elif v == "beappr":  # her editor saves UTF-16 big-endian, with its mark
                new = b"\xfe\xff" + new.decode("utf-16").encode("utf-16-be")
            elif v == "u8bom":  # her editor adds a UTF-8 byte order mark
                new = b"\xef\xbb\xbf" + new
            path.write_bytes(new)
    with open(lab.repo / ".gitattributes", "a") as f:
        f.write("plans/encappr-*/PLAN.yml working-tree-encoding=UTF-16\n")
    hands = [f"plans/{v}-h" for v in VARIANTS if v not in LOOSE]
    lab.commit("approve by hand", ALICE, ".gitattributes", *hands)
    _recheckout(lab, ["encappr"])
    for v in LOOSE:
        path = lab.repo / "plans" / f"{v}-h" / "PLAN.yml"
        new = _approve_bytes(path.read_bytes())
        if new is None:
            continue
        date()
        path.write_bytes(new)
        add = lab.git("add", "-A", f"plans/{v}-h", check=False)
        try:
            lab.commit(f"approve {v} by hand", ALICE, f"plans/{v}-h")
            out["hand"][v] = "committed"
        except Exception as e:
            out["hand"][v] = f"refused: {add}{e}"[-300:]
            lab.git("checkout", "-q", "--", f"plans/{v}-h", check=False)
    cli: dict = {}
    for v in VARIANTS:
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/{v}-c", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[v] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-600:]}
    out["cli"] = cli
    date()
    a = lab.run()
    date()
    b = lab.run()
    out["after"] = (a.stderr + b.stderr)[-6000:]
    out["porcelain"] = lab.git("status", "--porcelain")
    out["ran"] = {f"{v}-{w}": len(lab.calls(f"{v}-{w}")) for v in VARIANTS for w in WHO}
    out["rows"] = {k.removeprefix("plans/"): v for k, v in lab.status().items()}
    out["tasks"] = {}
    for v in VARIANTS:
        for w in WHO:
            raw = lab.git("show", f"HEAD:plans/{v}-{w}/PLAN.yml", check=False)
            try:
                out["tasks"][f"{v}-{w}"] = load_yaml(raw)["plan"]["task"]
            except Exception as e:
                out["tasks"][f"{v}-{w}"] = f"unparsed: {e}"[:200]
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        f"{v}-{w}": len([e for e in report.get("executions", [])
                         if e.get("plan") == f"plans/{v}-{w}" and e.get("approval_valid")])
        for v in VARIANTS for w in WHO
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-encodings", _build)


VS = ["hand", "cli", "never", "clean", "audit", "task"]
IDS = [f"{v}-{c}" for v in VARIANTS for c in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_an_encoding_at_the_edges(lab: Lab, vid: str) -> None:
    v, c = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    mine = {w: rows.get(f"{v}-{w}") for w in WHO}
    said = (v, json.dumps(mine)[:1500], {w: ran[f"{v}-{w}"] for w in WHO}, out["cli"][v],
            out["hand"].get(v))  # fmt: skip
    if c == "hand":
        if v in BOMMED:
            assert ran[f"{v}-h"] == 0, said
            assert "E_" in json.dumps(mine["h"]), said
        elif v in HANDLED:
            assert ran[f"{v}-h"] == 1, said
        elif v in HELD:
            assert ran[f"{v}-h"] == 0, said
            assert "E_ATTRIBUTE_UNSUPPORTED" in json.dumps(mine["h"]), said
        else:
            assert ran[f"{v}-h"] <= 1, said
    elif c == "cli":
        if v in HANDLED:
            assert ran[f"{v}-c"] == 1 and out["cli"][v]["rc"] == 0, said
        elif v in HELD:
            assert ran[f"{v}-c"] == 0, said
            assert "E_ATTRIBUTE_UNSUPPORTED" in out["cli"][v]["out"], said
        else:
            assert ran[f"{v}-c"] <= 1, said
            assert out["cli"][v]["rc"] == 0 or "E_" in out["cli"][v]["out"], said
    elif c == "never":
        assert ran[f"{v}-n"] == 0, said
    elif c == "clean":
        dirty = [x for x in out["porcelain"].splitlines() if f"plans/{v}-" in x]
        waits = [w for w, r in mine.items() if "uncommitted" in json.dumps(r)]
        assert dirty or not waits, (dirty, waits, said)
        if v in HANDLED:
            assert not dirty and not waits, (dirty, waits, said)
    elif c == "audit":
        for w in WHO:
            assert runs[f"{v}-{w}"] == ran[f"{v}-{w}"], (w, runs, said)
    elif c == "task":
        # latinx-h: Alice's own ``git add`` read the UTF-8 bytes git could not convert as
        # Latin-1 (git's conversion, not plangate's): that version is unreadable, never runs
        for w in [w for w in WHO if (v, w) != ("latinx", "h")]:
            want = load_yaml(text_of(v, f"{v}-{w}"))["plan"]["task"]
            assert out["tasks"][f"{v}-{w}"] == want, (w, out["tasks"][f"{v}-{w}"], said)
