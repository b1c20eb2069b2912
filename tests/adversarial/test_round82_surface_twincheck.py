"""Round 82, agent surfaces: ``plangate check`` of pull requests adding plan SOURCES into
folders that are one with another plan's or source's folder on some checkout, and MCP
``submit``/``status`` on the same shapes (round 81's fix: such a source is never converted,
its row waits ``E_PLAN_AMBIGUOUS``, the PLAN.yml beside it is the plan; docs/formats.md:
"``plangate check`` of a pull request adding a source reports it as the daemon will treat
it after the merge: ``convert`` ..., ``invalid``, or ``held``").

Lab (one, built once). On main, the agent commits the frozen plans ``plans/TW/PLAN.yml``
(tag ``tw-b``), ``plans/tnfi/PLAN.yml`` (``tn-b``) and ``plans/T8LONGNAME/PLAN.yml``
(``t8-b``); one pass freezes them. Then the agent opens a branch per variant (Alice merges
each ``--no-ff``; before, ``check --as alice@example.com`` of every branch in a clone):
- ``pr-tw``: adds ``plans/tw/PLAN.md`` (case twin of the frozen ``TW``);
- ``pr-tn``: adds ``plans/tnﬁ/PLAN.md`` (NFKC twin of ``tnfi``);
- ``pr-t8``: adds ``plans/T8LONG~1/PLAN.md`` (the 8.3 short name of ``T8LONGNAME``);
- ``pr-ts``: adds ``plans/ts/PLAN.md`` and ``plans/TS/PLAN.json`` together (two sources);
- ``pr-tb``: adds ``plans/tb\\/PLAN.md`` and ``plans/tb/PLAN.json`` (a backslash split);
- ``pr-ok`` (control): adds ``plans/prok/PLAN.md`` alone: ``convert``, the hash printed the
  one the controller then freezes, and it runs once after Alice's approval.
Variants ``<pr>:predict`` (``check`` names the added source ``held``/``E_PLAN_AMBIGUOUS``,
never ``convert``; the control ``convert`` with the hash frozen later), ``<pr>:pass`` (after
the merge and a pass: no ``plangate: convert`` of the source's folder), ``<pr>:ran`` (the
source's tag never ran; the frozen twin, approved by Alice, at most once).
MCP (the agent's session, before any merge): ``submit`` of a PLAN.yml into ``ms`` while the
agent's committed source ``plans/MS/PLAN.json`` waits (``ms:submit``: refused
``E_PLAN_AMBIGUOUS``, or committed and then the only plan of the pair: the source never
converted), an ActionPlan with a ``nested_plan`` step into ``mn`` while
``plans/mn/STEP-2/PLAN.yml`` is committed (``mn:submit``: nothing written into a twin of
``STEP-2``), a plain ``mok`` (control: committed, runs once); ``<s>:status`` (MCP
``status`` of the twin paths answers the row's code, never ``completed``); ``audit`` (the
fresh clone's audit agrees with the rows).

Seen (round 82): 5 ids, 1 class, all fixed (2026-12-01, r82twinsrc): ``check`` answers from
the daemon's source finder, which now holds a source in a twin folder (``SourceFinder.twins``,
before ``E_UNSAFE_PATH``: ``plans/tb\\`` too) and judges every file a conversion would write:
``held``, ``E_PLAN_AMBIGUOUS``. Was: **``plangate check`` predicts ``convert``
for a source the pass never converts** (``pr-tw``, ``pr-tn``, ``pr-t8``, ``pr-ts``, ``pr-tb``
``:predict``): for a branch adding ``plans/tw/PLAN.md`` beside the frozen ``plans/TW``
(likewise NFKC ``tnﬁ``/``tnfi``, 8.3 ``T8LONG~1``/``T8LONGNAME``, the pair ``ts``/``TS``
added together, ``plans/tb/PLAN.json`` beside ``plans/tb\\``), ``check --as alice`` says
``valid: true``, ``problems: []``, ``outcome: convert``, "PLAN.md converts to PLAN.yml (hash
sha256:...)"; after Alice's merge the pass converts none of them (``E_PLAN_AMBIGUOUS``; only
``plans/tb\\`` was predicted ``held``, ``E_UNSAFE_PATH``). Should (docs/formats.md: "``plangate
check`` of a pull request adding a source reports it as the daemon will treat it after the
merge: ``convert`` ..., ``invalid``, or ``held``"): ``held`` with ``E_PLAN_AMBIGUOUS``.
Nothing ran that should not.
Held: after the merges no twin source was converted or run, the frozen twins ran once on
Alice's approval; the control ``pr-ok`` predicted ``convert`` with exactly the hash the
controller froze and ran once; MCP ``submit`` of ``ms`` beside the agent's source
``plans/MS/PLAN.json`` was committed and is the plan (ran once; the source never converted),
of a nested ActionPlan ``mn`` ``E_CONVERT_UNSUPPORTED`` (nothing written beside ``STEP-2``),
``mok`` ran once; MCP ``status`` of every twin path never answered ``completed`` for a held
source (``E_USAGE``/``E_UNSAFE_PATH``); the fresh-clone audit agreed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import PLANGATE, answers
from test_round2_execution_kit import shared

PRS = {  # branch: [(folder, file, tag)] added on it
    "pr-tw": [("tw", "PLAN.md", "tw")],
    "pr-tn": [("tnﬁ", "PLAN.md", "tn")],
    "pr-t8": [("T8LONG~1", "PLAN.md", "t8")],
    "pr-ts": [("ts", "PLAN.md", "ts"), ("TS", "PLAN.json", "ts-b")],
    "pr-tb": [("tb\\", "PLAN.md", "tb"), ("tb", "PLAN.json", "tb-b")],
    "pr-ok": [("prok", "PLAN.md", "prok")],
}
FROZEN = {"pr-tw": ("TW", "tw-b"), "pr-tn": ("tnfi", "tn-b"), "pr-t8": ("T8LONGNAME", "t8-b")}


def _json(tag: str) -> str:
    return json.dumps(load_yaml(plan_text(tag)), indent=2) + "\n"


def _src(lab: Lab, folder: str, name: str, tag: str) -> None:
    lab.write(folder, _json(tag) if name == "PLAN.json" else plan_text(tag), name)


def _nested(tag: str) -> str:
    inner = {
        "plan_version": 1,
        "plan_id": f"plan:{tag}-inner",
        "title": f"{tag}-inner",
        "workspace_id": "/w",
        "steps": [
            {"step_number": 1, "action": {"type": "rec", "tag": f"{tag}-in"}, "description": "i"}
        ],
    }
    return json.dumps(
        {
            "plan_version": 1,
            "plan_id": f"plan:{tag}",
            "title": tag,
            "workspace_id": "/w",
            "steps": [
                {"step_number": 1, "action": {"type": "rec", "tag": tag}, "description": "a"},
                {
                    "step_number": 2,
                    "action": {"type": "nested_plan", "plan": inner},
                    "description": "n",
                },
            ],
        }
    )


def _rows(lab: Lab) -> dict[str, Any]:
    done = lab.cli("status", "--json", "--config", str(lab.config))
    return {r["plan"]: r for r in json.loads(done.stdout)}


def _tool(reply: dict[str, Any]) -> Any:
    res = reply.get("result") or {}
    for part in res.get("content") or []:
        if part.get("type") == "text":
            try:
                return json.loads(part["text"])
            except ValueError:
                return part["text"]
    return reply


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for folder, tag in FROZEN.values():
        lab.write(folder, plan_text(tag))
    _src(lab, "MS", "PLAN.json", "ms-b")
    lab.write("mn/STEP-2", plan_text("mn-b"))
    lab.commit("agent: plans", AGENT)
    got: dict[str, Any] = {}
    replies = answers(lab, [("submit", {"plan": plan_text("ms"), "slug": "ms"})])
    replies += answers(
        lab, [("submit", {"plan": _nested("mn"), "slug": "mn", "format": "actionplan"})]
    )
    replies += answers(lab, [("submit", {"plan": plan_text("mok"), "slug": "mok"})])
    got["submit"] = {s: _tool(r) for s, r in zip(("ms", "mn", "mok"), replies, strict=True)}
    lab.git("checkout", "-q", "-f", "main")
    lab.run()
    for branch, files in PRS.items():
        lab.git("checkout", "-q", "-b", branch, "main")
        for folder, name, tag in files:
            _src(lab, folder, name, tag)
        lab.commit(f"agent: {branch}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report = {}
    for branch in PRS:
        out = lab.cli(
            "check", "--config", cfg, "--base", "origin/main", "--head", f"origin/{branch}",
            "--as", "alice@example.com", "--format", "json", cwd=chk,
        )  # fmt: skip
        report[branch] = f"{out.returncode} {out.stdout}{out.stderr[-800:]}"
    got["check"] = report
    shutil.rmtree(chk, ignore_errors=True)
    for branch in PRS:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge {branch}", branch, who=ALICE)
    lab.run()
    rows = _rows(lab)
    got["rows1"] = rows
    for plan, row in rows.items():
        if row.get("status") == "pending_approval":
            subprocess.run(
                [PLANGATE, "approve", "--config", cfg, plan],
                cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
            )  # fmt: skip
    lab.run()
    lab.run()
    got["rows"] = _rows(lab)
    got["frozen-prok"] = str((lab.plan("prok").get("frozen") or {}).get("hash"))
    paths = ["plans/tw", "plans/TW", "plans/ts", "plans/TS", "plans/tnﬁ", "plans/tb\\", "plans/MS"]
    stat = answers(lab, [("status", {"path": p}) for p in paths])
    got["mcp-status"] = {p: _tool(r) for p, r in zip(paths, stat, strict=True)}
    tags = ["tw", "tw-b", "tn", "tn-b", "t8", "t8-b", "ts", "ts-b", "tb", "tb-b", "prok"]
    tags += ["ms", "ms-b", "mn", "mn-in", "mn-b", "mok"]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["converts"] = lab.git(
        "log", "--format=%s", "--author=plangate", "--grep=^plangate: convert"
    ).splitlines()
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans").splitlines()
    rep, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in rep["executions"])
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r82-surface-twincheck", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 82: {what}")


IDS = [f"{b}:{w}" for b in PRS for w in ("predict", "pass", "ran")]
IDS += ["ms:submit", "mn:submit", "mok:submit", "ms:ran", "mn:ran", "mok:ran"]
IDS += [f"status:{p}" for p in ("tw", "TW", "ts", "TS", "tnﬁ", "tb\\", "MS")]
BROKEN: dict[str, Any] = {}  # round 82's 5 fixed (2026-12-01, r82twinsrc)


def _check_rows(text: str) -> list[dict[str, Any]]:
    body = text.split(" ", 1)[1]
    try:
        data = json.loads(body[: body.rindex("}") + 1] if "}" in body else body)
    except ValueError:
        dec = json.JSONDecoder()
        data, _ = dec.raw_decode(body.lstrip())
    return data if isinstance(data, list) else list(data.get("plans", []))


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_twin_sources_in_check_and_mcp(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    name, what = vid.split(":", 1)
    calls = got["calls"]
    if name in PRS:
        files = PRS[name]
        if what == "predict":
            text = got["check"][name]
            mine = [
                r for r in _check_rows(text) if r.get("plan") in {f"plans/{f}" for f, _, _ in files}
            ]
            assert mine, text
            for row in mine:
                said = json.dumps(row, ensure_ascii=False)
                if name == "pr-ok":
                    assert row.get("outcome") == "convert" and got["frozen-prok"] in said, (
                        row,
                        got["frozen-prok"],
                    )
                else:
                    assert row.get("outcome") != "convert" and "E_PLAN_AMBIGUOUS" in said, row
        elif what == "pass":
            for folder, _, _ in files:
                done = f"plangate: convert plans/{folder}" in got["converts"]
                assert done == (name == "pr-ok"), (folder, got["converts"])
        else:
            for _, _, tag in files:
                assert calls[tag] == (1 if name == "pr-ok" else 0), calls
            if name in FROZEN:
                assert calls[FROZEN[name][1]] <= 1, calls
    elif what == "submit":
        ans = got["submit"][name]
        if name == "mok":
            assert isinstance(ans, dict) and ans.get("ok"), ans
        elif name == "ms":
            said = json.dumps(ans, ensure_ascii=False)
            assert (
                "E_PLAN_AMBIGUOUS" in said or "plangate: convert plans/MS" not in got["converts"]
            ), (ans, got["converts"])
        else:
            twins = {
                p.split("/")[2] for p in got["tree"] if p.lower().startswith("plans/mn/step-2/")
            }
            assert len(twins) <= 1, got["tree"]
    elif what == "ran":
        if name == "mok":
            assert calls["mok"] == 1, calls
        elif name == "ms":
            assert calls["ms"] + calls["ms-b"] <= 1 and calls["ms-b"] == 0, calls
        else:
            assert calls["mn-b"] == 0 or calls["mn-in"] == 0, calls
    else:
        ans = got["mcp-status"][f"plans/{what}"]
        said = json.dumps(ans, ensure_ascii=False)
        plans = (ans.get("plans") if isinstance(ans, dict) else None) or []
        if what in ("TW", "MS"):  # the PLAN.yml is the plan (or the lone source)
            assert "completed" not in said or "E_PLAN_AMBIGUOUS" not in said, said
        else:
            assert all(p.get("status") != "completed" for p in plans), said
            assert "E_PLAN_AMBIGUOUS" in said or "E_USAGE" in said or not plans, said


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
    assert got["valid"] == ran and got["audit"] == ran, (got["audit"], ran)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk82b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r82ck-", dir="/tmp/atk82b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
