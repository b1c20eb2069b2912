"""Round 69, agent-facing surfaces: a secret reaching a reader through a path round 68's row
did not list: the PATHS the agent itself names in ``validate``/``convert``/``show``/``freeze``
(a plan's folder or file name, a source file, an output folder), quoted in warnings and
errors that still go through the redactor whole.

docs/threat-model.md (rounds 61-63): "the author's text is quoted as written in answers to it
... the redactor applies to the controller's material"; round 62 closed ``show``/``validate``
of a missing ``<guess>.yml`` and ``convert`` of a JSON source keyed by the guess.

Lab (one, module scope, no passes): a plans repo and a config with ``secrets.file`` holding
``TOK``. For a right guess (``TOK`` itself) and a wrong guess of its shape, the agent writes
an honest plan (the ``echo`` tool) at paths named by the guess and runs, with
``--config``: ``validate [--json]`` of a plan outside the plans folder (``<root>/<g>/PLAN.yml``)
and of ``plans/<g>/X.yml`` (a name the controller never reads), of a folder whose
``PLAN.yml`` is a directory (``plans/dir-<g>``) with ``show``/``freeze``/``hash``, of a
``PLAN.json`` source in ``<root>/src-<g>/``, of an ambiguous ``plans/amb-<g>``; ``convert``
of a valid source ``<root>/<g>.json`` (``--json``), of an invalid one (text), of a source in
``src-<g>/``, and ``convert -o <root>/out-<g>`` (a folder outside the repo); ``show`` of a
missing ``plans/miss-<g>/PLAN.yml`` (round 62's, control).

Asserted per id: the two answers are the same text once each guess is replaced by ``G``
(a right and a wrong guess are answered alike), and neither says ``***``.

Broke (strict xfails): ``val-outside-json`` (the warning "outside the plans folder ...;
expected <repo>/plans/***/PLAN.yml"), ``val-json-src`` (the same for a ``PLAN.json`` source
in ``<root>/src-<g>/``: "expected .../plans/src-***/PLAN.yml"), ``val-name-json`` ("the controller
reads only files named exactly PLAN.yml ... expected <repo>/plans/***/PLAN.yml"),
``val-dirplan-json``, ``show-dirplan``, ``freeze-dirplan`` ("E_USAGE: plans/dir-***: a
folder without PLAN.yml"), ``conv-src-json``, ``conv-dir-json`` (``"source":
"<root>/***.json"``), ``conv-bad-text`` ("<root>/***.json: E_SCHEMA_INVALID ..."),
``conv-out`` ("E_USAGE: <root>/out-*** is outside <repo>"): each quotes the agent's own
path with the secret masked for the right guess only, so one local command confirms a
guess of any controller secret. Should: quote the asker's path as written. Held:
``hash-dirplan`` (the same E_USAGE, as written), ``val-outside-text`` (the text output
prints no such warning), ``val-amb-json``,
``show-missing``.

Fixed (2026-11-30), all 10: every answer keeps the asker's own paths as written, split by
provenance at the one choke point of what commands print (``_shared.printed``): ``cli.main``
records the paths the command was asked about (PATH, SRC, ``-o DIR``; ``_shared.asked``),
a command records the paths it builds from them (``convert``'s output folder,
``_shared.derived``), and ``printed`` keeps them, whole, in the forms answers quote them
(as written, absolute, resolved, a folder's PLAN.yml, ``/<folder>/PLAN.yml`` of the path
``validate`` expects: ``_shared.asker_paths``) in every warning, error and JSON field. The
catalog's parts of a plan's problems are answered alone first (``_shared.controller_text``)
and an error carrying such problems unanswered keeps only what it marks, so a catalog value
equal to a named path stays ``***`` (tests/commands/test_asker_paths.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases
from test_round2_execution_kit import shared

SECRET = "r69-Pth0racle-Kq7Zm"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "n"}
PLAN = """\
plan:
  name: probe
  task: "a plan at a path"
  status: pending_approval
