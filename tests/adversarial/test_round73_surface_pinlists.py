"""Round 73, agent-facing surfaces: what round 72 made read a folder "by its listing" (a
pinned (nested) plan's folder for ``plangate check`` and the approval's verdict; the claims of
a plan file's place for the controller's freeze, MCP ``submit`` and ``check``) attacked where
the listing CHANGES between the approval and the run, where the listing is ambiguous when the
controller first sees a plan, and where the pin's or the claim's name is spelled another way.

Lab (one, module scope; two ``run --once`` passes):
- the agent's first commit: libraries (drafts) and one parent per pin, pinned by the hash
  ``plangate hash`` gives: ``pin-ok`` (``plans/lib-ok``), ``pin-pre``/``pin-prezw`` (a claim
  comes in the pull request that approves the parent: a symlink ``plan.yml``, a FILE
  ``PLAN.y<U+200C>ml``), ``pin-late``/``pin-latezw``/``pin-latemv``/``pin-lategl`` (a claim
  the agent commits on main AFTER the approving merge, before the pass: a symlink
  ``plan.yml``, a folder ``PLAN.y<U+200C>ml/``, ``git mv notes.md PLAN.yaml``, a gitlink
  ``plan.yml``), ``pin-ren`` (the library's ``git mv PLAN.yml PLAN.yaml`` after the approval,
  bytes kept: a rename, no claim), ``pin-lsym``/``pin-fsym``/``pin-lgl`` (after the approval
  the library's folder becomes a symlink to a twin folder holding the very same bytes, its
  ``PLAN.yml`` a symlink to the twin's, the folder a gitlink), ``pin-nfc``/``pin-nfd`` (twin
  folders ``plans/twé`` in NFC and NFD, each pinned by its own spelling and hash),
  ``pin-Tw``/``pin-tw`` (case twins), and spellings of one folder: ``pin-solo``
  (``plans/soloé`` committed NFC, pinned NFD), ``pin-trail`` (``plans/lib-tr/``),
  ``pin-file`` (``plans/lib-file/PLAN.yml``), ``pin-fcase`` (``plans/lib-fc/Plan.yml``);
- in the same commit, plans born beside a claim (``f-*``: a symlink ``plan.yml``, a gitlink
  ``plan.yml``, a folder ``PLAN.YML/``, a folder ``PLAN.y<U+200C>ml/``, a file
  ``PLAN.yaml``, a file ``plan.yml``, a folder ``PLAN.yml<U+202E>/``; ``f-seq``: the claim in
  a second commit before the pass; ``f-ok``: none), hosts for ``check`` (``k-ok``,
  ``k-mv``: ``git mv notes.md plan.yml`` in the pull request, ``k-zwf``: a file
  ``PLAN.y<U+200D>aml`` in the pull request), and folders for MCP ``submit`` holding only a
  claim (``sub-zw``: a folder ``PLAN.y<U+200C>ml/``, ``sub-gl``: a gitlink ``plan.yml``,
  ``sub-file``: a file ``plan.YAML``, ``sub-zwsym``: a symlink ``PLAN.yml<U+FEFF>``,
  ``sub-rlo``: a folder ``PLAN.yml<U+202E>/``; ``sub-ok``: a README only);
- pass 1; the agent's MCP ``submit`` of a plan into each ``sub-*``; on a branch ``pr`` the
  agent's claims (``pin-pre``, ``pin-prezw``, ``k-mv``, ``k-zwf``), Alice's approval of every
  parent and ``k-*`` host; ``plangate check --base main --head pr --as alice``; Alice merges
  ``--no-ff``; the agent's late claims and ``pin-ren``'s rename on main; pass 2.
Readers: ``status --json``'s row, the ``rec`` calls, MCP ``validate`` of the parent as Alice
approved it (after pass 2), ``check``'s outcome; for ``f-*`` the controller's commits (a
``plangate: freeze plans/<f>`` commit, a ``frozen:`` block in the file); for ``sub-*`` the
answer and HEAD's tree.
Must hold: a pin to a folder whose listing claims the plan file's place when the run comes is
never run (``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH`` on the parent), however late the claim
came; controls (``pin-ok``, ``pin-ren``, twins) run their own library once and never their
twin's; a spelling runs its library once exactly when the row says completed, and MCP
``validate`` and ``check`` say what the row says; a plan born beside a claim is never frozen
(docs/threat-model.md: "history marks the plan ambiguous: never frozen or started");
``submit`` into a claim-only folder is refused ``E_PLAN_AMBIGUOUS`` and commits nothing; the
daemon's page and ``/api/plan/`` of a held folder read no file of it (readers ``api``,
``page`` of the ``f-*``); ``check`` holds a plan (or a pinned folder: ``pin-base``,
``k-base``) claimed on main after the branch was made, as the merge makes it.

Seen (round 73):
- ``{f-sym,f-gl,f-dir,f-zw,f-pend,f-lfile,f-rlo,f-seq}:frozen`` (8 ids): a plan committed
  beside a claim of its file's place (a symlink, a gitlink or a file ``plan.yml``, a folder
  ``PLAN.YML/``, ``PLAN.y<U+200C>ml/`` or ``PLAN.yml<U+202E>/``, a second PENDING plan file
  ``PLAN.yaml``; the claim in the same commit or the next one) is FROZEN by the controller's
  first pass: its ``plangate: freeze`` commit writes ``frozen: {hash, at, ...}`` into the
  folder's ``PLAN.yml`` (for two plan files: into ``PLAN.yaml``, the other file), while the
  row, ``show`` and MCP say ``E_PLAN_AMBIGUOUS`` and the CLI's ``plangate freeze --check``,
  ``hash`` and ``validate`` of the same folder refuse it. Should (docs/threat-model.md, round
  69's row: "history marks the plan ambiguous: never frozen or started"; docs/plan-format.md:
  ``E_PLAN_AMBIGUOUS`` "for ``validate``, ``show``, ``hash``, ``freeze`` and the controller
  alike"): no freeze commit while the folder is ambiguous. (``f-file``, an APPROVED second
  file ``PLAN.yaml``, is not frozen: held.) Nothing ran. Fixed (2026-11-30, r73freeze): the
  freeze step acts on the history index's verdict of the folder, no listing of its own
  (``planstate.held``: ``state.ambiguous`` or ``state.unsafe``, asked by ``_needs_attention``
  and ``Deciding._has_work``/``_act``): no freeze commit while the folder is held.
- ``{f-*}:api``, ``{f-*}:page`` (18 ids, with ``test_round73_surface_lateclaims.py``'s 14
  ``:api``: one class): the daemon's reviewer page ``/plan/<id>`` of a folder it marks
  ``E_PLAN_AMBIGUOUS`` titles it with one file's plan name and shows its task and hash, and
  ``/api/plan/<id>`` answers that file's ``document`` and ``hash``; for ``PLAN.yml`` beside
  ``PLAN.yaml`` (``f-file``, ``f-pend``) it is ``PLAN.yaml``'s (``<h1>f-file-in</h1>``, the
  text the agent marked ``approved``), the file the row, ``show`` and MCP never read. Should
  (docs/plan-format.md: "a reviewer could read one while the other ran, so neither is read or
  run"; docs/operations.md: the page is "the reviewer's view"): the code, no plan text.
  Fixed (2026-11-30, r73logtwin): each status row carries ``held`` (the index's verdict,
  ``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``), and ``UiData.plan`` of a held row answers the
  row, the code with the row's message, its notes and the controller's own record (blocks
  and log as its commits wrote them), no plan text read: no document, hash, name or task.
Held: pins to a folder claimed in the approving pull request (``pin-pre``, ``pin-prezw``), on
main after the branch was made (``pin-base``: ``check`` says ``refuse``, E_PLAN_AMBIGUOUS) or
AFTER the approval (``pin-late*``: a symlink, a zero-width folder, ``git mv notes.md
PLAN.yaml``, a gitlink; and ``pin-lsym``/``pin-fsym``/``pin-lgl``: the folder or its file
swapped for a symlink to the very same bytes, or a gitlink, refused ``E_SCHEMA_INVALID`` "is
a symlink; plangate never follows one"/"no PLAN.yml", round 72's noted code) never run
("approval refused: E_PLAN_NOT_FROZEN: the plan does not validate (E_PLAN_AMBIGUOUS)", MCP
``validate`` E_PLAN_AMBIGUOUS); ``pin-ren`` (the library
renamed ``PLAN.yaml`` after the approval) runs once; NFC/NFD and case twins run neither
library (changed in round 75, r75twinfold: two folders one folder on a folding checkout
are E_PLAN_AMBIGUOUS, as a plan file beside its twin is; round 73 ran each twin's own
library, while a Mac showed the reviewer the one git wrote last); ``pin-trail`` runs,
``pin-file``/``pin-fcase``
(``E_UNSAFE_PATH``) and ``pin-solo`` (the NFD spelling of an NFC folder: ``E_SCHEMA_INVALID``
"does not exist") never, with MCP ``validate`` and ``check`` saying the same; ``check`` holds
``k-mv``/``k-zwf``/``k-base``; MCP ``submit`` refuses E_PLAN_AMBIGUOUS into folders holding
only a zero-width folder, a gitlink, a file ``plan.YAML``, a symlink ``PLAN.yml<U+FEFF>``, a
folder ``PLAN.yml<U+202E>/``, nothing committed (``sub-ok`` committed); the audit agrees.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from oraclekit import hash_pin, page_texts
from test_round2_execution_kit import shared

NFC = unicodedata.normalize("NFC", "twé")
NFD = unicodedata.normalize("NFD", "twé")
SOLO, SOLO_NFD = unicodedata.normalize("NFC", "soloé"), unicodedata.normalize("NFD", "soloé")
PARENT = (
    "plan:\n  name: parent {vid}\n  task: t\n  status: pending_approval\n"
    "available_tools: [{{name: rec}}]\nactions:\n"
    "  - id: 1\n    why: the library\n    plan: {{path: '{path}', hash: '{hash}'}}\n"
)
# pin -> (the folder under plans/, the pin's path, when a claim comes, what must happen)
# want: 1 runs once, 0 never, None: runs once exactly when the row says completed
PINS: dict[str, tuple[str, str, str, int | None]] = {
    "pin-ok": ("lib-ok", "plans/lib-ok", "", 1),
    "pin-pre": ("lib-pre", "plans/lib-pre", "pr", 0),
    "pin-prezw": ("lib-prezw", "plans/lib-prezw", "pr", 0),
    "pin-base": ("lib-base", "plans/lib-base", "base", 0),
    "pin-late": ("lib-late", "plans/lib-late", "late", 0),
    "pin-latezw": ("lib-latezw", "plans/lib-latezw", "late", 0),
    "pin-latemv": ("lib-latemv", "plans/lib-latemv", "late", 0),
    "pin-lategl": ("lib-lategl", "plans/lib-lategl", "late", 0),
    "pin-ren": ("lib-ren", "plans/lib-ren", "late", 1),
    "pin-lsym": ("lib-lsym", "plans/lib-lsym", "late", 0),
    "pin-fsym": ("lib-fsym", "plans/lib-fsym", "late", 0),
    "pin-lgl": ("lib-lgl", "plans/lib-lgl", "late", 0),
    # round 75 (r75twinfold): twin folders are one folder on a folding checkout: held
    "pin-nfc": (NFC, f"plans/{NFC}", "", 0),
    "pin-nfd": (NFD, f"plans/{NFD}", "", 0),
    "pin-Tw": ("Tw", "plans/Tw", "", 0),
    "pin-tw": ("tw", "plans/tw", "", 0),
    "pin-solo": (SOLO, f"plans/{SOLO_NFD}", "", None),
    "pin-trail": ("lib-tr", "plans/lib-tr/", "", None),
    "pin-file": ("lib-file", "plans/lib-file/PLAN.yml", "", None),
    "pin-fcase": ("lib-fc", "plans/lib-fc/Plan.yml", "", None),
}
TAGS = {pin: f"t-{pin[4:]}" for pin in PINS}  # the library's rec tag
# the claim each library gets: (kind, name)
CLAIM = {
    "pin-pre": ("sym", "plan.yml"),
    "pin-prezw": ("file", "PLAN.y\u200cml"),
    "pin-base": ("sym", "plan.yml"),
    "pin-late": ("sym", "plan.yml"),
    "pin-latezw": ("dir", "PLAN.y\u200cml"),
    "pin-latemv": ("mv", "PLAN.yaml"),
    "pin-lategl": ("gl", "plan.yml"),
    "pin-ren": ("ren", "PLAN.yaml"),
    "pin-lsym": ("lsym", ""),  # the folder becomes a symlink to a twin holding the same bytes
    "pin-fsym": ("fsym", "PLAN.yml"),  # its PLAN.yml a symlink to the twin's same bytes
    "pin-lgl": ("lgl", ""),  # the folder becomes a gitlink
}
BORN = {
    "f-ok": None,
    "f-sym": ("sym", "plan.yml"),
    "f-gl": ("gl", "plan.yml"),
    "f-dir": ("dir", "PLAN.YML"),
    "f-zw": ("dir", "PLAN.y\u200cml"),
    "f-file": ("file", "PLAN.yaml"),
    "f-pend": ("pfile", "PLAN.yaml"),
    "f-lfile": ("file", "plan.yml"),
    "f-rlo": ("dir", "PLAN.yml\u202e"),
    "f-seq": ("sym", "plan.yml"),  # in a second commit, before the pass
}
CHECKS = {
    "k-ok": None,
    "k-mv": ("mv", "plan.yml"),
    "k-zwf": ("file", "PLAN.y\u200daml"),
    "k-base": ("sym", "plan.yml"),  # on main, after the branch was made: the merge brings it
}
SUBMITS = {
    "sub-ok": None,
    "sub-zw": ("dir", "PLAN.y\u200cml"),
    "sub-gl": ("gl", "plan.yml"),
    "sub-file": ("file", "plan.YAML"),
    "sub-zwsym": ("sym", "PLAN.yml\ufeff"),
    "sub-rlo": ("dir", "PLAN.yml\u202e"),
}


def _claim(lab: Lab, folder: str, kind: str, name: str, gl_commit: str) -> None:
    """Put a claim ``name`` of ``kind`` in ``plans/<folder>`` (staged)."""
    where = lab.repo / "plans" / folder
    where.mkdir(parents=True, exist_ok=True)
    if kind in ("lsym", "lgl"):
        lab.git("rm", "-rq", f"plans/{folder}")
        if kind == "lsym":
            (lab.repo / "plans" / folder).symlink_to(f"{folder}2")
        else:
            lab.git("update-index", "--add", "--cacheinfo", f"160000,{gl_commit},plans/{folder}")
            (lab.repo / "plans" / folder).mkdir(exist_ok=True)
    elif kind == "fsym":
        lab.git("rm", "-q", f"plans/{folder}/{name}")
        (where / name).symlink_to(f"../{folder}2/{name}")
    elif kind == "mv":
        lab.git("mv", f"plans/{folder}/notes.md", f"plans/{folder}/{name}")
    elif kind == "ren":
        lab.git("mv", f"plans/{folder}/PLAN.yml", f"plans/{folder}/{name}")
    elif kind == "file":
        (where / name).write_text(plan_text(f"{folder}-in", "approved"))
    elif kind == "pfile":  # a second plan file, pending as the first
        (where / name).write_text(plan_text(f"{folder}-in"))
    elif kind == "sym":
        (where / name).symlink_to("../f-ok/PLAN.yml")
    elif kind == "dir":
        lab.write(f"{folder}/{name}", plan_text(f"{folder}-in", "approved"))
    else:  # an uninitialised submodule
        (where / name).mkdir()
        lab.git("update-index", "--add", "--cacheinfo", f"160000,{gl_commit},plans/{folder}/{name}")
    lab.git("add", "-A")


TWINS = ("pin-nfc", "pin-nfd", "pin-Tw", "pin-tw")


def _hash(lab: Lab, root: Path, pin: str) -> str:
    """The pin's hash: of a copy outside the repo for a twin folder (round 75: ``plangate
    hash`` holds a folder beside its twin E_PLAN_AMBIGUOUS, as every reader does)."""
    if pin not in TWINS:
        return hash_pin(lab, PINS[pin][0])
    copy = root / "hashes" / str(TWINS.index(pin)) / "PLAN.yml"  # no twins of one another
    copy.parent.mkdir(parents=True)
    copy.write_text(lab.read(PINS[pin][0]))
    found = re.search(r"sha256:[0-9a-f]{64}", lab.cli("hash", str(copy)).stdout)
    assert found, pin
    return found.group(0)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    for pin, (folder, _path, _when, _want) in PINS.items():
        lab.write(folder, plan_text(TAGS[pin], "draft"))
        lab.write(folder, "notes\n", "notes.md")
    for pin in ("pin-lsym", "pin-fsym"):  # twins holding the very bytes
        lab.write(f"{PINS[pin][0]}2", plan_text(TAGS[pin], "draft"))
    hashes = {pin: _hash(lab, root, pin) for pin in PINS}
    for pin, (_folder, path, _when, _want) in PINS.items():
        lab.write(f"p-{pin}", PARENT.format(vid=pin, path=path, hash=hashes[pin]))
    for host in [*BORN, *CHECKS]:
        lab.write(host, plan_text(host))
        lab.write(host, "notes\n", "notes.md")
    for sub in SUBMITS:
        lab.write(sub, "for the agent's next plan\n", "README.md")
    lab.git("add", "-A")
    gl_commit = lab.head()
    for host, claim in BORN.items():
        if claim and host != "f-seq":
            _claim(lab, host, *claim, gl_commit)
    for sub, claim in SUBMITS.items():
        if claim:
            _claim(lab, sub, *claim, gl_commit)
    lab.commit("agent: plans", AGENT)
    _claim(lab, "f-seq", *BORN["f-seq"], gl_commit)  # type: ignore[misc]
    lab.commit("agent: a note", AGENT)
    lab.run()
    before = lab.head()
    got: dict[str, Any] = {}
    got["submit"] = session(
        lab, [("submit", {"plan": plan_text(f"{sub}-new"), "slug": sub}) for sub in SUBMITS]
    )[0]
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["submits"] = lab.git("log", "--format=%s", f"{before}..HEAD")
    time.sleep(1.1)
    lab.git("checkout", "-q", "-b", "pr")
    for pin, (folder, _p, when, _w) in PINS.items():
        if when == "pr":
            _claim(lab, folder, *CLAIM[pin], gl_commit)
    for host, claim in CHECKS.items():
        if claim and host != "k-base":
            _claim(lab, host, *claim, gl_commit)
    lab.commit("agent: notes on the branch", AGENT)
    lab.git("checkout", "-q", "main")
    _claim(lab, "k-base", *CHECKS["k-base"], gl_commit)  # type: ignore[misc]
    for pin, (folder, _p, when, _w) in PINS.items():
        if when == "base":
            _claim(lab, folder, *CLAIM[pin], gl_commit)
    lab.commit("agent: notes on main", AGENT)
    lab.git("checkout", "-q", "pr")
    parents = {}
    for pin in PINS:
        lab.set_status(f"p-{pin}", "approved")
        parents[pin] = lab.read(f"p-{pin}")
    for host in CHECKS:
        lab.set_status(host, "approved")
    lab.commit("alice: approve on the branch", ALICE)
    done = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    got["check-err"] = done.stderr[-2000:]
    got["check"] = {p["plan"]: p for p in json.loads(done.stdout)["plans"]}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    for pin, (folder, _p, when, _w) in PINS.items():
        if when == "late":
            _claim(lab, folder, *CLAIM[pin], gl_commit)
    lab.commit("agent: after the approval", AGENT)
    lab.run()
    cfg = str(lab.config)
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*TAGS.values(), *[f"{f}-in" for f, *_ in PINS.values()], *BORN, *CHECKS]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["validate"] = session(lab, [("validate", {"plan": parents[p]}) for p in PINS])[0]
    got["freezes"] = {
        h: [s for s in lab.subjects(h) if s.startswith("plangate: freeze")] for h in BORN
    }
    got["frozen"] = {
        h: any(
            "\nfrozen:" in lab.git("show", f"HEAD:plans/{h}/{n}", check=False)
            for n in ("PLAN.yml", "PLAN.yaml")
        )
        for h in BORN
    }
    got["pages"] = page_texts(lab, [f"plans/{h}" for h in BORN], "plans/f-ok")
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-surface-pinlists", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 73: {what}")


HELD = ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")
# a symlink or gitlink where the pinned folder or its file was: refused E_SCHEMA_INVALID
# ("is a symlink; plangate never follows one", "no PLAN.yml"), round 72's noted code
LINKED = ("pin-lsym", "pin-fsym", "pin-lgl")


def _held(pin: str) -> tuple[str, ...]:
    return (*HELD, "E_SCHEMA_INVALID") if pin in LINKED else HELD


def _validated(got: dict[str, Any], pin: str) -> dict[str, Any]:
    result = got["validate"][list(PINS).index(pin)]["result"]
    return dict(json.loads(result["content"][0]["text"]))


PIDS = [f"{p}:{r}" for p in PINS for r in ("row", "ran", "validate")] + [
    f"{p}:check" for p in PINS if PINS[p][2] != "late"
]
PBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_a_pin_runs_only_a_folder_unclaimed_when_the_run_comes(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    pin, reader = vid.split(":")
    row = got["rows"][f"plans/p-{pin}"]
    want = PINS[pin][3]
    done = row["status"] == "completed"
    if want is not None:
        assert done == bool(want), row
    if reader == "row":
        if not done:
            assert row["status"] != "running", row
        if want == 0:
            assert any(c in json.dumps(row) for c in _held(pin)), row
    elif reader == "ran":
        assert got["calls"][TAGS[pin]] == (1 if done else 0), got["calls"]
        assert got["calls"][f"{PINS[pin][0]}-in"] == 0, got["calls"]
        if pin in TWINS:  # round 75: neither twin ran, by either parent
            assert not any(got["calls"][TAGS[t]] for t in TWINS), got["calls"]
    elif reader == "validate":
        answer = _validated(got, pin)
        assert answer["valid"] is done, (answer, row)
        if want == 0:
            codes = {e["code"] for e in answer["errors"]}
            assert codes & set(_held(pin)), answer
    else:
        entry = got["check"][f"plans/p-{pin}"]
        assert (entry["outcome"] == "start") == done, (entry, row)


FIDS = [f"{h}:{r}" for h in BORN for r in ("frozen", "row", "api", "page")]
# {f-*}:frozen fixed by r73freeze (2026-11-30): the freeze step asks the index's verdict;
# {f-*}:{api,page} fixed by r73logtwin (2026-11-30): a held row's page shows its code alone
FBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, FBROKEN))
def test_a_plan_born_beside_a_claim_is_never_frozen(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    honest = BORN[host] is None
    row = got["rows"][f"plans/{host}"]
    if reader == "row":
        if honest:
            assert row["status"] == "pending_approval" and row["frozen_hash"], row
        else:
            assert row["status"] is None and row["frozen_hash"] is None, row
            assert "E_PLAN_AMBIGUOUS" in json.dumps(row), row
        assert got["calls"][host] == 0, got["calls"]
    elif reader == "api":
        answer = json.loads(got["pages"][f"plans/{host}"][1])
        if honest:
            assert answer["document"]["plan"]["name"] == host and answer["hash"], answer
        else:
            assert answer["row"]["code"] == "E_PLAN_AMBIGUOUS", answer["row"]
            assert not answer.get("document") and not answer.get("hash"), answer
    elif reader == "page":
        page = got["pages"][f"plans/{host}"][0]
        if honest:
            assert f"attack variant {host}" in page, page[-1500:]
        else:
            assert "E_PLAN_AMBIGUOUS" in page, page[-1500:]
            shown = [t for t in (f"attack variant {host}", f"{host}-in") if t in page]
            assert not shown, (shown, page[-1500:])
    else:
        freezes = got["freezes"][host]
        assert bool(freezes) == honest and got["frozen"][host] == honest, (freezes, got["frozen"])


KIDS = [f"{h}:{r}" for h in CHECKS for r in ("check", "ran")]


@pytest.mark.parametrize("vid", cases(KIDS, KIDS, {}))
def test_check_says_what_the_merge_does_with_a_renamed_in_claim(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    honest = CHECKS[host] is None
    if reader == "check":
        entry = got["check"][f"plans/{host}"]
        if honest:
            assert entry["outcome"] == "start" and entry["valid"], entry
        else:
            codes = {p["code"] for p in entry["problems"]}
            assert entry["outcome"] == "held" and codes & set(HELD), entry
    else:
        assert got["calls"][host] == (1 if honest else 0), got["calls"]


SIDS = [f"{s}:{r}" for s in SUBMITS for r in ("answer", "tree")]


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, {}))
def test_submit_into_a_folder_holding_only_a_claim_is_refused(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    sub, reader = vid.split(":")
    honest = SUBMITS[sub] is None
    result = got["submit"][list(SUBMITS).index(sub)]["result"]
    text = result["content"][0]["text"]
    if reader == "answer":
        if honest:
            assert not result.get("isError") and '"submitted": true' in text, text[:800]
        else:
            assert result.get("isError") and "E_PLAN_AMBIGUOUS" in text, text[:800]
    else:
        written = f"plans/{sub}/PLAN.yml" in got["tree"].splitlines()
        assert written == honest, got["tree"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert "plans/p-pin-ok" in completed, completed


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r73pl-", dir="/tmp/atk73b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
