# ruff: noqa: E501
"""Round 114, sources (atk114c): what a line-based diff shows of a plan source or PLAN.yml is
exactly what the hash covers and what runs; references resolve only as documented; no text a
diff hides (or shows as something else) is read as structure or as a reference.

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config: the converter alone) of sources the test writes, one per id: TOON, ActionPlan,
Plan Contract and Agent Plan JSON, the markdown plan, pte YAML. Part 2, the daemon: the agent
commits ten ``PLAN.yml`` (``inputs: {to: X}``; the ``tag`` param, the recorder's argv, holds the
variant), a ``PLAN.toon``, two ``PLAN.json`` and a ``PLAN.md``; one ``run --once`` pass, ``show``
of each PLAN.yml, Alice approves every PLAN.yml (and the converted control), a second pass.

Variants (``<variant>:<what>``):

- ``tab-*``: a TOON array header declaring the TAB delimiter (``[2<TAB>]``, ``{a<TAB>b}``) in
  params, a tabular params array, the steps and tasks tables, a nested list; controls: the
  comma and ``|`` delimiters, a quoted ``\\t``, a comma table; ``[2    ]`` (spaces) refused;
- ``ws-toon-*``: a TAB beside an unquoted TOON value or key; control: spaces, CRLF;
- ``esc-*``: a reference whose ``$``, ``<``, ``>`` or ``{`` is an escape (JSON ``\\u0024``,
  ``\\u003c``, ``\\u003e``, ``\\u007b``; YAML ``\\x24``; TOON ``\\u0024``) in every source format;
  controls: written out, ``\\u00245 fee``, ``$$<`` literal, a single-quoted or block YAML
  scalar (no escapes there), a shell ``${HOME}``;
- ``dd-*``: ``$${plan.name}`` (a dollar before a legacy reference) in pte, JSON, TOON, markdown;
- ``d-*`` (daemon): the same as PLAN.yml values and as committed sources.

Seen (round 114, 70 ids, ~20 s wall on an idle box): 4 classes broke (38 ids, strict xfails),
32 held.

1. **toon-tab-delimiter** (7): ``tab-{inline-comma,inline-spaces,tabular-params,tabular-steps,
   tabular-tasks,nested-list}:refused``, ``d-toon-tab:not-converted``. TOON's TAB delimiter
   makes a character every line-based diff shows as white space the field boundary:
   ``hosts[2<TAB>]: web,db<TAB>prod`` converts to ``["web,db", "prod"]`` while the identical-
   looking ``hosts[2]: web,db prod`` is ``["web", "db prod"]`` (same length, both valid);
   ``argv[2<TAB>]: rm -rf<TAB>/tmp/cache`` is two argv elements. ``[2    ]`` with spaces is
   refused (``Malformed bracket segment``), so only the TAB reads. The daemon converted and
   froze a ``PLAN.toon`` holding one (round 110's open note, confirmed).
2. **space-lookalike-in-source**, round 113's open class by a new trigger, ASCII TAB (4):
   ``ws-toon-tab-{before-false,before-number,after-false,key}:refused``. TOON trims spaces
   beside an unquoted value (``dry_run:   false`` is ``false``: control held) but keeps a TAB:
   ``dry_run:<TAB>false`` is the truthy string ``"\\tfalse"``, ``replicas:<TAB>5`` the string
   ``"\\t5"``, ``dry_run<TAB>: true`` the key ``"dry_run\\t"``. A TAB in indentation is refused
   (held).
3. **escaped-reference-syntax** (19): ``esc-{json-dollar,json-lt,json-gt,json-inside,
   json-legacy-dollar,json-legacy-brace,pc-dollar,agent-dollar,md-dollar,md-lt,toon-dollar,
   toon-lt,pte-x24,pte-legacy}:refused``, ``d-esc-{dollar,lt,legacy,x24,input}:ran``,
   ``d-{json,md}-esc:not-converted``. A reference spelled with an escaped ``$``/``<``/``>``/``{``
   is live: ``"\\u0024<plan.name>"`` converts to ``$<plan.name>`` in every format; a PLAN.yml
   ``tag: "de-\\u0024<plan.name>"`` (``$\\u003c...``, ``\\x24<...>``, ``\\u0024{...}``,
   ``\\u0024<inputs.to>``) validates, freezes and, approved, runs with the resolved value
   (``de-d-esc-dollar``, ``di-X``); the freeze leaves the file as written (a ``\\u0024{...}``
   legacy reference is not written out as ``${...}`` is). The agent's diff shows no ``$<`` or
   ``${``; in a markdown value a forge renders ``\\u0024`` as those six characters, and
   docs/formats.md itself tells authors to write ``<`` as ``\\u003c`` there to get the text.
   ``plangate show`` does mark each ``«$<...>»`` (held, ``:show-marked``): the gap is the diff
   of the source, which is what a pull request reviews.
4. **legacy-ref-after-dollar** (6): ``dd-{pte,json,toon,md,pte-approval}:reading``,
   ``d-dd:ran``. ``$${plan.name}`` becomes ``$$<plan.name>``, whose run-time text is the literal
   ``$<plan.name>``: neither ``$`` followed by the name (SPEC §3's reading of ``$`` then a
   legacy reference) nor ``${plan.name}`` (the shell's and make's ``$$`` escape). A PLAN.yml
   ``tag: "dd-$${plan.name}"`` is rewritten by the freeze to ``"dd-$$<plan.name>"`` and the tool
   got ``dd-$<plan.name>`` (the approver reads the rewritten line, so after the freeze the
   literal is at least documented; the agent's commit and any converted source are not).

Held: TOON TAB indentation and ``[2    ]``; ``$< plan.name>`` and ``${plan.name>x}`` refused at
their place; written-out references (``$<...>``, ``${...}``, ``${approval.approved_by}`` ->
``$<approval.by>``), ``$$<`` literals, ``\\u00245 fee``, shell ``${HOME}`` and YAML single-quoted or
block scalars (no escape processing) convert and run exactly as written; the freeze writes a
``${plan.name}`` out as ``$<plan.name>``; ``show`` marks every escaped reference; a plain
``PLAN.json`` converts and runs once.

Not tried: MCP ``validate``/``submit`` of these sources (one converter), nested plans, checks'
and fallbacks' params (the same reader, presumably), remote mode, ``$<secrets.X>`` spelled by
escape (the same resolver; a config with a secret would show it). Suspected, not asserted: pte
``$$$<x>``/``$$${x}`` read leftmost (``$`` then a ``$$<`` literal) where a reader may take ``$$``
as the escape; TOON accepts ``\\u`` escapes the TOON spec does not list (only ``\\\\ \\" \\n \\r
\\t``), which is what makes ``esc-toon-*`` possible.

Reproduce: ``printf 'metadata:\\n  title: T\\n  objective: O\\ntasks[1]{id,name}:\\n  task_1,N\\n
steps[1]:\\n  - id: s1\\n    task_id: task_1\\n    action: rec\\n    parameters:\\n      hosts[2\\t]:
web,db\\tprod\\n' > a.toon; plangate convert a.toon`` (``hosts: ["web,db", "prod"]``); a PLAN.yml
param ``tag: "de-\\u0024<plan.name>"`` committed, approved, run: the tool gets the plan's name.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from sourcekit import approve_file, convert_source, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

TOON_HEAD = "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
TOON_TAIL = (
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)


def _toon(steps: str, head: str = TOON_HEAD) -> str:
    return head + steps + TOON_TAIL


def _toon_params(body: str) -> str:
    return _toon(
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n" + body
    )


def _ap(extra: str, tag: str = "A") -> str:
    """An ActionPlan JSON whose one action is ``rec`` with ``tag`` plus ``extra`` members
    (raw JSON text, so escapes are written as the test means them)."""
    text = json.dumps(
        {
            "plan_version": 1,
            "title": "t",
            "steps": [
                {"step_number": 1, "action": {"type": "rec", "tag": tag}, "description": "d"}
            ],
        }
    )
    return text.replace(f'"tag": "{tag}"', f'"tag": "{tag}", ' + extra) if extra else text


def _pc(extra: str) -> str:
    text = json.dumps(
        {
            "plan_version": 1,
            "skill_id": "s",
            "goal": "g",
            "steps": [{"step_id": "1", "tool": "rec", "args": {"tag": "A"}}],
        }
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra)


def _agent(extra: str) -> str:
    text = json.dumps(
        {
            "title": "t",
            "steps": [
                {
                    "id": "s1",
                    "title": "T",
                    "detail": "D",
                    "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}}},
                }
            ],
        }
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra)


PTE = (
    'plan:\n  name: "t"\n  task: "t"\n  status: pending_approval\navailable_tools:\n'
    '  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: "w"\n    params:\n'
    "      tag: a\n"
)


def _pte(line: str) -> str:
    return PTE + "      " + line + "\n"


MD = md("a")
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
assert PARAMS in MD


def _mdp(extra: str) -> str:
    return MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok", ' + extra + "}\n")


#: id -> (file name, source, --from): must be refused, exit 1, an E_ code at a place
#: (``line N`` or ``at <path>``), nothing converted
REFUSED: dict[str, tuple[str, str, str]] = {
    # toon-tab-delimiter: a TAB in an array header makes white space a field boundary
    "tab-inline-comma:refused": ("a.toon", _toon_params("      hosts[2\t]: web,db\tprod\n"), ""),
    "tab-inline-spaces:refused": (
        "a.toon",
        _toon_params("      argv[2\t]: rm -rf\t/tmp/cache\n"),
        "",
    ),
    "tab-tabular-params:refused": (
        "a.toon",
        _toon_params("      items[2\t]{name\tcmd}:\n        a\tls -la\n        b\tdu -sh,/\n"),
        "",
    ),
    "tab-tabular-steps:refused": (
        "a.toon",
        _toon("steps[2\t]{id\ttask_id\taction}:\n  s1\ttask_1\trec\n  s2\ttask_1\trec\n"),
        "",
    ),
    "tab-tabular-tasks:refused": (
        "a.toon",
        _toon(
            "steps[1]{id,task_id,action}:\n  s1,task_1,rec\n",
            head="metadata:\n  title: T\n  objective: O\ntasks[1\t]{id\tname}:\n  task_1\tN,M\n",
        ),
        "",
    ),
    "tab-nested-list:refused": (
        "a.toon",
        _toon_params("      a[1]:\n        - [2\t]: x,y\tz\n"),
        "",
    ),
    # space-lookalike-in-source (round 113's class, a new trigger): a TAB beside an unquoted
    # TOON value or key is kept where spaces are trimmed
    "ws-toon-tab-before-false:refused": ("a.toon", _toon_params("      dry_run:\tfalse\n"), ""),
    "ws-toon-tab-before-number:refused": ("a.toon", _toon_params("      replicas:\t5\n"), ""),
    "ws-toon-tab-after-false:refused": ("a.toon", _toon_params("      dry_run: false\t\n"), ""),
    "ws-toon-tab-key:refused": ("a.toon", _toon_params("      dry_run\t: true\n"), ""),
    # held: TOON's own strictness
    "toon-tab-indent:refused": ("a.toon", _toon_params("      a: x\n\tb: y\n"), ""),
    "toon-spaces-in-brackets:refused": ("a.toon", _toon_params("      a[2    ]: x    y\n"), ""),
    # escaped-reference-syntax: a reference whose `$`, `<` or `{` is an escape in the source
    "esc-json-dollar:refused": ("a.json", _ap('"x": "\\u0024<plan.name>"'), ""),
    "esc-json-lt:refused": ("a.json", _ap('"x": "$\\u003cplan.name>"'), ""),
    "esc-json-gt:refused": ("a.json", _ap('"x": "$<plan.name\\u003e"'), ""),
    "esc-json-inside:refused": ("a.json", _ap('"x": "echo \\u0024<plan.name> done"'), ""),
    "esc-json-legacy-dollar:refused": ("a.json", _ap('"x": "\\u0024{plan.name}"'), ""),
    "esc-json-legacy-brace:refused": ("a.json", _ap('"x": "$\\u007bplan.name}"'), ""),
    "esc-pc-dollar:refused": ("a.json", _pc('"x": "\\u0024<plan.name>"'), ""),
    "esc-agent-dollar:refused": ("a.json", _agent('"x": "\\u0024<plan.name>"'), ""),
    "esc-md-dollar:refused": ("PLAN.md", _mdp('"x": "\\u0024<plan.name>"'), ""),
    "esc-md-lt:refused": ("PLAN.md", _mdp('"x": "$\\u003cplan.name>"'), ""),
    "esc-toon-dollar:refused": ("a.toon", _toon_params('      x: "\\u0024<plan.name>"\n'), ""),
    "esc-toon-lt:refused": ("a.toon", _toon_params('      x: "$\\u003cplan.name>"\n'), ""),
    "esc-pte-x24:refused": ("a.yml", _pte('x: "\\x24<plan.name>"'), "pte"),
    "esc-pte-legacy:refused": ("a.yml", _pte('x: "\\u0024{plan.name}"'), "pte"),
    # held: refusals the docs name
    "ref-json-spaced:refused": ("a.json", _ap('"x": "$< plan.name>"'), ""),
    "legacy-json-uncarried:refused": ("a.json", _ap('"x": "${plan.name>x}"'), ""),
}

#: id -> (file name, source, --from, the param ``x`` it must convert to, or a predicate)
CONVERTS: dict[str, tuple[str, str, str, Any]] = {
    # toon controls: a visible delimiter, TOON's default, a quoted escape
    "tab-comma-default:control": (
        "a.toon",
        _toon_params("      x[2]: web,db prod\n"),
        "",
        ["web", "db prod"],
    ),
    "tab-pipe:control": (
        "a.toon",
        _toon_params("      x[2|]: web,db|prod\n"),
        "",
        ["web,db", "prod"],
    ),
    "tab-quoted-escape:control": ("a.toon", _toon_params('      x: "a\\tb"\n'), "", "a\tb"),
    "tab-comma-tabular:control": (
        "a.toon",
        _toon_params("      x[2]{n,c}:\n        a,ls\n        b,du\n"),
        "",
        [{"n": "a", "c": "ls"}, {"n": "b", "c": "du"}],
    ),
    "ws-toon-spaces:control": ("a.toon", _toon_params("      x:   false\n"), "", False),
    "ws-toon-crlf:control": (
        "a.toon",
        _toon_params("      x: y\n").replace("\n", "\r\n"),
        "",
        "y",
    ),
    # reference controls: written out, a reference; an escape with no `<` after it, text
    "ref-json-plain:control": ("a.json", _ap('"x": "$<plan.name>"'), "", "$<plan.name>"),
    "ref-json-legacy:control": ("a.json", _ap('"x": "${plan.name}"'), "", "$<plan.name>"),
    "ref-json-approval:control": (
        "a.json",
        _ap('"x": "${approval.approved_by}"'),
        "",
        "$<approval.by>",
    ),
    "ref-json-escaped-5:control": ("a.json", _ap('"x": "\\u00245 fee"'), "", "$5 fee"),
    "ref-json-literal:control": ("a.json", _ap('"x": "$$<plan.name>"'), "", "$$<plan.name>"),
    "ref-md-plain:control": ("PLAN.md", _mdp('"x": "$<plan.name>"'), "", "$<plan.name>"),
    "ref-toon-plain:control": (
        "a.toon",
        _toon_params("      x: $<plan.name>\n"),
        "",
        "$<plan.name>",
    ),
    "ref-pte-legacy:control": ("a.yml", _pte('x: "${plan.name}"'), "pte", "$<plan.name>"),
    "ref-pte-shell:control": ("a.yml", _pte('x: "${HOME}/bin"'), "pte", "${HOME}/bin"),
    "ref-pte-single-quoted:control": (
        "a.yml",
        _pte("x: '\\x24<plan.name>'"),
        "pte",
        "\\x24<plan.name>",
    ),
    "ref-pte-block:control": (
        "a.yml",
        _pte("x: |-\n        \\u0024<plan.name>"),
        "pte",
        "\\u0024<plan.name>",
    ),
}

#: legacy-ref-after-dollar: `$${plan.name}` reads as `$` then the reference, or (the shell's
#: and make's `$$`) the literal `${plan.name}`; the converter writes `$$<plan.name>`, whose
#: run-time text is `$<plan.name>`: neither. id -> (file name, source, --from)
DOLLAR: dict[str, tuple[str, str, str]] = {
    "dd-pte:reading": ("a.yml", _pte('x: "$${plan.name}"'), "pte"),
    "dd-json:reading": ("a.json", _ap('"x": "$${plan.name}"'), ""),
    "dd-toon:reading": ("a.toon", _toon_params('      x: "$${plan.name}"\n'), ""),
    "dd-md:reading": ("PLAN.md", _mdp('"x": "$${plan.name}"'), ""),
    "dd-pte-approval:reading": ("a.yml", _pte('x: "$${approval.approved_by}"'), "pte"),
}


def _runtime_text(value: str, name: str) -> str:
    """The text a tool gets for ``value`` by SPEC §3 with ``plan.name`` = ``name``: `$$<` is a
    literal `$<`, `$<plan.name>` the name (leftmost first, as the resolver reads it)."""
    out, i = "", 0
    while i < len(value):
        if value.startswith("$$<", i):
            out, i = out + "$<", i + 3
        elif value.startswith("$<plan.name>", i):
            out, i = out + name, i + len("$<plan.name>")
        else:
            out, i = out + value[i], i + 1
    return out


# -- the daemon (part 2): PLAN.yml and sources committed by the agent --------------------------

INPUTS = "inputs:\n  to: X\navailable_tools:"

#: slug -> the ``tag`` line (the recorder's argv[0]: what the tool got)
DAEMON_YML: dict[str, str] = {
    "d-esc-dollar": 'tag: "de-\\u0024<plan.name>"',
    "d-esc-lt": 'tag: "dl-$\\u003cplan.name>"',
    "d-esc-legacy": 'tag: "dg-\\u0024{plan.name}"',
    "d-esc-x24": 'tag: "dx-\\x24<plan.name>"',
    "d-esc-input": 'tag: "di-\\u0024<inputs.to>"',
    "d-dd": 'tag: "dd-$${plan.name}"',
    # controls
    "d-plain": 'tag: "dp-$<plan.name>"',
    "d-literal": 'tag: "dt-$$<plan.name>"',
    "d-legacy": 'tag: "dy-${plan.name}"',
    "d-single": "tag: 'ds-\\u0024<plan.name>'",
}

#: slug -> what the tool must get (the text a diff of the agent's commit shows as the tag),
#: or None: the plan must not run
DAEMON_EXPECT: dict[str, str | None] = {
    "d-esc-dollar": None,
    "d-esc-lt": None,
    "d-esc-legacy": None,
    "d-esc-x24": None,
    "d-esc-input": None,
    # `$` and the reference was the attacker's want; since the fix `$${` is refused
    # (E_REF_INVALID: two readings), so the plan must not run
    "d-dd": None,
    "d-plain": "dp-d-plain",
    "d-literal": "dt-$<plan.name>",
    "d-legacy": "dy-d-legacy",
    "d-single": "ds-\\u0024<plan.name>",
}

#: a source the daemon converts; slug -> (file name, text): each must not be converted
DAEMON_SRC: dict[str, tuple[str, str]] = {
    "d-toon-tab": (
        "PLAN.toon",
        _toon_params("      tag: dtt\n      argv[2\t]: rm -rf\t/tmp/cache\n"),
    ),
    "d-json-esc": ("PLAN.json", _ap('"x": "\\u0024<plan.name>"', tag="dje")),
    "d-md-esc": ("PLAN.md", md("dme").replace('"dme-ok"}', '"dme-ok", "x": "\\u0024<plan.name>"}')),
}
DAEMON_SRC_OK = {"d-json-ok": ("PLAN.json", _ap('"x": "$<plan.name>"', tag="djo"))}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs: list[tuple[str, tuple[str, str, str]]] = [*REFUSED.items(), *DOLLAR.items()]
    jobs += [(k, (v[0], v[1], v[2])) for k, v in CONVERTS.items()]

    def one(i: int) -> None:
        vid, (name, content, fmt) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = convert_source(lab, folder, name, content, fmt)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(one, range(len(jobs))))
    # part 2: the daemon
    for slug, line in DAEMON_YML.items():
        text = plan_text(slug).replace(f'      tag: "{slug}"\n', "      " + line + "\n")
        lab.write(slug, text.replace("available_tools:", INPUTS))
    for slug, (name, text) in {**DAEMON_SRC, **DAEMON_SRC_OK}.items():
        lab.put(f"plans/{slug}/{name}", text)
    agent = lab.commit("agent: plans")
    got["diff"] = lab.git("show", "--format=", agent)
    got["pass"] = lab.run(check=False).returncode
    got["shown"] = {}
    for slug in DAEMON_YML:  # a plan's problems are said on stderr
        shown = lab.cli("show", str(lab.repo / "plans" / slug / "PLAN.yml"))
        got["shown"][slug] = shown.stdout + shown.stderr
    got["files"] = {slug: lab.read(slug) for slug in DAEMON_YML}
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    for slug in DAEMON_YML:
        lab.approve(slug)
    if "plans/d-json-ok/PLAN.yml" in got["tree"]:
        approve_file(lab, "d-json-ok")
        lab.commit("approve d-json-ok", ALICE)
    got["pass2"] = lab.run(check=False).returncode
    got["rows"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    log = lab.log.read_text() if lab.log.exists() else ""
    got["argv"] = [json.loads(line)["argv"] for line in log.splitlines() if line.strip()]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r114-sources-atk114c", _build)


#: The four classes seen (docstring) were fixed the same day (2026-12-05, second session): a
#: raw TAB anywhere in a TOON source is refused at its line and column (toon-tab-delimiter,
#: and the TAB at an unquoted edge); a reference whose $, <, {, > or } (or a $ right before
#: it) is written as an escape is E_REF_INVALID in every format and PLAN.yml
#: (escaped-reference-syntax); `$${` before a legacy reference is E_REF_INVALID
#: (legacy-ref-after-dollar). Nothing is marked broken since.
BROKEN: dict[str, Any] = {}


def _p(plan: dict[str, Any]) -> dict[str, Any]:
    return (plan.get("actions") or [{}])[0].get("params") or {}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """What a diff shows otherwise than the converter reads it is refused: exit 1, an E_ code
    at its place (a line or a path), nothing converted, never an internal error."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is None, f"converted: {_p(got['plan'])}"
    assert got["rc"] == 1, got
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    assert re.search(r"\bE_[A-Z_]+", got["err"]), got["err"]
    assert re.search(r"(line \d+|:\d+:| at [a-z_]+[\[.])", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_written(lab: Lab, vid: str) -> None:
    """Written so a diff and the converter read it alike, it converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert _p(got["plan"]).get("x") == CONVERTS[vid][3], _p(got["plan"])


@pytest.mark.parametrize("vid", cases(list(DOLLAR), list(DOLLAR), BROKEN))
def test_dollar_before_legacy_reference(lab: Lab, vid: str) -> None:
    """``$${plan.name}`` converts to a value whose run-time text is one of the source's
    readings (`$` and the name, or the literal ``${plan.name}``), or is refused at its place;
    never the text ``$<plan.name>``, which the source never wrote."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    if got["plan"] is None:
        assert got["rc"] == 1 and re.search(r"\bE_REF_[A-Z]+", got["err"]), got
        return
    value = _p(got["plan"]).get("x")
    name = got["plan"]["plan"]["name"]
    root = "approval.approved_by" if "approval" in vid else "plan.name"
    assert isinstance(value, str), value
    runtime = _runtime_text(value, name)
    assert runtime != f"$<{root.replace('.approved_by', '.by')}>", (value, runtime)


_YML_RUN = [f"{s}:ran" for s in DAEMON_YML]


@pytest.mark.parametrize("vid", cases(_YML_RUN, list(DAEMON_YML), BROKEN))
def test_daemon_runs_what_the_diff_shows(lab: Lab, vid: str) -> None:
    """A PLAN.yml the agent committed, frozen and approved by Alice: the tool gets what the
    agent's commit shows (a reference written out resolves; text stays text), once; a value
    whose reference is spelled with an escape the diff shows as text does not run."""
    got = lab.got  # type: ignore[attr-defined]
    assert got["pass"] == 0 and got["pass2"] == 0, (got["pass"], got["pass2"])
    want = DAEMON_EXPECT[vid]
    prefix = DAEMON_YML[vid].split('"')[1].split("-")[0] if '"' in DAEMON_YML[vid] else "ds"
    ran = [a[0] for a in got["argv"] if a[0].startswith(prefix + "-")]
    row = got["rows"].get(f"plans/{vid}") or {}
    if want is None:
        assert ran == [], (ran, row.get("status"))
        said = (row.get("problem") or {}).get("code") or str(row.get("reason") or "")
        assert said.startswith("E_"), row  # a problem, or an invalid plan's coded reason
        return
    assert ran == [want], (ran, row.get("status"), row.get("problem"))
    assert row.get("status") == "completed", row


_SHOWN = [f"{s}:show-marked" for s in DAEMON_YML if DAEMON_EXPECT[s] is None]


@pytest.mark.parametrize("vid", cases(_SHOWN, [s.split(":")[0] for s in _SHOWN], BROKEN))
def test_show_marks_an_escaped_reference(lab: Lab, vid: str) -> None:
    """``plangate show`` (the reviewer's view) marks a reference however its source spelled it,
    or says the plan's problem."""
    got = lab.got  # type: ignore[attr-defined]
    shown = got["shown"][vid]
    assert "«$<" in shown or "E_" in shown, shown[-600:]


@pytest.mark.parametrize("vid", cases(["d-legacy:rewritten"], ["d-legacy"], BROKEN))
def test_freeze_writes_a_legacy_reference_out(lab: Lab, vid: str) -> None:
    """Control: the freeze writes ``${plan.name}`` as ``$<plan.name>`` into the file (what
    the approver then reads)."""
    assert 'tag: "dy-$<plan.name>"' in lab.got["files"][vid], lab.got["files"][vid]  # type: ignore[attr-defined]


_SRC = [f"{s}:not-converted" for s in DAEMON_SRC]


@pytest.mark.parametrize("vid", cases(_SRC, list(DAEMON_SRC), BROKEN))
def test_daemon_does_not_convert_a_hidden_source(lab: Lab, vid: str) -> None:
    """A PLAN.toon with a TAB delimiter, a PLAN.json or PLAN.md whose reference is an escape:
    no PLAN.yml committed, nothing ran, the row names a code."""
    got = lab.got  # type: ignore[attr-defined]
    assert f"plans/{vid}/PLAN.yml" not in got["tree"], got["tree"]
    row = got["rows"].get(f"plans/{vid}") or {}
    assert (row.get("problem") or {}).get("code", "").startswith("E_"), row
    tag = {"d-toon-tab": "dtt", "d-json-esc": "dje", "d-md-esc": "dme-ok"}[vid]
    assert not [a for a in got["argv"] if a[0] == tag], got["argv"]


@pytest.mark.parametrize("vid", cases(["d-json-ok:converted"], ["d-json-ok"], BROKEN))
def test_daemon_converts_a_plain_source(lab: Lab, vid: str) -> None:
    """Control: a PLAN.json with the reference written out converts and runs once."""
    got = lab.got  # type: ignore[attr-defined]
    assert f"plans/{vid}/PLAN.yml" in got["tree"], got["tree"]
    assert [a for a in got["argv"] if a[0] == "djo"] == [["djo"]], got["argv"]