available_tools: [{name: echo}]
actions:
  - id: 1
    tool: echo
    why: "say hello"
    params: {text: hello}
"""
BAD_SOURCE = '{"goal": "g", "steps": [{"tool": "echo", "args": {"text": "x"}}]}'


def _commands(lab: Lab, g: str) -> dict[str, tuple[list[str], Path]]:
    cfg, r, repo = ["--config", str(lab.config)], lab.root, lab.repo
    return {
        "val-outside-json": (["validate", "--json", *cfg, str(r / g / "PLAN.yml")], repo),
        "val-outside-text": (["validate", *cfg, str(r / g / "PLAN.yml")], repo),
        "val-name-json": (["validate", "--json", *cfg, f"plans/{g}/X.yml"], repo),
        "val-dirplan-json": (["validate", "--json", *cfg, f"plans/dir-{g}"], repo),
        "show-dirplan": (["show", *cfg, f"plans/dir-{g}"], repo),
        "freeze-dirplan": (["freeze", *cfg, f"plans/dir-{g}"], repo),
        "hash-dirplan": (["hash", *cfg, f"plans/dir-{g}"], repo),
        "val-json-src": (["validate", "--json", *cfg, str(r / f"src-{g}" / "PLAN.json")], repo),
        "val-amb-json": (["validate", "--json", *cfg, f"plans/amb-{g}"], repo),
        "conv-src-json": (["convert", "--json", *cfg, str(r / f"{g}.json")], repo),
        "conv-dir-json": (["convert", "--json", *cfg, str(r / f"src-{g}" / "PLAN.json")], repo),
        "conv-bad-text": (["convert", *cfg, str(r / f"bad-{g}.json")], repo),
        "conv-out": (["convert", *cfg, "-o", str(r / f"out-{g}"), str(r / "ok.json")], repo),
        "show-missing": (["show", *cfg, f"plans/miss-{g}/PLAN.yml"], repo),
    }


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=f"secrets: {{file: {root / 'sec.yml'}}}\n")
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    example = Path(__file__).resolve().parents[2] / "examples/formats/agent-plan.json"
    shutil.copy(example, root / "ok.json")
    out: dict[str, dict[str, str]] = {}
    for k, g in GUESSES.items():
        (root / g).mkdir()
        (root / g / "PLAN.yml").write_text(PLAN)
        lab.write(g, PLAN, "X.yml")
        (lab.repo / "plans" / f"dir-{g}" / "PLAN.yml").mkdir(parents=True)
        (lab.repo / "plans" / f"dir-{g}" / "PLAN.yml" / "keep").write_text("x\n")
        lab.write(f"amb-{g}", PLAN)
        lab.write(f"amb-{g}", PLAN, "PLAN.yaml")
        (root / f"src-{g}").mkdir()
        shutil.copy(example, root / f"src-{g}" / "PLAN.json")
        shutil.copy(example, root / f"{g}.json")
        (root / f"bad-{g}.json").write_text(BAD_SOURCE)
        out[k] = {}
        for vid, (argv, cwd) in _commands(lab, g).items():
            done = lab.cli(*argv, cwd=cwd)
            out[k][vid] = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lab.out = out  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-surface-pathoracle", _build)


def _norm(text: str, g: str) -> str:
    return text.replace(g, "G").replace(g.lower(), "G")


IDS = [
    "val-outside-json", "val-outside-text", "val-name-json", "val-dirplan-json",
    "show-dirplan", "freeze-dirplan", "hash-dirplan", "val-json-src", "val-amb-json",
    "conv-src-json", "conv-dir-json", "conv-bad-text", "conv-out", "show-missing",
]  # fmt: skip
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    out = lab.out  # type: ignore[attr-defined]
    right, wrong = out["s"][vid], out["c"][vid]
    assert "Traceback" not in right + wrong, (right + wrong)[-2000:]
    assert _norm(right, GUESSES["s"]) == _norm(wrong, GUESSES["c"]), (right[:1200], wrong[:1200])
    assert "***" not in right, right[:1500]
