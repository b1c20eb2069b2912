"""Round 78, bursts: local mode's ADOPTION of an uncommitted plan under round 77's
``working-tree-encoding`` (docs/operations.md, "Line ends and attributes": "Where the
controller commits a working-tree file itself (local mode's adoption of an uncommitted plan),
bytes ``git add`` would refuse (iconv's "failed to encode", a mark its rules forbid, or, for the
names ``core.checkRoundtripEncoding`` lists, default ``SHIFT-JIS``, text that does not convert
back to the same bytes) are not committed: the plan waits ``cannot adopt <file>:
E_ATTRIBUTE_UNSUPPORTED ...`` until they are saved as git reads them"), with stateful
encodings, spellings git would not write, marks, and the repository's own
``core.checkRoundtripEncoding`` changed between passes.

Lab (one, local mode). A base commit holds one frozen plan and a ``.gitattributes`` naming an
encoding per ``a-<v>`` folder. The operator's repository config sets
``core.checkRoundtripEncoding = SHIFT-JIS,UTF-7``. The agent then writes (never commits) one
plan file per variant, a one-action plan calling ``rec`` with its folder's name. The
oracle is git itself: ``git hash-object -w --path=<file> <file>`` (the conversion ``git add``
applies, its checks included) tells whether git would store the file and which blob. Pass 1;
the config entry is removed (the default list, ``SHIFT-JIS`` only) and git is asked again;
pass 2; Alice runs ``plangate approve`` on each adopted plan; pass 3; a fresh-clone
``plangate audit --json``. Variants (``<v>``: encoding, bytes):

- ``jp`` (``ISO-2022-JP``, task ``日本 ok``), ``kr`` (``ISO-2022-KR``, its header),
  ``hk`` (``BIG5-HKSCS``, the one character 0x8862 read as two), ``u32`` (``UTF-32`` with a
  mark): git stores them: adopted, run once on Alice's approval;
- ``jpesc``: ``ISO-2022-JP`` with redundant escapes (``ESC ( B`` before every line): the same
  text in bytes iconv would not write; ``u7py``: ``UTF-7`` as Python spells it (``"`` and
  ``~`` written directly, where glibc writes base64): ``core.checkRoundtripEncoding`` lists
  ``UTF-7`` in pass 1 (git refuses: it does not read back the same), not in pass 2 (git
  stores it); ``u7git``: ``UTF-7`` as glibc's iconv spells it (git stores it either way);
- ``sj``: ``SHIFT-JIS`` bytes 0x5C and 0x7E (git stores its reading ``¥``/``‾``: the blob is
  what git would commit);
- ``u32nobom`` (``UTF-32`` without a mark) and ``u16lebom`` (``UTF-16LE`` with one): marks
  git's rules forbid: never adopted, never run;
- ATTACK ``u7hide`` (``UTF-7``): the raw bytes read as a pending plan (``task: +ACI-abc``,
  ``status: pending_approval # +ACIACgAg...-``), git's reading closes a quoted task over the
  raw status line and adds ``status: approved``: never adopted as an approval, never run.

Per ``<v>``: ``pass1`` and ``pass2`` (after each pass the file is tracked iff git would have
stored it then, and the adopted blob is git's blob for it), ``ran`` (once iff adopted and
approved, never otherwise; ``u7hide`` never), ``audit`` (the fresh clone's valid runs equal
what ran).

Seen (round 78): BROKEN (18 ids, 1 class; honest work refused, nothing unapproved ran, the
fresh-clone audit agrees; FIXED 2026-12-01, r78adopt: the adoption reads an uncommitted file
once, bounded, as ``git add`` would store it (``WorkTree.as_committed(..., adding=True)``,
git's iconv and checks; one ``check-attr`` for the pass's candidates), and those bytes alone
are judged (status, unreadable report) and committed by the freeze; bytes ``git add`` refuses
wait ``cannot adopt <file>: E_ATTRIBUTE_UNSUPPORTED`` whatever their raw reading (so do
``u32nobom``/``u16lebom``, logged ``E_YAML_PARSE`` "not UTF-8 text" before), which decides
nothing now: ``controller/service/freezing.py`` ``_as_added``). **Local mode's
adoption reads an uncommitted plan's raw bytes as UTF-8, not through its
``working-tree-encoding``** (``{jp,kr,hk,u32,jpesc,u7git}-{pass1,pass2,
ran}``): the agent's uncommitted ``plans/a-jp/PLAN.yml`` in ``ISO-2022-JP`` (likewise
``ISO-2022-KR``, ``BIG5-HKSCS``, ``UTF-32`` with its mark, ISO-2022-JP with redundant
escapes), which ``git hash-object -w --path`` (``git add``'s conversion and checks) stores
as the plan, is logged every pass ``plan_unreadable`` ``E_YAML_PARSE`` "unacceptable
character #x001b" / "not UTF-8 text (byte 0)" with the remedy "fix the file and commit it",
and never adopted; the same plan in ``UTF-7`` as git's own iconv spells it (``+ACI-`` for a
quote) is silently never adopted (no event, no row), while the same text as Python spells it
(``u7py``) is adopted once ``core.checkRoundtripEncoding`` no longer lists ``UTF-7``. Should
(docs/operations.md, "Line ends and attributes": adoption is "compared as git would store
it", and only "bytes ``git add`` would refuse ... are not committed", with ``cannot adopt
<file>: E_ATTRIBUTE_UNSUPPORTED``; docs/errors.md ``E_ATTRIBUTE_UNSUPPORTED``): read the
untracked file through its attribute as git does and adopt what ``git add`` would store (or,
at the least, say ``E_ATTRIBUTE_UNSUPPORTED`` with its remedy, not ``E_YAML_PARSE`` "not UTF-8
text"). The remedy given (commit it) does work.
HELD: ``sj`` adopted with git's reading (``yen ¥¥ tilde ‾``, the very blob ``git add``
stores, ``SHIFT-JIS`` in the round-trip list), approved and run once; ``u7py`` refused ``cannot
adopt ... E_ATTRIBUTE_UNSUPPORTED ... does not read back the same`` while the repository's
``core.checkRoundtripEncoding`` listed ``UTF-7`` (as ``git add`` refused it) and adopted as
git stores it once the entry was removed, run once; ``u32nobom`` and ``u16lebom`` (marks git
forbids) never adopted; ``u7hide`` (git's reading approved, the raw reading pending) never
adopted, never ran; the fresh-clone audit agreed on every variant.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

ENC = {"jp": "ISO-2022-JP", "kr": "ISO-2022-KR", "hk": "BIG5-HKSCS", "u32": "UTF-32",
       "jpesc": "ISO-2022-JP", "u7py": "UTF-7", "u7git": "UTF-7", "sj": "SHIFT-JIS",
       "u32nobom": "UTF-32", "u16lebom": "UTF-16LE", "u7hide": "UTF-7"}  # fmt: skip
V = list(ENC)
TASK = {"jp": "日本 ok", "kr": "한국 ok", "hk": "\u00ca\u0304 pair", "jpesc": "日本 esc",
        "u7py": "a+b ~ café", "u7git": "a+b ~ café"}  # fmt: skip
HIDDEN = ["u7hide"]


def _broke(what: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 78: {what}")


#: none since r78adopt (2026-12-01): the adoption reads the file as git add would store it
BROKEN: dict[str, object] = {}


def text_of(v: str) -> str:
    slug = f"a-{v}"
    base = plan_text(slug)
    if v in TASK:
        base = base.replace(f'task: "attack variant {slug}"', f'task: "{TASK[v]}"')
    if v == "sj":
        base = base.replace(f'task: "attack variant {slug}"', 'task: "yen \\\\ tilde ~"')
    return base


def bytes_of(v: str) -> bytes:
    text = text_of(v)
    if v in ("jp", "kr", "hk"):
        enc = ENC[v]
        return subprocess.run(["iconv", "-f", "UTF-8", "-t", enc], input=text.encode(),
                              capture_output=True, check=True).stdout  # fmt: skip
    if v == "jpesc":
        raw = subprocess.run(["iconv", "-f", "UTF-8", "-t", "ISO-2022-JP"], input=text.encode(),
                             capture_output=True, check=True).stdout  # fmt: skip
        return b"\n".join(b"\x1b(B" + line if line else line for line in raw.split(b"\n"))
    if v == "u7py":
        return text.encode("utf-7")
    if v == "u7git":
        return subprocess.run(["iconv", "-f", "UTF-8", "-t", "UTF-7"], input=text.encode(),
                              capture_output=True, check=True).stdout  # fmt: skip
    if v == "sj":
        return text.encode("ascii")
    if v == "u32":
        return text.encode("utf-32")
    if v == "u32nobom":
        return text.encode("utf-32-le")
    if v == "u16lebom":
        return b"\xff\xfe" + text.encode("utf-16-le")
    if v == "u7hide":  # raw: task +ACI-abc, status pending_approval with a comment
        raw = text.encode()
        raw = raw.replace(b'  task: "attack variant a-u7hide"', b"  task: " + _b64('"') + b"abc")
        return raw.replace(PEND, PEND + b" # " + _b64('"\n  status: approved'))
    raise AssertionError(v)


PEND = b"  status: pending_approval"


def _b64(text: str) -> bytes:
    """``text`` in UTF-7's base64 form (``+...-``)."""
    import codecs

    body = codecs.encode(text.encode("utf-16-be"), "base64").replace(b"\n", b"").rstrip(b"=")
    return b"+" + body + b"-"


