"""``plangate check`` (SPEC §11): what a merge would do, and that the controller then does it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.plan import yamlio
from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import AGENT, ALICE, BOB, PLAN, edit_status, head_plan, write_plan
from tests.support.quorumkit import (
    CAROL,
    DAVE,
    SEC,
    keys,
    merge,
    quorum_policy,
    run_once,
    submitted,
    trailer_approval,
)

__all__ = ["keys"]  # the fixture


def config_file(repo: Path, **approval: Any) -> Path:
    path = repo.parent / "plangate.yml"
    data = {"repo": str(repo), **quorum_policy(**approval)}
    path.write_text(json.dumps(data))
    return path


def check(repo: Path, *args: str, **approval: Any) -> tuple[int, Any]:
    config = config_file(repo, **approval)
    result = run_cli("--config", str(config), "check", "--head", "review", *args, cwd=repo)
    assert result.returncode in (0, 1), result.stderr
    if "--format" in args and args[args.index("--format") + 1] != "json":
        return result.returncode, result.stdout
    return result.returncode, json.loads(result.stdout)


def test_a_new_plan_in_a_pull_request_would_be_frozen_and_shows_its_risk(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "review")
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    git(repo, "switch", "-q", "main")
    code, report = check(repo, "--format", "json")
    [plan] = report["plans"]
    assert code == 0
    assert plan["outcome"] == "freeze" and plan["valid"] and not plan["frozen"]
    assert plan["risk"] == "high" and plan["estimate"] == {"seconds": 2.0, "cost_usd": 0.0}
    assert plan["needs"] == "2 from ops, 1 from security"
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")  # nothing moved


def test_check_predicts_the_pull_request_flow_and_the_controller_agrees(
    repo: Path, keys: dict[str, Path]
) -> None:
    submitted(repo)
    git(repo, "switch", "-q", "-c", "review")
    trailer_approval(repo, ALICE, keys["alice"])
    trailer_approval(repo, SEC, keys["sec"])
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready", AGENT)
    git(repo, "switch", "-q", "main")
    allowed = {"allowed_signers": str(keys["allowed"])}
    code, report = check(repo, "--as", CAROL[1], "--format", "json", **allowed)
    [plan] = report["plans"]
    assert code == 0 and plan["outcome"] == "start"
    assert sorted(v["by"] for v in plan["counted"]) == [
        "alice@example.com",
        "carol@ops.example.com",
        "sec@example.com",
    ]
    code, report = check(repo, "--as", AGENT[1], "--format", "json", **allowed)
    [plan] = report["plans"]
    assert plan["outcome"] == "refuse" and code == 1
    assert [r["code"] for r in plan["refused"]] == ["E_SELF_APPROVAL"]
    assert plan["missing"] == "1 more from ops"
    _, markdown = check(repo, "--as", AGENT[1], "--format", "markdown", **allowed)
    assert "| plan | valid | frozen | risk | estimate | needs | merging |" in markdown
    assert "E\\_SELF\\_APPROVAL" in markdown
    code, text = check(repo, "--format", "text", **allowed)  # CI that does not know the merger
    assert code == 1 and "merger@unknown.invalid" not in text and "((" not in text
    assert "refused: the merger (unknown: pass --as) (the merge) E_APPROVER_NOT_ALLOWED" in text
    assert "pass --as EMAIL to predict a merge by that person" in text
    merge(repo, "review", CAROL)
    run_once(repo, **allowed)
    assert head_plan(repo)["plan"]["status"] == "completed"


# --- property: check's prediction is the controller's decision -------------------------

PEOPLE = [ALICE, BOB, CAROL, SEC, DAVE, AGENT]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    direct=st.lists(st.sampled_from(PEOPLE), max_size=2),
    trailers=st.lists(st.sampled_from(["alice", "sec", "mallory", None]), max_size=3),
    merger=st.sampled_from(PEOPLE),
    rule=st.sampled_from(
        [
            [],
            [
                {
                    "match": {"risk": "high"},
                    "require": [{"group": "ops", "count": 2}, {"group": "security"}],
                }
            ],
            [{"match": {}, "require": [{"count": 2}]}],
            [{"match": {"paths": ["plans/x/**"]}, "require": [{"count": 3}]}],
        ]
    ),
    approved_in_branch=st.booleans(),
)
def test_what_check_predicts_is_what_the_controller_decides(
    tmp_path_factory: Any,
    keys: dict[str, Path],
    direct: list[tuple[str, str]],
    trailers: list[str | None],
    merger: tuple[str, str],
    rule: list[dict[str, Any]],
    approved_in_branch: bool,
) -> None:
    repo = tmp_path_factory.mktemp("prop") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "initial", ("Owner", "owner@example.com"))
    approval = {"allowed_signers": str(keys["allowed"]), "rules": rule}
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, **approval)
    for who in direct:
        edit_status(repo, "greet", "approved")
        commit_all(repo, "approve", who)
        run_once(repo, **approval)
    status = head_plan(repo)["plan"]["status"]
    git(repo, "switch", "-q", "-c", "review")
    for signer in trailers:
        if signer is None:
            frozen = head_plan(repo)["frozen"]["hash"]
            git(repo, "commit", "-q", "--allow-empty", "-m",
                f"a\n\nPlan-Approved: plans/greet {frozen}", env=identity(*BOB))  # fmt: skip
        else:
            email = {"alice": ALICE[1], "sec": SEC[1], "mallory": SEC[1]}[signer]
            trailer_approval(repo, ("X", email), keys[signer])
    if approved_in_branch and status == "pending_approval":
        edit_status(repo, "greet", "approved")
    commit_all(repo, "ready", AGENT)
    git(repo, "switch", "-q", "main")
    _, report = check(repo, "--as", merger[1], "--format", "json", **approval)
    [predicted] = report["plans"] or [{"outcome": "none"}]
    merge(repo, "review", merger)
    before = head_plan(repo)
    run_once(repo, **approval)
    after = head_plan(repo)
    assert _observed(before, after) == _expected(predicted), (predicted, after.get("approval"))


def _expected(p: dict[str, Any]) -> tuple[Any, ...]:
    if p["outcome"] in ("none", "freeze", "invalid"):
        return ("none", ())
    # The merge's own refusal shows in the approval block only when nothing else approves:
    # an author merging a branch whose trailer approvals suffice starts the plan (no code).
    refused = (r["code"] for r in p["refused"] if r["commit"] == "(the merge)")
    code = next(refused, None) if p["outcome"] == "refuse" else None
    status = {"start": "approved", "partial": "partial", "refuse": "refused"}[p["outcome"]]
    return (status, tuple(sorted(v["by"] for v in p["counted"])), code)[: 3 if code else 2]


def _observed(before: dict[str, Any], after: dict[str, Any]) -> tuple[Any, ...]:
    if (
        yamlio
        and before.get("approval") == after.get("approval")
        and (after["plan"]["status"] == before["plan"]["status"])
    ):
        return ("none", ())
    block = after.get("approval") or {}
    votes = tuple(sorted(a["by"] for a in block.get("approvals") or []))
    if block.get("status") == "approved" and not votes:
        votes = (block["by"],)
    code = block.get("code") if block.get("status") == "refused" else None
    return (block.get("status"), votes, code)[: 3 if code else 2]


def _nested_pull_request(repo: Path, inner: str, beside: str | None = None) -> Path:
    """Branch ``review``: the agent's plan ``plans/outer`` pinning ``plans/common/inner``
    (one ``inner`` tool action), with a file at ``plans/common/inner/<beside>`` too when
    given. Returns the config (tool ``wave`` low risk)."""
    data = {"repo": str(repo), **quorum_policy()}
    data["tools"]["wave"] = {"kind": "echo", "risk": "low"}
    config = repo.parent / "plangate.yml"
    config.write_text(json.dumps(data))
    git(repo, "switch", "-q", "-c", "review")
    child = {
        "plan": {"name": "Inner", "task": "t", "status": "draft"},
        "available_tools": [{"name": inner}],
        "actions": [{"id": 1, "tool": inner, "why": "w"}],
    }
    write_plan(repo, "common/inner", yamlio.dump(child))
    pin = run_cli("hash", str(repo / "plans" / "common" / "inner")).stdout.split()[0]
    parent = {
        "plan": {"name": "Outer", "task": "t", "status": "pending_approval"},
        "available_tools": [{"name": "wave"}],
        "actions": [
            {"id": 1, "tool": "wave", "why": "w"},
            {"id": 2, "plan": {"path": "plans/common/inner", "hash": pin}, "why": "w"},
        ],
    }
    write_plan(repo, "outer", yamlio.dump(parent))
    if beside is not None:
        extra = repo / "plans" / "common" / "inner" / beside
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text(yamlio.dump({**child, "actions": [{"id": 1, "tool": "greet"}]}))
    commit_all(repo, "add outer and inner", AGENT)
    git(repo, "switch", "-q", "main")
    return config


def _checked_outer(repo: Path, config: Path) -> dict[str, Any]:
    result = run_cli("--config", str(config), "check", "--head", "review", "--format", "json",
                     cwd=repo)  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    [outer] = [p for p in json.loads(result.stdout)["plans"] if p["plan"] == "plans/outer"]
    return outer


@pytest.mark.parametrize(("inner", "risk"), [("wave", "low"), ("greet", "high")])
def test_check_counts_the_tools_of_a_nested_plan_in_the_merge(
    repo: Path, inner: str, risk: str
) -> None:
    """The pinned plan is read from the merge's tree: its tools decide the risk and quorum."""
    outer = _checked_outer(repo, _nested_pull_request(repo, inner))
    assert outer["valid"], outer["problems"]  # validated as the merge holds the nested plan
    assert outer["risk"] == risk
    assert outer["needs"] == ("2 from ops, 1 from security" if risk == "high" else "1 approval")


