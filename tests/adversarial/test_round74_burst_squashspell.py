"""Round 74, bursts: round 73's squash rule (a first start whose key verifies no commit and
that finds no seal on the line looks at the head's plan files, ``git grep``: ``frozen:`` /
``execution:`` records refuse the key alone ``E_HISTORY_REWRITTEN``; an ``execution:`` block
beside a plan status only a run gives refuses a new state directory ``E_STORAGE``) against
squashes whose records are SPELLED otherwise: the same YAML, the same frozen hash, other bytes.

Lab (one, local mode, fake commit dates). The agent adds ``f-01``..``f-08`` and the gated
``fg-1`` (``P0``); a pass freezes them. Alice's review merge approves ``f-01``..``f-04`` and
``fg-1``; a pass: four complete, ``fg-1`` pauses at its gate (``awaiting_approval``). The repo
is cloned once per ``<shape>-<state>`` (each its own config, state directory and ``ran.log``
seeded with what ran). In every attack shape the agent replaces main by ONE parentless commit
of its own (``git commit-tree``, a "squash of the history") whose tree is main's with every
plan file rewritten as below (the YAML each file parses to is unchanged, so is its hash):

- ``plain`` (the defence's control): the files as they are (round 73's ``orphan``);
- ``dq``: the owned keys double-quoted (``"frozen":``, ``"execution":``, ``"approval":``) and
  the plan's ``"status":``;
- ``sq``: the same single-quoted;
- ``sp``: a space before each of those colons (``execution :``);
- ``tag``: each of those keys tagged ``!!str execution:``, the plan status ``!!str completed``;
- ``val``: only the plan status value quoted (``status: "completed"``);
- ``ind``: the whole document indented by one space (a root block mapping may be indented);
- ``yaml``: every ``PLAN.yml`` renamed ``PLAN.yaml`` (the other plan file name), bytes kept;
- ``crlf``: every plan file in CRLF (hashes like its LF twin, docs/plan-format.md).

Controls (honest new deployments, a NEW repository: ``ran.log`` empty): ``fresh``: P0's tree
(eight pending plans and ``fg-1``, never frozen) as a new repository's first commit;
``freshind``: the same with every plan file indented and its keys double-quoted (the agent's
own style): both must start at once and run what Alice approves, once.

States: ``key`` (a new state directory holding only the old ``commit.key``: attacks only) and
``new`` (an empty one). A refusal (``E_HISTORY_REWRITTEN`` / ``E_STORAGE``) is answered with
``--take-over`` as documented for a squash (the old tip is not put back). Then Alice approves
``fg-1``'s gate, re-approves ``f-01`` (completed) and approves ``f-06``, in the file's own
spelling; two passes. Asserted per clone (``<shape>-<state>-<v>``):

- ``start``: attacks: the first start is refused (``key``: ``E_HISTORY_REWRITTEN``, ``new``:
  ``E_STORAGE``), the take-over starts; controls start at once, no refusal;
- ``done``: ``f-01``..``f-04`` ran once in all (the re-approval of ``f-01`` reruns nothing;
  controls: ``f-01`` ran once, on her approval);
- ``gate``: ``fg-1``'s action 1 ran once in all, action 2 at most once;
- ``ctl``: ``f-06`` ran once (her approval), ``f-05``/``f-07``/``f-08`` never;
- ``audit``: ``plangate audit --json`` on a fresh clone lists no valid run of
  ``f-05``/``f-07``/``f-08``, one of ``f-06`` where it ran, and (attacks) no valid start of
  ``f-01`` or ``fg-1`` on the squashed line (controls: one of ``f-01``).

Seen (round 74): BROKEN (28 ids, 1 class; FIXED 2026-11-30, r74squash, below).
**Round 73's squash rule reads the records by
their spelling, not their YAML: a squash whose owned keys are quoted, spaced, or whose files
are named ``PLAN.yaml`` starts by trust on first use and approvals rerun what ran** (``dq-key``,
``dq-new``, ``sq-new``, ``sp-key``, ``sp-new``, ``yaml-key``, ``yaml-new``, each ``-start``,
``-done``, ``-gate``, ``-audit``): the agent resets main to one parentless commit of its own
whose plan files say ``"frozen":``/``"execution":``/``"status":`` (or ``'frozen':``, or
``frozen :``; or every ``PLAN.yml`` renamed ``PLAN.yaml``, bytes kept): the same YAML, the
same frozen hashes. The old ``commit.key`` alone and a new state directory both start at
once (``own_commits_adopted`` ``count: 0``, ``by: trust on first use``: no ``own_line_gone``,
no ``own_line_squashed``, no ``--take-over`` asked); the rows read ``f-01``..``f-04``
"completed (from nothing)", ignored; Alice's re-approval of completed ``f-01`` RUNS IT A
SECOND TIME (``rec`` called twice in all), her gate approval of paused ``fg-1`` RUNS ITS
ACTION 1 A SECOND TIME (then pauses again), and the fresh-clone audit lists one valid start of
each on the squashed line. Exactly round 73's ``orphan`` break, back through the spelling.
Should (docs/operations.md, "A new state directory", "A squashed line": "plan files with
``frozen:``/``execution:`` records" refuse the key alone ``E_HISTORY_REWRITTEN``; "plan files
recording runs (an ``execution:`` block beside a plan status only a version that ran has)"
refuse a new state directory ``E_STORAGE``; SPEC §15 at most once): the check reads what the
files parse to (the key ``execution`` however it is spelled, in every plan file name the
controller reads, ``PLAN.yaml`` included), or at least the take-over rule's
``run_recorded_in_file`` applies to every first start. HELD: ``plain`` (round 73's fix:
``E_HISTORY_REWRITTEN``/``E_STORAGE``, take-over reruns nothing); ``val`` (only the status
value quoted: refused ``E_STORAGE``), ``crlf`` (refused), ``tag`` (``!!str`` tags: every file
``E_YAML_PARSE`` unreadable, nothing starts, nothing reruns; Alice's approval of ``f-06`` in
that file does nothing, which is the agent's doing); ``f-05``/``f-07``/``f-08`` never ran and
no audit called them valid anywhere.
FIXED (2026-11-30, r74squash): a first start decides by what the plan files PARSE to, at
every plan file name (``PLAN.yml``, ``PLAN.yaml``): ``git grep`` only narrows the files read to
those holding the key's letters or a backslash (the only way YAML spells a key otherwise), and
each is read by the controller's own loader; a ``git grep`` that fails refuses the start
(``E_GIT``). All 28 are refused as ``plain`` is, and the take-over reruns nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from burstkit import date_steps, gated, review_merge
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone

F = [f"f-{i:02d}" for i in range(1, 9)]
TAGS = [*F, "fg-1-1", "fg-1-2"]
ATTACKS = ["plain", "dq", "sq", "sp", "tag", "val", "yaml", "crlf"]
CLONES = ["plain-key", "plain-new", "dq-key", "dq-new", "sq-new", "sp-key", "sp-new", "tag-new",
          "val-new", "yaml-key", "yaml-new", "crlf-new"]  # fmt: skip
#: round 74: see the module docstring's "Seen (round 74)" (fixed 2026-11-30, r74squash)
BROKEN: dict[str, object] = {}

OWNED = ("frozen", "execution", "approval", "validation")


def _spell(text: str, shape: str) -> str:
    """``text`` (a plan file) respelled as ``shape``: the same YAML, other bytes."""
    lines = text.split("\n")
    out = []
    in_plan = False
    for line in lines:
        top = re.match(r"^([a-z_]+):(.*)$", line)
        if top:
            in_plan = top.group(1) == "plan"
        key, rest = (top.group(1), top.group(2)) if top else (None, None)
        st = re.match(r"^  status:(\s*)(\S+)(.*)$", line) if in_plan else None
        if shape in ("dq", "sq", "sp", "tag"):
            if key in OWNED:
                line = {"dq": f'"{key}":', "sq": f"'{key}':", "sp": f"{key} :",
                        "tag": f"!!str {key}:"}[shape] + rest  # fmt: skip
            elif st:
                sp, val, tail = st.groups()
                line = {"dq": f'  "status":{sp}{val}{tail}', "sq": f"  'status':{sp}{val}{tail}",
                        "sp": f"  status :{sp}{val}{tail}",
                        "tag": f"  status: !!str {val}{tail}"}[shape]  # fmt: skip
        elif shape == "val" and st:
            line = f'  status: "{st.group(2)}"{st.group(3)}'
        out.append(line)
    text = "\n".join(out)
    if shape == "ind":
        text = "\n".join(" " + x if x.strip() else x for x in text.split("\n"))
    if shape == "crlf":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text


def _plan_files(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / "plans").glob("*/PLAN.y*ml"))


def _approve(clone: Clone, slugs: list[str]) -> None:
    """Alice sets each plan's status ``approved`` in the file's own spelling."""
    for slug in slugs:
        path = next((clone.repo / "plans" / slug).glob("PLAN.y*ml"))
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        pat = r"""(\n\s*(?:!!str )?['"]?status['"]? ?:\s*(?:!!str )?['"]?)([a-z_]+)"""
        text, n = re.subn(pat, r"\1approved", text, count=1)
        assert n == 1, text[:300]
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    clone.git("add", "-A")
    clone.git("commit", "-q", "-m", "approve " + " ".join(slugs), who=ALICE)


def _squash(clone: Clone, shape: str, p0_tree: str) -> None:
    """The agent's one parentless commit of main's tree, every plan file respelled."""
    g = clone.git
    if shape.startswith("fresh"):
        g("read-tree", "--reset", "-u", p0_tree)
        clone.log.write_text("")
    for path in _plan_files(clone.repo):
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        if shape == "yaml":
            path.rename(path.with_name("PLAN.yaml"))
            continue
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(_spell(text, shape.removeprefix("fresh") or "plain"))
    g("add", "-A")
    tree = g("write-tree").strip()
    msg = "initial import" if shape.startswith("fresh") else "import"
    g("reset", "-q", "--hard", g("commit-tree", tree, "-m", msg, who=AGENT).strip())


def _key_only(lab: Lab, clone: Clone) -> None:
    clone.state.mkdir(mode=0o700)
    shutil.copy(lab.state / "commit.key", clone.state / "commit.key")
    os.chmod(clone.state / "commit.key", 0o600)


def build(root: Path, clones: list[str], shaper: Callable[..., None], start: int) -> Lab:
    """The lab (see the docstring), then each ``<shape>-<state>`` clone shaped by
    ``shaper(clone, shape, p0_tree)``, started (a refusal answered by ``--take-over``, or by
    ``clone.fix`` when the shaper set one), approved by Alice and run twice, then audited."""
    lab = Lab(root / "lab")
    date = date_steps(lab, start)
    date()
    for v in F:
        lab.write(v, plan_text(v))
    lab.write("fg-1", gated("fg-1"))
    lab.commit("agent plans")
    p0_tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    lab.run()
    date()
    review_merge(lab, [*F[:4], "fg-1"], date)
    lab.run()
    lab.first = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    out: dict = {}
    for name in clones:
        shape, state = name.split("-")
        date()
        clone = Clone(lab, root, name, root / name / "state")
        shaper(clone, shape, p0_tree)
        if state == "key":
            _key_only(lab, clone)
        elif state == "live":
            shutil.copytree(lab.state, clone.state, symlinks=True)
        date()
        first = clone.run()
        res: dict = {"first": {"rc": first.returncode, "err": first.stderr[-2500:]}}
        fix = getattr(clone, "fix", None)
        if first.returncode != 0 and fix and "E_HISTORY_REWRITTEN" in first.stderr:
            fix()
            first = clone.run()
            res["again"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        refused = "E_HISTORY_REWRITTEN" in first.stderr or "E_STORAGE" in first.stderr
        if first.returncode != 0 and refused:
            first = clone.run("--take-over")
            res["take"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        res["final_rc"] = first.returncode
        if shape.startswith("fresh"):
            date()
            _approve(clone, ["f-01", "fg-1"])
            clone.run()
        date()
        _approve(clone, ["fg-1", "f-01", "f-06"])
        a = clone.run()
        date()
        b = clone.run()
        res["after"] = {"rc": [a.returncode, b.returncode], "err": (a.stderr + b.stderr)[-2500:]}
        res["ran"] = {t: clone.count(t) for t in TAGS}
        res["rows"] = clone.rows()
        report, _ = clone_audit(clone, clone.root)  # type: ignore[arg-type]
        res["runs"] = {
            t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                    and e.get("approval_valid")])
            for t in [*F, "fg-1"]
        }  # fmt: skip
        out[name] = res
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


def _build(root: Path) -> Lab:
    return build(root, CLONES, _squash, 1791000000)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-squashspell", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    want = {**{t: 1 for t in F[:4]}, "fg-1-1": 1}
    assert {k: first[k] for k in want} == want, first
    assert all(first[k] == 0 for k in TAGS if k not in want), first


def test_the_spellings_keep_the_yaml() -> None:
    text = plan_text("x") + "frozen:\n  hash: h\nexecution:\n  status: completed\n"
    for shape in [*ATTACKS, "ind"]:
        if shape in ("plain", "yaml"):
            continue
        assert load_yaml(_spell(text, shape)) == load_yaml(text), shape


VS = ["start", "done", "gate", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_respelled_squash_reruns_nothing(lab: Lab, vid: str) -> None:
    check(lab, vid)


def check(lab: Lab, vid: str) -> None:
    """The assertions of ``<shape>-<state>-<v>`` (shared with the round-74 sibling module)."""
    shape, state, v = vid.split("-", 2)
    out = lab.out[f"{shape}-{state}"]  # type: ignore[attr-defined]
    ran, rows = out["ran"], out["rows"]
    said = (ran, rows, out["first"]["err"][-700:], out.get("take"), out["after"]["err"][-900:])
    control = shape.startswith("fresh") or (shape == "strip" and state == "new")
    unreadable = shape == "tag"  # the loader refuses the tags: every file unreadable
    if v == "start":
        assert out["final_rc"] == 0 and out["after"]["rc"] == [0, 0], said
        if control:
            assert out["first"]["rc"] == 0 and "take" not in out, said
        elif unreadable:
            assert rows["f-01"]["status"] == "unreadable", said
        elif shape == "ofox":  # a foxtrot: refused as such, then the line put back
            assert "E_HISTORY_REWRITTEN" in out["first"]["err"] and "again" in out, said
            assert state == "key" or out["take"]["rc"] == 0, said
        else:
            code = "E_HISTORY_REWRITTEN" if state == "key" else "E_STORAGE"
            assert out["first"]["rc"] != 0 and code in out["first"]["err"], said
            assert out["take"]["rc"] == 0, said
    elif v == "done":
        want = {"f-01": 1, **{s: 0 if shape.startswith("fresh") else 1 for s in F[1:4]}}
        assert {s: ran[s] for s in F[:4]} == want, said
    elif v == "gate":
        assert ran["fg-1-1"] == 1 and ran["fg-1-2"] <= 1, said
    elif v == "ctl":
        want = {"f-05": 0, "f-06": 0 if unreadable else 1, "f-07": 0, "f-08": 0}
        assert {s: ran[s] for s in want} == want, said
    elif v == "audit":
        runs = out["runs"]
        assert runs["f-05"] == runs["f-07"] == runs["f-08"] == 0, (runs, said)
        assert runs["f-06"] == ran["f-06"], (runs, said)
        if shape.startswith("fresh"):
            assert runs["f-01"] == 1, (runs, said)
        elif shape not in ("strip", "ofox"):  # the squashed line shows no start of f-01/fg-1
            assert runs["f-01"] == 0 and runs["fg-1"] == 0, (runs, said)
