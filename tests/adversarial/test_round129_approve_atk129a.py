"""Round 129, approval side (atk129a): DRAFT."""

from __future__ import annotations

import functools
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    MALLORY,
    Lab,
    brief,
    build_all,
    clone_audit_got,
    plan_text,
    xfail,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
ERIN = ("Erin", "erin@example.com")
CO_A = "Co-authored-by: Alice <alice@example.com>"
CO_C = "Co-authored-by: Carol <carol@example.com>"

RUN = (1, {"completed"})
PEND = (0, {"pending_approval"})
REJ = (0, {"rejected"})

Act = Callable[[Lab, str], Any]


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    failing = lab.root / "frec.py"
    failing.write_text(lab.recorder.read_text() + "sys.exit(3)\n")
    frec = json.dumps([sys.executable, str(failing), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "bob@example.com", "carol@example.com",'
        ' "erin@example.com"]\n'
        "  groups:\n"
        '    ops: ["alice@example.com", "bob@example.com"]\n'
        '    sec: ["carol@example.com"]\n'
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        "    - match: {tools: [qrec, qchk]}\n"
        "      require: [{count: 2}]\n"
        '    - match: {paths: ["plans/pp-*"]}\n'
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  qrec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hrec: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  frec: {{kind: exec, argv: {frec}, {env}}}\n"
        f"  chk: {{kind: exec, argv: {rec}, {env}, idempotent: true, risk: low}}\n"
        f"  qchk: {{kind: exec, argv: {rec}, {env}, idempotent: true, risk: low}}\n"
    )


TOOLS = "available_tools:\n  - name: rec\n"
ALLTOOLS = (
    "available_tools:\n  - name: rec\n  - name: qrec\n  - name: hrec\n  - name: frec\n"
    "  - name: chk\n  - name: qchk\n"
)
CHECK = "{{tool: {t}, params: {{tag: {tag}}}, expect: {{path: $.json.ok, equals: true}}}}"


def _text(v: str, shape: str = "plain") -> str:
    """The plan of variant ``v``; action 1 calls ``rec`` with tag ``v`` (what is counted),
    ``shape`` says where else a tool hides."""
    base = plan_text(v).replace(TOOLS, ALLTOOLS)
    chk = functools.partial(CHECK.format, tag=f"{v}p")
    if shape == "plain":
        return base
    if shape == "hact":  # action 2 calls hrec
        return base + f"  - id: 2\n    tool: hrec\n    why: high\n    params: {{tag: {v}h}}\n"
    if shape == "qact":
        return base + f"  - id: 2\n    tool: qrec\n    why: q\n    params: {{tag: {v}q}}\n"
    if shape in ("fbh", "fbq"):  # action 1's fallback step calls the tool
        tool = {"fbh": "hrec", "fbq": "qrec"}[shape]
        return base + (
            "    on_failure: fallback\n"
            f"    fallback:\n      - {{id: '1.1', tool: {tool}, why: fb, params: {{tag: {v}f}}}}\n"
        )
    if shape.startswith("pre"):  # a plan-level precondition
        return base.replace("actions:\n", f"preconditions:\n  - {chk(t=shape[3:])}\nactions:\n")
    if shape.startswith("apre"):  # action 1's own precondition
        return base + f"    preconditions:\n      - {chk(t=shape[4:])}\n"
    if shape.startswith("ver"):  # action 1's verify
        return base + (
            f"    verify: {{tool: {shape[3:]}, params: {{tag: {v}p}},"
            " expect: [{path: $.json.ok, equals: true}], timeout: 30, interval: 1}\n"
        )
    if shape.startswith("fbver"):  # a fallback step's verify
        return base + (
            "    on_failure: fallback\n    fallback:\n"
            f"      - id: '1.1'\n        tool: rec\n        why: fb\n"
            f"        params: {{tag: {v}f}}\n"
            f"        verify: {{tool: {shape[5:]}, params: {{tag: {v}p}},"
            " expect: [{path: $.json.ok, equals: true}], timeout: 30, interval: 1}\n"
        )
    if shape.startswith("fbpre"):  # a fallback step's precondition
        return base + (
            "    on_failure: fallback\n    fallback:\n"
            f"      - id: '1.1'\n        tool: rec\n        why: fb\n"
            f"        params: {{tag: {v}f}}\n"
            f"        preconditions: [{chk(t=shape[5:])}]\n"
        )
    raise AssertionError(shape)


# -- acts ------------------------------------------------------------------------------------
def write(shape: str = "plain", who: tuple[str, str] = AGENT, msg: str = "") -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.write(v, _text(v, shape))
        lab.commit(msg.format(v=v) or f"plan {v}", who)

    return act


def nest(shape: str, who: tuple[str, str] = AGENT, msg: str = "") -> Act:
    """A draft child ``plans/<v>-c`` of ``shape`` (its tags ``<v>c...``) by ``who``, then the
    agent's parent ``plans/<v>`` (plain) pinning it as action 2."""

    def act(lab: Lab, v: str) -> None:
        lab.write(f"{v}-c", _text(v + "c", shape).replace("pending_approval", "draft"))
        lab.commit(msg.format(v=v) or f"child of {v}", who)
        digest = lab.cli("hash", str(lab.repo / "plans" / f"{v}-c")).stdout.strip().split()[-1]
        lab.write(
            v,
            _text(v) + f'  - id: 2\n    plan: {{path: plans/{v}-c, hash: "{digest}"}}\n'
            "    why: the pinned child\n",
        )
        lab.commit(f"agent: parent {v}", AGENT)

    return act


def approve(who: tuple[str, str], msg: str = "", slug: str = "{v}") -> Act:
    def act(lab: Lab, v: str) -> None:
        s = slug.format(v=v)
        lab.set_status(s, "approved")
        lab.commit(msg.format(v=v) or f"approve {s}", who)

    return act


def status(who: tuple[str, str], to: str) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, to)
        lab.commit(f"{to} {v}", who)

    return act