@pytest.mark.parametrize("beside", ["plan.yml", "Plan.YAML", "PLAN.YML/PLAN.yml"])
def test_check_refuses_a_pinned_folder_the_merge_makes_ambiguous_as_the_run_does(
    repo: Path, beside: str
) -> None:
    """A pinned folder holding a second entry that claims to be its plan file (another case,
    a folder so named: round 71's claims) is E_PLAN_AMBIGUOUS when the run loads it; check
    read the merge's tree by the two exact names and called the parent valid, low risk."""
    config = _nested_pull_request(repo, "wave", beside)
    outer = _checked_outer(repo, config)
    assert not outer["valid"]
    assert "E_PLAN_AMBIGUOUS" in json.dumps(outer["problems"])
    merge(repo, "review", ALICE)
    result = run_cli("--config", str(config), "run", "--once", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert head_plan(repo, "outer")["plan"]["status"] == "invalid"  # the run agrees


def test_check_knows_who_wrote_a_pinned_plan_as_the_controller_does(repo: Path) -> None:
    """Approving a parent approves the plans it pins: their writers may not approve it.
    ``check`` reads the pinned plans' histories too, so it predicts the refusal."""
    data = {"repo": str(repo), **quorum_policy(rules=[])}
    config = repo.parent / "plangate.yml"
    config.write_text(json.dumps(data))
    child = {
        "plan": {"name": "Inner", "task": "t", "status": "draft"},
        "available_tools": [{"name": "greet"}],
        "actions": [{"id": 1, "tool": "greet", "why": "w"}],
    }
    write_plan(repo, "common/inner", yamlio.dump(child))
    commit_all(repo, "bob writes the inner plan", BOB)
    pin = run_cli("hash", str(repo / "plans" / "common" / "inner")).stdout.split()[0]
    parent = {
        "plan": {"name": "Outer", "task": "t", "status": "pending_approval"},
        "actions": [{"id": 1, "plan": {"path": "plans/common/inner", "hash": pin}, "why": "w"}],
    }
    write_plan(repo, "outer", yamlio.dump(parent))
    commit_all(repo, "agent adds outer", AGENT)
    run_once(repo, rules=[])  # frozen
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "outer", "approved")
    commit_all(repo, "approve outer", AGENT)
    git(repo, "switch", "-q", "main")
    result = run_cli("--config", str(config), "check", "--head", "review", "--as", BOB[1],
                     "--format", "json", cwd=repo)  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    [outer] = [p for p in json.loads(result.stdout)["plans"] if p["plan"] == "plans/outer"]
    assert outer["outcome"] == "refuse", (outer, head_plan(repo, "outer").get("validation"))
    assert [r["code"] for r in outer["refused"]] == ["E_SELF_APPROVAL"], outer
    merge(repo, "review", BOB)
    run_once(repo, rules=[])
    block = head_plan(repo, "outer").get("approval") or {}
    assert block.get("code") == "E_SELF_APPROVAL", block  # the controller agrees


