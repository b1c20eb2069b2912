"""Round 128, policy and audit (atk128p): the policy a pass decides by is the config's of
THAT pass, recorded in git before it decides; a fresh clone's ``plangate audit`` (no config)
and ``audit --config`` reach the controller's verdicts; ``check --as`` predicts them; a
policy record edited by anyone else changes nothing and is flagged.

Aimed at config edits between the approval and the pass that no earlier round combined in
ONE restart: ``approval.identity`` flipped (author <-> committer) with approvals whose author
and committer differ, ``allow_self_approval`` flipped, a rule's group re-pointed, a tool the
plan calls retired from the catalog; then the agent and Mallory editing
``.plangate/policy.json`` (a plain commit, and inside Mallory's own approving commit) to make
Mallory an approver and flip the identity mode back.

Labs (``build_all``, local mode, ``run --once``). Both labs: a rule ``tools: [rec4]`` needs one
of group ``g``; plans ``pa`` (Mallory authors its approval, Alice commits it), ``pb`` (Alice
authors, Mallory commits), ``ps`` (written AND approved by Alice: the approval is hers),
``pg`` (calls ``rec4``, approved by a merge Alice makes), ``pt`` (calls ``rec2``, approved by
Alice's merge; lab ``fw`` only). The first pass freezes them under C0; the approvals are
committed (``pa``, ``pb``, ``ps`` on main, ``pg``/``pt`` on branch ``rv`` whose merge Alice
makes); the config changes to C1; ``check --as alice`` with C1 for ``rv``; Alice merges; a
pass under C1.

- Lab ``fw``: C0 = author mode, self-approval allowed, ``g = [alice]``, tools rec2+rec4;
  C1 = committer mode, no self-approval, ``g = [*@ops]``, rec2 retired.
- Lab ``bw``: the other way round (C0 = committer, no self-approval, ``g = [*@ops]``;
  C1 = author, self-approval allowed, ``g = [alice]``).
- Then (both labs) the forge: plans ``pf1``, ``pf2`` frozen; the agent commits a
  ``policy.json`` adding Mallory to the approvers and flipping the mode; Mallory approves
  ``pf1``; Mallory edits ``policy.json`` again in the same commit that approves ``pf2``;
  ``check --as mallory``; a pass.

Ids (``<lab>:<what>``): ``:passes``; ``:ran:<plan>`` (the recording tool ran the plan as C1
decides: once or never); ``:code:<plan>`` (a plan C1 refuses carries the refusal code);
``:check:<plan>`` (``check --as`` with C1 predicted the pass's outcome);
``:audit:<plain|config|single>:<plan>`` (a fresh clone without a config, ``audit --config``,
a ``--single-branch`` clone over ``file://``: the plan's run listed valid exactly when it ran);
``:audit:<...>:forged`` (each forged ``policy.json`` commit flagged ``policy-changed`` by its
maker, and no other finding); ``:policy`` (each start's ``Policy-Hash:`` = sha256 of the
``policy.json`` in its tree, and that file's mode is C1's); ``:records`` (a ``plangate:
record policy`` by the controller after each config change and after each forged edit:
the controller's policy restored on the branch); ``:tree`` (after the forge pass
``.plangate/policy.json`` on main is again the controller's: approvers without Mallory);
``:shallow`` (a ``--depth 2`` clone's audit: a coded error, or every run; never a traceback
nor a run less).

More labs (ids below): ``pre``, ``rev``, ``mov`` (withdrawals before the controller's first
record), ``al``/``ar`` (identity aliases flipped), ``lim`` (size limits lowered after runs),
``tool`` (tools retired, re-schemed, re-kinded after runs).

- Labs ``al``/``ar``: a rule ``tools: [rec5]`` needs two approvals; Alice + ``a.smith@ops``
  (``qa``), Bob + ``bob+x@ops`` (``qb``), a plan written by ``a.smith`` approved by Alice
  (``qc``), one written by ``bob+bot`` approved by Bob (``qd``); the second approval (or the
  only one) is a merge; ``identity_aliases`` (``people: [[alice, a.smith]]``, ``plus_tags``)
  is added (``al``) or removed (``ar``) between the first approval and the merge. Ids
  ``:ran:``, ``:check:``, ``:audit:<plain|config|single>:<plan>``, ``:audit:<..>:clean``.
- Lab ``pre``: first config ``[alice]``; before the controller's first pass Bob (``p1``,
  ``p3``) and Mallory (``p2``, ``p4``, ``p5`` on a branch the agent merges) reject plans:
  the first pass ignores them (neither may withdraw); ``p6``/``p7`` are rejected by them
  after the first pass on a branch forked before it. Alice approves ``p1``, ``p2``, ``p6``,
  ``p7``: they run. The operator then adds ``*@ops`` and Mallory (``audit --config`` with that
  edited file before the restart: ``pre:audit:edited:*``), ``check --as alice`` for the pull
  request approving ``p3``-``p5`` (``pre:check:*``), the merge, the restart: they run.
- Labs ``rev``/``mov``: first config ``[alice, *@ops]``; Bob rejects ``r1`` before the first
  pass (it counts); a copy of its bytes (``plans/r1c``; ``mov``: ``ops/r1c`` with
  ``plans_dir: ops``) approved by Alice's merge after the operator removed ``*@ops``: the
  controller refuses ``E_VERSION_WITHDRAWN``.
- Lab ``lim``: plans of 2,100+ bytes (``l5`` run, ``l7`` only frozen), a small one (``l6``),
  three actions (``l8``), a 600-character param (``l9``) under the default limits; then
  ``limits: {max_plan_bytes: 2000, max_actions: 2, max_params_bytes: 400}`` (edited, then
  recorded by a restart).

Seen (round 128: 200 ids, 180 passed, 20 xfailed (strict); about 65 s wall at ``-n 2``
under a load of 19; the labs are built once for both workers)

Classes:

- ``pre-record-withdrawal-judged-by-todays-config`` (14 ids: ``pre:audit:config:p1``-``p5``,
  ``pre:audit:edited:p1``, ``p2``, ``pre:check:p3``-``p5``, ``rev:check``, ``mov:check``,
  ``rev:audit:config``, ``mov:audit:config``; fail closed in the audit, both ways in the
  prediction): a rejection committed before the controller's FIRST pass is judged by the
  controller with the policy it records in that pass (its config then), and a fresh clone's
  audit agrees (the first recorded policy); but ``audit --config`` and ``check`` judge it by
  the config they are given, today's, even once that config is recorded (after the restart).
  So when the operator later adds Bob and Mallory as approvers, ``audit --config`` flags the
  controller's honest runs of ``p1``-``p5`` ``start-without-approval`` (``E_VERSION_WITHDRAWN``:
  "set rejected by mallory@example.com"), exit 1, and ``check --as alice`` predicted
  ``refuse E_VERSION_WITHDRAWN`` for ``p3``-``p5``, which the controller then started; the
  other way round (Bob's counted rejection, Bob later removed), ``audit --config`` flags
  Bob's rejection ``withdraw-not-allowed`` and drops it from ``decisions``, and ``check``
  predicted ``start`` for a copy of the withdrawn version that the controller refused
  ``E_VERSION_WITHDRAWN`` (also across a ``plans_dir`` move). A rejection made after the
  first record on a branch forked before it (``p6``, ``p7``) is judged right by all.
  Repro: ``git init``; agent commits ``plans/p1``; Mallory commits ``status: rejected``;
  config ``approvers: [alice]``; ``plangate run --once``; Alice commits ``status: approved``;
  ``run --once`` (p1 runs); add ``mallory@example.com`` to the approvers;
  ``plangate audit --config plangate.yml --json``: p1's run ``approval_valid: false``,
  ``start-without-approval``. Expected: docs/approvals.md "Withdrawals are judged by the
  controller's last own record before them"; "plangate audit": with a config it "adds a
  note (not a finding) when today's config differs" (threat-model row "Audit judged by
  today's config"); the same section's "History from before the first recorded policy is
  judged by the config" reads as the config the controller had THEN, which its first record
  holds; ``check`` "decides with the controller's own function ... the prediction is the
  controller's decision".
- ``audit-config-reads-history-by-todays-limits`` (6 ids: ``lim:audit:<edited|config>:l5``,
  ``:l7``, ``lim:audit:<edited|config>:exit``; fail closed): after ``limits.max_plan_bytes``
  is lowered below the size of a plan the controller froze, approved and ran under the old
  limit, ``audit --config`` (the edited file, and the same after the restart recorded it)
  reads every earlier version of that plan by today's limit: the controller's own
  ``freeze``, ``start`` and ``complete`` are ``controller-unexplained`` ("a freeze commit
  cannot set status None"), the run ``start-without-approval`` and not valid; exit 1. A fresh
  clone (recorded policies) lists the run valid, no finding; ``max_actions`` and
  ``max_params_bytes`` lowered the same way (``l8``, ``l9``) change no verdict. Repro: a
  2,100-byte plan frozen, approved by Alice, run; config ``limits: {max_plan_bytes: 2000}``;
  ``plangate audit --config plangate.yml --json``. Expected: the recorded policy holds
  ``limits`` so that "``plangate audit`` judges past runs by it"; a config change is "a note,
  not a finding".

Fixed (fix129p): one rule for the history before the controller's first policy record,
shared by every reader: it is judged by that first record (the config the controller had
when it first decided), never by the reader's config. ``audit --config`` opened its timeline
with today's config as the policy before the first record
(``Timeline._of_config``): it now finds the first record the walk takes (a dry walk of the
policy log, ``Timeline._first_recorded``) and judges by it, today's config only while none
exists. The controller's scan and ``check`` (one ``config_index``) judged that history by
today's config (``RecordedPolicies.rule(None)``): ``HistoryIndex._policies`` now follows
the first record found for the commits before it. The audit's replay kept the limit it
opened with for every version (``HistoryIndex.max_plan_bytes``, set once): it now follows
the ``limits.max_plan_bytes`` of the policy in force at each commit
(``IndexStore.read_by_limit``; the facts read under another limit judged again by size).
And a cold scan (``check``, a new state directory) read only today's plans folder, so a version
withdrawn under the folder an earlier record named was no withdrawal after a move
(``mov:check``): ``HistoryIndex._withdrawn_elsewhere`` scans each other recorded folder
in memory up to the record that replaced it and keeps the versions withdrawn there.

Held: ``approval.identity`` flipped between an approval whose author and committer differ
and the pass (the pass's mode decides, and every audit agrees: ``pa`` runs under committer
mode on Alice's commit of Mallory's text; ``pb`` under author mode); self-approval allowed or
not, a rule's group re-pointed, a tool retired between approval and pass (refused with its
code, predicted by ``check``); aliases added or removed between a quorum's two approvals
(partial or refused, predicted, audits agree); ``policy.json`` forged in a plain commit and
inside Mallory's approving commit (refused, predicted, flagged ``policy-changed`` by maker,
the controller records its policy again); every start's ``Policy-Hash:`` is its tree's file;
a ``--depth 2`` clone's audit is ``E_GIT`` naming the shallow history; a single-branch clone
audits like a full one; tools retired, re-schemed, made high-risk or re-kinded after their
runs change no verdict in either audit; a size limit lowered in the restart that rebuilt the
history index (a ``plans_dir`` move), then raised: the copy of the big plan that ran is
refused ``E_ALREADY_EXECUTED`` and ``check`` predicts it (``limc:copy``, ``limc:check``).

Seen, not asserted: a plan whose tool was unknown when it was committed (``status:
pending_approval``) stays ``invalid`` after the tool is added, and a person's later
``approved`` on it is flagged ``illegal`` by both audits (the controller ignores it too);
``check`` reports ``none`` for such a plan.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, build_all, load_yaml, plan_text

MODES = {"fw": ("author", "committer"), "bw": ("committer", "author")}
SELF = {"fw": ("true", "false"), "bw": ("false", "true")}
GROUPS = {
    "fw": (["alice@example.com"], ["*@ops.example.com"]),
    "bw": (["*@ops.example.com"], ["alice@example.com"]),
}
TOOLS = {"fw": (["rec2", "rec4"], ["rec4"]), "bw": (["rec4"], ["rec4"])}
PLANS = {"fw": ["pa", "pb", "ps", "pg", "pt"], "bw": ["pa", "pb", "ps", "pg"]}
#: the outcome of the pass under C1: plan -> refusal code, or None: it runs once
EXPECT: dict[str, dict[str, str | None]] = {
    "fw": {
        "pa": None,  # committer Alice decides
        "pb": "E_APPROVER_NOT_ALLOWED",  # committer Mallory
        "ps": "E_SELF_APPROVAL",
        "pg": "E_APPROVER_NOT_ALLOWED",  # Alice left g
        "pt": "E_PLAN_NOT_FROZEN",  # rec2 retired
    },
    "bw": {
        "pa": "E_APPROVER_NOT_ALLOWED",  # author Mallory decides
        "pb": None,
        "ps": None,
        "pg": None,
    },
}
TOOL_OF = {"pg": "rec4", "pt": "rec2"}


def tplan(slug: str) -> str:
    tool = TOOL_OF.get(slug, "rec")
    return (
        plan_text(slug).replace("name: rec", f"name: {tool}").replace("tool: rec", f"tool: {tool}")
    )


def config(lab: Lab, mode: str, self_ok: str, group: list[str], tools: list[str]) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    entry = f"{{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        f"  identity: {mode}\n  allow_self_approval: {self_ok}\n"
        f"  groups: {{g: {json.dumps(group)}}}\n"
        "  rules:\n    - match: {tools: [rec4]}\n      require: [{group: g, count: 1}]\n"
        "tools:\n"
        + "".join(f"  {t}: {entry}\n" for t in ["rec", *tools])
        + "  echo: {kind: echo}\n"
    )


def mixed(lab: Lab, slug: str, author: tuple[str, str], committer: tuple[str, str]) -> None:
    lab.set_status(slug, "approved")
    lab.git("add", "-A")
    env = {
        **lab.env(),
        "GIT_AUTHOR_NAME": author[0],
        "GIT_AUTHOR_EMAIL": author[1],
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
    }
    subprocess.run(
        ["git", "commit", "-q", "-m", f"approve {slug}"],
        cwd=lab.repo,
        env=env,
        check=True,
        capture_output=True,
    )


def audit_at(lab: Lab, cwd: Path, *args: str) -> dict[str, Any]:
    out = lab.cli("audit", "--json", *args, cwd=cwd)
    try:
        rep = json.loads(out.stdout)
    except ValueError:
        rep = {"raw": out.stdout[-600:]}
    if not isinstance(rep, dict):
        rep = {"raw": str(rep)[-600:]}
    return {"rc": out.returncode, "report": rep, "err": out.stderr[-1500:]}


def clone_to(lab: Lab, dest: Path, *opts: str) -> Path:
    lab.git("clone", "-q", *opts, f"file://{lab.repo}", str(dest))
    return dest


def record_count(lab: Lab) -> int:
    out = lab.git("log", "--format=%ae %s", "main")
    return sum(
        1 for line in out.splitlines() if line == "plangate@localhost plangate: record policy"
    )


def starts(lab: Lab) -> list[tuple[str, str, str | None, str | None]]:
    rows = lab.git(
        "log",
        "--format=%H%x00%(trailers:key=Policy-Hash,valueonly,separator=%x2C)",
        "--grep=^plangate: start ",
        "main",
    )
    out = []
    for line in rows.splitlines():
        if "\0" not in line:
            continue
        commit, trailer = line.split("\0", 1)
        data = subprocess.run(
            ["git", "show", f"{commit}:.plangate/policy.json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=False,
        ).stdout
        tree = "sha256:" + hashlib.sha256(data).hexdigest() if data else None
        mode = json.loads(data)["approval"]["identity"] if data else None
        out.append((commit, trailer.strip(), tree, mode))
    return out


def build(root: Path, name: str) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    c0 = (MODES[name][0], SELF[name][0], GROUPS[name][0], TOOLS[name][0])
    c1 = (MODES[name][1], SELF[name][1], GROUPS[name][1], TOOLS[name][1])
    config(lab, *c0)
    for slug in PLANS[name]:
        if slug != "ps":
            lab.write(slug, tplan(slug))
    lab.commit("agent: plans", AGENT)
    lab.write("ps", tplan("ps"))
    lab.commit("alice: ps", ALICE)
    for slug in ("pf1", "pf2"):
        lab.write(slug, tplan(slug))
    lab.commit("agent: forge targets", AGENT)
    run("c0")
    records = [record_count(lab)]
    # the approvals come a minute after the freeze (the same second is a replay's: round 104)
    lab.git_date = f"@{t0 + 60} +0000"
    mixed(lab, "pa", MALLORY, ALICE)
    mixed(lab, "pb", ALICE, MALLORY)
    lab.approve("ps", ALICE)
    lab.branch("rv")
    for slug in ("pg", "pt"):
        if slug in PLANS[name]:
            lab.approve(slug, AGENT)
    lab.git("checkout", "-q", "main")
    config(lab, *c1)
    got["check"] = lab.check_plans("rv", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge rv", "rv", who=ALICE)
    lab.git_date = f"@{t0 + 120} +0000"
    run("c1")
    records.append(record_count(lab))
    got["ran"] = {s: len(lab.calls(s)) for s in PLANS[name]}
    got["codes"] = {s: lab.refusal(s) for s in PLANS[name]}
    # the forge: policy.json edited by the agent, then inside Mallory's approval
    pol = json.loads((lab.repo / ".plangate/policy.json").read_text())
    pol["approval"]["approvers"].append(MALLORY[1])
    pol["approval"]["identity"] = MODES[name][0]
    pol["approval"]["allow_self_approval"] = True
    lab.put(".plangate/policy.json", json.dumps(pol, indent=2) + "\n")
    forged = {lab.commit("agent: tidy policy", AGENT): AGENT[1]}
    lab.git_date = f"@{t0 + 150} +0000"
    lab.approve("pf1", MALLORY)
    lab.put(".plangate/policy.json", json.dumps(pol, indent=1) + "\n")
    forged[lab.approve("pf2", MALLORY)] = MALLORY[1]
    got["forged"] = forged
    lab.git_date = f"@{t0 + 180} +0000"
    got["fcheck"] = lab.check_plans("main", MALLORY[1], base="main~3")
    run("forge")
    records.append(record_count(lab))
    got["records"] = records
    got["fran"] = {s: len(lab.calls(s)) for s in ("pf1", "pf2")}
    got["fcodes"] = {s: lab.refusal(s) for s in ("pf1", "pf2")}
    tree = json.loads(lab.git("show", "main:.plangate/policy.json"))
    got["tree"] = (tree["approval"]["approvers"], tree["approval"]["identity"])
    got["starts"] = starts(lab)
    got["audit"] = {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
        "single": audit_at(lab, clone_to(lab, root / "single", "--single-branch", "--no-tags")),
    }
    got["shallow"] = audit_at(lab, clone_to(lab, root / "shallow", "--depth", "2"))
    return got


def _builders() -> dict[str, Callable[[Path], Any]]:
    out: dict[str, Callable[[Path], Any]] = {
        name: functools.partial(build, name=name) for name in MODES
    }
    out.update({name: functools.partial(qbuild, name=name) for name in ALIAS_LABS})
    out.update(
        pre=pre_build,
        rev=functools.partial(rev_build, move=False),
        mov=functools.partial(rev_build, move=True),
        lim=lim_build,
        limc=limc_build,
        tool=tool_build,
    )
    return out


@pytest.fixture(scope="module")
def every(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every lab of the module, built once for all xdist workers: the first worker builds
    them (in threads) under a lock and pickles what they saw, the other reads that."""
    base = tmp_path_factory.getbasetemp()
    if base.name.startswith("popen-gw"):
        base = base.parent
    done, failed = base / "r128p-all.pickle", base / "r128p-all.failed"
    with open(base / "r128p-all.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return dict(pickle.loads(done.read_bytes()))
        if failed.exists():
            raise RuntimeError(f"the labs failed to build: {failed.read_text()}")
        try:
            got = build_all(base / "r128p-all", _builders(), workers=5).got
        except Exception as why:
            failed.write_text(f"{type(why).__name__}: {why}"[-3000:])
            raise
        done.write_bytes(pickle.dumps(got))
        return dict(got)


@pytest.fixture(scope="module")
def labs(every: dict[str, Any]) -> dict[str, Any]:
    return every


def valid(rep: dict[str, Any], slug: str) -> int:
    return sum(
        1
        for e in rep.get("executions", [])
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    )


PLAN_IDS = [(n, s) for n in MODES for s in PLANS[n]]


@pytest.mark.parametrize("name", list(MODES))
def test_passes(labs: dict[str, Any], name: str) -> None:
    got = labs[name]
    assert [p[1] for p in got["passes"]] == [0, 0, 0], got["passes"]


@pytest.mark.parametrize(("name", "slug"), PLAN_IDS, ids=[f"{n}:ran:{s}" for n, s in PLAN_IDS])
def test_ran(labs: dict[str, Any], name: str, slug: str) -> None:
    want = 1 if EXPECT[name][slug] is None else 0
    assert labs[name]["ran"][slug] == want, (labs[name]["ran"], labs[name]["codes"])


@pytest.mark.parametrize(("name", "slug"), PLAN_IDS, ids=[f"{n}:code:{s}" for n, s in PLAN_IDS])
def test_code(labs: dict[str, Any], name: str, slug: str) -> None:
    assert labs[name]["codes"][slug] == EXPECT[name][slug], labs[name]["codes"]


CHECK_IDS = [(n, s) for n in MODES for s in PLANS[n] if s in ("pg", "pt")]


@pytest.mark.parametrize(("name", "slug"), CHECK_IDS, ids=[f"{n}:check:{s}" for n, s in CHECK_IDS])
def test_check(labs: dict[str, Any], name: str, slug: str) -> None:
    told = labs[name]["check"].get(f"plans/{slug}")
    code = EXPECT[name][slug]
    want = ("start", []) if code is None else ("refuse", [code])
    assert told is not None and (told[0], list(told[1])) == want, labs[name]["check"]


AUDIT_IDS = [(n, k, s) for n in MODES for k in ("plain", "config", "single") for s in PLANS[n]]


@pytest.mark.parametrize(
    ("name", "kind", "slug"), AUDIT_IDS, ids=[f"{n}:audit:{k}:{s}" for n, k, s in AUDIT_IDS]
)
def test_audit_runs(labs: dict[str, Any], name: str, kind: str, slug: str) -> None:
    got = labs[name]["audit"][kind]
    want = 1 if EXPECT[name][slug] is None else 0
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == want, (got["rc"], got["report"].get("executions"))


FORGE_IDS = [(n, k) for n in MODES for k in ("plain", "config", "single")]


@pytest.mark.parametrize(
    ("name", "kind"), FORGE_IDS, ids=[f"{n}:audit:{k}:forged" for n, k in FORGE_IDS]
)
def test_audit_flags_forge(labs: dict[str, Any], name: str, kind: str) -> None:
    got = labs[name]["audit"][kind]
    found = got["report"].get("findings", [])
    flagged = {
        f.get("commit"): f.get("detail", "") for f in found if f.get("kind") == "policy-changed"
    }
    for commit, maker in labs[name]["forged"].items():
        assert commit in flagged and maker in flagged[commit], found
    assert len(found) == len(labs[name]["forged"]), found
    assert got["rc"] == 1, got


@pytest.mark.parametrize("name", list(MODES))
@pytest.mark.parametrize("slug", ["pf1", "pf2"])
def test_forge_refused(labs: dict[str, Any], name: str, slug: str) -> None:
    got = labs[name]
    assert got["fran"][slug] == 0 and got["fcodes"][slug] == "E_APPROVER_NOT_ALLOWED", got["fcodes"]


@pytest.mark.parametrize("name", list(MODES))
@pytest.mark.parametrize("slug", ["pf1", "pf2"])
def test_forge_check(labs: dict[str, Any], name: str, slug: str) -> None:
    told = labs[name]["fcheck"].get(f"plans/{slug}")
    assert told is not None and told[0] == "refuse", labs[name]["fcheck"]
    assert "E_APPROVER_NOT_ALLOWED" in told[1], labs[name]["fcheck"]


@pytest.mark.parametrize("name", list(MODES))
def test_policy(labs: dict[str, Any], name: str) -> None:
    rows = labs[name]["starts"]
    assert rows, "no start"
    for _commit, trailer, tree, mode in rows:
        assert trailer == tree, rows
        assert mode == MODES[name][1], rows


@pytest.mark.parametrize("name", list(MODES))
def test_records(labs: dict[str, Any], name: str) -> None:
    r = labs[name]["records"]
    assert r[0] >= 1 and r[1] == r[0] + 1 and r[2] >= r[1] + 1, r


@pytest.mark.parametrize("name", list(MODES))
def test_tree(labs: dict[str, Any], name: str) -> None:
    approvers, mode = labs[name]["tree"]
    assert MALLORY[1] not in approvers and mode == MODES[name][1], labs[name]["tree"]


@pytest.mark.parametrize("name", list(MODES))
def test_shallow(labs: dict[str, Any], name: str) -> None:
    got = labs[name]["shallow"]
    assert "Traceback" not in got["err"], got["err"]
    if got["rc"] == 2:
        assert "E_" in got["err"], got["err"]
    else:
        for slug in PLANS[name]:
            want = 1 if EXPECT[name][slug] is None else 0
            assert valid(got["report"], slug) == want, got


# -- aliases flipped between the approvals and the pass ------------------------------------
ASMITH = ("A. Smith", "a.smith@ops.example.com")
BOBX = ("Bob X", "bob+x@ops.example.com")
BOBBOT = ("Bob bot", "bob+bot@ops.example.com")
BOBO = ("Bob", "bob@ops.example.com")
ALIASES = (
    "  identity_aliases:\n"
    '    plus_tags: ["*@ops.example.com"]\n'
    '    people: [["alice@example.com", "a.smith@ops.example.com"]]\n'
)
#: lab -> (C0 has aliases, C1 has aliases)
ALIAS_LABS = {"al": (False, True), "ar": (True, False)}
#: plan -> (writer, first approver on main or None, merger, tool)
QPLANS: dict[str, tuple[tuple[str, str], tuple[str, str] | None, tuple[str, str], str]] = {
    "qa": (AGENT, ALICE, ASMITH, "rec5"),  # quorum 2: Alice and her alias a.smith
    "qb": (AGENT, BOBO, BOBX, "rec5"),  # quorum 2: Bob and his plus tag
    "qc": (ASMITH, None, ALICE, "rec"),  # a.smith wrote it, Alice approves
    "qd": (BOBBOT, None, BOBO, "rec"),  # bob+bot wrote it, Bob approves
}


def qconfig(lab: Lab, aliases: bool) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    entry = f"{{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        + (ALIASES if aliases else "")
        + "  rules:\n    - match: {tools: [rec5]}\n      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {entry}\n  rec5: {entry}\n  echo: {{kind: echo}}\n"
    )