VARIANTS: dict[str, tuple[tuple[int, set[str]], str, list[Any]]] = {
    # -- risk: a high-risk tool anywhere asks ops + sec ------------------------------------
    "rkact": (PEND, "{v}", [write("hact"), approve(ALICE)]),
    "rkactok": (RUN, "{v}", [write("hact"), approve(ALICE), approve(CAROL)]),
    "rkfb": (PEND, "{v}", [write("fbh"), approve(ALICE)]),
    "rkfbok": (RUN, "{v}", [write("fbh"), approve(ALICE), approve(CAROL)]),
    "rknest": (PEND, "{v}", [nest("hact"), approve(ALICE)]),
    "rknestfb": (PEND, "{v}", [nest("fbh"), approve(ALICE)]),
    "rknestok": (RUN, "{v}", [nest("hact"), approve(CAROL), approve(BOB)]),
    "rkopsops": (PEND, "{v}", [write("hact"), approve(ALICE), approve(BOB)]),
    "rksecsec": (PEND, "{v}", [write("hact"), approve(CAROL), approve(CAROL)]),
    "rkerin": (PEND, "{v}", [write("hact"), approve(ERIN), approve(CAROL)]),
    "rkcoC": (PEND, "{v}", [write("hact", msg="plan {v}\n\n" + CO_C), approve(ALICE),
                            approve(CAROL)]),
    "rknestcoC": (PEND, "{v}", [nest("hact", msg="child {v}\n\n" + CO_C), approve(ALICE),
                                approve(CAROL)]),
    # -- tools rule: qrec / qchk anywhere asks two ----------------------------------------
    "tqact": (PEND, "{v}", [write("qact"), approve(ALICE)]),
    "tqactok": (RUN, "{v}", [write("qact"), approve(ALICE), approve(BOB)]),
    "tqfb": (PEND, "{v}", [write("fbq"), approve(ALICE)]),
    "tqpre": (PEND, "{v}", [write("preqchk"), approve(ALICE)]),
    "tqpreok": (RUN, "{v}", [write("preqchk"), approve(ALICE), approve(BOB)]),
    "tqapre": (PEND, "{v}", [write("apreqchk"), approve(ALICE)]),
    "tqver": (PEND, "{v}", [write("verqchk"), approve(ALICE)]),
    "tqfbver": (PEND, "{v}", [write("fbverqchk"), approve(ALICE)]),
    "tqfbpre": (PEND, "{v}", [write("fbpreqchk"), approve(ALICE)]),
    "tqnest": (PEND, "{v}", [nest("qact"), approve(ALICE)]),
    "tqnestpre": (PEND, "{v}", [nest("preqchk"), approve(ALICE)]),
    "tqnestapre": (PEND, "{v}", [nest("apreqchk"), approve(ALICE)]),
    "tqnestver": (PEND, "{v}", [nest("verqchk"), approve(ALICE)]),
    "tqnestfbver": (PEND, "{v}", [nest("fbverqchk"), approve(ALICE)]),
    "tqnestfb": (PEND, "{v}", [nest("fbq"), approve(ALICE)]),
    "tqchkctl": (RUN, "{v}", [write("prechk"), approve(ALICE)]),
}
VIDS = list(VARIANTS)


