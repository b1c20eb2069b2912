"""Round 67, agent-facing surfaces: round 66's nested-input rule ("a nested plan's input is
the author's when every value filling it is; anything else the controller produced is
masked", docs/execution.md) and its notify posts, as a secret-equality ORACLE: does the
record of one approved run differ between a right and a wrong guess of a secret?

Lab (one, module scope), local mode with ``agent.identity``, two plan secrets (``TOK``, the
one guessed, and ``TOK2``, another) and a ``notify`` URL served in the test process. For each
guess of ``TOK`` (``s`` right, ``c`` wrong, same shape) the agent commits, and Alice approves:

- ``two``: nested two deep (the top's literal ``g: <guess>`` to a middle plan passing
  ``$<inputs.g>`` to a child): refused ``E_SCHEMA_INVALID`` (one level only), never runs;
- ``pin``: the parent passes ``g: "$<inputs.a>"``, ``a`` the parent's own input (the guess);
- ``join``: the parent passes ``g: "$<inputs.a>$<inputs.b>"``, ``a``/``b`` its own inputs
  holding the two halves of the guess (all the author's);
- ``pnamep``: the parent passes ``g: "$<plan.name>"``, the parent's name the guess;
- ``pname``: the child's own ``note: $<plan.name>``, the child's name the guess;
- ``mixs``: the parent passes ``g: "<guess>-$<secrets.TOK2>"`` (a literal mixed with a
  secret: not the author's);
- ``mixkid``: the parent passes ``h: <guess>`` and ``k: $<secrets.TOK2>``; the child joins
  them, ``note: "$<inputs.h>-$<inputs.k>"``;
- ``mixtop``: a top-level plan's ``note: "<guess>-$<secrets.TOK2>"`` (no nesting);
- ``kdir``: the child lives in the folder ``plans/<guess>`` (a folder name that looks like
  the secret's value), pinned by its parent.

Readers of the top plan: the committed EXECUTION_LOG.md, ``show --config``, MCP ``log``, the
``status --json`` row, the ``notify`` posts of its path, and (one daemon with ``ui.listen``
after the passes) the reviewer's page ``/plan/<path>`` and ``/api/plan/<path>``.

Asserted: for each reader, a right and a wrong guess give the same count of ``***`` (every
log carries the legend "secrets as ``***``"); ``TOK2``'s value is never written as is; the
control: each plan ran as approved.

Broke (strict xfails, 20), each in the record of the run, EXECUTION_LOG.md, and so MCP
``log``, the page and ``/api/plan/`` (all pass it on as recorded: ``*-log``, ``*-mcp-log``,
``*-page``, ``*-api``), counted by ``***``. ``mixtop-*``, ``mixs-*``, ``mixkid-*``:
a value mixing the author's literal and a secret (``note: "<guess>-$<secrets.TOK2>"`` at the
top level, a nested input filled so, or a child joining its literal input with one a secret
filled) is recorded ``"note": "***-***"`` for the right guess of ``TOK`` and
``"note": "<guess>-***"`` for a wrong one: docs/execution.md says such a string is "the
reference's, redacted whole", but the redactor runs over it, the author's part included, so
one approved run confirms a guess (any secret the plan may reference serves). Should: a mixed
value is masked whole (``***``), or its author's parts quoted as written. ``pname-*``: a
nested child's own ``note: $<plan.name>`` with the child's name the guess is ``"note":
"***"`` for the right guess (the parent's ``$<plan.name>`` passed as an input, ``pnamep``, is
quoted as written). ``kdir-*``: a nested action whose child lives in ``plans/<guess>``
records its Result ``{"plan": "plans/***", "hash": ...}`` for the right guess while the same
log's "**Tool:** ``plan plans/<guess>``" line, ``show``, the row and the posts name it as
written. Should (both): the author's text is quoted as written. Held (36 ids + the
control): ``pin``,
``join``, ``pnamep`` (a nested input filled from the parent's own input, two of its inputs
joined, its ``$<plan.name>``) on every reader; ``show``, the ``status`` row and the ``notify``
posts of every variant; ``TOK2`` never written as is in any commit or post; ``two`` (two
deep) refused ``E_SCHEMA_INVALID``, never ran; every other plan ran once.

Fixed (2026-11-30): all 20. A recorded value is now built from its parts with their
provenance (``refs.recorded``), never by searching the joined string for known secrets'
values: the author's parts (a literal, a ``$<plan.*>`` of the plan that wrote it, a
nested or top-level plan's input as its parent's record shows it, ``Context.shown_inputs``)
as written, a ``$<secrets.*>`` as ``***``, the controller's other material (outputs,
results as the journal recorded them) through the redactor, the second net.
EXECUTION_LOG.md (and so MCP ``log``, the page, ``/api/plan/``) and the gate's preview take
it, the journal stays redacted whole;
``mixtop``, ``mixs``, ``mixkid`` record ``"note": "<guess>-***"`` for either guess, ``pname``
the child's name as written. A nested action's result names its plan's path as the author
wrote it (``logbook._own_result``), as its Tool line does (``kdir``).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from oraclekit import (
    guess_readers,
    hash_pin,
    hook_lab,
    notify_receiver,
    page_text,
    page_texts,
    status_rows,
    steady,
)
from oraclekit import nest_action as _nest
from test_round2_execution_kit import shared
from test_round65_surface_literal import QUIET

SECRET = "r67-s3cr3t-pv4nq8tz"
OTHER = "r67-other-w2mz6kx9"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "y"}
SLUGS = ("pin", "join", "pnamep", "pname", "mixs", "mixkid", "mixtop", "kdir")
WHERE = ("log", "show", "mcp-log", "status", "notify", "page", "api")


def _head(name: str, more: str = "", status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "t {name}"\n  status: {status}\n{more}'
        "available_tools:\n  - name: q\nactions:\n"
    )


def _rec(tag: str, note: str) -> str:
    return (
        '  - id: 1\n    tool: q\n    why: "record it"\n'
        f'    params: {{tag: {tag}, note: "{note}"}}\n'
    )


def _top(k: str, slug: str) -> str:
    return f"plans/{slug}{k}"


def _build(root: Path) -> Lab:
    server, posts = notify_receiver()
    secrets = f"TOK: {SECRET}\nTOK2: {OTHER}\n"
    lab = hook_lab(root, secrets, "@1795900000 +0000", server.server_address[1], QUIET)
    pin = functools.partial(hash_pin, lab)

    for k, g in GUESSES.items():
        half = len(g) // 2
        # the children (drafts)
        kids = {
            "two": ('inputs: {g: "d"}\n', _rec(f"two{k}", "$<inputs.g>")),
            "pin": ('inputs: {g: "d"}\n', _rec(f"pin{k}", "$<inputs.g>")),
            "join": ('inputs: {g: "d"}\n', _rec(f"join{k}", "$<inputs.g>")),
            "pnamep": ('inputs: {g: "d"}\n', _rec(f"pnamep{k}", "$<inputs.g>")),
            "mixs": ('inputs: {g: "d"}\n', _rec(f"mixs{k}", "$<inputs.g>")),
            "mixkid": ('inputs: {h: "d", k: "d"}\n', _rec(f"mixkid{k}", "$<inputs.h>-$<inputs.k>")),
        }  # fmt: skip
        for slug, (more, body) in kids.items():
            lab.write(f"kid-{slug}{k}", _head(f"kid-{slug}{k}", more, "draft") + body)
        lab.write(f"kid-pname{k}", _head(g, "", "draft") + _rec(f"pname{k}", "$<plan.name>"))
        lab.write(g, _head(f"kid-kdir{k}", "", "draft") + _rec(f"kdir{k}", "x"))
        # the middles of the two-deep chains
        lab.write(
            f"mid-two{k}",
            _head(f"mid-two{k}", 'inputs: {g: "d"}\n', "draft")
            + _nest(f"plans/kid-two{k}", pin(f"kid-two{k}"), '{g: "$<inputs.g>"}'),
        )
        tops = {
            "two": ("", _nest(f"plans/mid-two{k}", pin(f"mid-two{k}"), f'{{g: "{g}"}}')),
            "pin": (f'inputs: {{a: "{g}"}}\n',
                    _nest(f"plans/kid-pin{k}", pin(f"kid-pin{k}"), '{g: "$<inputs.a>"}')),
            "join": (
                f'inputs: {{a: "{g[:half]}", b: "{g[half:]}"}}\n',
                _nest(f"plans/kid-join{k}", pin(f"kid-join{k}"), '{g: "$<inputs.a>$<inputs.b>"}'),
            ),
            "pnamep": ("", _nest(f"plans/kid-pnamep{k}", pin(f"kid-pnamep{k}"),
                                 '{g: "$<plan.name>"}')),
            "pname": ("", _nest(f"plans/kid-pname{k}", pin(f"kid-pname{k}"))),
            "mixs": ("", _nest(f"plans/kid-mixs{k}", pin(f"kid-mixs{k}"),
                               f'{{g: "{g}-$<secrets.TOK2>"}}')),
            "mixkid": ("", _nest(f"plans/kid-mixkid{k}", pin(f"kid-mixkid{k}"),
                                 f'{{h: "{g}", k: "$<secrets.TOK2>"}}')),
            "mixtop": ("", _rec(f"mixtop{k}", f"{g}-$<secrets.TOK2>")),
            "kdir": ("", _nest(f"plans/{g}", pin(g))),
        }  # fmt: skip
        for slug, (more, body) in tops.items():
            name = g if slug == "pnamep" else f"{slug}{k}"
            lab.write(f"{slug}{k}", _head(name, more) + body)
    lab.commit("agent plans")
    lab.run()
    rows = lab.status()
    for k in GUESSES:  # two deep: refused (one level only), nothing of it runs
        assert rows[_top(k, "two")]["status"] == "invalid", rows[_top(k, "two")]
        assert "E_SCHEMA_INVALID" in rows[_top(k, "two")]["reason"], rows[_top(k, "two")]
        for slug in SLUGS:
            plan = _top(k, slug)
            assert rows[plan]["status"] == "pending_approval", (plan, rows[plan])
            lab.set_status(plan.split("/", 1)[1], "approved")
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    cfg = str(lab.config)
    rows = status_rows(lab)
    got: dict[str, dict[str, str]] = {}
    for k in GUESSES:
        plans = {slug: _top(k, slug) for slug in SLUGS}
        got[k] = guess_readers(lab, plans, rows, posts)
        for slug, plan in plans.items():
            got[k][f"{slug}-show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
    pages = page_texts(lab, [_top(k, slug) for k in GUESSES for slug in SLUGS], "plans/kdirc")
    for k in GUESSES:
        for slug in SLUGS:
            got[k][f"{slug}-page"], got[k][f"{slug}-api"] = pages[_top(k, slug)]
    lab.got = got  # type: ignore[attr-defined]
    lab.statuses = {p: r["status"] for p, r in rows.items()}  # type: ignore[attr-defined]
    lab.everything = "\n".join(posts) + lab.git("log", "-p", "--all")  # type: ignore[attr-defined]
    return lab


#: kept for the modules that import them from here
_receiver, _get = notify_receiver, page_text


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-surface-nestoracle", _build)


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (g, json.dumps(g)[1:-1]):
        text = text.replace(spelled, "GUESS")
    half = len(g) // 2
    text = text.replace(g[:half], "HALF1").replace(g[half:], "HALF2")
    text = re.sub(r"\b(kid-|mid-)?(" + "|".join(SLUGS) + ")" + k + r"\b", r"\1\2K", text)
    return steady(text)


IDS = [f"{slug}-{where}" for slug in SLUGS for where in WHERE]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    assert s.count("***") == c.count("***"), (s[:3000], c[:3000])


def test_the_plans_ran_as_approved_and_tok2_is_never_written(lab: Lab) -> None:
    tags = [c["argv"][0] for c in map(json.loads, lab.log.read_text().splitlines())]
    statuses = lab.statuses  # type: ignore[attr-defined]
    for k in GUESSES:
        for slug in SLUGS:
            assert tags.count(f"{slug}{k}") == 1, (slug, k, sorted(tags))
            assert statuses[_top(k, slug)] == "completed", (slug, statuses[_top(k, slug)])
        assert f"two{k}" not in tags
    assert OTHER not in lab.everything  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", ["mixs", "mixkid", "mixtop", "pname", "kdir"])
def test_the_authors_part_is_recorded_as_written_for_either_guess(lab: Lab, slug: str) -> None:
    # round 67's fix: built from parts, the literal as written and the secret's part ***
    shown = {"pname": '"note": "GUESS"', "kdir": '"plan": "plans/GUESS"'}
    for k in GUESSES:
        log = _norm(lab.got[k][f"{slug}-log"], k)  # type: ignore[attr-defined]
        assert shown.get(slug, '"note": "GUESS-***"') in log, log[-3000:]
