# ruff: noqa: E501
"""Round 109, sources (atk109c): what a reviewer reads in a plan SOURCE (markdown ``PLAN.md``
raw and as a forge renders it, Plan Contract, task/step JSON and TOON, ActionPlan) is exactly
the actions, order, params and dependencies that run, or the source is refused with a coded
error (docs/formats.md, "A source is read as git shows it"; round 108's fixes:
``common.numbered_in_place``, ``common.plain_id``, ``refs.legacy_uncarried``,
``markdown._comment``).

Lab (one, module scope; the bench's config, the recorder ``rec`` echoing its params). Part 1,
``plangate convert SRC`` (no config: the converter alone) of sources the test writes. Part 2,
the daemon: the agent commits ``plans/d-roman/PLAN.md`` (headings ``### Step II``,
``### Step I``, ``### Step III``, the third's params ``{"x": "${actions[1].result.json.echo.tag}"}``),
``plans/d-pi/PLAN.md`` (a ``Parameters`` value holding ``<?x ; rm -rf ~ ?>``) and
``plans/d-ok/PLAN.md`` (control: ``Step 1..3`` in order); one pass; Alice approves the three;
two passes.

Variants (``<variant>:<what>``):

- ``num-*``: two steps whose numbers are written in an order, then a third step reading
  ``${actions[1]...}``; the first written is numbered 2 (``Step II``, ``Step Two``,
  ``Step #2``, ``Step (2)``, ``Step-2``, ``Step_2``, ``### 2.``, ``Step ②``, ``Step ²``,
  ``Step Ⅱ``; Plan Contract ``step_id`` ``" 2"``, ``"２"``, ``"٢"``, ``"2.0"``, ``"#2"``,
  ``"Step 2"``; task/step ``id`` ``" 2"``): must be refused, or convert with the step
  numbered 1 as action 1; controls ``02``, ``２``, ``٢``, ``2a``, ``2.``, ``step``, ``STEP``,
  ``Step2``, ``Step 2 -``, ``Step 2/3`` (markdown), ``"02"`` (Plan Contract), ``"2"``
  (task/step), ActionPlan ``step_number`` ``true``/``1.0``/``"2"``, TOON integer ids;
- ``twin-*``: two markdown step ids a RENDERED view shows as one (``step_1`` and
  ``step\\_1``, ``step&#95;1``), a third step depending on the escaped one: must be refused
  (control: a code span `` `step_1` `` is refused as a twin);
- ``html-*``: inline raw HTML other than a comment in a markdown ``Parameters`` value or a
  shared input (a processing instruction ``<? ... ?>``, a declaration ``<!X ... >``, a CDATA
  section, an open tag with an attribute ``<x y='; rm -rf ~'>``): a forge's rendered view
  hides each, as it hides ``<!-- -->`` (CommonMark raw HTML; the HTML5 parser makes the first
  three bogus comments, and the sanitizer drops an unknown tag); must be refused as comments
  are (round 108);
- held controls: a setext heading or ``~~~``/four-backtick fence or a block quote among
  step records, legacy references that do not convert whole (nested, unterminated,
  ``${approval...>x}``, a newline), a legacy ``${inputs["to"]}`` (converts whole);
- daemon: ``d-roman:order`` (Step I must run before Step II, or nothing), ``d-roman:ref``
  (Step III's reference gets Step I's tag, or nothing runs), ``d-pi:runs`` (the tool never
  gets the text the rendered view hides), ``d-ok:runs`` (control).

Seen (round 109, 59 ids, ~6 s wall, 36 s under load): 3 classes broke (28 ids), 31 held.

1. **Step numbers spelled other than decimal digits are not read** (``step-number-spelling``):
   ``num-md-roman``, ``-word``, ``-hash``, ``-paren``, ``-dash``, ``-under``, ``-olist``,
   ``-circled``, ``-super``, ``-romanU``, ``num-pc-space``, ``-fullwidth``, ``-arabic``,
   ``-float``, ``-hash``, ``-stepword``, ``num-ts-space``, ``d-roman:order``,
   ``d-roman:ref``. ``plangate convert x.md`` with ``### Step II: A`` written before
   ``### Step I: B`` and a third step's ``{"x": "${actions[1].result.tag}"}`` converts in
   written order with no note: action 1 is A, the step headed ``Step II``, and the reference
   reads A. The daemon froze it and Alice's approval ran ``Step II`` first, handing its result
   to the reference a reader takes for ``Step I``'s. Same for ``Step Two``/``Step One``,
   ``Step #2``, ``Step (2)``, ``Step-2``, ``Step_2``, ``### 2. A``/``### 1. B``, ``Step ②``,
   ``Step ²``, ``Step Ⅱ``; a Plan Contract ``step_id`` ``" 2"``/``" 1"``, ``"２"``, ``"٢"``
   (markdown refuses ``### Step ２`` and ``### Step ٢``), ``"2.0"``, ``"#2"``, ``"Step 2"``; a
   task/step ``"id": " 2"``. Should: read any step heading/id that carries a number (in
   any digits, ordinal words, roman numerals, ``#N``/``(N)``/``N.``) by the round-108 rule,
   or refuse a heading that is not ``### Step N:`` in ASCII digits.
2. **Markdown escapes and entities in step ids** (``md-rendered-id``): ``twin-esc:needs``,
   ``twin-ent:needs``. Steps ``- **ID**: step_1`` and ``- **ID**: step\\_1``, a third with
   ``- **Dependencies**: [step\\_1]``, convert with the third ``needs: [2]``; a forge renders
   both ids and the dependency as ``step_1``, so the rendered view shows a dependency on the
   first step (``step&#95;1`` the same). Should: refuse a backslash escape or character
   reference in an id or dependency (as a code span is unwrapped and a twin refused).
3. **Inline raw HTML other than a comment in markdown values** (``md-inline-html``):
   ``html-pi:param``, ``html-decl:param``, ``html-cdata:param``, ``html-tag:param``,
   ``html-pi:input``, ``html-decl:input``, ``d-pi:runs``. ``- **Parameters**: {"tag": "A",
   "cmd": "ls <? ; rm -rf ~ ?>"}`` converts and the daemon ran ``rec`` with it; a forge's
   rendered view shows ``"cmd": "ls "``. ``- to: ok@example.com<? , evil@example.net ?>``
   the same for a shared input. Should: refuse inline raw HTML (CommonMark's open/closing
   tags, ``<?``, ``<!X``, ``<![CDATA[``) in a markdown value outside code, as ``<!--`` is.

Held: every other id.

Fixed the same day (fix109c, r109sources; the module had been parked uncollected in
``tests/adversarial/pending/``, found after the session's last CI run): the 28 ids pass, no
mark left. 1: a markdown step heading is ``### Step N:``, N its place in the digits 0-9
(``common.STEP_HEADING``), or it is refused ``E_CONVERT_UNSUPPORTED`` at its line, whatever
else it says (``Step II``, ``Step ２``, ``### 2.``, ``### Fetch``); a step id of every format
is a number in the digits 0-9 (its place) or a name holding a letter, no white space and no
number character beside 0-9, or it is ``E_SCHEMA_INVALID`` (``common.numbered_id``). 2: a
backslash escape or character reference in a markdown id, dependency, task step list or
shared input name is ``E_CONVERT_UNSUPPORTED`` (``markdown._rendered_as_written``). 3: raw
HTML CommonMark recognises outside a code span and a fenced block (a tag's start, ``<?``,
``<!X``, ``<![CDATA[``; ``<!--`` anywhere outside a fence, as before) is
``E_CONVERT_UNSUPPORTED`` at its line (``markdown._html_in``). The controls keep their
expectations: each ``num-*`` control is refused (out of order) or read by its number, as
before; ``Step 1.``/``Step 2 -``/``Step 2/3``/``Step2`` in order convert.

Suspected, not asserted: a Plan Contract or task/step id ``"step-2"`` before ``"step-1"``
(and ``"s2"``, ``"II"``, TOON ``step-2``) converts in written order under a third step's
``${actions[1]...}``; ``$${inputs.to}`` converts to ``$$<inputs.to>`` (the tool gets the text
``$<inputs.to>``, neither the shell reading ``${inputs.to}`` nor the input's value); a
character reference in a ``Parameters`` value (``ls &#x3B; rm``) renders as ``;`` and reaches
the tool as ``&#x3B;``.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases, load_yaml
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

XREF = ', "x": "${actions[1].result.tag}"'


def _j(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)


def _step(head: str, sid: str, tag: str, deps: str = "[]", extra: str = "") -> str:
    return (
        f"\n### {head} S{tag}\n- **ID**: {sid}\n- **Task**: task_1\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "{tag}"{extra}}}\n- **Timeout**: 30s\n'
        f"- **Dependencies**: {deps}\n"
    )


def mdplan(steps: list[str], ids: list[str], parallel: bool = False) -> str:
    base = md("b")
    head = base.split("## Steps")[0].replace(
        "- **Steps**: step_1", "- **Steps**: " + ", ".join(ids)
    )
    tail = "\n## Shared Inputs" + base.split("## Shared Inputs")[1]
    text = head + "## Steps\n" + "".join(steps) + tail
    return (
        text.replace("Parallel Execution: false", "Parallel Execution: true") if parallel else text
    )


def swapped(h2: str, h1: str, h3: str = "Step 3:", ref: str = XREF, tags: str = "ABC") -> str:
    """Three markdown steps headed ``h2``, ``h1``, ``h3``; the third reads ``actions[1]``."""
    a, b, c = tags
    return mdplan(
        [
            _step(h2, "step_2", a),
            _step(h1, "step_1", b),
            _step(h3, "step_3", c, extra=ref),
        ],
        ["step_2", "step_1", "step_3"],
    )


def pc(ids: tuple[str, str]) -> str:
    steps = [
        {"step_id": ids[0], "tool": "rec", "args": {"tag": "A"}},
        {"step_id": ids[1], "tool": "rec", "args": {"tag": "B"}},
        {"step_id": "3", "tool": "rec", "args": {"tag": "C", "x": "${actions[1].result.tag}"}},
    ]
    return _j({"plan_version": 1, "skill_id": "s", "goal": "g", "steps": steps})


def ts(ids: tuple[str, str, str]) -> str:
    steps = [
        {"id": i, "task_id": "task_1", "action": "rec", "parameters": {"tag": t}}
        for i, t in zip(ids, "ABC", strict=True)
    ]
    steps[2]["parameters"]["x"] = "${actions[1].result.tag}"
    return _j(
        {
            "metadata": {"title": "T", "objective": "O"},
            "tasks": [{"id": "task_1", "name": "N", "steps": list(ids)}],
            "steps": steps,
            "shared_inputs": {},
            "workflow_config": {"parallel_execution": True, "error_recovery": False},
        }
    )


def ap(nums: list[Any]) -> str:
    steps = [
        {
            "step_number": n,
            "step_id": f"s{i}",
            "action": {"type": "custom", "action_type": "rec", "payload": {"tag": t}},
            "description": "d",
        }
        for i, (n, t) in enumerate(zip(nums, "AB", strict=True))
    ]
    return _j({"plan_version": 1, "title": "t", "steps": steps})


def toon_ints() -> str:
    text = "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\nsteps[3]:\n"
    for i, t in (("2", "A"), ("1", "B"), ("3", "C")):
        text += (
            f"  - id: {i}\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: {t}\n"
        )
    text = text.replace("tag: C\n", 'tag: C\n      x: "${actions[1].result.tag}"\n')
    return (
        text
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: true\n  error_recovery: false\n"
    )


TWO = mdplan(
    [_step("Step 1:", "step_1", "A"), _step("Step 2:", "step_2", "B")], ["step_1", "step_2"]
)


def _two(old: str, new: str) -> str:
    assert old in TWO, old
    return TWO.replace(old, new)


def twin(hidden: str) -> str:
    return mdplan(
        [
            _step("Step 1:", "step_1", "A"),
            _step("Step 2:", hidden, "B"),
            _step("Step 3:", "step_3", "C", deps=f"[{hidden}]"),
        ],
        ["step_1", hidden, "step_3"],
        parallel=True,
    )


def _param(extra: str) -> str:
    return _two('{"tag": "A"}', '{"tag": "A", ' + extra + "}")


#: id -> (file name, source, --from): refused with an E_ code, or (``num-*``) converted with
#: the step numbered 1 as action 1 (tag ``B``)
NUMBERED: dict[str, tuple[str, str, str]] = {
    # breaks: markdown headings
    "num-md-roman:order": ("n.md", swapped("Step II:", "Step I:", "Step III:"), ""),
    "num-md-word:order": ("n.md", swapped("Step Two:", "Step One:", "Step Three:"), ""),
    "num-md-hash:order": ("n.md", swapped("Step #2:", "Step #1:", "Step #3:"), ""),
    "num-md-paren:order": ("n.md", swapped("Step (2):", "Step (1):", "Step (3):"), ""),
    "num-md-dash:order": ("n.md", swapped("Step-2:", "Step-1:", "Step-3:"), ""),
    "num-md-under:order": ("n.md", swapped("Step_2:", "Step_1:", "Step_3:"), ""),
    "num-md-olist:order": ("n.md", swapped("2.", "1.", "3."), ""),
    "num-md-circled:order": ("n.md", swapped("Step \u2461:", "Step \u2460:", "Step \u2462:"), ""),
    "num-md-super:order": ("n.md", swapped("Step \u00b2:", "Step \u00b9:", "Step \u00b3:"), ""),
    "num-md-romanU:order": ("n.md", swapped("Step \u2161:", "Step \u2160:", "Step \u2162:"), ""),
    # breaks: Plan Contract / task-step ids that carry a number
    "num-pc-space:order": ("n.json", pc((" 2", " 1")), ""),
    "num-pc-fullwidth:order": ("n.json", pc(("\uff12", "\uff11")), ""),
    "num-pc-arabic:order": ("n.json", pc(("\u0662", "\u0661")), ""),
    "num-pc-float:order": ("n.json", pc(("2.0", "1.0")), ""),
    "num-pc-hash:order": ("n.json", pc(("#2", "#1")), ""),
    "num-pc-stepword:order": ("n.json", pc(("Step 2", "Step 1")), ""),
    "num-ts-space:order": ("n.json", ts((" 2", " 1", " 3")), ""),
    # held
    "num-md-zero:order": ("n.md", swapped("Step 02:", "Step 01:", "Step 03:"), ""),
    "num-md-fullwidth:order": ("n.md", swapped("Step \uff12:", "Step \uff11:", "Step \uff13:"), ""),
    "num-md-arabic:order": ("n.md", swapped("Step \u0662:", "Step \u0661:", "Step \u0663:"), ""),
    "num-md-suffix:order": ("n.md", swapped("Step 2a:", "Step 1a:", "Step 3a:"), ""),
    "num-md-dot:order": ("n.md", swapped("Step 2.", "Step 1.", "Step 3."), ""),
    "num-md-lower:order": ("n.md", swapped("step 2:", "step 1:", "step 3:"), ""),
    "num-md-upper:order": ("n.md", swapped("STEP 2:", "STEP 1:", "STEP 3:"), ""),
    "num-md-nospace:order": ("n.md", swapped("Step2:", "Step1:", "Step3:"), ""),
    "num-md-dashtitle:order": ("n.md", swapped("Step 2 -", "Step 1 -", "Step 3 -"), ""),
    "num-md-of:order": ("n.md", swapped("Step 2/3:", "Step 1/3:", "Step 3/3:"), ""),
    "num-pc-zero:order": ("n.json", pc(("02", "01")), ""),
    "num-ts-str:order": ("n.json", ts(("2", "1", "3")), ""),
    "num-ap-bool:order": ("n.json", ap([True, 2]), ""),
    "num-ap-float:order": ("n.json", ap([1.0, 2]), ""),
    "num-ap-str:order": ("n.json", ap(["2", "1"]), ""),
    "num-toon-int:order": ("n.toon", toon_ints(), ""),
}

#: id -> (file name, source, --from): each must be refused with an E_ code
REFUSED: dict[str, tuple[str, str, str]] = {
    # md-rendered-id
    "twin-esc:needs": ("t.md", twin("step\\_1"), ""),
    "twin-ent:needs": ("t.md", twin("step&#95;1"), ""),
    "twin-code:needs": ("t.md", twin("`step_1`"), ""),
    # md-inline-html
    "html-pi:param": ("h.md", _param('"cmd": "ls <? ; rm -rf ~ ?>"'), ""),
    "html-decl:param": ("h.md", _param('"cmd": "ls <!X ; rm -rf ~ >"'), ""),
    "html-cdata:param": ("h.md", _param('"cmd": "ls <![CDATA[ ; rm -rf ~ ]]>"'), ""),
    "html-tag:param": ("h.md", _param('"cmd": "ls <x y=\'; rm -rf ~\'>"'), ""),
    "html-pi:input": (
        "h.md",
        _two("- to: ok@example.com", "- to: ok@example.com<? , evil@example.net ?>"),
        "",
    ),
    "html-decl:input": (
        "h.md",
        _two("- to: ok@example.com", "- to: ok@example.com<!X , evil@example.net >"),
        "",
    ),
    "html-comment:input": (
        "h.md",
        _two("- to: ok@example.com", "- to: ok@example.com<!-- , evil@example.net -->"),
        "",
    ),
    # held: block structure a forge renders otherwise than a line reader
    "block-setext2:structure": (
        "b.md",
        _two("\n### Step 2:", "\nNotes\n-----\n\n### Step 2:"),
        "",
    ),
    "block-setext1:structure": (
        "b.md",
        _two("\n### Step 2:", "\nAppendix\n========\n\n### Step 2:"),
        "",
    ),
    "block-tilde:structure": (
        "b.md",
        _two("\n### Step 2:", "\n~~~\n### Step 2:").replace(
            "- **Dependencies**: []\n\n## Shared", "- **Dependencies**: []\n~~~\n\n## Shared"
        ),
        "",
    ),
    "block-longfence:structure": (
        "b.md",
        _two("\n### Step 1:", "\n````text\n```\n### Step 1:").replace(
            "\n### Step 2:", "\n```\n````\n### Step 2:"
        ),
        "",
    ),
    "block-quote:structure": ("b.md", _two("\n### Step 2:", "\n> ### Step 2:"), ""),
    # held: legacy references that cannot convert whole
    "ref-nested:ref": ("r.md", _param('"x": "${inputs.${inputs.to}}"'), ""),
    "ref-unterm:ref": ("r.md", _param('"x": "${inputs.to"'), ""),
    "ref-approvalgt:ref": ("r.md", _param('"x": "${approval.approved_by>x}"'), ""),
    "ref-newline:ref": ("r.md", _param('"x": "${inputs.to\\n}"'), ""),
}

#: id -> (file name, source, check of the converted plan): converts, as read
CONVERTS: dict[str, tuple[str, str, Any]] = {
    # round 110 (fix110s): a JSON `\"` is a markdown backslash escape (a forge shows `"`),
    # refused in a markdown value; the reference is written with `\u0022`, as the remedy says
    "ref-bracket:ref": (
        "c1.md",
        _param('"x": "${inputs[\\u0022to\\u0022]}"'),
        lambda p: p["actions"][0]["params"]["x"] == '$<inputs["to"]>',
    ),
    "num-md-inorder:ref": (
        "c2.md",
        swapped("Step 1:", "Step 2:", "Step 3:", tags="BAC"),
        lambda p: (
            [a["params"]["tag"] for a in p["actions"]] == ["B", "A", "C"]
            and p["actions"][2]["params"]["x"] == "$<actions[1].result.tag>"
        ),
    ),
    "twin-apart:needs": (
        "c3.md",
        twin("step_9"),
        lambda p: [a.get("needs") for a in p["actions"]] == [[], [], [2]],
    ),
}

DREF = ', "x": "${actions[1].result.json.echo.tag}"'
DAEMON = {
    "d-roman": swapped("Step II:", "Step I:", "Step III:", ref=DREF, tags=("rA", "rB", "rC")),  # type: ignore[arg-type]
    "d-pi": _param('"cmd": "ls <? ; rm -rf ~ ?>"')
    .replace('"tag": "A"', '"tag": "pA"')
    .replace('"tag": "B"', '"tag": "pB"'),
    "d-ok": swapped("Step 1:", "Step 2:", "Step 3:", ref=DREF, tags=("oA", "oB", "oC")),  # type: ignore[arg-type]
}


def _convert(lab: Lab, folder: Path, name: str, content: str, fmt: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8"))
    told = ["--from", fmt] if fmt else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-1500:], "plan": None}
    if done.returncode == 0 and done.stdout.strip():
        got["plan"] = load_yaml(done.stdout)
        got["text"] = done.stdout[-1500:]
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = [
        *NUMBERED.items(),
        *REFUSED.items(),
        *((k, (v[0], v[1], "")) for k, v in CONVERTS.items()),
    ]

    def one(i: int) -> None:
        vid, (name, content, fmt) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = _convert(lab, folder, name, content, fmt)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(one, range(len(jobs))))
    for slug, text in DAEMON.items():
        lab.write(slug, text, "PLAN.md")
    lab.commit("agent: plans")
    lab.run()
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    for slug in DAEMON:
        try:
            approve_file(lab, slug)
        except (AssertionError, OSError, BenchError) as why:
            got.setdefault("approve_err", {})[slug] = str(why)[:300]
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    log = lab.log.read_text() if lab.log.exists() else ""
    got["order"] = [json.loads(line)["argv"][0] for line in log.split("\n") if line.strip()]
    got["stdin"] = {t: [json.loads(c["stdin"]) for c in lab.calls(t)] for t in ("rC", "pA", "oC")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r109-sources-atk109c", _build)


#: Fixed the same day (fix109c): the three classes (28 ids) of the docstring.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(NUMBERED), list(NUMBERED), BROKEN))
def test_step_number_read(lab: Lab, vid: str) -> None:
    """A step's number is its place: refused when written out of order, never action 1 under
    number 2 (the step written second, tag ``B``, is the one numbered 1)."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    if got["plan"] is None:
        assert got["rc"] != 0 and re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]
        return
    tags = [a["params"]["tag"] for a in got["plan"]["actions"]]
    assert tags[0] == "B", f"converted in written order {tags}: {got['text']}"


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """The source reads two ways (raw and rendered, or a reference cut): refused with a code."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got.get('text')}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_read(lab: Lab, vid: str) -> None:
    """Written as a reader expects, the source converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert CONVERTS[vid][2](got["plan"]), got["text"]