def test_under_require_signed_check_predicts_the_merge_the_merger_will_sign(
    repo: Path, keys: dict[str, Path]
) -> None:
    """Under require_signed the simulated merge is unsigned, but the real one is signed by
    the merger (round 22: check predicted "refuse" for every reviewed pull request). check
    predicts it signed with a key allowed_signers lets ``--as`` sign with now, says so, and
    predicts a refusal for a merger who has no such key; the controller then agrees."""
    policy = {
        "require_signed": True,
        "allowed_signers": str(keys["allowed"]),
        "rules": [{"match": {}, "require": [{"count": 1}]}],
    }
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, **policy)
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready", AGENT)
    git(repo, "switch", "-q", "main")

    code, report = check(repo, "--as", ALICE[1], "--format", "json", **policy)
    [plan] = report["plans"]
    assert (code, plan["outcome"], plan["refused"]) == (0, "start", [])
    assert report["merge_signature"].startswith(f"assumed signed by {ALICE[1]} with a key")
    _, text = check(repo, "--as", ALICE[1], "--format", "text", **policy)
    assert text.splitlines()[0].startswith("merge signature: assumed signed by alice@")

    code, report = check(repo, "--as", CAROL[1], "--format", "json", **policy)
    [plan] = report["plans"]
    assert (code, plan["outcome"]) == (1, "refuse")
    assert [r["code"] for r in plan["refused"]] == ["E_SIGNATURE_INVALID"]
    assert "lists no key carol@ops.example.com may sign" in report["merge_signature"]

    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={keys['alice']}"]
    git(repo, *signing, "merge", "-q", "--no-ff", "-S", "-m", "Merge review", "review",
        env=identity(*ALICE))  # fmt: skip
    run_once(repo, **policy)
    assert head_plan(repo)["plan"]["status"] == "completed"


