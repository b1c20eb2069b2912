"""DOCSTRING"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    build_all,
    clone_audit_got,
    plan_text,
    until,
    xfail,
)

DAVE = ("Dave", "dave@ops.example.com")
ALICE_E, BOB_E, CAROL_E, DAVE_E = ALICE[1], BOB[1], CAROL[1], DAVE[1]

#: plan -> tool it calls (``lift`` medium then high, ``hot`` high then medium, ``big`` high)
PLANS = {
    "rmali": "rec",  # Alice's approval, Alice removed before the pass
    "liftb": "lift",  # Bob's vote under medium, lift made high: partial, then Carol
    "hotb": "hot",  # Bob's single vote under high, hot made medium: runs
    "grpb": "big",  # Carol's vote under group ops, group renamed sre (+Dave): Dave completes
    "duo1": "rec",  # paths rule (2), approved with solo1 in one commit by Bob
    "solo1": "rec",  # default rule (1): runs in that commit's pass
    "ckhot": "hot",  # pull request checked --as bob after the config change, before the pass
    "cklift": "lift",  # same pull request: check must predict partial
    "rmali2": "rec",  # agent rewrites policy.json with Alice back, then Alice approves
    "forge1": "rec",  # Mallory's approval carrying controller trailers
    "back": "rec",  # config back to C1 (same policy bytes as P1): Alice approves, runs
    "ckback": "rec",  # pull request checked --as alice after the return to C1, before the pass
    "defn": "rec",  # config changes only rec's definition: Alice approves, runs
    "rejd": "rec",  # Alice rejects after the return to C1 (P1 recorded again); Bob approves
    "rejc": "rec",  # Alice rejects under C2 (she is out: ignored); Bob approves later
    "rejdave": "rec",  # Dave rejects under C2 (he is in); Dave out again, Bob approves
    "rejpr": "rec",  # Alice rejects on a branch forked under P1, merged by Bob under P2
    "apppr": "rec",  # Alice approves on a branch forked under P1, merged by Bob under P2
    "rejd2": "rec",  # Alice rejects after P1's tree-same re-record; Bob's PR approval
    "rejd3": "rec",  # Dave rejects after P1's tree-same re-record (he is out); Bob's PR
}
#: plans that must have run exactly once by the end (all others never)
RAN = {"liftb", "hotb", "grpb", "duo1", "solo1", "ckhot", "cklift", "back", "ckback", "defn"}
#: plans whose run must be judged by each phase's policy, by the pass that started them
PHASE = {
    "hotb": "P2",
    "solo1": "P2",
    "ckhot": "P2",
    "liftb": "P2b",
    "grpb": "P2b",
    "cklift": "P2b",
    "back": "P3",
    "ckback": "P3",
    "duo1": "P3",
    "defn": "P4",
}
#: refusal code the controller records (HEAD's PLAN.yml) for plans that never ran
REFUSED = {"rmali": "E_APPROVER_NOT_ALLOWED", "rmali2": "E_APPROVER_NOT_ALLOWED"}


def plan_for(slug: str, tool: str) -> str:
    return (
        "plan:\n"
        f'  name: "{slug}"\n'
        f'  task: "round 125 policy variant {slug}"\n'
        "  status: pending_approval\n"
        "available_tools:\n"
        f"  - name: {tool}\n"
        "actions:\n"
        "  - id: 1\n"
        f"    tool: {tool}\n"
        f'    why: "record that {slug} ran"\n'
        "    params:\n"
        f'      tag: "{slug}"\n'
    )


def write_config(lab: Lab, phase: str) -> None:
    """C1: approvers alice, bob, carol; group ``ops`` = them; ``lift`` medium, ``hot`` high.
    C2: alice out, dave in; group renamed ``sre`` = bob, carol, dave; ``lift`` high, ``hot``
    medium. C3: C1 again, byte for byte. C4: C1 with ``rec``'s definition changed (an env
    name added)."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    log = json.dumps(str(lab.log))
    env = f"env: {{REC_LOG: {log}}}"
    c2 = phase == "C2"
    approvers = [BOB_E, CAROL_E, DAVE_E] if c2 else [ALICE_E, BOB_E, CAROL_E]
    group = "sre" if c2 else "ops"
    rec_env = f"env: {{REC_LOG: {log}, R125_EXTRA: x}}" if phase == "C4" else env
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        "  groups:\n"
        f"    {group}: {json.dumps(approvers)}\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        f"      require: [{{group: {group}, count: 2}}]\n"
        '    - match: {paths: ["plans/duo*/**"]}\n'
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {rec_env}}}\n"
        f"  lift: {{kind: exec, argv: {rec}, {env}, risk: {'high' if c2 else 'medium'}}}\n"
        f"  hot: {{kind: exec, argv: {rec}, {env}, risk: {'medium' if c2 else 'high'}}}\n"
        f"  big: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        "  echo: {kind: echo}\n"
    )