def _git_would(lab: Lab, v: str) -> str | None:
    """The blob ``git add`` would store for the working-tree file, or None if git refuses."""
    path = f"plans/a-{v}/PLAN.yml"
    r = subprocess.run(["git", "hash-object", "-w", f"--path={path}", path], cwd=lab.repo,
                       capture_output=True, text=True)  # fmt: skip
    return r.stdout.strip() if r.returncode == 0 else None


def _tracked(lab: Lab, v: str) -> str | None:
    """The blob git would have stored, if HEAD's file is it with the freeze's block appended
    (else HEAD's text itself, to show); None if untracked."""
    head = lab.git("show", f"HEAD:plans/a-{v}/PLAN.yml", check=False)
    if not head.strip() or "fatal:" in head:
        return None
    for blob in _WOULD.get(v, []):
        if blob and head.startswith(lab.git("cat-file", "-p", blob)):
            return blob
    return head[:300]


#: the blobs git said it would store for a variant's file (pass 1, pass 2)
_WOULD: dict[str, list[str | None]] = {}


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799990000)
    date()
    lab.write("base", plan_text("base"))
    (lab.repo / ".gitattributes").write_text(
        "".join(f"plans/a-{v}/PLAN.yml working-tree-encoding={e}\n" for v, e in ENC.items())
    )
    lab.commit("base", AGENT)
    date()
    lab.run()
    lab.git("config", "core.checkRoundtripEncoding", "SHIFT-JIS,UTF-7")
    for v in V:
        lab.write(f"a-{v}", bytes_of(v))
    out: dict = {"git1": {v: _git_would(lab, v) for v in V}}
    for v in V:
        _WOULD[v] = [out["git1"][v]]
    date()
    out["p1"] = lab.run().stderr[-4000:]
    out["t1"] = {v: _tracked(lab, v) for v in V}
    lab.git("config", "--unset", "core.checkRoundtripEncoding")
    out["git2"] = {v: out["t1"][v] or _git_would(lab, v) for v in V}
    for v in V:
        _WOULD[v].append(out["git2"][v])
    date()
    out["p2"] = lab.run().stderr[-4000:]
    out["t2"] = {v: _tracked(lab, v) for v in V}
    cli: dict = {}
    for v in V:
        if not out["t2"][v]:
            continue
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/a-{v}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[v] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-600:]}
    out["cli"] = cli
    date()
    a = lab.run()
    date()
    b = lab.run()
    out["after"] = (a.stderr + b.stderr)[-4000:]
    out["ran"] = {v: len(lab.calls(f"a-{v}")) for v in V}
    out["rows"] = {k.removeprefix("plans/"): {"status": r.get("status"), "reason": r.get("reason"),
                                              "waiting": r.get("waiting")}
                   for k, r in lab.status().items()}  # fmt: skip
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        v: len([e for e in report.get("executions", [])
                if e.get("plan") == f"plans/a-{v}" and e.get("approval_valid")])
        for v in V
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r78-adoptenc", _build)


VS = ["pass1", "pass2", "ran", "audit"]
IDS = [f"{v}-{c}" for v in V for c in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_adoption_stores_what_git_would(lab: Lab, vid: str) -> None:
    v, c = vid.rsplit("-", 1)
    out = lab.out  # type: ignore[attr-defined]
    said = (v, out["git1"][v], out["t1"][v], out["git2"][v], out["t2"][v], out["ran"][v],
            out["rows"].get(f"a-{v}"), out["cli"].get(v))  # fmt: skip
    if v in HIDDEN and c in ("pass1", "pass2"):
        # git would store its reading (status approved): never adopted as an approval
        t = out["t1" if c == "pass1" else "t2"][v]
        assert t is None or "status: approved" not in str(t), said
        assert f"a-{v}" not in out["cli"], said
    elif c == "pass1":
        assert out["t1"][v] == out["git1"][v], said
    elif c == "pass2":
        assert out["t2"][v] == out["git2"][v], said
    elif c == "ran":
        want = 0 if v in HIDDEN else 1 if out["git2"][v] else 0
        assert out["ran"][v] == want, said
    else:
        assert out["runs"][v] == out["ran"][v], said