def test_under_require_signed_check_predicts_a_merge_signed_with_a_certificate(
    repo: Path, tmp_path: Path
) -> None:
    """Round 30: with only a ``cert-authority`` line in allowed_signers, the merger signs
    with a key its CA certified for her; check predicts that merge signed (git names her)
    and the controller then agrees. A merger the CA line does not allow is predicted
    refused."""
    import subprocess

    def keygen(*args: str) -> None:
        subprocess.run(["ssh-keygen", "-q", *args], check=True, capture_output=True)

    for name in ("ca", "alice"):
        keygen("-t", "ed25519", "-N", "", "-f", str(tmp_path / name))
    keygen("-s", str(tmp_path / "ca"), "-I", "alice", "-n", ALICE[1], str(tmp_path / "alice.pub"))
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"*@example.com cert-authority {(tmp_path / 'ca.pub').read_text()}")
    policy = {
        "require_signed": True,
        "allowed_signers": str(allowed),
        "rules": [{"match": {}, "require": [{"count": 1}]}],
    }
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, **policy)
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "ready", AGENT)
    git(repo, "switch", "-q", "main")

    code, report = check(repo, "--as", ALICE[1], "--format", "json", **policy)
    [plan] = report["plans"]
    assert (code, plan["outcome"], plan["refused"]) == (0, "start", [])
    assert report["merge_signature"].startswith(
        f"assumed signed by {ALICE[1]} with a certificate for {ALICE[1]} by CA SHA256:"
    )
    code, report = check(repo, "--as", BOB[1], "--format", "json", **policy)
    assert (code, report["plans"][0]["outcome"]) == (1, "refuse")

    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={tmp_path / 'alice-cert.pub'}"]
    git(repo, *signing, "merge", "-q", "--no-ff", "-S", "-m", "Merge review", "review",
        env=identity(*ALICE))  # fmt: skip
    run_once(repo, **policy)
    assert head_plan(repo)["plan"]["status"] == "completed"


@pytest.mark.parametrize("value", ["", "@", "a@b@c", "carol at example.com", "<>"])
def test_an_as_that_names_no_mailbox_is_a_usage_error(repo: Path, value: str) -> None:
    """``--as`` takes an address or git's ``Name <address>`` (round 26: the whole value was
    read as an address no commit can carry); anything else is E_USAGE, not a prediction."""
    config = config_file(repo)
    result = run_cli("--config", str(config), "check", "--head", "main", "--as", value, cwd=repo)
    assert result.returncode == 2 and "E_USAGE" in result.stderr + result.stdout, result
    assert "names no mailbox" in result.stderr


def test_every_format_quotes_a_plans_status_as_written_even_one_equal_to_a_secret(
    repo: Path,
) -> None:
    """Round 64: ``--format markdown`` escaped the report before the redactor matched the
    plan's own text, so a status equal to a secret (or its upper-case spelling) came back
    ``(got '***')`` in markdown only; a right guess read apart from a wrong one. Every
    format now quotes the report's values as matched before any escaping."""
    secret = "r64-hidd3n-pq8zkw4v"
    (repo.parent / "sec.yml").write_text(f"TOK: {secret}\n")
    spellings = {"st": secret, "up": secret.upper(), "zw": secret + "\u200b_x"}
    git(repo, "switch", "-q", "-c", "review")
    for slug, status in spellings.items():
        write_plan(repo, slug)
        edit_status(repo, slug, status)
    commit_all(repo, "statuses", AGENT)
    git(repo, "switch", "-q", "main")
    config = config_file(repo)
    secrets = {"secrets": {"file": str(repo.parent / "sec.yml")}}
    config.write_text(json.dumps({**json.loads(config.read_text()), **secrets}))
    for fmt in ("text", "markdown", "json"):
        args = ("--config", str(config), "check", "--head", "review", "--format", fmt)
        out = run_cli(*args, cwd=repo).stdout
        assert "***" not in out and "\\*\\*\\*" not in out, (fmt, out)
        for status in (secret, secret.upper()):
            assert status in out, (fmt, out)


