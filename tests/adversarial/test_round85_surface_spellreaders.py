"""Round 85, agent surfaces: every reader of a plan whose twin claim came through another
spelling of the plans folder itself (round 84's r84plansdir), of a plan folder that exists
only in such a spelling, and MCP ``submit`` / ``check`` beside one.

Lab (one, local mode, built once, a few ``run --once`` passes). The agent's plans
``plans/<s>/PLAN.yml`` are frozen; then Mallory commits another plan's text (tag
``<s>-twin``) at a path that IS ``plans/<s>/PLAN.yml`` on some checkout:
- ``uc``: ``PLANS/uc/PLAN.yml``; ``mc``: ``Plans/mc/PLAN.yml``; ``dt``: ``plans./dt/``;
  ``bl``: ``plans /bl/``; ``sn``: ``PLANS~1/sn/``; ``rf``: the root FILE
  ``plans\\rf\\PLAN.yml``; ``cd``: ``Plans./cd/``.
- ``ok`` (control): no twin.

Readers, one id each ``<s>:<reader>``: ``validate``, ``hash``, ``freeze`` (``--check``),
``show`` (``--json --config``) of ``plans/<s>`` (``:...``) and of the spelled file
(``:sp-...``, the path as Mallory wrote it); ``row`` (``status --json``); MCP ``status``,
``log``, ``wait`` (1 s) of ``plans/<s>``. Each must say ``E_PLAN_AMBIGUOUS`` (the spelled
``plans /bl/`` and ``plans\\rf\\`` files: ``E_UNSAFE_PATH``, their own name) and print no hash
as valid (``ok``: valid, the hash the controller froze). ``<s>:ran``: after Alice's approval of
every plan, nothing of a twin pair ran (``ok`` once); ``<s>:audit``: the fresh clone's audit
calls valid exactly the runs the controller made.

Spelling only (a plans folder spelling holds a plan file, ``plans/<s>`` holds none):
- ``so``: ``Plans/so/PLAN.yml``; ``sp``: ``PLANS/sp/PLAN.yml``; ``sd``: ``plans./sd/PLAN.yml``.
  ``<s>:submit``: MCP ``submit`` of slug ``<s>`` writes ``plans/<s>/PLAN.yml`` beside the
  claim: refused ``E_PLAN_AMBIGUOUS`` with nothing committed, as docs/agents.md says for
  "any name that is a plan file's in another case or spelling", or, if committed, its answer
  must be the controller's verdict (``<s>:verdict``: the row after a pass says the same
  status ``submit`` answered). ``<s>:ran``: nothing ran after Alice's approval.
- ``np`` (control): MCP ``submit`` of a fresh slug: ``ok``, committed, the row agrees.

``check`` (``--as alice``, JSON) of a pull request:
- ``pr-ck``: Mallory's ``Plans/ck/PLAN.yml`` beside the frozen ``plans/ck`` and the agent's
  approval request of ``plans/ck``: predicts ``held`` / ``E_PLAN_AMBIGUOUS``, never ``run``.
- ``pr-cn``: the agent's NEW ``plans/cn/PLAN.yml`` where main holds ``PLANS/cn/PLAN.yml``.
- ``pr-cc`` (control): an approval request of the frozen ``plans/cc`` alone: ``start``.

Seen (round 85): nothing broke here. Held: every reader of every twin pair (``plans/<s>`` and
the spelled file) refused ``E_PLAN_AMBIGUOUS`` (the spelled ``plans /bl/PLAN.yml`` and
``plans\\rf\\PLAN.yml`` ``E_UNSAFE_PATH``), printed no hash, and the row, MCP ``status``,
``log`` and ``wait`` named it; MCP ``submit`` beside a spelling-only claim (``Plans/``,
``PLANS/``, ``plans./``) was refused ``E_PLAN_AMBIGUOUS`` naming the claim, nothing committed;
``check`` predicted ``held`` for a twin added by the pull request and for a new plan beside a
claim already on main; nothing of a pair ran after Alice's approval, the controls ran once and
the fresh-clone audit agreed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

TWINS = {
    "uc": "PLANS/uc/PLAN.yml",
    "mc": "Plans/mc/PLAN.yml",
    "dt": "plans./dt/PLAN.yml",
    "bl": "plans /bl/PLAN.yml",
    "sn": "PLANS~1/sn/PLAN.yml",
    "rf": "plans\\rf\\PLAN.yml",
    "cd": "Plans./cd/PLAN.yml",
}
ONLY = {"so": "Plans/so/PLAN.yml", "sp": "PLANS/sp/PLAN.yml", "sd": "plans./sd/PLAN.yml"}
CLI_READERS = ("validate", "hash", "freeze", "show")
MCP_READERS = ("mcp-status", "mcp-log", "mcp-wait")
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _cli(lab: Lab, reader: str, path: Path) -> tuple[int, str]:
    args = {
        "validate": ["validate"],
        "hash": ["hash"],
        "freeze": ["freeze", "--check"],
        "show": ["show", "--json", "--config", str(lab.config)],
    }[reader]
    r = lab.cli(*args, str(path), cwd=lab.repo)
    return r.returncode, r.stdout[-2000:] + "\n--\n" + r.stderr[-2000:]


def _text(reply: dict[str, Any] | None) -> tuple[bool, str]:
    if reply is None:
        return True, "no reply"
    res = reply.get("result", {})
    return bool(res.get("isError")), "".join(c.get("text", "") for c in res.get("content", []))


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    got: dict[str, Any] = {"read": {}}
    for slug in [*TWINS, "ok", "ck", "cc"]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    got["frozen"] = {s: lab.plan(s).get("frozen", {}).get("hash") for s in [*TWINS, "ok"]}
    for slug, rel in {**TWINS, **ONLY}.items():
        _put(lab, rel, plan_text(f"{slug}-twin"))
    _put(lab, "PLANS/cn/PLAN.yml", plan_text("cn-twin"))
    lab.commit("mallory: twins", MALLORY)
    lab.run()
    # check: pull requests
    lab.git("checkout", "-q", "-b", "pr-ck", "main")
    _put(lab, "Plans/ck/PLAN.yml", plan_text("ck-twin"))
    lab.commit("mallory: ck twin", MALLORY)
    lab.set_status("ck", "approved")
    lab.commit("agent asks ck", AGENT)
    lab.git("checkout", "-q", "-b", "pr-cn", "main")
    lab.write("cn", plan_text("cn"))
    lab.commit("agent: cn", AGENT)
    lab.git("checkout", "-q", "-b", "pr-cc", "main")
    lab.set_status("cc", "approved")
    lab.commit("agent asks cc", AGENT)
    lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    for pr in ("pr-ck", "pr-cn", "pr-cc"):
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/{pr}", "--as", "alice@example.com", "--format", "json", cwd=chk,
        )  # fmt: skip
        got["read"][f"{pr}:check"] = (out.returncode, out.stdout[-4000:] + out.stderr[-1500:])
    # readers
    rows = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    calls: list[tuple[str, dict[str, Any]]] = []
    keys: list[str] = []
    for slug in [*TWINS, "ok"]:
        got["read"][f"{slug}:row"] = (0, json.dumps(rows.get(f"plans/{slug}"), ensure_ascii=False))
        for reader in CLI_READERS:
            got["read"][f"{slug}:{reader}"] = _cli(lab, reader, lab.repo / "plans" / slug)
            if slug in TWINS:
                spelled = lab.repo / TWINS[slug]
                got["read"][f"{slug}:sp-{reader}"] = _cli(lab, reader, spelled)
        for tool in ("status", "log", "wait"):
            args: dict[str, Any] = {"path": f"plans/{slug}"}
            if tool == "wait":
                args["timeout"] = 1
            calls.append((tool, args))
            keys.append(f"{slug}:mcp-{tool}")
    replies, _err = mcpkit.session(lab, calls)
    for key, reply in zip(keys, replies, strict=True):
        got["read"][key] = _text(reply)
    # MCP submit beside a spelling-only claim, and a control
    head0 = lab.head()
    for slug in [*ONLY, "np"]:
        before = lab.head()
        reply = mcpkit.call(lab, "submit", {"plan": plan_text(slug), "slug": slug})
        got["read"][f"{slug}:submit"] = (*_text(reply), before != lab.head())
    got["submitted"] = lab.git("log", "--format=%h %an %s", "--name-status", f"{head0}..HEAD")
    lab.run()
    rows = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    got["rows_after_submit"] = {s: rows.get(f"plans/{s}") for s in [*ONLY, "np"]}
    # Alice approves every agent plan on main
    for slug in [*TWINS, "ok", *ONLY, "np"]:
        if (lab.repo / "plans" / slug / "PLAN.yml").exists():
            lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in [*TWINS, *ONLY, "ok", "np"]}
    got["twin_calls"] = sum(len(lab.calls(f"{s}-twin")) for s in [*TWINS, *ONLY])
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-surface-spellreaders", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 surface: {cls}: {what}"
    )


READ_IDS = (
    [f"{s}:{r}" for s in TWINS for r in (*CLI_READERS, *(f"sp-{x}" for x in CLI_READERS))]
    + [f"{s}:{r}" for s in [*TWINS, "ok"] for r in ("row", *MCP_READERS)]
    + [f"ok:{r}" for r in CLI_READERS]
)
RUN_IDS = [f"{s}:{w}" for s in [*TWINS, "ok"] for w in ("ran", "audit")]
SUB_IDS = [f"{s}:{w}" for s in [*ONLY, "np"] for w in ("submit", "verdict", "ran")]
CHECK_IDS = ["pr-ck:check", "pr-cn:check", "pr-cc:check"]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(READ_IDS, READ_IDS, BROKEN))
def test_round85_spelled_readers(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, reader = vid.split(":")
    rc, text = got["read"][vid]
    if slug == "ok":
        assert "E_PLAN_AMBIGUOUS" not in text, text
        if reader in ("row", "mcp-status", "mcp-log", "mcp-wait"):
            assert not rc, text
            return
        assert rc == 0, text
        assert got["frozen"]["ok"] in text, (got["frozen"]["ok"], text)
        return
    if reader.startswith("sp-") and slug in ("bl", "rf"):  # the spelled path itself
        assert "E_UNSAFE_PATH" in text, text  # a blank-ended / backslashed folder name
    else:
        assert "E_PLAN_AMBIGUOUS" in text, text
    if reader not in ("row", "mcp-status"):  # a row holds it; the others refuse
        assert rc, text  # refused (an exit code or an MCP tool error)
    assert got["frozen"][slug] not in text.replace("frozen_hash", ""), text


@pytest.mark.parametrize("vid", cases(RUN_IDS, RUN_IDS, BROKEN))
def test_round85_spelled_runs(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    assert got["twin_calls"] == 0, got["twin_calls"]
    if what == "ran":
        want = 1 if slug == "ok" else 0
        row = got["rows"].get(f"plans/{slug}", {})
        assert got["calls"][slug] == want, (got["calls"], row.get("status"), row.get("reason"))
        return
    ran = {p for p, r in got["rows"].items() if r.get("status") == "completed"}
    plan = f"plans/{slug}"
    assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], sorted(ran))


@pytest.mark.parametrize("vid", cases(SUB_IDS, SUB_IDS, BROKEN))
def test_round85_spelled_submit(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    is_err, text, moved = got["read"][f"{slug}:submit"]
    row = got["rows_after_submit"].get(slug) or {}
    if what == "submit":
        if slug == "np":
            assert not is_err and moved, text
            return
        assert is_err and "E_PLAN_AMBIGUOUS" in text, (text, got["submitted"])
        assert not moved, got["submitted"]
        return
    if what == "verdict":  # what submit answered is what the controller then says
        if is_err:
            assert not moved and not row, (text, row)
            return
        answered = json.loads(text).get("status")
        assert row.get("status") == answered, (answered, row)
        assert "E_PLAN_AMBIGUOUS" not in json.dumps(row), (answered, row)
        return
    want = 1 if slug == "np" else 0
    assert got["calls"][slug] == want, (got["calls"], got["rows"].get(f"plans/{slug}"))
    assert got["twin_calls"] == 0


@pytest.mark.parametrize("vid", cases(CHECK_IDS, CHECK_IDS, BROKEN))
def test_round85_spelled_check(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    _rc, text = got["read"][vid]
    slug = vid.split(":")[0][3:]
    rows = json.loads(text[: text.rindex("}") + 1])["plans"]
    mine = [r for r in rows if r.get("plan") == f"plans/{slug}"]
    assert len(mine) == 1, text
    if slug == "cc":
        assert mine[0]["outcome"] == "start", mine
        return
    assert mine[0]["outcome"] == "held", mine
    assert "E_PLAN_AMBIGUOUS" in json.dumps(mine[0]), mine


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk85b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r85sr-", dir="/tmp/atk85b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
