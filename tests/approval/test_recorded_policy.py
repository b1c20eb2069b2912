"""The recorded policy (SPEC §11): the controller commits its effective policy to
``.plangate/policy.json``, every start names it (``Policy-Hash:``), and ``plangate audit`` on
a fresh clone with no config judges each run by the policy in force then and flags every
change of the file the controller did not make. The file is a record, never an input: a
forged one changes nothing the controller decides.

Real repos, the real ``plangate run --once`` and ``plangate audit`` in subprocesses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from controller.approval import recorded
from controller.settings import config_from_data
from tests.support.gitenv import AGENT, ALICE, BOB, BOT, MALLORY, commit_all, git, run_cli
from tests.support.gitkit import GATED, approve, edit_status, head_plan, write_plan

POLICY = ".plangate/policy.json"
SUBJECT = "plangate: record policy"
TOOLS = """\
tools:
  greet: {kind: echo, risk: low}
  deploy:
    kind: exec
    argv: ["true"]
    env: {DEPLOY_TOKEN: "tok-s3cr3t-env-value"}
    risk: high
    estimate: {seconds: 30}
  hook:
    kind: http
    url: "https://hooks.example.com/x"
    headers: {Authorization: "Bearer hdr-s3cr3t-value"}
"""


def write_config(repo: Path, approvers: str = '["alice@example.com", "*@ops.example.com"]',
                 tools: str = TOOLS) -> Path:  # fmt: skip
    config = repo.parent / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {repo.parent / 'state'}\n"
        f"approval:\n  approvers: {approvers}\n"
        "webhook: {secret_env: PLANGATE_TEST_WEBHOOK_SECRET}\n" + tools
    )
    return config


def run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout)


def fresh_clone(repo: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert not (clone / "plangate.yml").exists()
    return clone


def policy_commits(repo: Path) -> list[list[str]]:
    """(author email, subject, body) of every commit that changed the policy file."""
    out = git(repo, "log", "--format=%ae%x00%s%x00%b%x01", "--", POLICY)
    return [row.strip("\n").split("\0") for row in out.split("\x01") if row.strip()]


def ran(repo: Path) -> dict[str, Any]:
    """A plan submitted by the agent, approved by Alice and run: the honest history."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run(repo.parent / "plangate.yml")
    approve(repo)
    run(repo.parent / "plangate.yml")
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed", plan
    return plan


@pytest.fixture(autouse=True)
def _webhook_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_TEST_WEBHOOK_SECRET", "whk-s3cr3t-value")


def test_the_first_pass_records_the_policy_once_and_no_secret(repo: Path) -> None:
    config = write_config(repo)
    run(config)
    run(config)  # nothing changed: no second record
    [(author, subject, body)] = policy_commits(repo)
    assert (author, subject) == (BOT[1], SUBJECT) and "first record" in body
    data = git(repo, "show", f"HEAD:{POLICY}").encode()
    doc = recorded.parse(data)
    assert doc is not None, "not canonical JSON of a known version"
    assert doc["approval"]["approvers"] == ["alice@example.com", "*@ops.example.com"]
    assert doc["tools"]["deploy"]["risk"] == "high"
    assert doc["tools"]["deploy"]["estimate"] == {"seconds": 30, "cost_usd": 0}
    assert doc["tools"]["greet"]["definition"].startswith("sha256:")
    assert b"s3cr3t" not in data and b"PLANGATE_TEST_WEBHOOK" not in data
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Policy-Hash,valueonly)", "--", POLICY)
    assert trailer.strip() == "sha256:" + hashlib.sha256(data).hexdigest()
    # the working tree holds what was committed
    assert (repo / POLICY).read_bytes() == data
    assert git(repo, "status", "--porcelain") == ""


