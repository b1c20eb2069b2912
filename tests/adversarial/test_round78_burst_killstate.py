"""Round 78, bursts: exactly once under SIGKILL with round 77's two changes in the burst:
stateful and re-spelled ``working-tree-encoding`` (glibc's iconv) and status lines that keep
their own line end (docs/operations.md "Line ends and attributes"; docs/approvals.md).

Lab (one, local mode). The agent commits 24 one-action plans ``s-01`` .. ``s-24`` calling
``rec`` with their name (the ``ISO-2022-JP`` folders' task ``日本 <name>``, the ``UTF-7``
folders' ``a+b ~ café``; ``s-04``, ``s-08``, ... laid out with mixed LF / CR LF line ends),
then a ``.gitattributes``: ``s-01``, ``s-05``, ... ``working-tree-encoding=ISO-2022-JP``;
``s-02``, ``s-06``, ... ``UTF-7``; ``s-03``, ``s-07``, ... ``UTF-32`` with ``text eol=crlf``;
every file is checked out again by git. One pass freezes them. Alice then approves ``s-01``
.. ``s-14`` by editing the status value in place in the file's own encoding (her editor
re-spells the UTF-7 files and saves UTF-32 big-endian with its own mark: the same text), one
commit; ``s-15`` .. ``s-17`` with ``plangate approve``; in the same hand commit she ATTACKS
``s-18`` .. ``s-20`` by changing the status line's end beside the value (LF to CR LF; in the
UTF-32 ``eol=crlf`` folder ``s-19`` CR CR LF, whose blob keeps one CR: a lone LF there is
normalised away by git's clean, a plain status change); the agent approves ``s-21``
himself; ``s-22`` .. ``s-24`` are never approved. The daemon (``plangate run``) is started
three times and SIGKILLed after 3, 8 and 12 of the burst's calls; during the second run the
agent commits a ``.gitattributes`` that gives ``s-22`` (never approved) ``UTF-7`` too (the
file checked out again). Stale locks are cleared as the operator would, then three ``run
--once`` passes; then ``plangate audit --json`` on a fresh clone.

Ids: ``kills`` (the kills cut the burst: at least 3 calls in the first run, fewer than 17 in
all three, nothing twice, no attack plan among them, ``git status`` clean before the
daemons, every CLI approval exited 0); ``clean`` (``git status`` clean at the end, no plan
left "has uncommitted edits"); ``start`` (the restarted passes exit 0); per plan
``<s>-once`` (honest ``s-01`` .. ``s-17``: ``rec`` ran exactly once; ``s-18`` .. ``s-24``:
never) and ``<s>-audit`` (the fresh clone's valid runs equal what ran).

Seen (round 78): nothing broken (51 ids held). The kills landed after 3, 5 and 4 calls (12 of
the 17 honest plans run by the three killed daemons, none twice; the ISO-2022-JP, UTF-7 and
UTF-32 ``eol=crlf`` folders among them; an action a kill cut ends ``failed``
``E_ACTION_IN_DOUBT``, never re-run); the restarted passes exited 0 and ran the other five
once; ``s-18``/``s-19`` (a status line's end changed, the UTF-32 ``eol=crlf`` one by an extra
CR) refused ``E_SELF_APPROVAL``, ``s-20`` (CR CR LF in a mixed file) ``unreadable``, ``s-21``
``E_APPROVER_NOT_ALLOWED``; ``s-22`` (its attribute changed to UTF-7 mid-run), ``s-23``,
``s-24`` never ran; ``git status`` clean before the daemons (Alice's UTF-7 re-spelling and
big-endian UTF-32 included) and at the end, no plan waiting; the fresh-clone audit agreed plan
by plan. (A first draft expected Alice's LF status line in the ``eol=crlf`` UTF-32 folder to be
refused: git's clean normalises it, the blob is a plain status change, and it rightly ran.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, plan_text
from burstkit import daemon, date_steps
from test_round2_execution_kit import shared
from test_round75_burst_killlayouts import _unlock

S = [f"s-{i:02d}" for i in range(1, 25)]
HAND, CLI, EOL, SELF = S[:14], S[14:17], S[17:20], S[20:21]
HONEST = HAND + CLI
JP, U7, U32, MIX = S[0::4], S[1::4], S[2::4], S[3::4]
PY = {**{s: "iso2022_jp" for s in JP}, **{s: "utf-7" for s in U7}, **{s: "utf-32" for s in U32}}
BROKEN: dict[str, object] = {}
PEND = "  status: pending_approval"


def _attrs(extra: list[str]) -> str:
    rows = [f"plans/{s}/PLAN.yml working-tree-encoding=ISO-2022-JP\n" for s in JP]
    rows += [f"plans/{s}/PLAN.yml working-tree-encoding=UTF-7\n" for s in U7 + extra]
    rows += [f"plans/{s}/PLAN.yml text eol=crlf working-tree-encoding=UTF-32\n" for s in U32]
    return "".join(rows)


def layout(s: str) -> str:
    base = plan_text(s)
    if s in JP:
        base = base.replace(f'task: "attack variant {s}"', f'task: "日本 {s}"')
    if s in U7:
        base = base.replace(f'task: "attack variant {s}"', 'task: "a+b ~ café"')
    if s in MIX:
        lines = base.split("\n")
        base = "".join(x + ("\r\n" if i % 2 else "\n") for i, x in enumerate(lines[:-1]))
    return base


def _edit(s: str, raw: bytes, fn) -> bytes:  # type: ignore[no-untyped-def]
    codec = PY.get(s, "utf-8")
    text = fn(raw.decode(codec))
    if codec == "utf-32":  # her editor: big-endian, its own mark
        return b"\x00\x00\xfe\xff" + text.encode("utf-32-be")
    return text.encode(codec)


def _in_place(text: str) -> str:
    assert text.count("pending_approval") == 1, text[:200]
    return text.replace("pending_approval", "approved")


def _flip(text: str) -> str:
    """The status line's end changed beside the value: LF -> CR LF; in an ``eol=crlf`` working
    tree (CR LF) -> CR CR LF (git's clean keeps one CR in the blob; a lone LF there would be
    normalised away: a plain status change)."""
    if PEND + "\r\n" in text:
        return text.replace(PEND + "\r\n", "  status: approved\r\r\n")
    assert text.count(PEND + "\n") == 1, text[:200]
    return text.replace(PEND + "\n", "  status: approved\r\n")


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799950000)
    date()
    for s in S:
        lab.write(s, layout(s))
    lab.commit("agent plans", AGENT)
    date()
    (lab.repo / ".gitattributes").write_text(_attrs([]))
    lab.commit("agent attributes", AGENT, ".gitattributes")
    for s in S:
        (lab.repo / "plans" / s / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".")
    out: dict = {"status0": lab.git("status", "--porcelain")}
    date()
    lab.run()
    date()
    for s in HAND + EOL:
        path = lab.repo / "plans" / s / "PLAN.yml"
        path.write_bytes(_edit(s, path.read_bytes(), _in_place if s in HAND else _flip))
    lab.commit("approve the burst", ALICE)
    date()
    path = lab.repo / "plans" / SELF[0] / "PLAN.yml"
    path.write_bytes(_edit(SELF[0], path.read_bytes(), _in_place))
    lab.commit("the agent approves his own", AGENT)
    cli = {}
    for s in CLI:
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/{s}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[s] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-400:]}
    out["cli"] = cli
    out["status1"] = lab.git("status", "--porcelain")
    lab.log.touch()
    lab.git_date = None
    kills: list[list[str]] = []
    for n, at in enumerate((3, 8, 12)):
        with daemon(lab, root) as d:
            if n == 1:
                (lab.repo / ".gitattributes").write_text(_attrs(["s-22"]))
                lab.git("add", ".gitattributes")
                lab.git("commit", "-q", "-m", "s-22 in UTF-7", who=AGENT, check=False)
                (lab.repo / "plans" / "s-22" / "PLAN.yml").unlink()
                lab.git("checkout", "-q", "--", "plans/s-22", check=False)
            d.wait_for_calls(at - sum(len(x) for x in kills), 90)
            kills.append(d.ran())
        _unlock(lab)
    out["kills"] = kills
    rcs = []
    for _ in range(3):
        r = lab.run(check=False)
        rcs.append({"rc": r.returncode, "err": r.stderr[-1500:]})
    out["rcs"] = rcs
    out["porcelain"] = lab.git("status", "--porcelain")
    out["waits"] = [s for s in S if f"plans/{s}/PLAN.yml has uncommitted" in rcs[-1]["err"]]
    out["ran"] = {s: len(lab.calls(s)) for s in S}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason")}
                   for k, v in lab.status().items()}  # fmt: skip
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        s: len([e for e in report.get("executions", [])
                if e.get("plan") == f"plans/{s}" and e.get("approval_valid")])
        for s in S
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r78-killstate", _build)


IDS = ["kills", "clean", "start"] + [f"{s}-{v}" for s in S for v in ("once", "audit")]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_stateful_burst_runs_each_approved_plan_once(lab: Lab, vid: str) -> None:
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    if vid == "kills":
        done = [t for x in out["kills"] for t in x]
        assert out["status0"] == "" and out["status1"] == "", (out["status0"], out["status1"])
        assert len(out["kills"][0]) >= 3 and len(done) < len(HONEST), out["kills"]
        assert len(set(done)) == len(done) and not set(done) - set(HONEST), out["kills"]
        assert all(c["rc"] == 0 for c in out["cli"].values()), out["cli"]
    elif vid == "clean":
        assert out["porcelain"] == "" and out["waits"] == [], (out["porcelain"], out["waits"])
    elif vid == "start":
        assert [r["rc"] for r in out["rcs"]] == [0, 0, 0], out["rcs"]
    else:
        s, v = vid.rsplit("-", 1)
        said = (s, ran[s], runs[s], rows.get(s), out["kills"])
        if v == "once":
            assert ran[s] == (1 if s in HONEST else 0), said
        else:
            assert runs[s] == ran[s], said