@pytest.mark.parametrize("vid", cases(["d-roman:order"], ["d-roman:order"], BROKEN))
def test_daemon_step_order(lab: Lab, vid: str) -> None:
    """The step headed ``Step I`` runs before the step headed ``Step II``, or nothing runs."""
    order = [t for t in lab.got["order"] if t in ("rA", "rB")]  # type: ignore[attr-defined]
    assert not order or order.index("rB") < order.index("rA"), (order, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-roman:ref"], ["d-roman:ref"], BROKEN))
def test_daemon_step_ref(lab: Lab, vid: str) -> None:
    """``${actions[1]...}`` beside a ``### Step I`` gets that step's tag, or nothing runs."""
    calls = lab.got["stdin"]["rC"]  # type: ignore[attr-defined]
    assert all(c.get("x") == "rB" for c in calls), calls


@pytest.mark.parametrize("vid", cases(["d-pi:runs"], ["d-pi:runs"], BROKEN))
def test_daemon_hidden_html(lab: Lab, vid: str) -> None:
    """The tool never gets text a forge's rendered view of the PLAN.md hides."""
    calls = lab.got["stdin"]["pA"]  # type: ignore[attr-defined]
    assert not any("rm -rf" in str(c) for c in calls), (calls, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-ok:runs"], ["d-ok:runs"], BROKEN))
def test_daemon_in_order(lab: Lab, vid: str) -> None:
    """Control: in order, Alice's approval runs the three steps, the reference reads step 1."""
    g = lab.got  # type: ignore[attr-defined]
    assert [t for t in g["order"] if t.startswith("o")] == ["oA", "oB", "oC"], (
        g["order"],
        g["rows2"],
    )
    assert g["stdin"]["oC"] == [{"tag": "oC", "x": "oA"}], g["stdin"]["oC"]