def setst(lab: Lab, slug: str, who: tuple[str, str], msg: str | None = None) -> str:
    lab.set_status(slug, "approved")
    return lab.commit(msg or f"{who[0].lower()}: approve {slug}", who)


def trailers(lab: Lab, rev: str) -> dict[str, str]:
    out = lab.git("log", "-1", "--format=%(trailers:unfold,only)", rev)
    got: dict[str, str] = {}
    for line in out.splitlines():
        if ": " in line:
            k, v = line.split(": ", 1)
            got.setdefault(k, v)
    return got


def events(subject: str, body: str) -> list[tuple[str, str, str | None]]:
    """(plan, event, Policy-Hash) per plan a controller commit records: one-plan commits
    by their subject, batched ones (``Plan-Event:`` trailers) one group per ``Plan:``."""
    if "\nPlan-Event: " not in body:
        parts = subject.split(" ", 2)
        if len(parts) < 3:
            return []
        policy = next(
            (ln.split(": ", 1)[1] for ln in body.splitlines() if ln.startswith("Policy-Hash: ")),
            None,
        )
        return [(parts[2], parts[1], policy)]
    groups: list[dict[str, str]] = []
    for line in body.splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        if key == "Plan":
            groups.append({})
        if groups:
            groups[-1].setdefault(key, value)
    return [(g["Plan"], g.get("Plan-Event", ""), g.get("Policy-Hash")) for g in groups]


