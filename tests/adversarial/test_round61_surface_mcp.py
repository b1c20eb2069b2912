"""Round 61, agent-facing surfaces: the MCP server (``plangate mcp``) fed arguments of odd
types and sizes, paths that leave the plans folder, concurrent submits, and a submit that
races a human's staged (uncommitted) work in the shared working tree.

docs/agents.md: six tools, "a refusal is an MCP tool error (``isError: true``) whose text
is ``Error executing tool <name>: `` followed by the JSON error shape"
``{"ok": false, "code", ...}``; ``submit`` "writes one file, ``plans/<slug>/PLAN.yml``, and
commits it with the agent as author", "refuses ... a file someone is editing by hand";
SPEC §8: "no traceback reaches a user for bad input"; the catalog and ``log`` mask secrets.

Lab (one, module scope): the bench's config plus ``agent.identity`` and a secrets file
(``TOK``); one plan ``leak`` (Alice approves) whose ``rec`` call gets ``$<secrets.TOK>`` and
echoes it; Bob's plan ``bobs`` committed, then Bob edits it in the tree (uncommitted), and
stages a new plan ``bob-staged`` (``git add``, no commit); Alice's branch
``plangate/prbr`` holds one commit of hers. Then ONE raw JSON-RPC session (requests written
at once, so they are handled concurrently) makes every call below, and one pass runs.

Variants and what is asserted:

- ``odd-*``: ``submit``/``validate``/``log``/``status``/``wait`` with arguments of the wrong
  type or size (an int, a list, null, a 3 MB plan, a 5,000-character slug, look-alike and
  bidi slugs, ``.git``, ``plans``, ``a/../b``, ``-n``, empty), and paths that leave the plans
  folder (``../../sec.yml``, ``/etc/passwd``, ``plans/../../rec.py``): each answer is a
  refusal (an MCP error or ``isError`` with an ``E_`` code), no traceback, nothing outside
  ``plans/`` read back (the secret and the recorder's source never appear), no commit.
- ``race-*``: 6 concurrent submits of different texts to one new slug and 4 to distinct
  slugs: every commit the agent made touches only its own plan file, every ``ok`` answer's
  commit is on the branch, the final text is one of the submitted texts, ``git fsck`` is
  clean and the next pass freezes them.
- ``staged-human``: the agent's submit never carries Bob's staged plan (its commit touches
  only its own file; Bob's file is still staged, not committed under the agent's name).
- ``hand-edited``: the submit over ``bobs`` (edited in the tree by hand) is refused and Bob's
  edit survives.
- ``pr-branch``: ``pull_request: true`` onto ``plangate/prbr`` keeps Alice's commit on that
  branch (or is refused).
- ``log-secret``: ``log`` of ``leak`` never holds the secret.
- ``oracle-validate``: ``validate`` of a plan whose ``plan.status`` is a guess of the secret
  (the refusal quotes the value) answers alike for the secret and for a wrong guess.
- ``note-*``, ``bidi-name`` (pull-request submits, each on its own branch): a ``note`` with
  CR, U+2028, NEL, VT/FF before ``Co-authored-by:``, a bidi override, 2 MB, and a plan name
  with U+202E/U+2028: the commit message holds none of those characters raw, no trailer
  parses, the message stays under 100 KB.

The first session is concurrent (odd arguments, the race, ``hand-edited``, ``log``,
``catalog``, the oracle); ``staged-human`` has a session of its own; the pull-request
submits share one.

Seen (strict xfails): the 7 wrong-type arguments are answered with pydantic's text
("1 validation error for submitArguments ... https://errors.pydantic.dev/..."), not the
documented ``{"ok": false, "code": "E_...", ..., "remedy"}`` shape; a 3 MB PLAN.yml is
"prose" (``E_PARSE_NONJSON``, remedy "answer with the plan alone") where the CLI says
``E_PLAN_TOO_LARGE``; ``oracle-validate``: the refusal quotes a wrong guess as written and
the right one as ``'***'``, confirming a guess of the controller's secret. Held: every
path outside ``plans/``, odd slugs, the race (one file a commit, losers refused
``E_USAGE``/``E_GIT`` "submit again", nothing left in the tree), the staged file, the
hand-edited plan, the PR branch, the notes and name, ``log``/``catalog`` masking.

Fixed (2026-11-29): ``oracle-validate``. The redactor keeps the controller's material out of
answers; the asker's own text is not a secret to it. ``validate``/``submit`` build their
``errors`` with only a catalog ``params_schema``'s parts of a message redacted
(``Problem.answered``) and the server passes ``agentapi.OWN_TEXT`` (``errors``,
``plan_yml``, ``format``) on as built, redacting the rest; a right and a wrong guess are
answered alike (docs/execution.md, Secrets).

Fixed (2026-11-29): the 7 wrong-type arguments and the 3 MB plan. The server's one
``call_tool`` turns any argument the SDK refuses into the error shape, ``E_USAGE`` naming
the argument and what it must be, with a remedy and no library text
(``controller.service.mcpserver.bad_arguments``); the agent's ``validate``/``submit`` check
the text's size with the CLI's own check (``plans.size_problem``) before reading it, so a
3 MB PLAN.yml is ``E_PLAN_TOO_LARGE`` there too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared

SECRET = "r61-Sekr3t-Qx7pLm2Vw"
RACE_N = 6

BROKEN: dict[str, Any] = {}


def _plan(tag: str, extra: str = "") -> str:
    return plan_text(tag, params=extra)


ODD: dict[str, tuple[str, dict[str, Any]]] = {
    "odd-slug-int": ("submit", {"plan": _plan("o1"), "slug": 123}),
    "odd-slug-list": ("submit", {"plan": _plan("o2"), "slug": ["o2"]}),
    "odd-slug-null": ("submit", {"plan": _plan("o3"), "slug": None}),
    "odd-slug-long": ("submit", {"plan": _plan("o4"), "slug": "a" * 5000}),
    "odd-slug-fullwidth": ("submit", {"plan": _plan("o5"), "slug": "\uff4f\uff15"}),
    "odd-slug-bidi": ("submit", {"plan": _plan("o6"), "slug": "o6\u202egpj"}),
    "odd-slug-dotgit": ("submit", {"plan": _plan("o7"), "slug": ".git"}),
    "odd-slug-plans": ("submit", {"plan": _plan("o8"), "slug": "a/../b"}),
    "odd-slug-dash": ("submit", {"plan": _plan("o9"), "slug": "-n"}),
    "odd-slug-empty": ("submit", {"plan": _plan("o10"), "slug": ""}),
    "odd-slug-newline": ("submit", {"plan": _plan("o11"), "slug": "o11\nplan"}),
    "odd-plan-int": ("submit", {"plan": 42, "slug": "o12"}),
    "odd-plan-dict": ("submit", {"plan": {"plan": {"name": "x"}}, "slug": "o13"}),
    "odd-plan-huge": ("validate", {"plan": "plan:\n  name: '" + "x" * 3_000_000 + "'\n"}),
    "odd-format": ("validate", {"plan": _plan("o14"), "format": "../../etc/passwd"}),
    "odd-log-up": ("log", {"path": "../../sec.yml"}),
    "odd-log-abs": ("log", {"path": "/etc/passwd"}),
    "odd-log-dotdot": ("log", {"path": "plans/../../rec.py"}),
    "odd-log-list": ("log", {"path": ["plans/leak"]}),
    "odd-status-up": ("status", {"path": "plans/../../sec.yml"}),
    "odd-wait-neg": ("wait", {"path": "plans/leak", "timeout": -5, "status": "completed"}),
    "odd-wait-str": ("wait", {"path": "plans/leak", "timeout": "soon"}),
    "odd-wait-up": ("wait", {"path": "../../sec.yml", "timeout": 1, "status": "x"}),
}


#: a guess of the secret (and a control that is not it) written where an error quotes it
ORACLE = {"oracle-secret": SECRET, "oracle-control": SECRET[:-1] + "X"}

#: ``note`` values that try to break out of their paragraph
NOTES = {
    "note-cr": "tidy\rCo-authored-by: Bob <bob@ops.example.com>",
    "note-ls": "tidy\u2028\u2028Co-authored-by: Bob <bob@ops.example.com>",
    "note-nel": "tidy\u0085\u0085Co-authored-by: Bob <bob@ops.example.com>",
    "note-vt-ff": "tidy\x0b\x0cCo-authored-by: Bob <bob@ops.example.com>",
    "note-bidi": "tidy \u202e)moc.elpmaxe@ecila( devorppa",
    "note-huge": "x" * 2_000_000,
}


def mcp(lab: Lab, calls: list[tuple[str, dict[str, Any]]], timeout: float = 120) -> list[Any]:
    replies, stderr = mcpkit.session(lab, calls, timeout=timeout)
    lab.mcp_stderr = stderr[-20000:]  # type: ignore[attr-defined]
    return [reply or {"missing": True} for reply in replies]


def _text(reply: dict[str, Any]) -> str:
    return json.dumps(reply, ensure_ascii=False)


def _ok_payload(reply: dict[str, Any]) -> dict[str, Any] | None:
    res = reply.get("result") or {}
    if res.get("isError"):
        return None
    for c in res.get("content") or []:
        try:
            return json.loads(c.get("text", ""))
        except ValueError:
            return None
    return res.get("structuredContent")


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra=(
            "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
        ),
    )
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab.write("leak", plan_text("leak", params='key: "$<secrets.TOK>"\n'))
    lab.write("bobs", plan_text("bobs"))
    lab.commit("leak plan")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--amend", "--no-edit", "--reset-author", who=BOB)
    lab.run()
    lab.approve("leak", ALICE)
    lab.run()
    # Alice's own PR branch
    lab.git("branch", "plangate/prbr")
    lab.git("checkout", "-q", "plangate/prbr")
    lab.write("prbr", plan_text("prbr-alice"))
    lab.commit("alice's draft", ALICE)
    lab.alice_pr = lab.head()  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    # Bob's work in progress in the shared tree
    path = lab.repo / "plans/bobs/PLAN.yml"
    path.write_text(path.read_text().replace('tag: "bobs"', 'tag: "bobs-wip"'))
    lab.write("bob-staged", plan_text("bob-staged"))
    lab.git("add", "plans/bob-staged/PLAN.yml")
    lab.before = lab.head()  # type: ignore[attr-defined]

    calls: list[tuple[str, dict[str, Any]]] = list(ODD.values())
    names = list(ODD)
    lab.race_texts = [_plan("race", f'n: "{i}"\n') for i in range(RACE_N)]  # type: ignore[attr-defined]
    for i, text in enumerate(lab.race_texts):  # type: ignore[attr-defined]
        calls.append(("submit", {"plan": text, "slug": "race"}))
        names.append(f"race-same-{i}")
    for i in range(4):
        calls.append(("submit", {"plan": _plan(f"side{i}"), "slug": f"side{i}"}))
        names.append(f"race-side-{i}")
    calls.append(("log", {"path": "plans/leak"}))
    names.append("log-secret")
    calls.append(("catalog", {}))
    names.append("catalog")
    calls.append(("submit", {"plan": _plan("bobs-agent"), "slug": "bobs"}))
    names.append("hand-edited")
    for vid, guess in ORACLE.items():
        bad = _plan("oracle").replace("status: pending_approval", f'status: "{guess}"')
        calls.append(("validate", {"plan": bad}))
        names.append(vid)
    replies = mcp(lab, calls)
    lab.answers = dict(zip(names, replies, strict=True))  # type: ignore[attr-defined]
    # the agent's own submit on main, alone in its session (nothing else moves main meanwhile)
    (lab.answers["staged-human"],) = mcp(  # type: ignore[attr-defined]
        lab, [("submit", {"plan": _plan("agent-side"), "slug": "agent-side"})]
    )
    # pull-request submits: each on its own branch, so they can share one session
    rest = [
        ("pr-branch", {"plan": _plan("prbr"), "slug": "prbr", "pull_request": True}),
        *[
            (vid, {"plan": _plan(vid), "slug": vid, "note": note, "pull_request": True})
            for vid, note in NOTES.items()
        ],
        (
            "bidi-name",
            {
                "plan": plan_text("bidi-name", name="safe \u202eexe.ti\u2028rm -rf"),
                "slug": "bidi-name",
                "pull_request": True,
            },
        ),
    ]
    for (vid, _a), reply in zip(rest, mcp(lab, [("submit", a) for _v, a in rest]), strict=True):
        lab.answers[vid] = reply  # type: ignore[attr-defined]
    lab.messages = {  # type: ignore[attr-defined]
        vid: lab.git("log", "-1", "--format=%B", f"plangate/{vid}", check=False)
        for vid in [*NOTES, "bidi-name"]
    }
    lab.after_session = lab.head()  # type: ignore[attr-defined]
    lab.staged_after = lab.git("diff", "--cached", "--name-only")  # type: ignore[attr-defined]
    lab.tree_status = lab.git("status", "--porcelain", "--untracked-files=all")  # type: ignore[attr-defined]
    lab.bobs_tree = path.read_text()  # type: ignore[attr-defined]
    lab.fsck = subprocess.run(  # type: ignore[attr-defined]
        ["git", "fsck", "--no-progress"],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        text=True,
    ).returncode
    # every agent commit: the files it touched
    rows = lab.git("log", "--format=%H %ae", f"{lab.before}..{lab.after_session}").split("\n")  # type: ignore[attr-defined]
    touched: dict[str, list[str]] = {}
    for row in filter(None, rows):
        sha, email = row.split(" ", 1)
        files = lab.git("show", "--format=", "--name-only", sha).split()
        touched[sha] = [email, *files]
    lab.touched = touched  # type: ignore[attr-defined]
    lab.pr_log = lab.git("log", "--format=%H", "plangate/prbr")  # type: ignore[attr-defined]
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r61-surface-mcp", _build)


def _refused(reply: dict[str, Any]) -> bool:
    if "error" in reply:  # a JSON-RPC error (argument validation) is a refusal too
        return True
    res = reply.get("result") or {}
    return bool(res.get("isError"))


@pytest.mark.parametrize("vid", cases(list(ODD), list(ODD), BROKEN))
def test_an_odd_argument_is_refused_with_a_code_and_leaks_nothing(lab: Lab, vid: str) -> None:
    reply = lab.answers[vid]  # type: ignore[attr-defined]
    text = _text(reply)
    assert "missing" not in reply, f"no answer at all: {lab.mcp_stderr[-2000:]}"  # type: ignore[attr-defined]
    assert "Traceback" not in text and 'File "/' not in text, text[:3000]
    assert SECRET not in text and "REC_LOG" not in text, text[:3000]
    res = reply.get("result") or {}
    flat = text.replace('\\"', '"')
    if vid == "odd-wait-neg":  # a negative timeout: an answer at once, or a refusal
        assert res.get("isError") or '"changed": false' in flat, text[:3000]
        return
    if ODD[vid][0] == "validate":
        assert '"valid": false' in flat, text[:3000]
        if vid == "odd-plan-huge":
            assert "E_PLAN_TOO_LARGE" in flat or "E_LIMIT_EXCEEDED" in flat, text[:3000]
    else:
        assert _refused(reply), text[:3000]
    if res.get("isError"):
        assert '"code": "E_' in flat, text[:3000]
    expected = {f"plans/{x}/PLAN.yml" for x in ["race", "side0", "side1", "side2", "side3"]}
    expected.add("plans/agent-side/PLAN.yml")
    for sha, (_email, *files) in lab.touched.items():  # type: ignore[attr-defined]
        assert set(files) <= expected, (sha, files)  # no odd submit committed anything


@pytest.mark.parametrize(
    "vid",
    cases(
        ["race-files", "race-answers", "race-final", "race-fsck", "race-leftover", "race-frozen"],
        ["race-files", "race-answers", "race-final", "race-fsck", "race-leftover", "race-frozen"],
        BROKEN,
    ),
)
def test_concurrent_submits_stay_one_file_each(lab: Lab, vid: str) -> None:
    touched = lab.touched  # type: ignore[attr-defined]
    answers = lab.answers  # type: ignore[attr-defined]
    if vid == "race-files":
        for sha, (email, *files) in touched.items():
            assert email == "agent@example.com", (sha, email, files)
            assert len(files) == 1 and files[0].endswith("/PLAN.yml"), (sha, files)
    elif vid == "race-answers":
        branch = set(touched)
        for name, reply in answers.items():
            if not name.startswith("race-"):
                continue
            got = _ok_payload(reply)
            assert got is None or got.get("commit") in branch, (name, got)
    elif vid == "race-final":
        final = lab.git("show", f"{lab.after_session}:plans/race/PLAN.yml")  # type: ignore[attr-defined]
        assert final in lab.race_texts, final  # type: ignore[attr-defined]
    elif vid == "race-fsck":
        assert lab.fsck == 0  # type: ignore[attr-defined]
    elif vid == "race-leftover":  # a submit that lost leaves no file behind as a hand edit
        assert (
            lab.tree_status.strip()
            == "A  plans/bob-staged/PLAN.yml\n M plans/bobs/PLAN.yml".strip()
            or (
                set(lab.tree_status.split())
                <= {"A", "M", "plans/bob-staged/PLAN.yml", "plans/bobs/PLAN.yml"}
            )
        ), lab.tree_status  # type: ignore[attr-defined]
    else:
        rows = lab.status()
        for name, reply in answers.items():
            got = _ok_payload(reply)
            if name.startswith("race-") and got and got.get("ok"):
                row = rows[got["path"]]
                assert row["status"] == "pending_approval", row


def test_a_submit_never_carries_a_humans_staged_file(lab: Lab) -> None:
    for sha, (_email, *files) in lab.touched.items():  # type: ignore[attr-defined]
        assert "plans/bob-staged/PLAN.yml" not in files, (sha, files)
    assert "plans/bob-staged/PLAN.yml" in lab.staged_after  # type: ignore[attr-defined]


def test_a_submit_over_a_hand_edited_plan_is_refused(lab: Lab) -> None:
    assert _refused(lab.answers["hand-edited"]), _text(lab.answers["hand-edited"])  # type: ignore[attr-defined]
    assert 'tag: "bobs-wip"' in lab.bobs_tree  # type: ignore[attr-defined]


def test_a_pull_request_submit_keeps_the_humans_branch_commit(lab: Lab) -> None:
    assert lab.alice_pr in lab.pr_log.split(), _text(lab.answers["pr-branch"])  # type: ignore[attr-defined]


def test_log_and_catalog_never_hold_the_secret(lab: Lab) -> None:
    assert len(lab.calls("leak")) == 1
    for name in ["log-secret", "catalog"]:
        assert SECRET not in _text(lab.answers[name]), name  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["oracle-validate"], ["oracle-validate"], BROKEN))
def test_an_error_quoting_a_guess_is_no_oracle_for_the_secret(lab: Lab, vid: str) -> None:
    """The agent writes a guess where the refusal quotes it: the answer must not tell the
    secret from a wrong guess (masking the agent's own text confirms the guess)."""
    import re

    def norm(reply: dict[str, Any], guess: str) -> str:
        return re.sub(r'"id": \d+', "", _text(reply).replace(guess, "GUESS"))

    secret = norm(lab.answers["oracle-secret"], SECRET)  # type: ignore[attr-defined]
    control = norm(lab.answers["oracle-control"], SECRET[:-1] + "X")  # type: ignore[attr-defined]
    assert SECRET not in _text(lab.answers["oracle-control"])  # type: ignore[attr-defined]
    assert secret == control, (secret[:900], control[:900])


HIDDEN_IN_MESSAGE = ["\r", "\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\u202e", "\x00"]


@pytest.mark.parametrize("vid", cases([*NOTES, "bidi-name"], [*NOTES, "bidi-name"], BROKEN))
def test_a_submit_message_shows_no_hidden_text_and_forms_no_trailer(lab: Lab, vid: str) -> None:
    answer = lab.answers[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in _text(answer), _text(answer)[:2000]
    message = lab.messages[vid]  # type: ignore[attr-defined]
    if _refused(answer):
        assert '"code": "E_' in _text(answer).replace('\\"', '"'), _text(answer)[:2000]
        return
    assert len(message) < 100_000, len(message)
    for ch in HIDDEN_IN_MESSAGE:
        assert ch not in message, (vid, repr(ch), message[:500])
    parsed = lab.git("interpret-trailers", "--parse", input=message)
    assert "co-authored-by" not in parsed.lower(), parsed
