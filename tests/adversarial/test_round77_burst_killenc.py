"""Round 77, bursts: exactly once under SIGKILL with round 76's in-process ``ident`` and
``working-tree-encoding`` in the burst (docs/operations.md, "Line ends and attributes": what
the controller compares, runs and writes goes through them, "so ``git status`` stays clean").

Lab (one, local mode). The agent commits 30 one-action plans ``k-01`` .. ``k-30`` calling
``rec`` with their name, then (a second commit) a ``.gitattributes``: every third folder
(``k-03``, ``k-06``, ...) ``working-tree-encoding=UTF-16``, every third from ``k-02``
(``k-02``, ``k-05``, ...) ``ident`` (their plans carry ``# $Id$``), and ``k-01``, ``k-04``,
... ``text eol=crlf``; every file is checked out again by git. One pass freezes them. Alice
then approves ``k-01`` .. ``k-20`` by editing the status value in place in the file's own
encoding (one commit), ``k-21`` .. ``k-24`` with ``plangate approve``; in the same hand commit
she ATTACKS ``k-25`` .. ``k-27`` by writing ``approved  # ok`` (a comment beside the value:
her writing); the agent approves ``k-28`` himself; ``k-29``/``k-30`` are never approved. The
daemon (``plangate run``) is started three times and SIGKILLed after 4, 10 and 16 of the
burst's calls; during the second run the agent commits a ``.gitattributes`` that also gives
``k-29`` a ``working-tree-encoding=UTF-16`` (an attribute changed while the daemon runs; the
file checked out again). Stale locks are cleared as the operator would, then three ``run
--once`` passes; then ``plangate audit --json`` on a fresh clone.

Ids: ``kills`` (the kills cut the burst: at least 4 calls in the first run, fewer than 24 in
all three, nothing twice, no attack plan among them); ``clean`` (``git status`` clean at the
end, no plan left "has uncommitted edits"); ``start`` (the restarted passes exit 0); per plan
``<k>-once`` (honest ``k-01`` .. ``k-24``: ``rec`` ran exactly once; ``k-25`` .. ``k-30``:
never) and ``<k>-audit`` (the fresh clone's valid runs equal what ran).

Seen (round 77): nothing broken (63 ids held). The kills landed after 4, 6 and 6 calls (16 of
the 24 honest plans run by the three killed daemons, none twice, ``k-03``/``k-06``/``k-09``
UTF-16 and ``k-02``/``k-05``/... ``ident`` among them); the restarted passes exited 0 and ran
the other eight once; ``k-25`` .. ``k-27`` refused ``E_SELF_APPROVAL``, ``k-28``
``E_APPROVER_NOT_ALLOWED``; ``k-29`` (its attribute changed mid-run) and ``k-30`` never ran;
``git status`` clean before the daemons and at the end, no plan waiting; the fresh-clone
audit agreed plan by plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, identity, plan_text
from burstkit import daemon, date_steps
from test_round2_execution_kit import shared
from test_round75_burst_killlayouts import _unlock

K = [f"k-{i:02d}" for i in range(1, 31)]
HAND, CLI, CMT, SELF = K[:20], K[20:24], K[24:27], K[27:28]
HONEST = HAND + CLI
WTE, IDENT, CRLF = K[2::3], K[1::3], K[0::3]
BROKEN: dict[str, object] = {}


def _attrs(extra: list[str]) -> str:
    rows = [f"plans/{k}/PLAN.yml working-tree-encoding=UTF-16\n" for k in WTE + extra]
    rows += [f"plans/{k}/PLAN.yml ident\n" for k in IDENT]
    rows += [f"plans/{k}/PLAN.yml text eol=crlf\n" for k in CRLF]
    return "".join(rows)


def _replace(raw: bytes, old: str, new: str) -> bytes:
    for enc in ("ascii", "utf-16-le", "utf-16-be"):
        if raw.count(old.encode(enc)) == 1:
            return raw.replace(old.encode(enc), new.encode(enc))
    raise AssertionError((old, raw[:200]))


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1799700000)
    date()
    for k in K:
        lab.write(k, ("# $Id$\n" if k in IDENT else "") + plan_text(k))
    lab.commit("agent plans", AGENT)
    date()
    (lab.repo / ".gitattributes").write_text(_attrs([]))
    lab.commit("agent attributes", AGENT, ".gitattributes")
    for k in K:
        (lab.repo / "plans" / k / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".")
    out: dict = {"status0": lab.git("status", "--porcelain")}
    date()
    lab.run()
    date()
    for k in HAND + CMT:
        path = lab.repo / "plans" / k / "PLAN.yml"
        new = "approved" if k in HAND else "approved  # ok"
        path.write_bytes(_replace(path.read_bytes(), "pending_approval", new))
    lab.commit("approve the burst", ALICE)
    date()
    path = lab.repo / "plans" / SELF[0] / "PLAN.yml"
    path.write_bytes(_replace(path.read_bytes(), "pending_approval", "approved"))
    lab.commit("the agent approves his own", AGENT)
    cli = {}
    for k in CLI:
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/{k}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[k] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-400:]}
    out["cli"] = cli
    out["status1"] = lab.git("status", "--porcelain")
    lab.log.touch()
    lab.git_date = None
    kills: list[list[str]] = []
    for n, at in enumerate((4, 10, 16)):
        with daemon(lab, root) as d:
            if n == 1:
                (lab.repo / ".gitattributes").write_text(_attrs(["k-29"]))
                lab.git("add", ".gitattributes")
                lab.git("commit", "-q", "-m", "k-29 in UTF-16", who=AGENT, check=False)
                (lab.repo / "plans" / "k-29" / "PLAN.yml").unlink()
                lab.git("checkout", "-q", "--", "plans/k-29", check=False)
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
    out["waits"] = [k for k in K if f"plans/{k}/PLAN.yml has uncommitted" in rcs[-1]["err"]]
    out["ran"] = {k: len(lab.calls(k)) for k in K}
    out["rows"] = {k.removeprefix("plans/"): {"status": v.get("status"), "reason": v.get("reason")}
                   for k, v in lab.status().items()}  # fmt: skip
    report, _ = clone_audit(lab, root / "audit")
    out["runs"] = {
        k: len([e for e in report.get("executions", [])
                if e.get("plan") == f"plans/{k}" and e.get("approval_valid")])
        for k in K
    }  # fmt: skip
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-killenc", _build)


IDS = ["kills", "clean", "start"] + [f"{k}-{v}" for k in K for v in ("once", "audit")]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_encoded_burst_runs_each_approved_plan_once(lab: Lab, vid: str) -> None:
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    if vid == "kills":
        done = [t for x in out["kills"] for t in x]
        assert out["status0"] == "" and out["status1"] == "", (out["status0"], out["status1"])
        assert len(out["kills"][0]) >= 4 and len(done) < len(HONEST), out["kills"]
        assert len(set(done)) == len(done) and not set(done) - set(HONEST), out["kills"]
        assert all(c["rc"] == 0 for c in out["cli"].values()), out["cli"]
    elif vid == "clean":
        assert out["porcelain"] == "" and out["waits"] == [], (out["porcelain"], out["waits"])
    elif vid == "start":
        assert [r["rc"] for r in out["rcs"]] == [0, 0, 0], out["rcs"]
    else:
        k, v = vid.rsplit("-", 1)
        said = (k, ran[k], runs[k], rows.get(k), out["kills"])
        if v == "once":
            assert ran[k] == (1 if k in HONEST else 0), said
        else:
            assert runs[k] == ran[k], said
