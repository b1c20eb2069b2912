"""Round 66, agent-facing surfaces: round 65's authored-literal rule ("what the author wrote
is shown as written everywhere; only the controller's material is masked; masking never
differs between a right and a wrong guess") in places round 65 did not look: a NESTED plan
(the parent's literal input, the child's own input default, the child's own literal, the
child's failing check), a plan the controller CONVERTED from a ``PLAN.json`` it found, check
clauses other than ``equals`` (``in``, ``matches``, a path naming the guess), a gate
preview filled from the plan's own input, a mapping key, a plan FOLDER named as the guess,
and the controller's ``notify`` posts (docs/approvals.md "Notifications": "Strings are
redacted like commits").

Lab (one, module scope), local mode with ``agent.identity``, the plan secret ``TOK`` and a
``notify`` URL served by a receiver in the test process. For each guess of ``TOK`` (``s``
right, ``c`` wrong, same shape) the agent commits: ``nin`` (a nested action passing
``inputs: {g: <guess>}`` to a draft child whose ``q`` call has ``note: $<inputs.g>``),
``ndef`` (the child's own ``inputs: {g: <guess>}`` default, the parent passes nothing),
``nlit`` (the child's literal ``note: <guess>``), ``nchk`` (the child's verify ``equals:
<guess>``, failing), ``cv`` (a toon-plan ``PLAN.json`` with ``note: <guess>``, converted by
the controller), ``eq``/``in``/``mt``/``pth`` (a verify ``equals: <guess>``, ``in:
[<guess>]``, ``matches: <guess>``, ``path: $.json['<guess>']``, each failing), ``gin`` (a
gate whose param is ``$<inputs.g>``, ``g`` the guess), ``key`` (a param mapping keyed by the
guess), and a plan in the folder ``plans/<guess>`` (``dir``). Alice approves all; one pass.
Readers: the committed EXECUTION_LOG.md, MCP ``log``, the ``status --json`` row, and the
controller's ``notify`` posts of that plan.

Asserted: for each reader, the right guess and the wrong one give the same count of ``***``
(every log carries the legend "secrets as ``***``", so counts, not presence); the control:
every plan did what it was approved to do.

Broke (strict xfails, 10). ``nin-log``, ``nin-mcp-log``, ``ndef-log``, ``ndef-mcp-log``: a
nested plan's ``$<inputs.g>`` is recorded ``"note": "***"`` under "Params (resolved)" in
EXECUTION_LOG.md and MCP ``log`` for the right guess, ``"note": "<guess>"`` for the wrong one,
whether the value came from the parent's LITERAL ``inputs:`` or from the child's OWN default:
both are text the agent wrote and committed (docs/execution.md: "a nested plan's inputs are its
parent's resolved values and show as recorded": one approved run confirms a guess; round 65
counted a top-level plan's inputs as the author's, not a nested one's). ``eq-notify``,
``nchk-notify``, ``in-notify``, ``mt-notify``, ``pth-notify``: the ``fail`` post's ``message``
and ``text`` say "(expected equals \\"***\\")" / "expected in [\\"***\\"]" / "expected matches
\\"***\\"" / "$.json['***'] matched nothing" for the right guess and quote the guess for the
wrong one (round 65 fixed the commit, the journal, the log; the notifier still redacts the
whole message). ``dir-notify``: a plan in ``plans/<guess>`` is posted as ``"plan":
"plans/***"`` (its ``start`` and ``complete``) for the right guess, by its path for the wrong
one, while the commits, ``status``, ``log`` name the path as written. Should: a notification
quotes the plan's path and its author's parts of a message as written (the message's
``recorded`` form, as the outcome commit), and the record treats a nested plan's input that is
wholly the author's text (the parent's literal, the child's default) as written. Held: ``nlit``
(the child's literal), ``nchk`` in the log, MCP ``log`` and the row, ``cv`` (the converted
PLAN.yml, its log and every post), ``in``/``mt``/``pth``/``eq`` in the log, MCP ``log`` and the
row, ``gin`` (the gate preview with the plan's own input, its post), ``key``, and ``dir`` in
the log, MCP ``log`` and the row.

Fixed (2026-11-29): all 10, by one rule for the author's text. A nested plan's input is the
author's when every value filling it is (``refs.authored_inputs``: the child's own default,
or a value of the parent action wholly its author's text, provenance followed through the
parent's resolution; a secret, an output or a result is not), read alike by the log and the
gate's preview. The notify post is another writer of the record (``Notifier.body(quotes=)``,
given the outcome commit's quotes): the plan's path as written, the message in its
``recorded`` form, ``text`` built from those parts and never redacted whole again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from oraclekit import guess_readers, hash_pin, notify_receiver, quiet_lab, status_rows, steady
from test_round2_execution_kit import shared
from test_round65_surface_literal import QUIET

SECRET = "r66-s3cr3t-kq7wz9mx"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "y"}
SLUGS = ("nin", "ndef", "nlit", "nchk", "cv", "eq", "in", "mt", "pth", "gin", "key", "dir")
WHERE = ("log", "mcp-log", "status", "notify")
KIDS = ("nin", "ndef", "nlit", "nchk")


def _head(name: str, more: str = "", status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "t {name}"\n  status: {status}\n{more}'
        "available_tools:\n  - name: q\n  - name: chk\nactions:\n"
    )


def _rec(tag: str, note: str, extra: str = "") -> str:
    return (
        '  - id: 1\n    tool: q\n    why: "record it"\n'
        f'    params: {{tag: {tag}, note: "{note}"}}\n' + extra
    )


def _verify(expect: str) -> str:
    return f"    verify: {{tool: chk, params: {{v: x}}, expect: {{{expect}}}}}\n"


def _path(k: str, slug: str) -> str:
    return f"plans/{GUESSES[k]}" if slug == "dir" else f"plans/{slug}{k}"


def _build(root: Path) -> Lab:
    server, posts = notify_receiver()
    hook = f'notify: ["http://127.0.0.1:{server.server_address[1]}/hook"]\n'
    lab = quiet_lab(root, SECRET, "@1795700000 +0000", QUIET, extra=hook)
    for k, g in GUESSES.items():
        kids = {
            "nin": ('inputs: {g: "d"}\n', _rec(f"nin{k}", "$<inputs.g>")),
            "ndef": (f'inputs: {{g: "{g}"}}\n', _rec(f"ndef{k}", "$<inputs.g>")),
            "nlit": ("", _rec(f"nlit{k}", g)),
            "nchk": ("", _rec(f"nchk{k}", "x", _verify(f'path: $.json.ok, equals: "{g}"'))),
        }
        for slug, (more, body) in kids.items():
            lab.write(f"kid-{slug}{k}", _head(f"kid-{slug}{k}", more, "draft") + body)
    lab.commit("agent: the nested plans")
    for k, g in GUESSES.items():
        for slug in KIDS:
            pin = hash_pin(lab, f"kid-{slug}{k}")
            passes = f'    inputs: {{g: "{g}"}}\n' if slug == "nin" else ""
            lab.write(
                f"{slug}{k}",
                _head(f"{slug}{k}") + f"  - id: 1\n    plan: {{path: plans/kid-{slug}{k}, "
                f'hash: "{pin}"}}\n    why: "nested"\n' + passes,
            )
        conv = {
            "metadata": {"title": f"cv{k}", "objective": "convert me"},
            "tasks": [
                {
                    "id": "task_1",
                    "name": "T",
                    "description": "d",
                    "steps": ["step_1"],
                    "dependencies": [],
                }
            ],
            "steps": [
                {
                    "id": "step_1",
                    "task_id": "task_1",
                    "action": "q",
                    "parameters": {"tag": f"cv{k}", "note": g},
                    "dependencies": [],
                }
            ],
        }
        lab.write(f"cv{k}", json.dumps(conv), "PLAN.json")
        lab.write(
            f"eq{k}",
            _head(f"eq{k}") + _rec(f"eq{k}", "x", _verify(f'path: $.json.ok, equals: "{g}"')),
        )
        lab.write(
            f"in{k}",
            _head(f"in{k}") + _rec(f"in{k}", "x", _verify(f'path: $.json.ok, in: ["{g}"]')),
        )
        lab.write(
            f"mt{k}",
            _head(f"mt{k}") + _rec(f"mt{k}", "x", _verify(f'path: $.json.tag, matches: "{g}"')),
        )
        lab.write(
            f"pth{k}",
            _head(f"pth{k}")
            + _rec(f"pth{k}", "x", _verify(f"path: \"$.json['{g}']\", equals: true")),
        )
        lab.write(
            f"gin{k}",
            _head(f"gin{k}", f'inputs: {{g: "{g}"}}\n') + _rec(f"gin{k}", "x")
            + '  - id: 2\n    tool: q\n    why: "gated"\n    requires_approval: true\n'
            f'    params: {{tag: gin{k}2, note: "$<inputs.g>"}}\n',
        )  # fmt: skip
        lab.write(
            f"key{k}",
            _head(f"key{k}") + '  - id: 1\n    tool: q\n    why: "record it"\n'
            f'    params: {{tag: key{k}, meta: {{"{g}": 1}}}}\n',
        )
        lab.write(g, _head(f"dir{k}") + _rec(f"dir{k}", "x"))
    lab.commit("agent plans")
    lab.run()
    rows = lab.status()
    for k in GUESSES:
        for slug in SLUGS:
            plan = _path(k, slug)
            assert rows[plan]["status"] == "pending_approval", (plan, rows[plan])
            name = plan.split("/", 1)[1]
            if slug == "cv":  # the converted PLAN.yml writes `plan:` as a flow mapping
                text = lab.read(name).replace('status: "pending_approval"', 'status: "approved"', 1)
                lab.write(name, text)
            else:
                lab.set_status(name, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    rows = status_rows(lab)
    got: dict[str, dict[str, str]] = {}
    for k in GUESSES:
        # a post naming the right guess's folder redacted (round 66's break) is read too
        also = {"dir": ("plans/***",)} if k == "s" else {}
        got[k] = guess_readers(lab, {slug: _path(k, slug) for slug in SLUGS}, rows, posts, also)
    lab.got = got  # type: ignore[attr-defined]
    lab.statuses = {p: r["status"] for p, r in rows.items()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-surface-nestnotify", _build)


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (g, json.dumps(g)[1:-1]):
        text = text.replace(spelled, "GUESS")
    text = re.sub(r"\b(kid-)?(" + "|".join(SLUGS) + ")" + k + r"(2?)\b", r"\1\2K\3", text)
    return steady(text)


IDS = [f"{slug}-{where}" for slug in SLUGS for where in WHERE]


@pytest.mark.parametrize("vid", IDS)
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    ran = ("cv", "gin", "key", "dir", "nlit", "nin", "ndef")
    if vid.endswith("-log") and vid.split("-")[0] in ran:
        assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    if vid.endswith("-notify"):
        assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    assert s.count("***") == c.count("***"), (s[:3000], c[:3000])


def test_the_plans_ran_as_approved(lab: Lab) -> None:
    """The control: what ran is what was approved (so each record is a run's)."""
    tags = {c["argv"][0] for c in map(json.loads, lab.log.read_text().splitlines())}
    statuses = lab.statuses  # type: ignore[attr-defined]
    for k in GUESSES:
        for slug in ("nin", "ndef", "nlit", "cv", "key", "dir", "gin"):
            assert f"{slug}{k}" in tags, (slug, k, sorted(tags))
            want = "awaiting_approval" if slug == "gin" else "completed"
            assert statuses[_path(k, slug)] == want, (slug, statuses[_path(k, slug)])
        for slug in ("nchk", "eq", "in", "mt", "pth"):
            assert statuses[_path(k, slug)] == "failed", (slug, statuses[_path(k, slug)])
        assert f"gin{k}2" not in tags  # paused at its gate