def policy_at(lab: Lab, rev: str) -> str | None:
    try:
        data = subprocess.run(
            ["git", "show", f"{rev}:.plangate/policy.json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        ).stdout
    except subprocess.CalledProcessError:
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def records(lab: Lab) -> list[tuple[str, str]]:
    """The controller's ``plangate: record policy`` commits, oldest first: (commit, hash)."""
    rows = []
    for r in reversed(lab.log_rows()):
        if r[3] == "plangate: record policy" and r[2] == "plangate@localhost":
            rows.append((r[0], trailers(lab, r[0]).get("Policy-Hash", "")))
    return rows


def _report(lab: Lab, cwd: Path) -> dict[str, Any]:
    out = lab.cli("audit", "--json", cwd=cwd)
    try:
        return {"rc": out.returncode, "report": json.loads(out.stdout)}
    except ValueError:
        return {"rc": out.returncode, "report": {"raw": out.stdout[-800:] + out.stderr[-800:]}}


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"checks": {}, "passes": []}
    lab.got = got  # type: ignore[attr-defined]

    def run(tag: str) -> None:
        res = lab.run()
        got["passes"].append((tag, res.returncode))
        got[f"head:{tag}"] = lab.head()
        got[f"ran:{tag}"] = {slug: len(lab.calls(slug)) for slug in PLANS}

    # -- A: C1, the plans written and frozen ---------------------------------------------
    write_config(lab, "C1")
    for slug, tool in PLANS.items():
        lab.write(slug, plan_for(slug, tool))
    lab.commit("agent: plans", AGENT)
    run("A")
    got["P1"] = policy_at(lab, "HEAD")

    # -- B: votes under C1 (recorded), then the config becomes C2 before the pass -----------
    setst(lab, "rmali", ALICE)
    setst(lab, "liftb", BOB)
    setst(lab, "hotb", BOB)
    setst(lab, "grpb", CAROL)
    lab.set_status("duo1", "approved")
    lab.set_status("solo1", "approved")
    lab.commit("bob: approve duo1 and solo1", BOB)
    # Mallory's approval dressed as the controller's start under the first policy
    lab.set_status("forge1", "approved")
    lab.commit(
        "plangate: start plans/forge1\n\nPlan: plans/forge1\nPlan-Status: executing\n"
        f"Policy-Hash: {got['P1']}\nApproved-By: alice@example.com\n"
        f"Controller-Seal: {'ab' * 32}\n",
        MALLORY,
    )
    # Alice's rejection and approval on a branch forked while P1 was the record
    lab.branch("pr-old", got["head:A"])
    lab.set_status("rejpr", "rejected")
    lab.commit("alice: reject rejpr", ALICE)
    lab.set_status("apppr", "approved")
    lab.commit("alice: approve apppr", ALICE)
    lab.git("checkout", "-q", "main")
    write_config(lab, "C2")
    # a pull request approving two plans, checked --as bob against the config now in force
    lab.branch("pr-b")
    lab.set_status("ckhot", "approved")
    lab.set_status("cklift", "approved")
    lab.commit("bob: approve ckhot and cklift", BOB)
    lab.git("checkout", "-q", "main")
    got["checks"]["B"] = lab.check_plans("pr-b", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-b", "pr-b", who=BOB)
    run("B")
    got["P2"] = policy_at(lab, "HEAD")

    # -- C: under C2: second votes; the agent rewrites the record; a deletion ---------------
    setst(lab, "liftb", CAROL)
    setst(lab, "grpb", DAVE)
    setst(lab, "cklift", CAROL)
    setst(lab, "duo1", ALICE)  # Alice is out under C2: refused, Bob's vote kept
    p1 = lab.git("show", f"{got['head:A']}:.plangate/policy.json")
    lab.put(".plangate/policy.json", p1)
    got["forged"] = lab.commit("agent: restore the policy", AGENT)
    setst(lab, "rmali2", ALICE)
    lab.set_status("rejc", "rejected")
    lab.commit("alice: reject rejc", ALICE)
    lab.set_status("rejdave", "rejected")
    lab.commit("dave: reject rejdave", DAVE)
    run("C")
    got["checks"]["old"] = lab.check_plans("pr-old", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-old", "pr-old", who=BOB)
    run("C1")
    got["P2b"] = policy_at(lab, "HEAD")
    lab.git("rm", "-q", ".plangate/policy.json")
    got["deleted"] = lab.commit("agent: drop the policy file", AGENT)
    run("C2")

    # -- D: config back to C1 (P1's bytes); Alice completes duo1, approves back ------------
    write_config(lab, "C3")
    # the agent writes P1's bytes first: the controller's record of P1 changes no file
    lab.put(".plangate/policy.json", p1)
    got["prewrite"] = lab.commit("agent: policy file back", AGENT)
    lab.branch("pr-d")
    lab.set_status("ckback", "approved")
    lab.commit("alice: approve ckback", ALICE)
    lab.git("checkout", "-q", "main")
    got["checks"]["D"] = lab.check_plans("pr-d", ALICE_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-d", "pr-d", who=ALICE)
    setst(lab, "back", ALICE)
    setst(lab, "duo1", ALICE)
    setst(lab, "rejc", BOB)
    setst(lab, "rejdave", BOB)
    lab.set_status("rejd", "rejected")
    lab.commit("alice: reject rejd", ALICE)
    run("D")
    got["P3"] = policy_at(lab, "HEAD")
    lab.set_status("rejd2", "rejected")
    lab.commit("alice: reject rejd2", ALICE)
    lab.set_status("rejd3", "rejected")
    lab.commit("dave: reject rejd3", DAVE)

    # -- E: only rec's definition changes ----------------------------------------------------
    write_config(lab, "C4")
    lab.branch("pr-e")
    setst(lab, "rejd2", BOB)
    setst(lab, "rejd3", BOB)
    lab.git("checkout", "-q", "main")
    got["checks"]["E"] = lab.check_plans("pr-e", BOB_E)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-e", "pr-e", who=BOB)
    setst(lab, "defn", ALICE)
    setst(lab, "rejd", BOB)
    if lab.read("rejpr").find("status: rejected") >= 0:
        setst(lab, "rejpr", BOB)
    run("E")
    got["P4"] = policy_at(lab, "HEAD")

    # -- observations ------------------------------------------------------------------------
    got["records"] = records(lab)
    got["ran"] = {slug: len(lab.calls(slug)) for slug in PLANS}
    got["rows"] = {k: (v.get("status"), v.get("code")) for k, v in lab.rows().items()}
    got["refusal"] = {slug: lab.refusal(slug) for slug in PLANS}
    starts = {}
    for r in lab.log_rows():
        if r[2] == "plangate@localhost":
            for plan, event, policy in events(r[3], r[4]):
                if event == "start":
                    starts.setdefault(plan, (r[0], policy))
    got["starts"] = {k: (c, h, policy_at(lab, c)) for k, (c, h) in starts.items()}
    got["fresh"] = clone_audit_got(lab, root)
    got["single"] = clone_audit_got(
        lab, root, "--single-branch", "--no-tags", "-b", "main", name="single", transport=True
    )
    rc, rep = lab.audit(config=lab.config)
    got["config"] = {"rc": rc, "report": rep}
    # today's config differs from the last record (C2 again, never recorded since)
    write_config(lab, "C2")
    rc, rep = lab.audit(config=lab.config)
    got["today"] = {"rc": rc, "report": rep}
    write_config(lab, "C4")
    # the agent pushes replace refs: its policy commits look like harmless note commits
    for key in ("forged", "deleted"):
        c = got[key]
        tree = lab.git("rev-parse", f"{c}^^{{tree}}").strip()
        fake = lab.git("commit-tree", tree, "-p", f"{c}^", "-m", "agent: notes", who=AGENT).strip()
        lab.git("replace", c, fake)
    repl = root / "replaced"
    lab.git("clone", "-q", str(lab.repo), str(repl))
    subprocess.run(
        ["git", "fetch", "-q", "origin", "refs/replace/*:refs/replace/*"],
        cwd=repl,
        env=lab.env(),
        check=True,
    )
    got["replaced"] = _report(lab, repl)
    return lab


#: the daemon lab's plans: who signs with which key, and whether the controller ran it
SIGNED = {
    "hrot": (ALICE, "alice2", 1),  # Alice's key rotated in allowed_signers, no SIGHUP
    "hdrop": (BOB, "bob", 0),  # Bob's key removed from allowed_signers, no SIGHUP
    "krot": (CAROL, "carol2", 1),  # Carol's key rotated, then SIGHUP (control)
}


def _signers(lab: Lab, ring: dict[str, str], alice: str, bob: bool, carol: str) -> None:
    lab.root.joinpath("allowed_signers").write_text(
        f"plangate@localhost {ring['bot']}\nalice@example.com {ring[alice]}\n"
        + (f"bob@ops.example.com {ring['bob']}\n" if bob else "")
        + f"carol@ops.example.com {ring[carol]}\n"
    )


def _build_daemon(root: Path) -> Lab:
    """The daemon lab: signed approvals (``require_signed``), a real ``plangate run``."""
    from signkit import make_key, sign

    lab = Lab(root / "dlab")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    keys = lab.root / "keys"
    keys.mkdir()
    ring = {n: make_key(keys, n) for n in ["alice", "alice2", "bob", "carol", "carol2", "bot"]}
    _signers(lab, ring, "alice", True, "carol")
    signers = lab.root / "allowed_signers"
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for slug in SIGNED:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    env.update(
        GIT_CONFIG_COUNT="3",
        GIT_CONFIG_KEY_0="gpg.format",
        GIT_CONFIG_VALUE_0="ssh",
        GIT_CONFIG_KEY_1="user.signingKey",
        GIT_CONFIG_VALUE_1=str(keys / "bot"),
        GIT_CONFIG_KEY_2="commit.gpgSign",
        GIT_CONFIG_VALUE_2="true",
    )

    def subjects() -> list[str]:
        return lab.git("log", "--format=%s").splitlines()

    def settled(slug: str) -> bool:
        done = (f"plangate: complete plans/{slug}", f"plangate: refuse plans/{slug}")
        return any(s in done for s in subjects()) or any(
            f"plans/{slug}" in r[4] and "Plan-Event: refuse" in r[4] for r in lab.log_rows()
        )

    err = (root / "daemon.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        env=env,
        cwd=root,
        stdout=err,
        stderr=err,
        start_new_session=True,
    )
    try:
        frozen = lambda: all(  # noqa: E731
            "frozen:" in lab.git("show", f"HEAD:plans/{s}/PLAN.yml", check=False) for s in SIGNED
        )
        got["frozen"] = until(frozen, 120)
        lab.git("reset", "-q", "--hard")
        got["records0"] = subjects().count("plangate: record policy")
        # the operator rotates Alice's key and drops Bob's in the signers file: no SIGHUP
        _signers(lab, ring, "alice2", False, "carol")
        for slug in ("hrot", "hdrop"):
            who, key, _ = SIGNED[slug]
            sign(lab, slug, key, who, "approved")
        got["settled1"] = until(lambda: settled("hrot") and settled("hdrop"), 120)
        got["records1"] = subjects().count("plangate: record policy")
        # the operator rotates Carol's key and tells the daemon (SIGHUP)
        _signers(lab, ring, "alice2", False, "carol2")
        os.kill(proc.pid, signal.SIGHUP)
        got["hup"] = until(
            lambda: subjects().count("plangate: record policy") > got["records1"], 120
        )
        lab.git("reset", "-q", "--hard")
        who, key, _ = SIGNED["krot"]
        sign(lab, "krot", key, who, "approved")
        got["settled2"] = until(lambda: settled("krot"), 120)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        err.close()
    got["ran"] = {slug: len(lab.calls(slug)) for slug in SIGNED}
    got["refusal"] = {slug: lab.refusal(slug) for slug in SIGNED}
    starts: dict[str, tuple[str, str | None]] = {}
    refuses: dict[str, str] = {}
    for r in lab.log_rows():
        if r[2] == "plangate@localhost":
            for plan, event, policy in events(r[3], r[4]):
                if event == "start":
                    starts.setdefault(plan, (r[0], policy))
                if event == "refuse":
                    refuses.setdefault(plan, r[0])
    got["starts"] = starts
    # the recorded policy's signers text in force at each start and refusal
    got["signers_at"] = {}
    for plan, commit in [*((p, c) for p, (c, _) in starts.items()), *refuses.items()]:
        text = lab.git("show", f"{commit}:.plangate/policy.json", check=False)
        try:
            got["signers_at"][plan] = json.loads(text)["approval"].get("allowed_signers") or ""
        except (ValueError, KeyError, TypeError):
            got["signers_at"][plan] = f"unreadable: {text[:200]}"
    got["keys"] = {n: ring[n].split()[1] for n in ring}
    got["fresh"] = clone_audit_got(lab, root)
    return lab


def _build_pdir(root: Path) -> Lab:
    """The plans_dir lab (``run --once``): plans under ``plans/`` (one run, one forged
    status), then ``plans_dir: ops`` and a plan under ``ops/`` run."""
    lab = Lab(root / "plab")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    lab.write("p1", plan_text("p1"))
    lab.write("p2", plan_text("p2"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("p1")
    lab.set_status("p2", "completed")
    got["illegal"] = lab.commit("mallory: p2 is done", MALLORY)
    lab.run()
    got["P1"] = policy_at(lab, "HEAD")
    text = lab.config.read_text()
    lab.config.write_text(text.replace("state_dir:", "plans_dir: ops\nstate_dir:", 1))
    lab.put("ops/o1/PLAN.yml", plan_text("o1"))
    lab.commit("agent: ops plan", AGENT)
    lab.run()
    got["P2"] = policy_at(lab, "HEAD")
    path = lab.repo / "ops/o1/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("alice: approve o1", ALICE)
    lab.run()
    got["ran"] = {v: len(lab.calls(v)) for v in ("p1", "p2", "o1")}
    got["fresh"] = clone_audit_got(lab, root)
    rc, rep = lab.audit(config=lab.config)
    got["config"] = {"rc": rc, "report": rep}
    return lab


def _build_both(root: Path) -> Lab:
    builders = {"a": _build, "d": _build_daemon, "p": _build_pdir}
    labs = build_all(root, builders, workers=2).got
    lab = labs["a"]
    lab.got["d"] = labs["d"].got  # type: ignore[attr-defined]
    lab.got["p"] = labs["p"].got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return _build_both(tmp_path_factory.mktemp("r125p"))


AUDITS = ("fresh", "single", "config", "today", "replaced")
PHASE_OF = {**PHASE, "apppr": "P2b", "rejc": "P3", "rejd": "P4", "rejpr": "P4", "rejd3": "P4"}
RAN |= {"rejd", "rejc", "rejpr", "apppr", "rejd3"}
#: pass after which each ran plan must have run (and not before)
FIRST = {
    "hotb": "B", "solo1": "B", "ckhot": "B",
    "liftb": "C", "grpb": "C", "cklift": "C", "apppr": "C1",
    "back": "D", "ckback": "D", "duo1": "D", "rejc": "D",
    "defn": "E", "rejd": "E", "rejpr": "E", "rejd3": "E",
}  # fmt: skip
PASSES = ["A", "B", "C", "C1", "C2", "D", "E"]
#: check --as predictions: (check, plan) -> outcome the controller then took
CHECKS = {
    ("B", "ckhot"): "start",
    ("B", "cklift"): "partial",
    ("old", "apppr"): "start",
    ("D", "ckback"): "start",
    ("E", "rejd2"): "none",
    ("E", "rejd3"): "start",
}
#: who the audit must flag for an ignored withdrawal / an illegal approval
NOT_ALLOWED = {"rejc", "rejpr", "rejd", "rejd3"}
ILLEGAL = {"rejdave", "rejd2"}
DECIDED = {"rejdave": DAVE_E, "rejd2": ALICE_E}

IDS = [f"{v}:{k}" for v in PLANS for k in ("ran", "row", *AUDITS)]
IDS += [f"{v}:when" for v in FIRST] + [f"{v}:policy" for v in PHASE_OF]
IDS += [f"{v}:refused" for v in REFUSED] + [f"ck:{c}:{v}" for c, v in CHECKS]
IDS += [f"{v}:withdraw" for v in (*NOT_ALLOWED, *ILLEGAL)]
IDS += ["flag:forged", "flag:deleted", "flag:prewrite", "flag:only", "forge1:no-record"]
IDS += ["policies:hashes", "records:tree-same", "today:note"]
IDS += [f"agree:{a}" for a in AUDITS[1:]] + ["passes"]
PDIR_KEYS = ("p1", "o1", "illegal", "clean")
IDS += ["d:setup"] + [f"d:{v}:{k}" for v in SIGNED for k in ("ran", "policy", "audit")]
IDS += ["d:hdrop:refused"]
IDS += ["p:ran", "p:agree"] + [f"p:{a}:{k}" for a in ("fresh", "config") for k in PDIR_KEYS]

SIGNERS_CLASS = "signers-file-change-unrecorded"
PDIR_CLASS = "plans-dir-change-splits-audit"
BROKEN: dict[str, Any] = {
    "d:hrot:policy": xfail(
        SIGNERS_CLASS,
        "the daemon verified Alice's approval with the edited allowed_signers (her new key) "
        "but its start names the policy recorded before the edit (her old key)",
    ),
    "d:hrot:audit": xfail(
        SIGNERS_CLASS,
        "the fresh-clone audit judges the run by the recorded policy: start-without-approval, "
        "E_SIGNATURE_INVALID, where the controller ran it",
    ),
    "d:hdrop:policy": xfail(
        SIGNERS_CLASS,
        "Bob's approval was refused E_SIGNATURE_INVALID by a signers file git never saw: "
        "the policy recorded at the refusal still lists his key",
    ),
    "p:fresh:o1": xfail(
        PDIR_CLASS,
        "the fresh-clone audit reads only the first record's plans_dir (plans): the run of "
        "ops/o1 after plans_dir became ops is not listed",
    ),
    "p:fresh:clean": xfail(
        PDIR_CLASS,
        "the fresh-clone audit flags the controller's own 'complete ops/o1' "
        "controller-unexplained (no start seen) and exits 1",
    ),
    "p:config:p1": xfail(
        PDIR_CLASS,
        "audit --config reads only today's plans_dir (ops): plans/p1's run, approved and "
        "started while plans was the recorded plans_dir, is not in the report",
    ),
    "p:config:illegal": xfail(
        PDIR_CLASS,
        "audit --config misses Mallory's status 'completed' on plans/p2, made while plans "
        "was the plans folder, and exits 0",
    ),
    "p:agree": xfail(
        PDIR_CLASS,
        "the fresh-clone audit and audit --config list disjoint executions of one history",
    ),
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _execs(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            str(e.get("plan")),
            str(e.get("approval_kind")),
            bool(e.get("approval_valid")),
            str(e.get("code")),
            str(e.get("policy_hash")),
            str(e.get("start_commit")),
        )
        for e in report.get("executions", [])
    )


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("kind") == kind]


@pytest.mark.parametrize("vid", _params(IDS))
def test_policy(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    fresh = got["fresh"]["report"]
    slug, _, kind = vid.partition(":")
    if slug == "d":
        _daemon_case(got["d"], kind)
        return
    if slug == "p":
        _pdir_case(got["p"], kind)
        return
    if vid == "passes":
        assert all(rc == 0 for _, rc in got["passes"]), got["passes"]
        assert len({got["P1"], got["P2"], got["P4"]}) == 3, got
        assert got["P3"] == got["P1"] and got["P2b"] == got["P2"], got
        return
    if kind == "ran":
        assert got["ran"][slug] == (1 if slug in RAN else 0), got["ran"]
        return
    if kind == "row":
        row = got["rows"].get(f"plans/{slug}")
        assert (row and row[0] == "completed") is (slug in RAN), row
        return
    if kind in AUDITS:
        report = got[kind]["report"]
        assert "executions" in report, report
        valid = _valid(report, slug)
        assert len(valid) == (1 if slug in RAN else 0), (valid, report.get("findings"))
        return
    if kind == "when":
        first = PASSES.index(FIRST[slug])
        seen = [got[f"ran:{p}"][slug] for p in PASSES]
        assert seen == [0] * first + [1] * (len(PASSES) - first), seen
        return
    if kind == "policy":
        # the start's trailer, the file at the start, the audit's verdict and the phase agree
        commit, trailer, file_hash = got["starts"][f"plans/{slug}"]
        want = got[PHASE_OF[slug]]
        (execution,) = _valid(fresh, slug)
        assert (trailer, file_hash, execution["policy_hash"]) == (want, want, want), (
            trailer, file_hash, execution, want,
        )  # fmt: skip
        assert execution["start_commit"] == commit, execution
        return
    if kind == "refused":
        assert got["refusal"][slug] == REFUSED[slug], got["refusal"][slug]
        return
    if slug == "ck":
        check, plan = kind.split(":")
        outcome, codes = got["checks"][check].get(f"plans/{plan}", (None, []))
        assert outcome == CHECKS[(check, plan)], (outcome, codes)
        return
    if kind == "withdraw":
        path = f"plans/{slug}"
        if slug in NOT_ALLOWED:
            flagged = [f for f in _findings(fresh, "withdraw-not-allowed") if f["plan"] == path]
            assert len(flagged) == 1, fresh.get("findings")
        else:
            flagged = [f for f in _findings(fresh, "illegal") if f["plan"] == path]
            assert len(flagged) == 1 and BOB_E in flagged[0]["detail"], fresh.get("findings")
            decided = [d for d in fresh.get("decisions", []) if d.get("plan") == path]
            assert [(d["kind"], d["by"]) for d in decided] == [("reject", DECIDED[slug])], decided
        return
    if vid.startswith("flag:") and kind in ("forged", "deleted", "prewrite"):
        flagged = [f for f in _findings(fresh, "policy-changed") if f["commit"] == got[kind]]
        assert len(flagged) == 1, fresh.get("findings")
        return
    if vid == "flag:only":
        kinds = sorted({f.get("kind") for f in fresh.get("findings", [])})
        assert kinds == ["illegal", "policy-changed", "withdraw-not-allowed"], kinds
        assert got["fresh"]["rc"] == 1, got["fresh"]["rc"]
        return
    if vid == "forge1:no-record":
        assert not [e for e in fresh["executions"] if e.get("plan") == "plans/forge1"]
        assert got["P1"] in {p["hash"] for p in fresh["policies"]}
        commits = {p["commit"] for p in fresh["policies"]}
        assert commits <= {c for c, _ in got["records"]}, (commits, got["records"])
        return
    if vid == "policies:hashes":
        listed = {p["hash"] for p in fresh["policies"]}
        assert listed == {h for _, h in got["records"]}, (fresh["policies"], got["records"])
        return
    if vid == "records:tree-same":
        # the controller recorded P1 again although the agent had written its bytes first
        after = [c for c, h in got["records"] if h == got["P1"]]
        assert len(after) == 2, got["records"]
        assert lab.git("diff", "--name-only", f"{after[1]}^", after[1]).strip() == ""
        return
    if vid == "today:note":
        today = got["today"]["report"]
        notes = [n for n in today.get("notes", []) if n.get("kind") == "config-differs"]
        assert len(notes) == 1 and got["P4"] in notes[0]["detail"], today.get("notes")
        assert _execs(today) == _execs(fresh)
        return
    if slug == "agree":
        other = got[kind]
        assert other["rc"] == got["fresh"]["rc"], (other["rc"], got["fresh"]["rc"])
        assert _execs(other["report"]) == _execs(fresh), other["report"].get("raw")
        mine = sorted((f["kind"], f["plan"], f["commit"]) for f in other["report"]["findings"])
        assert mine == sorted((f["kind"], f["plan"], f["commit"]) for f in fresh["findings"])
        return
    raise AssertionError(f"unknown id {vid}")


def _pdir_case(got: dict[str, Any], what: str) -> None:
    if what == "ran":
        assert got["ran"] == {"p1": 1, "p2": 0, "o1": 1}, got["ran"]
        return
    if what == "agree":
        assert _execs(got["fresh"]["report"]) == _execs(got["config"]["report"])
        return
    audit, kind = what.split(":")
    report = got[audit]["report"]
    if kind in ("p1", "o1"):
        path = f"plans/{kind}" if kind == "p1" else f"ops/{kind}"
        valid = [e for e in report.get("executions", []) if e.get("plan") == path]
        assert [e.get("approval_valid") for e in valid] == [True], report.get("executions")
        want = got["P1"] if kind == "p1" else got["P2"]
        assert valid[0].get("policy_hash") == want, (valid, want)
        return
    if kind == "illegal":
        flagged = [f for f in _findings(report, "illegal") if f.get("commit") == got["illegal"]]
        assert len(flagged) == 1 and flagged[0]["plan"] == "plans/p2", report.get("findings")
        assert got[audit]["rc"] == 1, got[audit]["rc"]
        return
    if kind == "clean":
        kinds = sorted({f.get("kind") for f in report.get("findings", [])})
        assert set(kinds) <= {"illegal"}, report.get("findings")
        return
    raise AssertionError(f"unknown plans_dir id {what}")


def _daemon_case(got: dict[str, Any], what: str) -> None:
    if what == "setup":
        assert [got[k] for k in ("frozen", "settled1", "hup", "settled2")] == [True] * 4, got
        return
    slug, kind = what.split(":")
    _who, key, ran = SIGNED[slug]
    path = f"plans/{slug}"
    if kind == "ran":
        assert got["ran"][slug] == ran, got["ran"]
        return
    if kind == "refused":
        assert got["refusal"][slug] == "E_SIGNATURE_INVALID", got["refusal"]
        return
    if kind == "policy":
        # the policy git records at the controller's decision holds the key it judged by
        signers = got["signers_at"].get(path, "")
        if ran:
            assert got["starts"][path][1], got["starts"]
            assert got["keys"][key] in signers, (key, signers)
        else:
            assert got["keys"][key] not in signers, (key, signers)
        return
    if kind == "audit":
        report = got["fresh"]["report"]
        assert len(_valid(report, slug)) == ran, report.get("findings")
        flagged = [f for f in report.get("findings", []) if f.get("plan") == path]
        assert not flagged, flagged
        return
    raise AssertionError(f"unknown daemon id {what}")