def _claim_beside(repo: Path, kind: str, name: str) -> None:
    """Put ``plans/greet/<name>`` beside the plan file as ``kind``."""
    path = repo / "plans" / "greet" / name
    if kind == "symlink":
        path.symlink_to("../other/PLAN.yml")
    elif kind == "folder":
        path.mkdir()
        (path / "PLAN.yml").write_text((repo / "plans" / "greet" / "PLAN.yml").read_text())
    elif kind == "gitlink":
        path.mkdir()  # an uninitialised submodule: an empty folder
    git(repo, "add", "-A")
    if kind == "gitlink":
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},plans/greet/{name}")


@pytest.mark.parametrize(
    ("kind", "name", "code"),
    [(None, "", ""), ("symlink", "plan.yml", "E_PLAN_AMBIGUOUS"),
     ("gitlink", "plan.yml", "E_PLAN_AMBIGUOUS"), ("folder", "PLAN.YML", "E_PLAN_AMBIGUOUS"),
     ("folder", "PLAN.y\u200cml", "E_PLAN_AMBIGUOUS"), ("symlink", "PLAN.yaml", "E_UNSAFE_PATH")],
)  # fmt: skip
def test_check_holds_a_plan_beside_a_claim_as_the_controller_does(
    repo: Path, kind: str | None, name: str, code: str
) -> None:
    """Round 72: a pull request adding an entry that claims a frozen plan's file place (a
    symlink or gitlink ``plan.yml``, a folder ``PLAN.YML/`` or ``PLAN.y<U+200C>ml/``) with
    Alice's approval: check said ``start`` (links) or E_SCHEMA_INVALID "the file must be a
    mapping" (folders: the held plan's text, absent, read as empty), where the controller
    holds the plan E_PLAN_AMBIGUOUS (a symlink ``PLAN.yaml``: E_UNSAFE_PATH) and runs
    nothing. Now check says the controller's word: outcome ``held``, invalid, its code."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, rules=[])
    git(repo, "switch", "-q", "-c", "review")
    if kind is not None:
        _claim_beside(repo, kind, name)
        commit_all(repo, "a claim beside", AGENT)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve", ALICE)
    git(repo, "switch", "-q", "main")
    exit_code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = [p for p in report["plans"] if p["plan"] == "plans/greet"]
    if kind is None:
        assert (exit_code, plan["outcome"], plan["valid"]) == (0, "start", True), plan
    else:
        assert (exit_code, plan["outcome"], plan["valid"]) == (1, "held", False), plan
        assert [p["code"] for p in plan["problems"]] == [code], plan
        text = check(repo, "--as", ALICE[1], "--format", "markdown", rules=[])[1]
        assert code.replace("_", "\\_") in text and "held" in text and "**no**" in text, text
        text = check(repo, "--as", ALICE[1], "--format", "text", rules=[])[1]
        assert "plans/greet: merging leaves it held" in text and code in text, text
    merge(repo, "review", ALICE)
    run_once(repo, rules=[])
    ran = head_plan(repo)["plan"]["status"] == "completed"
    assert ran == (kind is None)  # the controller did what check said


@pytest.mark.parametrize(
    ("beside", "kind"),
    [(None, None), ("plan.yml", "symlink"), ("PLAN.YML", "folder"), ("plan.JSON", "file"),
     ("PLAN.md", "file")],
)  # fmt: skip
def test_check_reports_a_source_as_the_daemon_treats_it(
    repo: Path, beside: str | None, kind: str | None
) -> None:
    """Round 74: a pull request adding a ``PLAN.json`` beside a symlink ``plan.yml``, a
    folder ``PLAN.YML/``, a twin ``plan.JSON`` or a second source was listed by no entry of
    check, where the controller then holds it E_PLAN_AMBIGUOUS ("cannot convert"). Now check
    answers as the daemon's converter does: ``held`` with its code, or for a source alone
    ``convert`` (valid; the controller converts it, then freezes it); the daemon agrees."""
    git(repo, "switch", "-q", "-c", "review")
    folder = repo / "plans" / "greet"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(json.dumps(yamlio.read_yaml(PLAN).data))
    if kind == "symlink":
        (folder / str(beside)).symlink_to("../other/PLAN.yml")
    elif kind == "folder":
        (folder / str(beside)).mkdir()
        (folder / str(beside) / "PLAN.yml").write_text(PLAN)
    elif beside is not None:
        (folder / beside).write_text(json.dumps(yamlio.read_yaml(PLAN).data))
    commit_all(repo, "a source", AGENT)
    git(repo, "switch", "-q", "main")
    exit_code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = [p for p in report["plans"] if p["plan"] == "plans/greet"]
    if beside is None:
        assert (exit_code, plan["outcome"], plan["valid"]) == (0, "convert", True), plan
    else:
        assert (exit_code, plan["outcome"], plan["valid"]) == (1, "held", False), plan
        assert [p["code"] for p in plan["problems"]] == ["E_PLAN_AMBIGUOUS"], plan
        text = check(repo, "--as", ALICE[1], "--format", "text", rules=[])[1]
        assert "plans/greet: merging leaves it held" in text, text
    merge(repo, "review", ALICE)
    run_once(repo, rules=[])
    converted = "PLAN.yml" in git(repo, "ls-tree", "--name-only", "HEAD", "plans/greet/")
    assert converted == (beside is None)  # the controller did what check said


@pytest.mark.parametrize("twin", ["frozen", "source"])
def test_check_holds_a_source_in_a_twin_folder_as_the_pass_does(repo: Path, twin: str) -> None:
    """Round 82: a pull request adding ``plans/greet/PLAN.json`` whose folder is one with
    ``plans/GREET`` on a case-insensitive checkout (``frozen``: a frozen plan there; ``source``:
    a second source added with it) was predicted ``convert``, valid; the pass converts
    neither (E_PLAN_AMBIGUOUS). Check now predicts ``held`` for each source, as the pass."""
    if twin == "frozen":
        write_plan(repo, "GREET")
        commit_all(repo, "add GREET", AGENT)
        run_once(repo, rules=[])
    git(repo, "switch", "-q", "-c", "review")
    added = ["greet"] if twin == "frozen" else ["greet", "GREET"]
    for name in added:
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.json").write_text(json.dumps(yamlio.read_yaml(PLAN).data))
    commit_all(repo, "a source in a twin folder", AGENT)
    git(repo, "switch", "-q", "main")
    exit_code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    mine = {p["plan"]: p for p in report["plans"] if p["plan"] in {f"plans/{n}" for n in added}}
    assert sorted(mine) == sorted(f"plans/{n}" for n in added), report
    for plan in mine.values():
        assert (exit_code, plan["outcome"], plan["valid"]) == (1, "held", False), plan
        assert [p["code"] for p in plan["problems"]] == ["E_PLAN_AMBIGUOUS"], plan
    merge(repo, "review", ALICE)
    run_once(repo, rules=[])
    assert "convert" not in git(repo, "log", "--format=%s")  # the pass did what check said


def _carried_twice(repo: Path, how: str) -> None:
    """Alice's approval of greet on main; the agent's pull request brings her approved bytes
    to two paths (``mvcopy``: a ``git mv`` plus a byte-exact copy; ``twocopies``: two copies,
    the source removed), each carrying her approval (round 77)."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, rules=[])
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve greet", ALICE)
    git(repo, "switch", "-q", "-c", "review")
    approved = (repo / "plans/greet/PLAN.yml").read_bytes()
    if how == "mvcopy":
        git(repo, "mv", "plans/greet", "plans/moved")
    for name in ("moved", "copy") if how == "twocopies" else ("copy",):
        name = "greet-c" if how == "copykeep" else name
        (repo / "plans" / name).mkdir()
        (repo / "plans" / name / "PLAN.yml").write_bytes(approved)
    if how == "twocopies":
        git(repo, "rm", "-q", "-r", "plans/greet")
    commit_all(repo, f"agent: {how}", AGENT)
    git(repo, "switch", "-q", "main")


