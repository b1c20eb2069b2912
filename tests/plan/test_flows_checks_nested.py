"""Data-flow guards reach every tool call (SPEC §12, §16): a check tool's params and a nested
plan's inputs are checked like an action's params, and a nested plan's tools count in the
plan's risk, so the approver is asked for what the pinned plan does.

Everything through the real CLI and the real daemon pass on a real git repo.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from controller.display import visible
from controller.plan import yamlio
from tests.support.gitenv import ALICE, commit_all, run_cli
from tests.support.gitkit import AGENT, approve, head_plan

READ = "import json,sys; print(open(sys.argv[1]).read())"
LOG = (
    "import json,sys; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n'); "
    "print('{\"ok\": true}')"
)
GUARD = "^[^@]+@customer\\\\.example$"  # as written inside a double-quoted YAML string


def config_data(tmp_path: Path, repo: Path, **approval: Any) -> dict[str, Any]:
    mail = tmp_path / "mail.json"
    tools = {
        "read_mail": {"kind": "exec", "argv": [sys.executable, "-c", READ, str(mail)],
                      "risk": "low"},
        # a check tool whose `to` steers what it touches (it records each call)
        "probe": {"kind": "exec", "argv": [sys.executable, "-c", LOG, str(tmp_path / "probes")],
                  "idempotent": True, "risk": "low", "sensitive": ["to"]},
        "send": {"kind": "exec", "argv": [sys.executable, "-c", LOG, str(tmp_path / "outbox")],
                 "sensitive": ["to"], "risk": "high"},
        "classify": {"kind": "echo", "output_trust": "trusted", "risk": "low"},
        "note": {"kind": "echo", "risk": "low"},
    }  # fmt: skip
    return {
        "repo": str(repo),
        "state_dir": str(tmp_path / "state"),
        "approval": {"approvers": ["*@example.com"], **approval},
        "tools": tools,
    }


@pytest.fixture
def lab(tmp_path: Path, repo: Path) -> Any:
    (tmp_path / "mail.json").write_text(json.dumps({"from": "dana@customer.example"}))
    config = tmp_path / "plangate.yml"
    config.write_text(json.dumps(config_data(tmp_path, repo)))
    return repo, config, tmp_path


HEAD = """\
plan: {name: Reply, task: Answer the customer, status: pending_approval}
available_tools: [{name: read_mail}, {name: probe}, {name: send}, {name: classify}, {name: note}]
actions:
  - id: 1
    tool: read_mail
    why: read the email
    outputs: [{name: sender, path: $.json.from}]
"""


def write(repo: Path, slug: str, text: str) -> Path:
    folder = repo / "plans" / slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PLAN.yml").write_text(text)
    return folder


def validate(lab: Any, text: str) -> dict[str, Any]:
    repo, config, _ = lab
    folder = write(repo, "reply", text)
    out = run_cli("validate", "--json", "--config", str(config), str(folder / "PLAN.yml"))
    return json.loads(out.stdout.splitlines()[0]) | {"rc": out.returncode}


def unguarded(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in result["errors"] if e["code"] == "E_UNGUARDED_FLOW"]


# --- check tools ------------------------------------------------------------------------

PRE = """\
  - id: 2
    tool: note
    why: note it
    preconditions:
      - tool: probe
        params: {to: "$<actions[1].outputs.sender>"}
        expect: {path: $.json.ok, equals: true}
"""
VERIFY = """\
  - id: 2
    tool: note
    why: note it
    verify:
      tool: probe
      params: {to: "hello $<actions[1].outputs.sender>"}
      expect: {path: $.json.ok, equals: true}