def _play(lab: Lab, vids: list[str]) -> dict[str, Any]:
    got: dict[str, Any] = {"passes": []}
    rounds = max(len(VARIANTS[v][2]) for v in vids)
    for rnd in range(rounds):
        for v in vids:
            acts = VARIANTS[v][2]
            if rnd < len(acts) and acts[rnd] is not None:
                acts[rnd](lab, v)
                lab.git("checkout", "-q", "main")
        res = lab.run(check=False)
        got["passes"].append((rnd, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
    got["rows"] = lab.rows()
    got["ran"] = {v: len(lab.calls(v)) for v in vids}
    got["clone"] = clone_audit_got(lab, lab.root)
    return got


def _build_one(root: Path, vids: list[str]) -> dict[str, Any]:
    lab = Lab(root)
    _config(lab)
    return _play(lab, vids)


def _build(root: Path) -> Lab:
    parts = {"a": VIDS[0::3], "b": VIDS[1::3], "d": VIDS[2::3]}
    builders: dict[str, Callable[[Path], Any]] = {
        k: functools.partial(_build_one, vids=vs) for k, vs in parts.items()
    }
    labs = build_all(root, builders, workers=3)
    got: dict[str, Any] = {"passes": [], "rows": {}, "ran": {}}
    execs: list[Any] = []
    for part in labs.got.values():
        got["passes"] += part["passes"]
        for key in ("rows", "ran"):
            got[key].update(part[key])
        execs += part["clone"]["report"].get("executions", [])
    got["clone"] = {"report": {"executions": execs}}
    lab = Lab.__new__(Lab)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r129-approve-atk129a", _build)


KINDS = ("", ":status", ":audit")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]
_BROKE: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    f"{v}{k}": xfail(cls, why) for cls, (vids, why) in _BROKE.items() for v in vids for k in KINDS
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round129_atk129a(lab: Any, vid: str) -> None:
    got = lab.got
    if vid == "passes":
        bad = [p for p in got["passes"] if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    (want_runs, want_status), slug, _acts = VARIANTS[v]
    plan = "plans/" + slug.format(v=v)
    row = got["rows"].get(plan, {})
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
    elif kind == "audit":
        execs = got["clone"]["report"].get("executions", [])
        valid = [
            e
            for e in execs
            if e.get("plan") == plan and e.get("approval_valid")
            and e.get("approval_kind") == "approve"
        ]
        assert len(valid) == want_runs, (valid, brief(row, 5))
    else:
        assert got["ran"][v] == want_runs, (got["ran"][v], brief(row, 5))
