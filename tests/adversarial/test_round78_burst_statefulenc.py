"""Round 78, bursts: round 77's ``working-tree-encoding`` through git's own converter (glibc's
iconv, docs/operations.md "Line ends and attributes": "the blob is UTF-8, the working tree in
``<enc>`` converted by git's own converter ... A plan file ``git status`` calls clean is clean
to the controller ... what they write into the working tree is what git would check out"),
tried with STATEFUL encodings, encodings that spell one text in several byte strings, lossy
tables, UTF-32 marks and the attribute changed between the freeze and the approval.

Lab (one, local mode, fake commit dates). The agent commits, per variant ``<v>``, three
folders ``<v>-h`` (Alice's hand approval: the status value edited in the working tree in the
file's own encoding, ``git add``, commit), ``<v>-c`` (``plangate approve`` as Alice) and
``<v>-n`` (never approved): one-action UTF-8 plans calling ``rec`` with the folder's name,
WITHOUT attributes; a second agent commit adds a root ``.gitattributes`` and every file is
checked out again by git. One pass freezes them; the agent then commits a changed attribute
for ``swap``/``swapraw``; Alice commits her hand approvals; ``plangate approve`` on each
``-c``; two passes; a fresh-clone ``plangate audit --json``. Variants:

- CONTROLS (git converts both ways; must run as any plan): ``jp`` (``ISO-2022-JP``, a task
  ``日本 ok``: escape sequences switch the state), ``kr`` (``ISO-2022-KR``: a designator
  header at the start of the file, SO/SI shifts, task ``한국 ok``), ``u7`` (``UTF-7``, task
  ``a+b ~ café``: ``+`` and ``~`` spelled in base64), ``hk`` (``BIG5-HKSCS`` with ``Ê̄``,
  U+00CA U+0304, which iconv writes as ONE character 0x8862 and reads back as the pair),
  ``u32`` (``UTF-32``: a mark needed), ``u32le`` (``UTF-32LE``: no mark), ``ebc``
  (``IBM037``, EBCDIC: every byte differs from ASCII, the line end is 0x25), ``cnext``
  (``ISO-2022-CN-EXT``, task ``中文 ok``: SO/SI with designations per line);
- ONE TEXT, OTHER BYTES (Alice's editor saves the same text in another spelling; the blob git
  stores differs from the agent's by the status value only: a plain status change, must run):
  ``u7alt`` (``UTF-7``: her value ``approved`` written in base64, ``+AGEAcABw...-``),
  ``jpesc`` (``ISO-2022-JP``: her editor adds a redundant ``ESC ( B`` before the status key),
  ``u32be`` (``UTF-32``: her editor saves big-endian with its own mark ``00 00 FE FF``);
- ATTRIBUTE CHANGED AFTER THE FREEZE: ``swap`` (``UTF-16`` at the freeze; the agent then
  commits ``UTF-32`` for the folders and they are checked out again: the blob is the same,
  must run), ``swapraw`` (the same commit, the files NOT checked out again: the working tree
  holds UTF-16 bytes git reads as UTF-32 (and refuses), an edit to git: nothing unapproved
  runs, at most once, a refusal carries a code);
- LOSSY (``SHIFT-JIS``, which git's ``core.checkRoundtripEncoding`` lists by default: iconv
  writes the blob's ``\\`` as 0x5C and reads 0x5C back as ``¥``, ``~`` as 0x7E read back
  ``‾``): ``sjisbs`` (the agent's line ``task: "a \\\\x41 b"``, an escaped backslash: git
  checks out bytes that read as ``task: "a ¥¥x41 b"``) and ``sjistl`` (``tilde ~ end``).
  Alice's ``git add`` of her status edit stores git's reading (``¥``/``‾``): her commit
  rewrites the task, so it is her writing (``-h`` must never run). ``git status`` calls these
  files modified as soon as git has checked them out (its own reading of its own bytes is not
  the blob), so ``plangate approve`` on ``-c`` must refuse with a code (docs/operations.md:
  "An edit git sees stays an edit"; the CLI's "approving would not cover what you see"), and
  ``-c`` never runs. ``imap`` (``UTF-7-IMAP``, task ``a&b ~ café``: every line end is written
  in base64, ``&AAo-``, and glibc reads the file back without its final newline) is lossy the
  same way (``git diff``: "No newline at end of file" right after git's checkout): the same
  ids.

Per ``<v>``: ``hand`` (``-h`` ran once; LOSSY/``swapraw``: never, ``sjis*``' row carries a
code), ``cli`` (``-c`` ran once and ``plangate approve`` exited 0; LOSSY: refused with a
code, never ran; ``swapraw``: at most once, or a refusal with a code),
``never`` (``-n`` never ran), ``clean`` (no row waits "uncommitted
edits" while ``git status`` calls the variant's files clean; a control leaves none dirty),
``audit`` (the fresh clone's valid runs equal what ran), ``task`` (HEAD's task of ``-c`` and
``-n``, read as git reads the blob, is the agent's: nothing rewritten by a conversion).
LOSSY ``cli``: refused with a code, ``-c`` never ran (git calls its file modified).

Seen (round 78): BROKEN, FIXED (2026-12-01, r78stat; 2 ids, 1 class; the approver's CLI check
skipped, nothing outside the committed blob ran, the fresh-clone audit agrees). Fixed: bytes
equal to the commit are clean only as git calls them clean (``WorkTree.as_git_compares``, asked
by ``plangate approve``, the controller's uncommitted-edits check and the agent API): when
git's conversion reads them as the blob, or when the index's stat data vouches for the file as
git 2.39 trusts it (seconds of mtime/ctime, inode, owner, size, the executable bit, not racily
clean; ``git ls-files --debug``, no filter run); else they are compared as git would store
them. ``sjis*-c`` now: ``plangate approve`` ``E_USAGE`` "has uncommitted edits", never ran.
(The lead's first try, every file read through its conversion, made round 8's untouched UTF-8
files under a later ``working-tree-encoding`` wait where git calls them clean by their stat
data; that module now asserts each plan as git saw it.) Was: **``plangate approve`` approves,
and the pass runs, a SHIFT-JIS plan ``git status`` calls modified** (``sjisbs-cli``,
``sjistl-cli``): the agent's blob holds ``task: "a \\\\x41 b"`` (or ``tilde ~ end``); git
checks out 0x5C (0x7E), which git's own iconv reads back as ``¥`` (``‾``): ``git status
--porcelain`` says `` M plans/sjisbs-c/PLAN.yml`` right after git's own checkout, and ``git
diff`` shows the line as ``task: "a ¥¥x41 b"``. Alice's ``plangate approve plans/sjisbs-c``
exits 0 ("approved plans/sjisbs-c in ...") and the next pass runs it once (the blob's task ``a
\\x41 b``, text her working tree never showed); the row of ``-n`` never says "uncommitted
edits". Her hand approval of ``-h`` (``git add`` stores git's reading ``¥``) is refused
``E_PLAN_HASH_MISMATCH`` (held).
Should (docs/operations.md, "Line ends and attributes": a plan file is compared "as git would
store it" by a run and by ``plangate approve``; "An edit git sees stays an edit ('has
uncommitted edits')"; adoption already refuses text that does not convert back for the names
``core.checkRoundtripEncoding`` lists): ``plangate approve`` refuses (``E_USAGE`` "has
uncommitted edits", or better ``E_ATTRIBUTE_UNSUPPORTED`` naming the text that does not
survive the encoding, since no commit or discard can make git call it clean), and the pass
holds the plan with that code rather than run a version the working tree does not show.
HELD: ``jp``, ``kr``, ``u7``, ``hk``, ``u32``, ``u32le``, ``ebc`` (IBM037), ``u7alt`` (her
value spelled in UTF-7 base64, Python's spelling of the rest), ``jpesc`` (a redundant ``ESC
( B``), ``u32be`` (her big-endian save with its own mark), ``swap`` (UTF-16 -> UTF-32 after
the freeze, checked out again): frozen, ``-h`` and ``-c`` ran once, ``-n`` never, ``git
status`` clean, no wait, tasks the agent's, the fresh clone agrees. ``swapraw`` (the attribute
changed, the files left UTF-16): git and plangate both call the files edited, ``plangate
approve`` ``E_USAGE`` "has uncommitted edits", nothing ran (remedy: a discard works).
``sjis*-h``: her ``git add`` stored ``¥``/``‾``, refused ``E_PLAN_HASH_MISMATCH``, never ran.
``cnext`` (``ISO-2022-CN-EXT``) ran as the controls. ``imap`` (``UTF-7-IMAP``): plangate
agrees with git that the files are edited: ``-c``/``-n`` stay "waiting to be frozen",
``plangate approve`` ``E_USAGE`` "has uncommitted edits", Alice's hand approval
``E_PLAN_NOT_FROZEN``, nothing ran (the row names no code and no remedy for a wait only a
commit of git's reading ends; not counted as a break: no doc promises a code there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, load_yaml, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

ENC = {"jp": "ISO-2022-JP", "kr": "ISO-2022-KR", "u7": "UTF-7", "hk": "BIG5-HKSCS",
       "u32": "UTF-32", "u32le": "UTF-32LE", "ebc": "IBM037", "u7alt": "UTF-7",
       "jpesc": "ISO-2022-JP", "u32be": "UTF-32", "swap": "UTF-16", "swapraw": "UTF-16",
       "sjisbs": "SHIFT-JIS", "sjistl": "SHIFT-JIS", "imap": "UTF-7-IMAP",
       "cnext": "ISO-2022-CN-EXT"}  # fmt: skip
VARIANTS = list(ENC)
LOSSY = ["sjisbs", "sjistl", "imap"]
LOOSE = [*LOSSY, "swapraw"]
HANDLED = [v for v in VARIANTS if v not in LOOSE]
WHO = ["h", "c", "n"]


BROKEN: dict[str, object] = {}  # sjisbs-cli, sjistl-cli: fixed (2026-12-01, r78stat)

TASK = {"jp": "日本 ok", "kr": "한국 ok", "u7": "a+b ~ café", "u7alt": "a+b ~ café",
        "hk": "\u00ca\u0304 pair", "jpesc": "日本 esc", "sjisbs": "a \\\\x41 b",
        "sjistl": "tilde ~ end", "imap": "a&b ~ café", "cnext": "中文 ok"}  # fmt: skip
SWAPPED = "UTF-32"


def text_of(v: str, slug: str) -> str:
    base = plan_text(slug)
    if v in TASK:
        base = base.replace(f'task: "attack variant {slug}"', f'task: "{TASK[v]}"')
    return base


def attributes(swapped: bool = False) -> str:
    rows = []
    for v, e in ENC.items():
        if swapped and v in ("swap", "swapraw"):
            e = SWAPPED
        rows.append(f"plans/{v}-*/PLAN.yml working-tree-encoding={e}\n")
    return "".join(rows)


def _codec(v: str, swapped: bool) -> str:
    return SWAPPED if swapped and v in ("swap", "swapraw") else ENC[v]


def _approve_bytes(v: str, raw: bytes, swapped: bool) -> bytes | None:
    """Alice's editor: decode as the attribute says (iconv's tables, through Python only for
    the names Python spells alike), change the value, save as her editor saves."""
    import codecs

    name = {"ISO-2022-JP": "iso2022_jp", "ISO-2022-KR": "iso2022_kr", "UTF-7": "utf-7",
            "BIG5-HKSCS": "big5hkscs", "UTF-32": "utf-32", "UTF-32LE": "utf-32-le",
            "IBM037": "cp037", "UTF-16": "utf-16", "SHIFT-JIS": "ascii"}  # fmt: skip
    enc = _codec(v, swapped)
    if v == "u7alt":  # the same text, the value spelled in base64 (as an editor may)
        text = raw.decode("utf-7")
        if text.count("pending_approval") != 1:
            return None
        alt = b"+" + codecs.encode("approved".encode("utf-16-be"), "base64").strip().rstrip(b"=")
        head, tail = text.split("pending_approval")
        return head.encode("utf-7") + alt + b"-" + tail.encode("utf-7")
    if v == "jpesc":
        if raw.count(b"  status: pending_approval") != 1:
            return None
        return raw.replace(b"  status: pending_approval", b"\x1b(B  status: approved")
    if v in LOSSY or v in ("imap", "cnext"):  # ASCII status line; the rest untouched
        return raw.replace(b"pending_approval", b"approved") if b"pending_approval" in raw else None
    py = name[enc]
    try:
        text = raw.decode(py)
    except UnicodeDecodeError:
        return None
    if text.count("pending_approval") != 1:
        return None
    text = text.replace("pending_approval", "approved")
    if v == "u32be":
        return b"\x00\x00\xfe\xff" + text.encode("utf-32-be")
    if py in ("utf-32", "utf-16"):  # keep the mark and byte order the file had
        order = "le" if raw[:2] == b"\xff\xfe" else "be"
        mark = raw[:4] if py == "utf-32" else raw[:2]
        return mark + text.encode(f"{py}-{order}")
    return text.encode(py)


def _recheckout(lab: Lab, vs: list[str]) -> None:
    for v in vs:
        for w in WHO:
            (lab.repo / "plans" / f"{v}-{w}" / "PLAN.yml").unlink()
    paths = [f"plans/{v}-{w}/PLAN.yml" for v in vs for w in WHO]
    lab.git("checkout", "-q", "--", *paths, check=False)


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799800000)
    date()
    for v in VARIANTS:
        for w in WHO:
            lab.write(f"{v}-{w}", text_of(v, f"{v}-{w}").encode())
    lab.commit("agent plans", AGENT)
    date()
    (lab.repo / ".gitattributes").write_text(attributes())
    lab.commit("agent attributes", AGENT, ".gitattributes")
    _recheckout(lab, VARIANTS)
    out: dict = {"status0": lab.git("status", "--porcelain")}
    out["wt0"] = {v: (lab.repo / "plans" / f"{v}-n" / "PLAN.yml").read_bytes()[:60].hex()
                  for v in VARIANTS}  # fmt: skip
    date()
    out["first"] = lab.run().stderr[-3000:]
    date()
    (lab.repo / ".gitattributes").write_text(attributes(swapped=True))
    lab.commit("agent: swap the encoding", AGENT, ".gitattributes")
    _recheckout(lab, ["swap"])
    out["status1"] = lab.git("status", "--porcelain")
    date()
    out["hand"] = {}
    for v in HANDLED:
        path = lab.repo / "plans" / f"{v}-h" / "PLAN.yml"
        new = _approve_bytes(v, path.read_bytes(), True)
        out["hand"][v] = new is not None
        if new is not None:
            path.write_bytes(new)
    lab.commit("approve by hand", ALICE, *[f"plans/{v}-h" for v in HANDLED])
    for v in LOOSE:
        path = lab.repo / "plans" / f"{v}-h" / "PLAN.yml"
        new = _approve_bytes(v, path.read_bytes(), True)
        if new is None:
            out["hand"][v] = "no value"
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
    return shared(tmp_path_factory, "r78-statefulenc", _build)


VS = ["hand", "cli", "never", "clean", "audit", "task"]
IDS = [f"{v}-{c}" for v in VARIANTS for c in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_stateful_or_lossy_encoding(lab: Lab, vid: str) -> None:
    v, c = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    mine = {w: rows.get(f"{v}-{w}") for w in WHO}
    said = (v, json.dumps(mine)[:1500], {w: ran[f"{v}-{w}"] for w in WHO}, out["cli"][v],
            out["hand"].get(v), out["wt0"][v])  # fmt: skip
    if c == "hand":
        if v in HANDLED:
            assert ran[f"{v}-h"] == 1, said
        else:
            assert ran[f"{v}-h"] == 0, said
            if v in LOSSY and out["hand"].get(v) == "committed":
                assert "E_" in json.dumps(mine["h"]), said
    elif c == "cli":
        if v in HANDLED:
            assert ran[f"{v}-c"] == 1 and out["cli"][v]["rc"] == 0, said
        elif v in LOSSY:  # git status calls the file modified: approving would not cover it
            dirty = f" M plans/{v}-c/PLAN.yml" in out["status1"]
            assert dirty, out["status1"]
            assert ran[f"{v}-c"] == 0, said
            assert out["cli"][v]["rc"] != 0 and "E_" in out["cli"][v]["out"], said
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
        for w in ["c", "n"]:
            want = load_yaml(text_of(v, f"{v}-{w}"))["plan"]["task"]
            assert out["tasks"][f"{v}-{w}"] == want, (w, out["tasks"][f"{v}-{w}"], said)