"""


@pytest.mark.parametrize(
    ("step", "where"),
    [(PRE, "actions[1].preconditions[0].params.to"), (VERIFY, "actions[1].verify.params.to")],
)
def test_outside_data_into_a_check_tools_sensitive_param_needs_a_guard(
    lab: Any, step: str, where: str
) -> None:
    result = validate(lab, HEAD + step)
    assert result["rc"] == 1
    [error] = unguarded(result)
    assert error["path"] == where and error["line"] is not None
    assert "'probe'" in error["message"] and "guards:" in error["message"]
    guard = f'        guards: [{{param: to, matches: "{GUARD}"}}]\n'
    at = "        expect:" if step is PRE else "      expect:"
    guarded = step.replace(at, (guard if step is PRE else guard[2:]) + at, 1)
    assert validate(lab, HEAD + guarded)["valid"], validate(lab, HEAD + guarded)["errors"]


def test_a_check_guard_on_a_param_it_does_not_have_is_refused(lab: Any) -> None:
    text = HEAD + PRE.replace(
        "        expect:", "        guards: [{param: nope, one_of: [a]}]\n        expect:"
    )
    errors = validate(lab, text)["errors"]
    assert any(
        e["code"] == "E_SCHEMA_INVALID" and "nope" in e["message"]
        and e["path"] == "actions[1].preconditions[0].guards[0].param"
        for e in errors
    )  # fmt: skip


def run_once(lab: Any, slug: str, text: str) -> dict[str, Any]:
    """Commit as the agent, freeze, approve as Alice, run: the plan as the controller left it."""
    repo, config, _ = lab
    write(repo, slug, text)
    commit_all(repo, f"agent: {slug}", AGENT)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    approve(repo, slug, ALICE)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return head_plan(repo, slug)


@pytest.mark.parametrize(
    ("sender", "ends"), [("dana@customer.example", "completed"), ("x@evil.example", "failed")]
)
def test_a_check_guard_stops_a_hostile_value_before_the_check_tool_runs(
    lab: Any, sender: str, ends: str
) -> None:
    _, _, tmp_path = lab
    (tmp_path / "mail.json").write_text(json.dumps({"from": sender}))
    guard = f'        guards: [{{param: to, matches: "{GUARD}"}}]\n'
    state = run_once(lab, "reply", HEAD + PRE.replace("        expect:", guard + "        expect:"))
    assert state["plan"]["status"] == ends
    probes = tmp_path / "probes"
    if ends == "completed":
        assert json.loads(probes.read_text())["to"] == sender
        return
    assert not probes.exists()  # the check tool never saw the value
    action = state["execution"]["actions"][1]
    assert action["error"]["code"] == "E_GUARD_FAILED"
    assert "precondition 1" in action["error"]["message"]


# --- nested plans -----------------------------------------------------------------------


def child_text(action: str, inputs: str = "{to: nobody@customer.example}") -> str:
    return (
        "plan: {name: Send, task: Send a reply, status: draft}\n"
        f"inputs: {inputs}\n"
        "available_tools: [{name: send}, {name: read_mail}, {name: classify}, {name: note},"
        " {name: probe}]\n"
        "actions:\n" + textwrap.indent(action, "  ")
    )


SEND = """\
- id: 1
  tool: send
  why: send it
  params: {to: "$<inputs.to>", body: hi}