def qplan(slug: str) -> str:
    tool = QPLANS[slug][3]
    text = plan_text(slug).replace("name: rec", f"name: {tool}")
    return text.replace("tool: rec", f"tool: {tool}")


def qexpect(name: str, slug: str) -> bool:
    """Whether the pass under C1 runs the plan: with aliases on nothing runs."""
    return not ALIAS_LABS[name][1]


def qbuild(root: Path, name: str) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    qconfig(lab, ALIAS_LABS[name][0])
    for slug, (writer, _first, _merger, _tool) in QPLANS.items():
        lab.write(slug, qplan(slug))
        lab.commit(f"{writer[0]}: {slug}", writer)
    run("c0")
    lab.git_date = f"@{t0 + 60} +0000"
    for slug, (_w, first, _m, _t) in QPLANS.items():
        if first:
            lab.approve(slug, first)
    lab.git_date = f"@{t0 + 120} +0000"
    run("c0-partial")
    got["partial"] = {s: lab.rows().get(f"plans/{s}", {}).get("status") for s in QPLANS}
    lab.git_date = f"@{t0 + 180} +0000"
    for slug in QPLANS:
        lab.branch(f"rv-{slug}")
        lab.set_status(slug, "approved")
        lab.commit(f"agent: ready {slug}", AGENT)
        lab.git("checkout", "-q", "main")
    qconfig(lab, ALIAS_LABS[name][1])
    got["check"] = {}
    for slug, (_w, _f, merger, _t) in QPLANS.items():
        got["check"][slug] = lab.check_plans(f"rv-{slug}", merger[1]).get(f"plans/{slug}")
    for slug, (_w, _f, merger, _t) in QPLANS.items():
        lab.git("merge", "-q", "--no-ff", "-m", f"merge {slug}", f"rv-{slug}", who=merger)
    lab.git_date = f"@{t0 + 240} +0000"
    run("c1")
    got["ran"] = {s: len(lab.calls(s)) for s in QPLANS}
    got["status"] = {s: lab.rows().get(f"plans/{s}", {}).get("status") for s in QPLANS}
    got["starts"] = starts(lab)
    got["audit"] = {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
        "single": audit_at(lab, clone_to(lab, root / "single", "--single-branch", "--no-tags")),
    }
    return got