@pytest.mark.parametrize("how", ["mvcopy", "twocopies"])
def test_check_predicts_one_start_per_version_as_the_pass_starts_one(repo: Path, how: str) -> None:
    """One version at two paths after the merge: the pass starts the first plan it decides
    and refuses the other ``E_ALREADY_EXECUTED`` (started in the same pass); check predicts
    exactly that, by the same rule (round 79: it predicted ``start`` for both)."""
    _carried_twice(repo, how)
    code, report = check(repo, "--as", AGENT[1], "--format", "json", rules=[])
    outcomes = {p["plan"]: p["outcome"] for p in report["plans"] if p["outcome"] != "none"}
    assert sorted(outcomes.values()) == ["refuse", "start"], report
    [second] = [p for p in report["plans"] if p["outcome"] == "refuse"]
    assert [r["code"] for r in second["refused"]] == ["E_ALREADY_EXECUTED"], second
    assert "started in the same pass" in second["refused"][0]["message"], second
    assert code == 1
    git(repo, "merge", "-q", "--no-ff", "-m", "agent: merge", "review", env=identity(*AGENT))
    run_once(repo, rules=[])
    [started] = [p for p, outcome in outcomes.items() if outcome == "start"]
    assert head_plan(repo, started.removeprefix("plans/"))["execution"]["status"] == "completed"
    refused = head_plan(repo, second["plan"].removeprefix("plans/"))
    assert refused["plan"]["status"] == "pending_approval", refused
    said = git(repo, "log", "-1", "--format=%B", "--", second["plan"])
    assert "E_ALREADY_EXECUTED" in said, said