"""


def pin(lab: Any, text: str, slug: str = "common/send") -> str:
    repo, config, _ = lab
    folder = write(repo, slug, text)
    found = run_cli("hash", "--config", str(config), str(folder))
    assert found.returncode == 0, found.stderr
    return found.stdout.split()[0]


def nested_parent(hash_: str, inputs: str, extra: str = "") -> str:
    step = (
        "  - id: 2\n"
        f'    plan: {{path: plans/common/send, hash: "{hash_}"}}\n'
        "    why: reply through the usual plan\n"
        f"    inputs: {inputs}\n"
    )
    return HEAD + step + extra


def test_outside_data_through_a_nested_input_needs_a_guard_in_the_nested_plan(lab: Any) -> None:
    bare = pin(lab, child_text(SEND))
    result = validate(lab, nested_parent(bare, '{to: "$<actions[1].outputs.sender>"}'))
    [error] = unguarded(result)
    assert error["path"] == "actions[1].inputs.to" and error["line"] is not None
    assert "action 2/1" in error["message"] and "nested plan" in error["message"]
    # a literal input is the author's: no flow
    assert validate(lab, nested_parent(bare, "{to: ops@customer.example}"))["valid"]
    # the nested plan guards its own param: valid, and show lists the flow through the input
    guarded = pin(lab, child_text(SEND + f'  guards: [{{param: to, matches: "{GUARD}"}}]\n'))
    assert validate(lab, nested_parent(guarded, '{to: "$<actions[1].outputs.sender>"}'))["valid"]
    repo, config, _ = lab
    shown = run_cli("show", "--config", str(config), str(repo / "plans" / "reply")).stdout
    assert (
        "inputs.to (= actions[1].outputs.sender) -> action 2/1 sensitive param to: "
        "UNTRUSTED (from action 1), guarded"
    ) in shown


@pytest.mark.parametrize(("tool", "valid"), [("read_mail", False), ("classify", True)])
def test_a_nested_plans_result_is_as_trusted_as_its_actions_outputs(
    lab: Any, tool: str, valid: bool
) -> None:
    inner = f"- id: 1\n  tool: {tool}\n  why: get it\n  outputs: [{{name: got, path: $.json}}]\n"
    hash_ = pin(lab, child_text(inner, "{}"))
    send = (
        '  - id: 3\n    tool: send\n    why: reply\n    params: {to: "$<actions[2].outputs.got>"}\n'
    )
    step = (
        "  - id: 2\n"
        f'    plan: {{path: plans/common/send, hash: "{hash_}"}}\n'
        "    why: get it the usual way\n"
        "    outputs: [{name: got, path: \"$.outputs['1'].got\"}]\n"
    )
    result = validate(lab, HEAD + step + send)
    assert result["valid"] is valid, result["errors"]
    if not valid:
        [error] = unguarded(result)
        assert error["path"] == "actions[2].params.to"


# --- the nested plan's tools in the risk and the approvals it needs ----------------------


def test_show_and_freeze_count_a_nested_plans_tools_in_the_risk(lab: Any) -> None:
    low = "- id: 1\n  tool: note\n  why: note\n"
    for inner, risk in (
        (low, "low"),
        (SEND.replace('"$<inputs.to>"', "a@customer.example"), "high"),
    ):
        hash_ = pin(lab, child_text(inner))
        repo, config, _ = lab
        write(repo, "reply", nested_parent(hash_, "{}"))
        shown = run_cli("show", "--config", str(config), str(repo / "plans" / "reply")).stdout
        assert f"Risk:    {risk}" in shown, shown
        frozen = run_cli("freeze", "--config", str(config), str(repo / "plans" / "reply"))
        assert frozen.returncode == 0, frozen.stderr
        data = yamlio.read_yaml((repo / "plans" / "reply" / "PLAN.yml").read_text()).data
        assert data["frozen"]["risk"] == risk


@pytest.mark.parametrize(("risky", "outcome"), [(False, "completed"), (True, "partial")])
def test_approving_a_parent_needs_the_quorum_its_nested_plans_tools_ask_for(
    tmp_path: Path, repo: Path, risky: bool, outcome: str
) -> None:
    """A high-risk tool hidden in a pinned plan: one approval no longer starts the parent."""
    rule = {"match": {"risk": "high"}, "require": [{"count": 2}]}
    config = tmp_path / "plangate.yml"
    config.write_text(json.dumps(config_data(tmp_path, repo, rules=[rule])))
    lab = (repo, config, tmp_path)
    (tmp_path / "mail.json").write_text(json.dumps({"from": "dana@customer.example"}))
    inner = (
        SEND.replace('"$<inputs.to>"', "a@customer.example")
        if risky
        else "- id: 1\n  tool: note\n  why: note\n"
    )
    write(repo, "common/send", child_text(inner))
    hash_ = pin(lab, child_text(inner))
    state = run_once(lab, "reply", nested_parent(hash_, "{}"))
    if outcome == "completed":
        assert state["plan"]["status"] == "completed", state["execution"]["actions"]
        return
    assert "execution" not in state, state["execution"]
    assert state["approval"]["status"] == "partial", (state["plan"], state["approval"])
    assert state["approval"]["missing"] == "1 more approval"
    assert not (tmp_path / "outbox").exists()


def test_a_pin_that_cannot_be_read_counts_as_high_risk() -> None:
    from controller.plan import profile

    data = {
        "actions": [
            {"id": 1, "tool": "note", "why": "w"},
            {"id": 2, "plan": {"path": "plans/gone", "hash": "sha256:" + "0" * 64}, "why": "w"},
        ]
    }
    found = profile.profile_of("plans/p", data, {}, lambda path, pin: None)
    assert found.risk == "high" and found.unread == ("plans/gone",)
    read = profile.profile_of("plans/p", data, {}, lambda path, pin: {"actions": [{"tool": "x"}]})
    assert read.tools == {"note", "x"} and read.nested == ("plans/gone",) and read.actions == 3
    # what the caps weigh is the profile's own count and estimate, nested plans included
    reader = lambda path, pin: {"actions": [{"tool": "x"}]}  # noqa: E731
    catalog = {"x": SimpleNamespace(risk="low", estimate=profile.Estimate(2.0, 0.5))}
    whole = profile.profile_of("plans/p", data, catalog, reader)  # type: ignore[arg-type]
    assert profile.size_of(data, catalog, reader) == (whole.actions, whole.estimate)  # type: ignore[arg-type]
    assert whole.estimate == profile.Estimate(2.0, 0.5) and whole.actions == 3


def test_outside_data_into_a_nested_plans_own_precondition_needs_its_guard(lab: Any) -> None:
    pre = '{tool: probe, params: {to: "$<inputs.to>"}, expect: {path: $.json.ok, equals: true}}'
    child = child_text("- {id: 1, tool: note, why: note}\n").replace(
        "actions:\n", f"preconditions:\n  - {pre}\nactions:\n"
    )
    result = validate(lab, nested_parent(pin(lab, child), '{to: "$<actions[1].outputs.sender>"}'))
    [error] = unguarded(result)
    assert error["path"] == "actions[1].inputs.to"
    assert "precondition of the nested plan" in error["message"]
    guarded = child.replace("expect:", f'guards: [{{param: to, matches: "{GUARD}"}}], expect:')
    ok = validate(lab, nested_parent(pin(lab, guarded), '{to: "$<actions[1].outputs.sender>"}'))
    assert ok["valid"], ok["errors"]


@pytest.mark.parametrize("how", ["symlink", "too-large", "not-utf8", "missing", "bad-yaml"])
def test_a_pin_that_cannot_be_read_is_named_by_its_repository_path(lab: Any, how: str) -> None:
    """A pinned plan's problem names the plan as the repository does: the message is shown to
    the plan's agent and committed into its record, and the controller's own folders (its
    working tree's absolute path) are nobody's business there."""
    repo, _, tmp_path = lab
    folder = repo / "plans" / "common" / "send"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "PLAN.yml"
    if how == "symlink":
        (tmp_path / "elsewhere.yml").write_text(child_text(SEND))
        target.symlink_to(tmp_path / "elsewhere.yml")
    elif how == "too-large":
        target.write_text(child_text(SEND) + "#" * 2_000_000 + "\n")
    elif how == "not-utf8":
        target.write_bytes(child_text(SEND).encode() + b"# \xff\n")
    elif how == "bad-yaml":
        target.write_text("plan: {name: [unclosed\n")
    result = validate(lab, nested_parent("sha256:" + "0" * 64, "{to: nobody@customer.example}"))
    assert result["rc"] != 0
    errors = [e for e in result["errors"] if e.get("path", "").startswith("actions[1]")]
    assert errors, result["errors"]
    text = json.dumps(result["errors"])
    assert str(repo) not in text and str(tmp_path) not in text, text
    assert "plans/common/send" in errors[0]["message"], errors[0]


@pytest.mark.parametrize(
    "folder",
    ["EXECUTION_LOG.md", "PLAN.jſon", "plan.yml", "Execution_Log.MD", "PLAN.YAML", "se\\nd"],
)
def test_a_pin_to_a_folder_no_reader_takes_for_a_plan_is_unsafe(lab: Any, folder: str) -> None:
    """Round 71: a nested pin names a plan folder by the rule every reader finds plans by; a
    folder ``status``, ``show`` and MCP refuse by its name makes the parent invalid, however
    well its plan hashes to the pin (it ran as the nested plan)."""
    repo, _, _ = lab
    hash_ = pin(lab, child_text(SEND))
    write(repo, f"lib/{folder}", child_text(SEND))
    text = nested_parent(hash_, "{to: nobody@customer.example}")
    result = validate(lab, text.replace("plans/common/send", f"plans/lib/{folder}"))
    assert not result["valid"]
    assert [e["code"] for e in result["errors"]] == ["E_UNSAFE_PATH"], result["errors"]


@pytest.mark.parametrize("how", ["symlinked-folder", "zero-width", "word-joiner"])
def test_a_pin_through_a_symlink_or_an_unprinted_name_is_unsafe(lab: Any, how: str) -> None:
    """docs/plan-format.md: a pin through a symlink, or naming a folder whose name holds a
    character that is not printed, is E_UNSAFE_PATH as the folder is to ``status`` (round
    72's notes: E_SCHEMA_INVALID, another code for the same refusal)."""
    repo, _, _ = lab
    hash_ = pin(lab, child_text(SEND))
    text = nested_parent(hash_, "{to: nobody@customer.example}")
    if how == "symlinked-folder":
        link = repo / "plans" / "lib" / "sendlink"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(repo / "plans" / "common" / "send")
        result = validate(lab, text.replace("plans/common/send", "plans/lib/sendlink"))
    else:
        name = "se\u200bnd" if how == "zero-width" else "se\u2060nd"
        result = validate(lab, text.replace("plans/common/send", f"plans/lib/{name}"))
    assert not result["valid"]
    assert [e["code"] for e in result["errors"]] == ["E_UNSAFE_PATH"], result["errors"]


@pytest.mark.parametrize("beside", ["plan.yml", "PLAN.YML", "Plan.yaml"])
def test_a_pinned_folder_with_a_case_variant_beside_its_file_is_ambiguous(
    lab: Any, beside: str
) -> None:
    """Round 71: a folder (or file) named as a plan file in another case beside the pinned
    plan's file is one path on a case-insensitive checkout: E_PLAN_AMBIGUOUS, as the folder
    itself is for every reader."""
    repo, _, _ = lab
    hash_ = pin(lab, child_text(SEND))
    (repo / "plans" / "common" / "send" / beside).mkdir()
    result = validate(lab, nested_parent(hash_, "{to: nobody@customer.example}"))
    assert "E_PLAN_AMBIGUOUS" in [e["code"] for e in result["errors"]], result["errors"]


@pytest.mark.parametrize("twin", ["Send", "se\u200cnd", "send.", "SEND~1"])
def test_a_pinned_folder_beside_its_twin_folder_is_ambiguous(lab: Any, twin: str) -> None:
    """Round 75: ``plans/common/Send/`` beside the pinned ``plans/common/send/`` is one folder
    on a case-insensitive checkout (HFS+, NTFS for the others): a reviewer reads the plan
    git writes last there, so the pin is E_PLAN_AMBIGUOUS, as both folders are for every
    reader; a twin folder holding notes only pins as before."""
    repo, _, _ = lab
    hash_ = pin(lab, child_text(SEND))
    other = repo / "plans" / "common" / twin
    other.mkdir()
    (other / "notes.md").write_text("notes\n")
    assert validate(lab, nested_parent(hash_, "{to: nobody@customer.example}"))["valid"]
    (other / "PLAN.yml").write_text(child_text(SEND.replace("send", "note")))
    result = validate(lab, nested_parent(hash_, "{to: nobody@customer.example}"))
    assert "E_PLAN_AMBIGUOUS" in [e["code"] for e in result["errors"]], result["errors"]


@pytest.mark.parametrize(
    "twin", ["Common/send", "COMMON~1/send", "com\u200cmon/Send", "common\\send"]
)
def test_a_pinned_folder_beside_an_up_level_twin_is_ambiguous(lab: Any, twin: str) -> None:
    """Round 76: ``plans/Common/send/`` (or the 8.3 ``plans/COMMON~1/send/``, a twin at two
    levels, the one folder ``plans/common\\send/`` git for Windows reads as the path
    ``plans/common/send``) is one folder with the pinned ``plans/common/send/`` on some
    checkout, the twin ABOVE the plan's folder: the pin is E_PLAN_AMBIGUOUS, as the index
    holds the pinned plan's row (round 75 compared the pinned folder's last name only); a
    twin holding notes only pins as before."""
    repo, _, _ = lab
    hash_ = pin(lab, child_text(SEND))
    other = repo / "plans" / twin
    other.mkdir(parents=True)
    (other / "notes.md").write_text("notes\n")
    assert validate(lab, nested_parent(hash_, "{to: nobody@customer.example}"))["valid"]
    (other / "PLAN.yml").write_text(child_text(SEND.replace("send", "note")))
    result = validate(lab, nested_parent(hash_, "{to: nobody@customer.example}"))
    assert "E_PLAN_AMBIGUOUS" in [e["code"] for e in result["errors"]], result["errors"]
    assert visible(f"plans/{twin}/PLAN.yml") in result["errors"][0]["message"], result["errors"]


def test_two_controllers_on_one_repository_each_keep_reading_the_tip(tmp_path: Path) -> None:
    """Two controllers on one repository in one process (a test's, a service's restart):
    the first one closing no longer makes the other read nested plans from the working
    tree (it used to forget the repository for both)."""
    from controller.plan import nested

    class Tip:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def __call__(self, path: str) -> bytes | None:
            return self.data

        def names(self, folder: str) -> list[str]:
            return []

    first, second = Tip(b"first"), Tip(b"second")
    nested.read_tree_of(tmp_path, first)
    nested.read_tree_of(tmp_path, second)
    try:
        assert nested._source(tmp_path) is second
        nested.forget_tree_of(tmp_path, first)
        assert nested._source(tmp_path) is second
        nested.read_tree_of(tmp_path, first)
        nested.forget_tree_of(tmp_path, first)
        assert nested._source(tmp_path) is second
    finally:
        nested.forget_tree_of(tmp_path, second)
        nested.forget_tree_of(tmp_path, first)
    assert nested._source(tmp_path) is None