@pytest.fixture(scope="module")
def qlabs(every: dict[str, Any]) -> dict[str, Any]:
    return every


Q_IDS = [(n, s) for n in ALIAS_LABS for s in QPLANS]


@pytest.mark.parametrize("name", list(ALIAS_LABS))
def test_q_passes(qlabs: dict[str, Any], name: str) -> None:
    got = qlabs[name]
    assert [p[1] for p in got["passes"]] == [0, 0, 0], got["passes"]


@pytest.mark.parametrize(("name", "slug"), Q_IDS, ids=[f"{n}:ran:{s}" for n, s in Q_IDS])
def test_q_ran(qlabs: dict[str, Any], name: str, slug: str) -> None:
    want = 1 if qexpect(name, slug) else 0
    assert qlabs[name]["ran"][slug] == want, (qlabs[name]["ran"], qlabs[name]["status"])


@pytest.mark.parametrize(("name", "slug"), Q_IDS, ids=[f"{n}:check:{s}" for n, s in Q_IDS])
def test_q_check(qlabs: dict[str, Any], name: str, slug: str) -> None:
    told = qlabs[name]["check"][slug]
    assert told is not None, qlabs[name]["check"]
    assert (told[0] == "start") == (qlabs[name]["ran"][slug] == 1), (told, qlabs[name]["ran"])