def test_check_refuses_a_copy_whose_approved_source_the_pass_starts_first(repo: Path) -> None:
    """The source the pull request leaves alone (approved on main, no pass since) is decided
    by the pass before its byte-exact copy and starts; check decides it too, unreported, so
    the copy is predicted ``refuse`` ``E_ALREADY_EXECUTED``, as the pass then refuses it."""
    _carried_twice(repo, "copykeep")
    code, report = check(repo, "--as", AGENT[1], "--format", "json", rules=[])
    [copy] = report["plans"]
    assert code == 1 and copy["plan"] == "plans/greet-c" and copy["outcome"] == "refuse", report
    assert [r["code"] for r in copy["refused"]] == ["E_ALREADY_EXECUTED"], copy
    git(repo, "merge", "-q", "--no-ff", "-m", "agent: merge", "review", env=identity(*AGENT))
    run_once(repo, rules=[])
    assert head_plan(repo, "greet")["execution"]["status"] == "completed"
    assert head_plan(repo, "greet-c")["plan"]["status"] == "pending_approval"
    assert "E_ALREADY_EXECUTED" in git(repo, "log", "-1", "--format=%B", "--", "plans/greet-c")


#: round 80: root folders that land on the plans folder (``plans\\``, ``PLANS\\``, a folder
#: ``\\`` below one) holding ``greet/PLAN.yml``, and round 79's doubled ``plans\\\\greet/``
ROOT_TWINS = ["plans\\/greet/PLAN.yml", "PLANS\\/greet/PLAN.yml", "plans\\/\\/greet/PLAN.yml",
              "plans\\\\greet/PLAN.yml"]  # fmt: skip


