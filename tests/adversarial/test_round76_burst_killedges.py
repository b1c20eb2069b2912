"""Round 76, bursts: exactly once under SIGKILL, with round 75's two changes in the burst
(the plain status change decided on the parse, line ends as git converts them).

Lab (one, local mode). The agent commits 30 one-action plans ``k-01`` .. ``k-30`` calling
``rec`` with their name; every third folder (``k-03``, ``k-06``, ...) is under a
``.gitattributes`` ``text eol=crlf`` line (LF blobs, a CRLF working tree, ``git status``
clean). One pass freezes them. Alice then approves ``k-01`` .. ``k-20`` by editing the status
value in place (one commit; the CRLF files keep their CRLF), ``k-21`` .. ``k-24`` with
``plangate approve``; in the same hand commit she ATTACKS ``k-25`` .. ``k-27`` by writing
``approved  # ok`` (a comment beside the value: her writing, docs/approvals.md), the agent
approves ``k-28`` himself in a commit of his own, ``k-29``/``k-30`` are never approved.
The daemon (``plangate run``) is started three times and SIGKILLed after 5, 12 and 20 of the
burst's calls; during the second run ``core.autocrlf=true`` is set in ``.git/config`` (a user
changing it while the daemon runs). Stale locks are cleared as the operator would, then three
``run --once`` passes on the same state; then ``plangate audit --json`` on a fresh clone.

Ids: ``kills`` (the kills cut the burst: at least 5 calls in the first run, fewer than 24 in
all three, nothing twice, no attack plan among them); ``clean`` (``git status`` clean at the
end, no plan left "has uncommitted edits"); ``start`` (the restarted passes exit 0); per plan
``<k>-once`` (honest ``k-01`` .. ``k-24``: ``rec`` ran exactly once; ``k-25`` .. ``k-30``:
never) and ``<k>-audit`` (the fresh clone's valid runs equal what ran).

Seen (round 76): nothing broken (63 ids held). The kills landed after 5, 7 and 8 calls (20 of
the 24 honest plans run by the three killed daemons, none twice); the restarted passes exited
0 and ran the other four once; ``k-25`` .. ``k-27`` (a comment beside Alice's value) stayed
``pending_approval`` "approval refused: E_SELF_APPROVAL"; ``k-28`` "E_APPROVER_NOT_ALLOWED";
``k-29``/``k-30`` never ran; the CRLF folders ran once and ``core.autocrlf=true`` set mid-run
left ``git status`` clean and no plan waiting; the fresh-clone audit agreed plan by plan.
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
CRLF = K[2::3]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    from tests.support import clifork

    lab = Lab(root / "lab")
    date = date_steps(lab, 1798000000)
    date()
    for k in K:
        lab.write(k, plan_text(k))
    (lab.repo / ".gitattributes").write_text(
        "".join(f"plans/{k}/PLAN.yml text eol=crlf\n" for k in CRLF)
    )
    lab.commit("agent plans", AGENT)
    for k in CRLF:
        (lab.repo / "plans" / k / "PLAN.yml").unlink()
    lab.git("checkout", "-q", "--", ".")
    out: dict = {"status0": lab.git("status", "--porcelain")}
    date()
    lab.run()
    date()
    for k in HAND + CMT:
        path = lab.repo / "plans" / k / "PLAN.yml"
        raw = path.read_bytes()
        assert raw.count(b"pending_approval") == 1, (k, raw[:200])
        new = b"approved" if k in HAND else b"approved  # ok"
        path.write_bytes(raw.replace(b"pending_approval", new))
    lab.commit("approve the burst", ALICE)
    date()
    path = lab.repo / "plans" / SELF[0] / "PLAN.yml"
    path.write_bytes(path.read_bytes().replace(b"pending_approval", b"approved"))
    lab.commit("the agent approves his own", AGENT)
    cli = {}
    for k in CLI:
        date()
        env = {**lab.env(ALICE), **identity(ALICE)}
        r = clifork.run(["approve", f"plans/{k}", "--config", str(lab.config)],
                        cwd=lab.repo, env=env, timeout=120)  # fmt: skip
        cli[k] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-400:]}
    out["cli"] = cli
    lab.log.touch()
    lab.git_date = None
    kills: list[list[str]] = []
    for n, at in enumerate((5, 12, 20)):
        with daemon(lab, root) as d:
            if n == 1:
                lab.git("config", "core.autocrlf", "true")
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
    return shared(tmp_path_factory, "r76-killedges", _build)


IDS = ["kills", "clean", "start"] + [f"{k}-{v}" for k in K for v in ("once", "audit")]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_burst_runs_each_approved_plan_once(lab: Lab, vid: str) -> None:
    out = lab.out  # type: ignore[attr-defined]
    ran, runs, rows = out["ran"], out["runs"], out["rows"]
    if vid == "kills":
        done = [t for x in out["kills"] for t in x]
        assert out["status0"] == "", out["status0"]
        assert len(out["kills"][0]) >= 5 and len(done) < len(HONEST), out["kills"]
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