QA_IDS = [(n, k, s) for n in ALIAS_LABS for k in ("plain", "config", "single") for s in QPLANS]


@pytest.mark.parametrize(
    ("name", "kind", "slug"), QA_IDS, ids=[f"{n}:audit:{k}:{s}" for n, k, s in QA_IDS]
)
def test_q_audit(qlabs: dict[str, Any], name: str, kind: str, slug: str) -> None:
    got = qlabs[name]["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == qlabs[name]["ran"][slug], got["report"].get("executions")


QC_IDS = [(n, k) for n in ALIAS_LABS for k in ("plain", "config", "single")]


@pytest.mark.parametrize(("name", "kind"), QC_IDS, ids=[f"{n}:audit:{k}:clean" for n, k in QC_IDS])
def test_q_audit_clean(qlabs: dict[str, Any], name: str, kind: str) -> None:
    got = qlabs[name]["audit"][kind]
    assert got["rc"] == 0 and not got["report"].get("findings"), got


@pytest.mark.parametrize("name", list(ALIAS_LABS))
def test_q_policy(qlabs: dict[str, Any], name: str) -> None:
    rows = qlabs[name]["starts"]
    assert all(trailer == tree for _c, trailer, tree, _m in rows), rows


# -- withdrawals made before the controller's first record, judged by today's config -------
#: plan -> (who rejects it before the first pass, on a merged branch?)
PRE: dict[str, tuple[tuple[str, str], bool]] = {
    "p1": (BOBO, False),
    "p2": (MALLORY, False),
    "p3": (BOBO, False),
    "p4": (MALLORY, False),
    "p5": (MALLORY, True),
}
#: plans whose rejection is made AFTER the first pass, on a branch forked before it (its
#: ancestry holds no record), merged by the agent, then approved by Alice under the first config
PRE_FORKED = {"p6": BOBO, "p7": MALLORY}
PRE_EARLY = ["p1", "p2", "p6", "p7"]  # approved and run under the first config
PRE_LATE = ["p3", "p4", "p5"]  # approved with the second config, predicted by check


def pconfig(lab: Lab, approvers: list[str], path: Path | None = None, plans_dir: str = "") -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    (path or lab.config).write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        + (f"plans_dir: {plans_dir}\n" if plans_dir else "")
        + "identity: {name: plangate, email: plangate@localhost}\n"
        f"approval:\n  approvers: {json.dumps(approvers)}\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )


def pre_build(root: Path) -> dict[str, Any]:
    """Lab ``pre``: first config ``[alice]``; Bob and Mallory reject plans before the first
    pass (ignored: neither may withdraw); later the operator adds both as approvers."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    for slug in [*PRE, *PRE_FORKED]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.branch("forked")
    lab.git("checkout", "-q", "main")
    lab.git_date = f"@{t0 + 60} +0000"
    for slug, (who, merged) in PRE.items():
        if merged:
            lab.branch(f"rj-{slug}")
        lab.set_status(slug, "rejected")
        lab.commit(f"reject {slug}", who)
        if merged:
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--no-ff", "-m", f"merge rj-{slug}", f"rj-{slug}", who=AGENT)
    pconfig(lab, [ALICE[1]])
    lab.git_date = f"@{t0 + 120} +0000"
    run("first")
    lab.git_date = f"@{t0 + 150} +0000"
    lab.git("checkout", "-q", "forked")
    for slug, who in PRE_FORKED.items():
        lab.set_status(slug, "rejected")
        lab.commit(f"reject {slug}", who)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge forked", "forked", who=AGENT)
    lab.git_date = f"@{t0 + 160} +0000"
    run("forked")
    lab.git_date = f"@{t0 + 180} +0000"
    for slug in PRE_EARLY:
        lab.approve(slug, ALICE)
    lab.git_date = f"@{t0 + 240} +0000"
    run("early")
    second = [ALICE[1], "*@ops.example.com", MALLORY[1]]
    edited = root / "edited.yml"
    pconfig(lab, second, edited)
    got["stale"] = audit_at(lab, lab.repo, "--config", str(edited))
    lab.git_date = f"@{t0 + 300} +0000"
    lab.branch("rv")
    for slug in PRE_LATE:
        lab.set_status(slug, "approved")
    lab.commit("agent: ready", AGENT)
    lab.git("checkout", "-q", "main")
    pconfig(lab, second)
    got["check"] = lab.check_plans("rv", ALICE[1])
    lab.git("merge", "-q", "--no-ff", "-m", "merge rv", "rv", who=ALICE)
    lab.git_date = f"@{t0 + 360} +0000"
    run("late")
    got["ran"] = {s: len(lab.calls(s)) for s in [*PRE, *PRE_FORKED]}
    got["audit"] = {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
    }
    return got


def rev_build(root: Path, move: bool) -> dict[str, Any]:
    """Labs ``rev``/``mov``: first config ``[alice, *@ops]``; Bob rejects ``r1`` before the
    first pass (it counts: ``r1`` rejected); the agent adds a copy of its bytes; the operator
    removes ``*@ops`` (lab ``mov``: and moves ``plans_dir`` to ``ops``, the copy there); Alice
    approves the copy through a merge: a withdrawn version, refused."""
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    lab.write("r1", plan_text("r1"))
    lab.commit("agent: r1", AGENT)
    lab.git_date = f"@{t0 + 60} +0000"
    lab.set_status("r1", "rejected")
    lab.commit("bob: reject r1", BOBO)
    pconfig(lab, [ALICE[1], "*@ops.example.com"])
    lab.git_date = f"@{t0 + 120} +0000"
    run("first")
    got["r1"] = lab.rows().get("plans/r1", {}).get("status")
    lab.git_date = f"@{t0 + 180} +0000"
    copy = "ops/r1c" if move else "plans/r1c"
    lab.put(f"{copy}/PLAN.yml", plan_text("r1"))
    lab.commit("agent: copy of r1", AGENT)
    pconfig(lab, [ALICE[1]], plans_dir="ops" if move else "")
    lab.git_date = f"@{t0 + 200} +0000"
    run("copy")
    lab.git_date = f"@{t0 + 240} +0000"
    lab.branch("rv")
    path = lab.repo / copy / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    lab.commit("agent: ready", AGENT)
    lab.git("checkout", "-q", "main")
    got["check"] = lab.check_plans("rv", ALICE[1]).get(copy)
    lab.git("merge", "-q", "--no-ff", "-m", "merge rv", "rv", who=ALICE)
    lab.git_date = f"@{t0 + 300} +0000"
    run("approve")
    got["ran"] = len(lab.calls("r1"))
    approval = load_yaml(lab.git("show", f"main:{copy}/PLAN.yml")).get("approval") or {}
    got["code"] = approval.get("code")
    got["audit"] = {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
    }
    return got


@pytest.fixture(scope="module")
def plabs(every: dict[str, Any]) -> dict[str, Any]:
    return every


@pytest.mark.parametrize("name", ["pre", "rev", "mov"])
def test_pre_passes(plabs: dict[str, Any], name: str) -> None:
    assert all(p[1] == 0 for p in plabs[name]["passes"]), plabs[name]["passes"]


ALLPRE = [*PRE, *PRE_FORKED]


@pytest.mark.parametrize("slug", ALLPRE, ids=[f"pre:ran:{s}" for s in ALLPRE])
def test_pre_ran(plabs: dict[str, Any], slug: str) -> None:
    assert plabs["pre"]["ran"][slug] == 1, plabs["pre"]["ran"]


@pytest.mark.parametrize("slug", ALLPRE, ids=[f"pre:audit:plain:{s}" for s in ALLPRE])
def test_pre_audit_plain(plabs: dict[str, Any], slug: str) -> None:
    got = plabs["pre"]["audit"]["plain"]
    assert valid(got["report"], slug) == 1, got["report"].get("executions")
    kinds = {(f.get("plan"), f.get("kind")) for f in got["report"].get("findings", [])}
    assert (f"plans/{slug}", "start-without-approval") not in kinds, kinds


@pytest.mark.parametrize(
    "slug",
    [pytest.param(s, id=f"pre:audit:config:{s}") for s in ALLPRE],
)
def test_pre_audit_config(plabs: dict[str, Any], slug: str) -> None:
    got = plabs["pre"]["audit"]["config"]
    assert valid(got["report"], slug) == 1, got["report"].get("findings")


@pytest.mark.parametrize(
    "slug",
    [pytest.param(s, id=f"pre:audit:edited:{s}") for s in PRE_EARLY],
)
def test_pre_audit_edited(plabs: dict[str, Any], slug: str) -> None:
    """``audit --config`` with the edited config before the restart: a note, not a finding."""
    got = plabs["pre"]["stale"]
    assert valid(got["report"], slug) == 1, got["report"].get("findings")


@pytest.mark.parametrize(
    "slug",
    [pytest.param(s, id=f"pre:check:{s}") for s in PRE_LATE],
)
def test_pre_check(plabs: dict[str, Any], slug: str) -> None:
    told = plabs["pre"]["check"].get(f"plans/{slug}")
    assert told is not None and told[0] == "start", plabs["pre"]["check"]


@pytest.mark.parametrize("name", ["rev", "mov"])
def test_rev_rejected(plabs: dict[str, Any], name: str) -> None:
    assert plabs[name]["r1"] == "rejected", plabs[name]["r1"]


@pytest.mark.parametrize("name", ["rev", "mov"])
def test_rev_copy_refused(plabs: dict[str, Any], name: str) -> None:
    got = plabs[name]
    assert got["ran"] == 0 and got["code"] == "E_VERSION_WITHDRAWN", (got["ran"], got["code"])


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, id=f"{n}:check") for n in ("rev", "mov")],
)
def test_rev_check(plabs: dict[str, Any], name: str) -> None:
    told = plabs[name]["check"]
    assert told is not None and told[0] == "refuse", told
    assert "E_VERSION_WITHDRAWN" in told[1], told


def _rejection_kept(got: dict[str, Any]) -> None:
    rep = got["report"]
    kinds = [(f.get("plan"), f.get("kind")) for f in rep.get("findings", [])]
    assert ("plans/r1", "withdraw-not-allowed") not in kinds, kinds
    assert any(
        d.get("kind") == "reject" and d.get("plan") == "plans/r1" for d in rep.get("decisions", [])
    ), rep.get("decisions")
    assert got["rc"] == 0, (got["rc"], kinds)


@pytest.mark.parametrize("name", ["rev", "mov"], ids=["rev:audit:plain", "mov:audit:plain"])
def test_rev_audit_plain(plabs: dict[str, Any], name: str) -> None:
    _rejection_kept(plabs[name]["audit"]["plain"])


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, id=f"{n}:audit:config") for n in ("rev", "mov")],
)
def test_rev_audit_config(plabs: dict[str, Any], name: str) -> None:
    _rejection_kept(plabs[name]["audit"]["config"])


# -- size limits lowered after a plan ran: audit --config reads history by today's limits ------
#: plan -> (bytes of padding in its why, approved and run before the limit is lowered)
LIM: dict[str, tuple[int, bool]] = {
    "l5": (2100, True),  # ran under the default limit, larger than the new one
    "l6": (0, True),  # small: every reading agrees
    "l7": (2100, False),  # frozen, never approved, larger than the new one
    "l8": (0, True),  # three actions, more than the new max_actions
    "l9": (0, True),  # a param of 600 characters, more than the new max_params_bytes
}
LIMIT = "limits: {max_plan_bytes: 2000, max_actions: 2, max_params_bytes: 400}\n"
MORE = "".join(
    f'  - id: {i}\n    tool: rec\n    why: "more"\n    params:\n      tag: "l8"\n' for i in (2, 3)
)


def lconfig(lab: Lab, extra: str, path: Path | None = None) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    (path or lab.config).write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
        + extra
    )


def lim_build(root: Path) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"

    def run(tag: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((tag, res.returncode, res.stderr[-400:] if res.returncode else ""))

    lconfig(lab, "")
    for slug, (pad, _ran) in LIM.items():
        text = plan_text(slug)
        if pad:
            text = text.replace('why: "record', 'why: "' + "x" * pad + " record")
        if slug == "l8":
            text += MORE
        if slug == "l9":
            text = plan_text(slug, params=f'pad: "{"y" * 600}"\n')
        lab.write(slug, text)
    lab.commit("agent: plans", AGENT)
    run("freeze")
    lab.git_date = f"@{t0 + 60} +0000"
    for slug, (_pad, ran) in LIM.items():
        if ran:
            lab.approve(slug, ALICE)
    lab.git_date = f"@{t0 + 120} +0000"
    run("approve")
    edited = root / "edited.yml"
    lconfig(lab, LIMIT, edited)
    got["audit"] = {"edited": audit_at(lab, lab.repo, "--config", str(edited))}
    lconfig(lab, LIMIT)
    lab.git_date = f"@{t0 + 180} +0000"
    run("restart")
    got["ran"] = {s: len(lab.calls(s)) for s in LIM}
    got["status"] = {s: lab.rows().get(f"plans/{s}", {}).get("status") for s in LIM}
    got["audit"]["plain"] = audit_at(lab, clone_to(lab, root / "plain"))
    got["audit"]["config"] = audit_at(lab, lab.repo, "--config", str(lab.config))
    return got


@pytest.fixture(scope="module")
def llab(every: dict[str, Any]) -> dict[str, Any]:
    return dict(every["lim"])


def test_lim_passes(llab: dict[str, Any]) -> None:
    assert all(p[1] == 0 for p in llab["passes"]), llab["passes"]


@pytest.mark.parametrize("slug", list(LIM), ids=[f"lim:ran:{s}" for s in LIM])
def test_lim_ran(llab: dict[str, Any], slug: str) -> None:
    calls = 3 if slug == "l8" else 1  # l8's three actions each call rec once
    assert llab["ran"][slug] == (calls if LIM[slug][1] else 0), llab["ran"]


@pytest.mark.parametrize("slug", ["l5", "l6"], ids=["lim:status:l5", "lim:status:l6"])
def test_lim_status(llab: dict[str, Any], slug: str) -> None:
    assert llab["status"][slug] == "completed", llab["status"]


LIM_AUDIT = [(k, s) for k in ("plain", "edited", "config") for s in LIM]


@pytest.mark.parametrize(
    ("kind", "slug"),
    [
        pytest.param(
            k,
            s,
            id=f"lim:audit:{k}:{s}",
        )
        for k, s in LIM_AUDIT
    ],
)
def test_lim_audit(llab: dict[str, Any], kind: str, slug: str) -> None:
    got = llab["audit"][kind]
    assert "Traceback" not in got["err"], got["err"]
    assert valid(got["report"], slug) == (1 if LIM[slug][1] else 0), got["report"].get("executions")
    mine = [f for f in got["report"].get("findings", []) if f.get("plan") == f"plans/{slug}"]
    assert not mine, mine


@pytest.mark.parametrize(
    "kind",
    [pytest.param(k, id=f"lim:audit:{k}:exit") for k in ("plain", "edited", "config")],
)
def test_lim_audit_exit(llab: dict[str, Any], kind: str) -> None:
    got = llab["audit"][kind]
    assert got["rc"] == 0, (got["rc"], got["report"].get("findings"))


# -- tools retired, re-schemed, made high risk or re-kinded after plans ran (held) -----------
#: plan -> the tool it calls: rec2 retired, rec7 gets a schema its params fail and risk high
#: under a two-approval rule, rec8 becomes an echo tool
TOOLRUN = {"t2": "rec2", "t7": "rec7", "t8": "rec8"}


def tconfig(lab: Lab, later: bool) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    entry = f"kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    schema = ", params_schema: {type: object, properties: {tag: {type: string, pattern: '^z'}}}"
    tools = f"  rec: {{{entry}}}\n"
    if later:
        tools += f"  rec7: {{risk: high, {entry}{schema}}}\n  rec8: {{kind: echo}}\n"
    else:
        tools += f"  rec2: {{{entry}}}\n  rec7: {{{entry}}}\n  rec8: {{{entry}}}\n"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        + ("  rules: [{match: {risk: high}, require: [{count: 2}]}]\n" if later else "")
        + "tools:\n"
        + tools
    )


def tool_build(root: Path) -> dict[str, Any]:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {"passes": []}
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"
    tconfig(lab, False)
    for slug, tool in TOOLRUN.items():
        text = plan_text(slug).replace("name: rec", f"name: {tool}")
        lab.write(slug, text.replace("tool: rec", f"tool: {tool}"))
    lab.commit("agent: plans", AGENT)
    got["passes"].append(lab.run(check=False).returncode)
    lab.git_date = f"@{t0 + 60} +0000"
    for slug in TOOLRUN:
        lab.approve(slug, ALICE)
    lab.git_date = f"@{t0 + 120} +0000"
    got["passes"].append(lab.run(check=False).returncode)
    tconfig(lab, True)
    lab.git_date = f"@{t0 + 180} +0000"
    got["passes"].append(lab.run(check=False).returncode)
    got["ran"] = {s: len(lab.calls(s)) for s in TOOLRUN}
    got["audit"] = {
        "plain": audit_at(lab, clone_to(lab, root / "plain")),
        "config": audit_at(lab, lab.repo, "--config", str(lab.config)),
    }
    return got


@pytest.fixture(scope="module")
def tlab(every: dict[str, Any]) -> dict[str, Any]:
    return dict(every["tool"])


@pytest.mark.parametrize("slug", list(TOOLRUN), ids=[f"tool:ran:{s}" for s in TOOLRUN])
def test_tool_ran(tlab: dict[str, Any], slug: str) -> None:
    assert tlab["passes"] == [0, 0, 0] and tlab["ran"][slug] == 1, (tlab["passes"], tlab["ran"])


TOOL_AUDIT = [(k, s) for k in ("plain", "config") for s in TOOLRUN]


@pytest.mark.parametrize(
    ("kind", "slug"), TOOL_AUDIT, ids=[f"tool:audit:{k}:{s}" for k, s in TOOL_AUDIT]
)
def test_tool_audit(tlab: dict[str, Any], kind: str, slug: str) -> None:
    got = tlab["audit"][kind]
    assert got["rc"] == 0 and valid(got["report"], slug) == 1, (
        got["rc"],
        got["report"].get("findings"),
    )


def limc_build(root: Path) -> dict[str, Any]:
    """Lab ``limc``: a 2,100-byte plan runs; ``max_plan_bytes: 2000`` and ``plans_dir: ops``
    in one restart (the history index rebuilt while the plan's bytes are too big to read);
    the limit raised again; a copy ``ops/l5c`` approved by Alice's merge (checked first)."""
    lab = Lab(root / "lab")
    t0 = int(time.time()) - 7200
    lab.git_date = f"@{t0} +0000"
    big = plan_text("l5").replace('why: "record', 'why: "' + "x" * 2100 + " record")
    lconfig(lab, "")
    lab.write("l5", big)
    lab.commit("agent: l5", AGENT)
    passes = [lab.run(check=False).returncode]
    lab.git_date = f"@{t0 + 60} +0000"
    lab.approve("l5", ALICE)
    lab.git_date = f"@{t0 + 120} +0000"
    passes.append(lab.run(check=False).returncode)
    lconfig(lab, "plans_dir: ops\n" + LIMIT)
    lab.git_date = f"@{t0 + 180} +0000"
    passes.append(lab.run(check=False).returncode)
    lconfig(lab, "plans_dir: ops\n")
    lab.put("ops/l5c/PLAN.yml", big)
    lab.commit("agent: copy of l5", AGENT)
    lab.git_date = f"@{t0 + 240} +0000"
    passes.append(lab.run(check=False).returncode)
    lab.git_date = f"@{t0 + 300} +0000"
    lab.branch("rv")
    path = lab.repo / "ops/l5c/PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    lab.commit("agent: ready", AGENT)
    lab.git("checkout", "-q", "main")
    check = lab.check_plans("rv", ALICE[1]).get("ops/l5c")
    lab.git("merge", "-q", "--no-ff", "-m", "merge rv", "rv", who=ALICE)
    lab.git_date = f"@{t0 + 360} +0000"
    passes.append(lab.run(check=False).returncode)
    approval = load_yaml(lab.git("show", "main:ops/l5c/PLAN.yml")).get("approval") or {}
    return {
        "passes": passes,
        "check": check,
        "ran": len(lab.calls("l5")),
        "code": approval.get("code"),
    }


def test_limc_copy(every: dict[str, Any]) -> None:
    """``limc:copy``: the copy of a plan that ran is refused, whatever the size limit said
    while the index was rebuilt."""
    got = every["limc"]
    assert got["passes"] == [0] * 5, got
    assert got["ran"] == 1 and got["code"] == "E_ALREADY_EXECUTED", got


def test_limc_check(every: dict[str, Any]) -> None:
    """``limc:check``: ``check --as alice`` predicted that refusal."""
    told = every["limc"]["check"]
    assert told is not None and told[0] == "refuse" and "E_ALREADY_EXECUTED" in told[1], told
