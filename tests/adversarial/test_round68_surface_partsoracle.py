"""Round 68, agent-facing surfaces: round 67's recorded values by provenance (docs/execution.md:
"EXECUTION_LOG.md's 'Params (resolved)' and the gate preview are built from PARTS: the
author's text as written, every ``$<secrets.*>`` as ``***``, outputs and results through the
redactor's value search") as a secret-equality ORACLE, with mixes round 67 never tried: does
the record of one approved run differ between a right and a wrong guess of a secret?

Lab (one, module scope), local mode with ``agent.identity``, two plan secrets (``TOK``, the
one guessed, holding ``/`` and ``+`` so it has JSON-escaped and URL-encoded spellings, and
``TOK2``), a ``notify`` URL served in the test process. For each guess of ``TOK`` (``s``
right, ``c`` wrong, same shape) the agent commits, and Alice approves:

- ``taskmix``: ``plan.task`` is the guess, ``note: "$<plan.task>-$<secrets.TOK2>"`` (a
  ``$<plan.*>`` field other than name);
- ``url``: the guess URL-encoded (``%2F``, ``%2B``) joined to ``-$<secrets.TOK2>``;
- ``jesc``: the guess JSON-escaped (``\\/``) joined to ``-$<secrets.TOK2>``;
- ``upper``: the guess upper-cased (the redactor ignores case) joined to a secret;
- ``wrap``: the guess's halves around ``$<secrets.TOK2>`` (no separator);
- ``inpdef``: a top-level input whose DEFAULT is the guess, ``"$<inputs.a>-$<secrets.TOK2>"``;
- ``kiddef``: a nested child whose own input default is the guess (the parent passes nothing),
  ``note: "$<inputs.g>-$<secrets.TOK2>"``; ``kidmix``: the parent passes
  ``g: "<guess>-$<secrets.TOK2>"`` and the child wraps it, ``"[$<inputs.g>]"`` (a secret
  inside a nested input inside a mixed string);
- ``map``: a params mapping whose KEY is the guess and whose value is ``$<secrets.TOK2>``;
- ``gate``: action 2 ``requires_approval: true`` with ``note: "<guess>-$<secrets.TOK2>"``: the
  gate preview (the log's "Waiting for approval", ``show``);
- ``numstr``: a third secret ``NUM`` is all digits; ``note: [<int>, "<int>-$<secrets.TOK2>"]``
  (the plan's literal INTEGER guess of it, and the same digits in a mixed string);
- ``esc``: ``"$$<secrets.TOK>-<guess>-$<secrets.TOK2>"`` (an escaped reference beside the
  guess); ``block``: a ``|`` block scalar holding the guess and ``$<secrets.TOK2>`` on two
  lines; ``kidname``: a nested child in ``plans/<guess>``, named the guess, writing
  ``"$<plan.name>-$<secrets.TOK2>"``;
- ``yamlf``: ``note: "<guess>-$<secrets.TOK2>"`` in a plan whose file is ``PLAN.yaml`` (the
  other accepted name), on every reader.

Readers of the top plan: the committed EXECUTION_LOG.md, ``show --config``, MCP ``log``, the
``status --json`` row, the ``notify`` posts of its path, the controller's commit messages
touching it, and (one daemon with ``ui.listen`` after the passes) ``/plan/<path>`` and
``/api/plan/<path>``.

Asserted: for each reader, a right and a wrong guess give the same count of ``***`` (after the
guess's spellings are normalised); ``TOK2``'s value is never written as is, nor ``TOK``'s;
every plan ran as approved (``gate`` paused at its gate).

Broke (strict xfail, 1): ``yamlf-mcp-log``: MCP ``log`` of the completed PLAN.yaml plan
answers ``E_USAGE: no plan plans/yamlf<k> on the watched branch`` (for either guess) while every
other reader shows its run (test_round68_surface_looselog.py has the class). Held (119 ids +
the control): every variant on every reader gives the same
count of ``***`` for both guesses: the author's parts are quoted as written in every spelling
(URL-encoded, ``\\/``, upper case, halves, ``$$<`` beside the guess, a block scalar, a
mapping key, an integer and its digits in a string, ``$<plan.task>``, an input default, a
nested child's default, a nested input mixing the guess and a secret, a nested child's
``$<plan.name>`` in ``plans/<guess>``), every ``$<secrets.*>`` part ``***``; the gate
preview alike; ``TOK2``/``NUM`` never written as is in git or the posts.

Fixed (2026-11-30): MCP ``log`` finds a plan's file as every reader does
(``controller.git.planstate.plan_file_of``: ``PLAN.yml`` or ``PLAN.yaml``), so ``yamlf``'s
run is answered, alike for both guesses (``yamlf-mcp-log``).
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from oraclekit import (
    guess_readers,
    hash_pin,
    hook_lab,
    notify_receiver,
    page_texts,
    status_rows,
    steady,
)
from oraclekit import nest_action as _nest
from test_round2_execution_kit import shared
from test_round65_surface_literal import QUIET

SECRET = "r68/s3cr3t+pv4nq8tz"
OTHER = "r68-other-w2mz6kx9"
NUM = "73921846051"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "y"}
NUMS = {"s": NUM, "c": NUM[:-1] + "2"}
SLUGS = (
    "taskmix", "url", "jesc", "upper", "wrap", "inpdef",
    "kiddef", "kidmix", "map", "gate", "numstr", "esc", "block", "kidname", "yamlf",
)  # fmt: skip
FILE = {"yamlf": "PLAN.yaml"}
WHERE = ("log", "show", "mcp-log", "status", "notify", "commits", "page", "api")


def _head(name: str, more: str = "", status: str = "pending_approval", task: str = "") -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "{task or "t " + name}"\n  status: {status}\n{more}'
        "available_tools:\n  - name: q\nactions:\n"
    )


def _rec(tag: str, note: str, aid: int = 1, gate: bool = False) -> str:
    return (
        f'  - id: {aid}\n    tool: q\n    why: "record it"\n'
        + ("    requires_approval: true\n" if gate else "")
        + f"    params: {{tag: {tag}, note: {note}}}\n"
    )


def _spellings(g: str) -> list[str]:
    return [
        g, g.upper(), urllib.parse.quote(g, safe=""), g.replace("/", "\\/"),
        json.dumps(g)[1:-1], json.dumps(g.replace("/", "\\/"))[1:-1],
        json.dumps(urllib.parse.quote(g, safe=""))[1:-1],
    ]  # fmt: skip


def _build(root: Path) -> Lab:
    server, posts = notify_receiver()
    secrets = f'TOK: "{SECRET}"\nTOK2: "{OTHER}"\nNUM: "{NUM}"\n'
    lab = hook_lab(root, secrets, "@1796100000 +0000", server.server_address[1], QUIET)
    pin = functools.partial(hash_pin, lab)

    t2 = "$<secrets.TOK2>"
    for k, g in GUESSES.items():
        h = len(g) // 2
        q = lambda s: json.dumps(s)  # noqa: E731  (a YAML double-quoted scalar)
        lab.write(f"kid-kiddef{k}", _head(f"kid-kiddef{k}", f"inputs: {{g: {q(g)}}}\n", "draft")
                  + _rec(f"kiddef{k}", q(f"$<inputs.g>-{t2}")))  # fmt: skip
        lab.write(f"kid-kidmix{k}", _head(f"kid-kidmix{k}", 'inputs: {g: "d"}\n', "draft")
                  + _rec(f"kidmix{k}", q("[$<inputs.g>]")))  # fmt: skip
        lab.write(g, _head(g, "", "draft") + _rec(f"kidname{k}", q(f"$<plan.name>-{t2}")))
        n = NUMS[k]
        tops = {
            "taskmix": ("", _rec(f"taskmix{k}", q(f"$<plan.task>-{t2}"))),
            "url": ("", _rec(f"url{k}", q(urllib.parse.quote(g, safe="") + f"-{t2}"))),
            "jesc": ("", _rec(f"jesc{k}", q(g.replace("/", "\\/") + f"-{t2}"))),
            "upper": ("", _rec(f"upper{k}", q(g.upper() + f"-{t2}"))),
            "wrap": ("", _rec(f"wrap{k}", q(g[:h] + t2 + g[h:]))),
            "inpdef": (f"inputs: {{a: {q(g)}}}\n", _rec(f"inpdef{k}", q(f"$<inputs.a>-{t2}"))),
            "kiddef": ("", _nest(f"plans/kid-kiddef{k}", pin(f"kid-kiddef{k}"))),
            "kidmix": ("", _nest(f"plans/kid-kidmix{k}", pin(f"kid-kidmix{k}"),
                                 f"{{g: {q(g + '-' + t2)}}}")),
            "map": ("", _rec(f"map{k}", f"{{{q(g)}: {q(t2)}}}")),
            "gate": ("", _rec(f"gate{k}", q("first"))
                     + _rec(f"gate2{k}", q(f"{g}-{t2}"), aid=2, gate=True)),
            "numstr": ("", _rec(f"numstr{k}", f"[{n}, {q(n + '-' + t2)}]")),
            "esc": ("", _rec(f"esc{k}", q(f"$$<secrets.TOK>-{g}-{t2}"))),
            "block": ("", f'  - id: 1\n    tool: q\n    why: "record it"\n'
                      f"    params:\n      tag: block{k}\n      note: |\n"
                      f"        line {g}\n        {t2}\n"),
            "kidname": ("", _nest(f"plans/{g}", pin(g))),
            "yamlf": ("", _rec(f"yamlf{k}", q(f"{g}-{t2}"))),
        }  # fmt: skip
        for slug, (more, body) in tops.items():
            task = g if slug == "taskmix" else ""
            text = _head(f"{slug}{k}", more, task=task) + body
            lab.write(f"{slug}{k}", text, FILE.get(slug, "PLAN.yml"))
    lab.commit("agent plans")
    lab.run()
    rows = lab.status()
    for k in GUESSES:
        for slug in SLUGS:
            plan = f"plans/{slug}{k}"
            assert rows[plan]["status"] == "pending_approval", (plan, rows[plan])
            lab.set_status(f"{slug}{k}", "approved", FILE.get(slug, "PLAN.yml"))
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    cfg = str(lab.config)
    rows = status_rows(lab)
    got: dict[str, dict[str, str]] = {}
    for k in GUESSES:
        plans = {slug: f"plans/{slug}{k}" for slug in SLUGS}
        got[k] = guess_readers(lab, plans, rows, posts)
        for slug, plan in plans.items():
            shown = lab.cli("show", "--config", cfg, plan, cwd=lab.repo)
            got[k][f"{slug}-show"] = shown.stdout + shown.stderr
            got[k][f"{slug}-commits"] = lab.git(
                "log", "--format=%an %s%n%b", "--author=plangate", "--", plan
            )
    plans = [f"plans/{slug}{k}" for k in GUESSES for slug in SLUGS]
    pages = page_texts(lab, plans, "plans/gatec")
    for k in GUESSES:
        for slug in SLUGS:
            got[k][f"{slug}-page"], got[k][f"{slug}-api"] = pages[f"plans/{slug}{k}"]
    lab.got = got  # type: ignore[attr-defined]
    lab.statuses = {p: r["status"] for p, r in rows.items()}  # type: ignore[attr-defined]
    lab.everything = "\n".join(posts) + lab.git("log", "-p", "--all")  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r68-surface-partsoracle", _build)


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    text = text.replace(NUMS[k], "NUMG")
    for i, spelled in sorted(enumerate(_spellings(g)), key=lambda p: -len(p[1])):
        text = text.replace(spelled, f"GUESS{i}")
    h = len(g) // 2
    for i, spelled in enumerate((g[:h], g[h:], json.dumps(g[:h])[1:-1], g[:h].replace("/", "\\/"))):
        text = text.replace(spelled, f"HALF{i}")
    text = re.sub(r"\b(kid-)?(" + "|".join(SLUGS) + ")(2?)" + k + r"\b", r"\1\2\3K", text)
    return steady(text)


IDS = [f"{slug}-{where}" for slug in SLUGS for where in WHERE]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    if vid.endswith("-mcp-log"):  # the reader answers (a refusal is no answer at all)
        assert '"isError": true' not in s + c, s[:1500]
    assert s.count("***") == c.count("***"), (s[:4000], c[:4000])


def test_the_plans_ran_as_approved_and_no_secret_is_written(lab: Lab) -> None:
    tags = [c["argv"][0] for c in map(json.loads, lab.log.read_text().splitlines())]
    statuses = lab.statuses  # type: ignore[attr-defined]
    for k in GUESSES:
        for slug in SLUGS:
            assert tags.count(f"{slug}{k}") == 1, (slug, k, sorted(tags))
            want = "awaiting_approval" if slug == "gate" else "completed"
            assert statuses[f"plans/{slug}{k}"] == want, (slug, statuses[f"plans/{slug}{k}"])
        assert f"gate2{k}" not in tags
    everything = lab.everything  # type: ignore[attr-defined]
    assert OTHER not in everything
    assert f'{NUM}"' not in everything.replace(f"{NUM}-", "")  # only the author's literal
    for spelled in _spellings(OTHER):
        assert spelled not in everything, spelled