@pytest.mark.parametrize("twin", ROOT_TWINS, ids=ascii)
def test_check_holds_a_plan_a_root_folder_ending_in_a_backslash_lands_on(
    repo: Path, twin: str
) -> None:
    """Round 80 (by hand): on Alice's approval branch the agent then adds the root folder
    ``plans\\`` holding ``greet/PLAN.yml``, which git for Windows writes to
    ``plans//greet/PLAN.yml``, i.e. the plan's file: check predicted a refusal by the approval
    rules, naming no E_PLAN_AMBIGUOUS, while the doubled ``plans\\\\greet/`` was held. Now
    check says ``held`` E_PLAN_AMBIGUOUS, and the controller holds it after the merge."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, rules=[])
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve", ALICE)
    path = repo / twin
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((repo / "plans/greet/PLAN.yml").read_text().replace("Greet", "Tw"))
    commit_all(repo, "a root twin", AGENT)
    git(repo, "switch", "-q", "main")
    exit_code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = [p for p in report["plans"] if p["plan"] == "plans/greet"]
    assert (exit_code, plan["outcome"], plan["valid"]) == (1, "held", False), plan
    assert [p["code"] for p in plan["problems"]] == ["E_PLAN_AMBIGUOUS"], plan
    merge(repo, "review", ALICE)
    run_once(repo, rules=[])
    assert head_plan(repo)["plan"]["status"] != "completed"
    config = str(config_file(repo, rules=[]))
    row = json.loads(run_cli("--config", config, "status", "--json", cwd=repo).stdout)
    assert [r.get("held") for r in row if r["plan"] == "plans/greet"] == ["E_PLAN_AMBIGUOUS"], row


def test_check_predicts_a_fast_forward_where_it_decides_otherwise(repo: Path) -> None:
    """Round 97 (``od``): Alice's approval authored before the freeze is the merge's (it
    counts) under a merge commit, and ``E_APPROVAL_REPLAYED`` fast-forwarded: check reports
    both (the exit code follows the merge commit's); the controller then refuses the
    fast-forward."""
    write_plan(repo)
    commit_all(repo, "add greet", AGENT)
    run_once(repo, rules=[])
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    git(repo, "add", "-A")
    old = {**identity(*ALICE), "GIT_AUTHOR_DATE": "@1700000000 +0000"}
    git(repo, "commit", "-q", "-m", "approve greet", env=old)
    git(repo, "switch", "-q", "main")
    code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = report["plans"]
    assert plan["outcome"] == "start" and code == 0
    ahead = plan["fast_forward"]
    assert ahead["outcome"] == "refuse", ahead
    assert [r["code"] for r in ahead["refused"]] == ["E_APPROVAL_REPLAYED"]
    _, text = check(repo, "--as", ALICE[1], "--format", "text", rules=[])
    assert "if fast-forwarded (no merge commit) instead: merging is refused" in text
    git(repo, "merge", "-q", "--ff-only", "review")
    run_once(repo, rules=[])
    assert head_plan(repo)["plan"]["status"] != "completed"


MARKDOWN_SOURCE = """\
# Greet

## Objective
Say hello to the world

## Steps

### Step 1: Say hello
- **ID**: s1
- **Action**: greet
- **Type**: AGENT_EXECUTION
- **Parameters**: {"who": "someone else"}
- **Timeout**: 30s
"""


def test_check_warns_of_a_source_beside_a_plan(repo: Path) -> None:
    """Round 121, ``check-silent-on-source-beside-plan``: a pull request adding a PLAN.md (a
    forge renders it for the reviewer) beside a PLAN.yml that says otherwise was reported as
    the PLAN.yml alone, and one editing only the source beside a plan was not reported at
    all. The controller runs the PLAN.yml and converts no source there: check says so, in
    each format, as ``validate`` of the source does."""
    git(repo, "switch", "-q", "-c", "review")
    write_plan(repo)
    (repo / "plans" / "greet" / "PLAN.md").write_text(MARKDOWN_SOURCE)
    commit_all(repo, "a plan and a source", AGENT)
    git(repo, "switch", "-q", "main")
    _, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = report["plans"]
    assert plan["outcome"] == "freeze", plan
    assert [w for w in plan["warnings"] if "PLAN.md is beside PLAN.yml" in w], plan
    text = check(repo, "--as", ALICE[1], "--format", "text", rules=[])[1]
    assert "warning: PLAN.md is beside PLAN.yml: the controller runs PLAN.yml" in text, text
    text = check(repo, "--as", ALICE[1], "--format", "markdown", rules=[])[1]
    assert "PLAN.md is beside PLAN.yml" in text, text
    # the source alone edited beside the plan the branch holds
    merge(repo, "review", ALICE)
    git(repo, "switch", "-q", "-c", "edit")
    (repo / "plans" / "greet" / "PLAN.md").write_text(MARKDOWN_SOURCE.replace("else", "new"))
    commit_all(repo, "the source edited", AGENT)
    git(repo, "switch", "-q", "main")
    config = config_file(repo, rules=[])
    told = run_cli("--config", str(config), "check", "--head", "edit", "--format", "json", cwd=repo)
    [plan] = json.loads(told.stdout)["plans"]
    assert plan["plan"] == "plans/greet" and "PLAN.md is beside" in plan["warnings"][0], plan


def _nested_actionplan() -> str:
    step = {"step_number": 1, "action": {"type": "greet", "who": "x"}, "description": "hi"}
    inner = {"plan_version": 1, "plan_id": "plan:in", "title": "in", "steps": [step]}
    nested = {"step_number": 2, "description": "n"}
    nested["action"] = {"type": "nested_plan", "plan": inner}
    outer = {"plan_version": 1, "plan_id": "plan:nt", "title": "nt", "steps": [step, nested]}
    return json.dumps(dict(outer, workspace_id="/w"))


def test_hash_validate_and_check_predict_a_source_with_a_nested_plan(repo: Path) -> None:
    """Round 121, ``nested-source-predicted-invalid``: an ActionPlan PLAN.json whose step 2 is
    a nested plan was ``E_SCHEMA_INVALID ... step-2 does not exist`` to ``hash``,
    ``validate`` and ``check`` (the nested plan its convert commit writes was not there
    yet; ``hash`` of the absolute path pinned an absolute folder), while the daemon
    converted, froze and ran it. They now read it as the daemon does, and agree on the hash
    it freezes."""
    git(repo, "switch", "-q", "-c", "review")
    folder = repo / "plans" / "nt"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(_nested_actionplan())
    hashes = set()
    for path in ("plans/nt", str(folder), "plans/nt/PLAN.json"):
        hashed = run_cli("hash", path, cwd=repo)
        assert hashed.returncode == 0, hashed.stdout + hashed.stderr
        hashes.add(hashed.stdout.split()[-1])
        valid = run_cli("validate", "--json", path, cwd=repo)
        assert valid.returncode == 0 and json.loads(valid.stdout)["valid"], valid.stdout
    [predicted] = hashes
    commit_all(repo, "a nested source", AGENT)
    git(repo, "switch", "-q", "main")
    exit_code, report = check(repo, "--as", ALICE[1], "--format", "json", rules=[])
    [plan] = report["plans"]
    assert (exit_code, plan["outcome"]) == (0, "convert"), plan
    assert predicted in plan["note"], plan
    merge(repo, "review", ALICE)
    run_once(repo, rules=[])
    assert head_plan(repo, "nt")["frozen"]["hash"] == predicted