def test_the_hash_is_stable_and_leaves_secret_values_out(tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    def load(text: str) -> bytes:
        data = YAML(typ="safe").load(text)
        return recorded.policy_bytes(config_from_data({"repo": str(tmp_path), **data}))

    same = load(TOOLS)
    assert load(TOOLS) == same  # canonical: the same config, the same bytes and hash
    assert load(TOOLS.replace("tok-s3cr3t-env-value", "other")) == same  # values never in it
    changed = load(TOOLS.replace('argv: ["true"]', 'argv: ["false"]'))
    assert changed != same  # what the tool runs is in its definition's hash
    assert json.loads(changed)["tools"]["greet"] == json.loads(same)["tools"]["greet"]


@pytest.mark.parametrize(
    ("argv", "url"),
    [
        (["mysql", "-uapp", "-p{pw}"], None),  # a short flag's password
        (["deploy", "--token={pw}"], None),  # a credential pair
        (None, "https://app:{pw}@svc.example/x"),  # a URL's password
    ],
)
def test_the_definition_hash_answers_a_guess_of_a_credential_alike(
    tmp_path: Path, argv: list[str] | None, url: str | None
) -> None:
    """Round 72: a hash over the definition WITH its credential let anyone who reads the
    branch confirm a guess offline; the credentials the redactor hides are written ``***``
    first, and what else the tool runs still counts."""

    def definition(pw: str, extra: str = "") -> str:
        if url is not None:
            tool: dict[str, Any] = {"kind": "http", "url": url.format(pw=pw) + extra}
        else:
            tool = {"kind": "exec", "argv": [a.format(pw=pw) for a in argv or []]}
            tool["argv"] += [extra] if extra else []
        config = config_from_data({"repo": str(tmp_path), "tools": {"t": tool}})
        return str(recorded.policy_document(config)["tools"]["t"]["definition"])

    right = definition("Kq9w-right-guess")
    assert definition("Zx81-wrong-guess") == right
    assert definition("Kq9w-right-guess", "more") != right


def test_every_start_names_the_policy_recorded_before_it(repo: Path) -> None:
    write_config(repo)
    write_plan(repo, text=GATED)
    commit_all(repo, "add greet", AGENT)
    run(repo.parent / "plangate.yml")
    approve(repo)
    run(repo.parent / "plangate.yml")
    assert head_plan(repo)["plan"]["status"] == "awaiting_approval"
    approve(repo)  # the gate
    run(repo.parent / "plangate.yml")
    assert head_plan(repo)["plan"]["status"] == "completed"
    out = git(repo, "log", "--format=%H%x00%s%x00%(trailers:key=Policy-Hash,valueonly)%x01")
    rows = [r.strip("\n").split("\0") for r in out.split("\x01") if r.strip()]
    starts = [(sha, value.strip()) for sha, subject, value in rows if "start" in subject]
    assert len(starts) == 2, rows  # the first approval and the gate
    for sha, value in starts:
        data = git(repo, "show", f"{sha}^:{POLICY}").encode()
        assert value == "sha256:" + hashlib.sha256(data).hexdigest()


def test_an_approver_who_left_does_not_flag_their_runs(repo: Path, tmp_path: Path) -> None:
    config = write_config(repo)
    ran(repo)
    write_config(repo, approvers='["*@ops.example.com"]')  # Alice has left
    code, report = audit(tmp_path, "--config", str(config))
    assert code == 0, report
    [note] = report["notes"]
    assert note["kind"] == "config-differs" and "approval.approvers" in note["detail"]
    run(config)  # the controller records its new policy
    [(_, _, body), _] = policy_commits(repo)
    assert "approval.approvers" in body
    code, report = audit(fresh_clone(repo, tmp_path))  # no config at all
    assert code == 0, report
    [execution] = report["executions"]
    assert execution["approval_valid"] and execution["approver"] == "alice@example.com"
    assert execution["policy_hash"] == report["policies"][0]["hash"]
    assert len(report["policies"]) == 2 and report["notes"] == []


def test_a_retired_tool_does_not_flag_the_runs_that_used_it(repo: Path, tmp_path: Path) -> None:
    config = write_config(repo)
    ran(repo)
    write_config(repo, tools=TOOLS.replace("  greet: {kind: echo, risk: low}\n", ""))
    run(config)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 0 and report["executions"][0]["approval_valid"], report


def test_a_human_edit_of_the_policy_is_flagged_and_undone(repo: Path, tmp_path: Path) -> None:
    config = write_config(repo)
    ran(repo)
    recorded_bytes = (repo / POLICY).read_bytes()
    doc = json.loads(recorded_bytes)
    doc["approval"]["approvers"].append("mallory@example.com")
    (repo / POLICY).write_bytes(recorded.canonical_bytes(doc))
    edit = commit_all(repo, "policy: add mallory", AGENT)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1
    [finding] = report["findings"]
    assert finding["kind"] == "policy-changed" and finding["commit"] == edit
    assert "agent@example.com" in finding["detail"]
    run(config)  # the controller's policy is its config: it records it again
    assert (repo / POLICY).read_bytes() == recorded_bytes
    assert [c[0] for c in policy_commits(repo)] == [BOT[1], AGENT[1], BOT[1]]


def test_a_forged_policy_does_not_make_anyone_an_approver(repo: Path, tmp_path: Path) -> None:
    config = write_config(repo)
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run(config)
    doc = json.loads((repo / POLICY).read_bytes())
    doc["approval"]["approvers"] = ["*@example.com"]
    (repo / POLICY).write_bytes(recorded.canonical_bytes(doc))
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve greet (policy says I may)", MALLORY)
    run(config)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "pending_approval", plan
    assert plan["approval"]["code"] == "E_APPROVER_NOT_ALLOWED"
    assert "execution" not in plan
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1 and report["executions"] == []
    assert {f["kind"] for f in report["findings"]} == {"policy-changed"}


@pytest.mark.parametrize("twin", [".PLANGATE/policy.json", "PLANGA~1/policy.json",
                                  ".plangate./policy.json", ".plangate/POLICY.JSON",
                                  ".plan\u200cgate/policy.json", ".plangate\\/policy.json",
                                  "\\/.plangate/policy.json"])  # fmt: skip
def test_a_twin_of_the_policy_record_is_reported_and_decides_nothing(
    repo: Path, tmp_path: Path, twin: str
) -> None:
    """Round 75: ``PLANGA~1/policy.json`` IS ``.plangate/policy.json`` where 8.3 names are
    on (``.PLANGATE/`` on a case-insensitive checkout, ``.plangate./`` on NTFS): the
    fresh-clone audit reports the agent's copy ``policy-changed`` naming it (a note: git
    holds the record untouched, so no verdict changes and the audit stays ok), and never
    reads it as a policy. Round 80: the root folder ``.plangate\\`` and a root folder ``\\``
    (no part: the root itself on git for Windows) alike; the audit reads the history the
    index reads (``planstate.history_paths``: the files below a root backslash folder)."""
    write_config(repo)
    ran(repo)
    doc = json.loads((repo / POLICY).read_bytes())
    doc["approval"]["approvers"].append("mallory@example.com")
    (repo / twin).parent.mkdir(parents=True, exist_ok=True)
    (repo / twin).write_bytes(recorded.canonical_bytes(doc))
    edit = commit_all(repo, "notes", AGENT)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 0 and report["findings"] == [], report
    [note] = [n for n in report["notes"] if n["kind"] == "policy-changed"]
    assert note["commit"] == edit and "agent@example.com" in note["detail"], note
    assert twin.split("/")[0].replace("\u200c", "") in note["detail"].replace("\\u200c", "")
    assert len(report["policies"]) == 1 and report["executions"][0]["approval_valid"]
    assert not recorded.is_twin(POLICY) and not recorded.is_twin("plans/x/policy.json")


def test_a_deleted_policy_is_flagged(repo: Path, tmp_path: Path) -> None:
    config = write_config(repo)
    ran(repo)
    git(repo, "rm", "-q", POLICY)
    commit_all(repo, "tidy up", AGENT)
    code, report = audit(tmp_path, "--config", str(config))
    assert code == 1
    assert [f["kind"] for f in report["findings"]] == ["policy-changed"]
    assert "deleted" in report["findings"][0]["detail"]


#: A seal of the controller's shape (``Controller-Seal:``, 64 hex digits) that no key here made:
#: a fresh clone cannot verify it and judges the start by its approval (an unsealed one is no
#: controller's at all, round 69).
SEAL = "Controller-Seal: " + "5e" * 32 + "\n"


def test_a_start_naming_another_policy_is_flagged(repo: Path, tmp_path: Path) -> None:
    """Everything else about the start is right (a valid approval, the approved content):
    only its Policy-Hash names a policy that was never recorded."""
    config = write_config(repo)
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run(config)
    approval = approve(repo)
    edit_status(repo, "greet", "executing")
    git(repo, "add", "-A")
    trailers = {
        "Plan": "plans/greet",
        "Plan-Status": "executing",
        "Approved-By": ALICE[1],
        "Approval-Commit": approval,
        "Policy-Hash": "sha256:" + "0" * 64,
    }
    body = "".join(f"{k}: {v}\n" for k, v in trailers.items())
    git(repo, "commit", "-q", "-m", f"plangate: start plans/greet\n\n{body}{SEAL}",
        env={"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1],
             "GIT_COMMITTER_NAME": BOT[0], "GIT_COMMITTER_EMAIL": BOT[1]})  # fmt: skip
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1
    assert [f["kind"] for f in report["findings"]] == ["policy-hash-mismatch"], report
    [execution] = report["executions"]
    assert execution["approval_valid"], execution


def test_audit_with_neither_config_nor_record_is_a_config_error(repo: Path) -> None:
    result = run_cli("audit", "--json", cwd=repo)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "E_CONFIG_INVALID" in result.stderr and "policy" in result.stderr


# --- quorum decisions (SPEC §11), judged from git alone -----------------------------------


def _forge_start(repo: Path, approval: str) -> str:
    """A start commit under the controller's name, for the approval request ``approval``."""
    edit_status(repo, "greet", "executing")
    git(repo, "add", "-A")
    policy = "sha256:" + hashlib.sha256((repo / POLICY).read_bytes()).hexdigest()
    trailers = {
        "Plan": "plans/greet",
        "Plan-Status": "executing",
        "Approval-Commit": approval,
        "Policy-Hash": policy,
    }
    body = "".join(f"{k}: {v}\n" for k, v in trailers.items())
    env = {"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1],
           "GIT_COMMITTER_NAME": BOT[0], "GIT_COMMITTER_EMAIL": BOT[1]}  # fmt: skip
    git(repo, "commit", "-q", "-m", f"plangate: start plans/greet\n\n{body}{SEAL}", env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_quorum_run_audits_clean_from_a_fresh_clone(repo: Path, tmp_path: Path) -> None:
    from tests.support.quorumkit import SEC, submitted, vote

    submitted(repo)
    assert vote(repo, ALICE)["approval"]["status"] == "partial"
    assert vote(repo, ("Bob", "bob@ops.example.com"))["approval"]["status"] == "partial"
    assert vote(repo, SEC)["plan"]["status"] == "completed"
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 0, report
    [execution] = report["executions"]
    assert execution["approval_valid"] and execution["approver"] == SEC[1]


def test_a_start_before_the_quorum_is_met_is_flagged(repo: Path, tmp_path: Path) -> None:
    """Two of the three approvals the recorded policy asks for: the audit, with no config,
    knows the rule from the recorded policy and flags the start."""
    from tests.support.quorumkit import submitted, vote

    submitted(repo)
    assert vote(repo, ALICE)["approval"]["status"] == "partial"
    second = approve(repo, who=("Bob", "bob@ops.example.com"))
    _forge_start(repo, second)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1
    flagged = [f for f in report["findings"] if f["kind"] == "start-without-approval"]
    assert flagged and "1 from security" in flagged[0]["detail"], report["findings"]
    assert not report["executions"][0]["approval_valid"]


@pytest.mark.parametrize("committed", [False, True], ids=["in-the-tree", "committed"])
def test_a_linked_policy_folder_is_never_written_through(
    repo: Path, tmp_path: Path, committed: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".plangate").symlink_to(outside)
    if committed:
        commit_all(repo, "a link where the policy goes", AGENT)
    config = write_config(repo)
    run(config)
    assert list(outside.iterdir()) == []  # nothing written through the link
    data = git(repo, "show", f"HEAD:{POLICY}").encode()
    assert recorded.parse(data) is not None
    ran(repo)  # and plans still run


def test_two_controllers_with_different_configs_do_not_war(repo: Path, tmp_path: Path) -> None:
    """Each restores its own record a few times, then stops and says so (policy_contested):
    a branch watched by two controllers that disagree gets a bounded number of commits."""
    from controller.service.committing import MAX_RECORDS
    from controller.service.reconcile import Controller

    def controller(name: str, approvers: list[str]) -> Controller:
        data = {
            "repo": str(repo),
            "state_dir": str(tmp_path / f"state-{name}"),
            "approval": {"approvers": approvers},
            "tools": {"greet": {"kind": "echo"}},
        }
        # told to take over (round 70): the second starts on the first's sealed history
        return Controller(config_from_data(data, tmp_path / f"{name}.yml"), take_over=True)

    first, second = controller("a", ["alice@example.com"]), controller("b", ["bob@example.com"])
    try:
        for _ in range(MAX_RECORDS + 3):
            first.run_once()
            second.run_once()
    finally:
        first.close()
        second.close()
    count = len(policy_commits(repo))
    assert count == 2 * MAX_RECORDS, count


def test_a_hostile_first_record_never_crashes_the_audit(repo: Path, tmp_path: Path) -> None:
    """Canonical JSON of the right version whose content no config can be made of, committed
    before the controller ever ran: skipped to find the controller's identity, flagged."""
    bad = {"version": 1, "identity": {"email": "x@y"}, "plans_dir": "plans",
           "approval": {"approvers": "everyone"}, "limits": {}, "tools": {}}  # fmt: skip
    (repo / ".plangate").mkdir()
    (repo / POLICY).write_bytes(recorded.canonical_bytes(bad))
    commit_all(repo, "a policy of my own", AGENT)
    write_config(repo)
    ran(repo)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1 and report["executions"][0]["approval_valid"], report
    kinds = {(f["kind"], f["commit"][:7]) for f in report["findings"]}
    assert [k for k, _ in kinds] == ["policy-changed"], report["findings"]


def record_commits(repo: Path) -> list[tuple[str, str, str]]:
    """(sha, author, committer) of every controller record commit, newest first: those that
    change no file included (a path-limited log leaves them out)."""
    out = git(repo, "log", "--first-parent", f"--grep=^{SUBJECT}$", "--format=%H %ae %ce")
    return [tuple(row.split()) for row in out.splitlines()]  # type: ignore[misc]


def with_approver(repo: Path, email: str) -> bytes:
    """The recorded policy with one approver more: the next policy's exact bytes."""
    doc = json.loads((repo / POLICY).read_bytes())
    doc["approval"]["approvers"].append(email)
    return recorded.canonical_bytes(doc)


def test_bytes_committed_first_are_recorded_by_the_controller_all_the_same(
    repo: Path, tmp_path: Path
) -> None:
    """Round 61: the agent commits the NEXT policy's bytes before the controller's pass. The
    controller's record is its own commit, not the file: it records the policy anyway (a
    commit whose tree is its parent's), judges Bob's rejection by it (he vetoes), and the
    fresh-clone audit reads that record and flags the agent's change."""
    config = write_config(repo, approvers='["alice@example.com"]')
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run(config)
    nxt = with_approver(repo, BOB[1])
    write_config(repo, approvers=f'["alice@example.com", "{BOB[1]}"]')
    (repo / POLICY).write_bytes(nxt)
    pre = commit_all(repo, "tidy .plangate", AGENT)
    run(config)
    sha, author, committer = record_commits(repo)[0]
    assert (author, committer) == (BOT[1], BOT[1])
    assert git(repo, "rev-parse", f"{sha}^{{tree}}") == git(repo, "rev-parse", f"{sha}^^{{tree}}")
    assert git(
        repo, "log", "-1", "--format=%(trailers:key=Policy-Hash,valueonly)", sha
    ).strip() == (recorded.hash_of(nxt))
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "bob rejects greet", BOB)
    run(config)
    approve(repo)
    run(config)
    assert head_plan(repo)["plan"]["status"] != "completed"  # Bob's veto holds
    _, report = audit(fresh_clone(repo, tmp_path))
    assert recorded.hash_of(nxt) in {p["hash"] for p in report["policies"]}, report
    about = [(f["kind"], f["commit"]) for f in report["findings"] if f["kind"] != "illegal"]
    assert about == [("policy-changed", pre)]  # illegal: Alice's approval over the veto


def test_the_first_record_is_made_over_bytes_already_committed(repo: Path, tmp_path: Path) -> None:
    """The agent commits the first policy's exact bytes with its plan: the controller still
    records it on its first pass, and the honest run audits clean apart from that change."""
    from controller.settings.loading import load_config

    config = write_config(repo)
    (repo / ".plangate").mkdir()
    (repo / POLICY).write_bytes(recorded.policy_bytes(load_config(config)))
    pre = commit_all(repo, "add the policy with the plan", AGENT)
    ran(repo)
    assert len(record_commits(repo)) == 1
    _, report = audit(fresh_clone(repo, tmp_path))
    [execution] = report["executions"]
    assert execution["approval_valid"] and execution["policy_hash"] in {
        p["hash"] for p in report["policies"]
    }, report
    assert [(f["kind"], f["commit"]) for f in report["findings"]] == [("policy-changed", pre)]


def test_a_record_under_the_controller_name_by_another_committer_records_nothing(
    repo: Path, tmp_path: Path
) -> None:
    """A ``record policy`` commit with the controller as author but someone else as
    committer (an amend, a cherry-pick, a forgery) is no record: flagged, never in force."""
    write_config(repo)
    ran(repo)
    forged = with_approver(repo, MALLORY[1])
    (repo / POLICY).write_bytes(forged)
    git(repo, "add", "-A")
    env = {"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1],
           "GIT_COMMITTER_NAME": AGENT[0], "GIT_COMMITTER_EMAIL": AGENT[1]}  # fmt: skip
    message = f"{SUBJECT}\n\nPolicy-Hash: {recorded.hash_of(forged)}\n"
    git(repo, "commit", "-q", "-m", message, env=env)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1
    assert recorded.hash_of(forged) not in {p["hash"] for p in report["policies"]}
    assert [f["kind"] for f in report["findings"]] == ["policy-changed"], report


def test_a_recorded_rule_matching_tools_reads_back(tmp_path: Path) -> None:
    """Round 89: a rule ``match: {tools: [...]}`` was checked against an empty catalog when
    the record was read back, so every such record was unreadable and a fresh clone's audit
    said the branch held no recorded policy."""
    data = {
        "repo": str(tmp_path),
        "tools": {"hot": {"kind": "exec", "argv": ["true"]}, "echo": {"kind": "echo"}},
        "approval": {
            "approvers": ["alice@example.com", "bob@example.com"],
            "rules": [{"match": {"tools": ["hot"]}, "require": [{"count": 2}]}],
        },
    }
    doc = recorded.parse(recorded.policy_bytes(config_from_data(data)))
    assert doc is not None
    config = recorded.config_of(doc, tmp_path)
    assert config.approval.rules[0].match.tools == ["hot"]
    assert sorted(config.tools) == ["echo", "hot"] and config.tools["hot"].kind == "exec"


def _claim(repo: Path, who: tuple[str, str], email: str, message: str) -> str:
    """``who`` commits the recorded policy naming ``email`` as the controller."""
    doc = json.loads((repo / POLICY).read_bytes())
    doc["identity"]["email"] = email
    (repo / POLICY).write_bytes(recorded.canonical_bytes(doc))
    return commit_all(repo, message, who)


@pytest.mark.parametrize(
    ("who", "email", "message"),
    [
        (AGENT, AGENT[1], "agent: the policy names me"),
        (AGENT, MALLORY[1], "agent: the policy names mallory"),
        (AGENT, AGENT[1], f"{SUBJECT}\n\nPolicy-Hash: {'a' * 64}"),  # the record's look, no seal
        (BOT, AGENT[1], "policy: under the controller's name"),
    ],
    ids=["itself", "another", "record-look", "controller-name"],
)
def test_a_later_unsealed_claim_neither_stops_nor_changes_the_audit(
    repo: Path, tmp_path: Path, who: tuple[str, str], email: str, message: str
) -> None:
    """Round 110 (late-policy-claim-stops-audit): after the controller's sealed records, one
    unsealed commit of the policy file naming another identity made every fresh-clone audit
    without --controller stop E_CONFIG_INVALID (two controller identities) with no verdict.
    Only a sealed record by the identity it names claims it: the edit is a finding."""
    write_config(repo)
    ran(repo)
    edit = _claim(repo, who, email, message)
    code, report = audit(fresh_clone(repo, tmp_path))
    assert code == 1, report
    assert [e["approval_valid"] for e in report["executions"]] == [True], report["executions"]
    assert edit in {f["commit"] for f in report["findings"]}, report["findings"]


def test_two_sealed_self_records_still_ask_which_is_the_controller(
    repo: Path, tmp_path: Path
) -> None:
    """A seal-shaped record naming its own committer is what a controller whose identity
    changed writes, and what an agent forging one writes: git alone cannot tell them apart,
    so the audit asks (``--controller`` settles it, and judges the honest run valid)."""
    write_config(repo)
    ran(repo)
    sealed = f"{SUBJECT}\n\nPolicy-Hash: {'a' * 64}\nController-Seal: {'b' * 64}"
    _claim(repo, AGENT, AGENT[1], sealed)
    clone = fresh_clone(repo, tmp_path)
    result = run_cli("audit", "--json", cwd=clone)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "more than one controller identity" in result.stderr and "--controller" in result.stderr
    code, report = audit(clone, "--controller", BOT[1])
    assert code == 1 and [e["approval_valid"] for e in report["executions"]] == [True]


def test_a_replayed_record_under_the_controller_name_is_nobodys_with_the_config(
    repo: Path, tmp_path: Path
) -> None:
    """Round 112 (atk112a): Bob is an approver under P1, the operator removes him (P2), and
    the agent replays P1's record commit under the controller's name (its message, seal and
    all). The controller knows its own commits and ignores Bob's rejection; ``check --config``
    and ``audit --config``, which read the same record of the controller's commits, now judge
    the same: check predicts the start, the replay is flagged and never in force, Bob's
    rejection decides nothing, the run is valid."""
    config = write_config(repo, approvers=f'["alice@example.com", "{BOB[1]}"]')
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run(config)
    [(p1, _, _)] = record_commits(repo)
    write_config(repo, approvers='["alice@example.com"]')  # Bob leaves
    run(config)
    git(repo, "checkout", p1, "--", POLICY)
    message = git(repo, "log", "-1", "--format=%B", p1)
    replay_env = {"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1],
                  "GIT_COMMITTER_NAME": BOT[0], "GIT_COMMITTER_EMAIL": BOT[1]}  # fmt: skip
    git(repo, "commit", "-q", "-m", message, env=replay_env)
    replay = git(repo, "rev-parse", "HEAD").strip()
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "bob rejects greet", BOB)
    run(config)
    git(repo, "checkout", "-q", "-b", "alice-approves")
    approve(repo)
    git(repo, "checkout", "-q", "main")
    checked = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", "alice-approves",
        "--as", ALICE[1], "--format", "json", cwd=repo,
    )  # fmt: skip
    rows = json.loads(checked.stdout)
    rows = rows if isinstance(rows, list) else rows.get("plans", [])
    [row] = [r for r in rows if r.get("plan") == "plans/greet"]
    assert row.get("outcome") == "start", row  # check predicts what the controller does
    git(repo, "merge", "-q", "--ff-only", "alice-approves")
    run(config)
    assert head_plan(repo)["plan"]["status"] == "completed"  # Bob has no say any more
    _, report = audit(tmp_path, "--config", str(config))
    [execution] = report["executions"]
    assert execution["approval_valid"], report
    assert report["decisions"] == [], report["decisions"]  # Bob's rejection: nobody's
    kinds = {(f["kind"], f["commit"]) for f in report["findings"]}
    assert ("policy-changed", replay) in kinds, report["findings"]
    assert not {k for k, _ in kinds} & {"illegal", "start-without-approval"}, report["findings"]
    assert replay not in {p["commit"] for p in report["policies"]}
