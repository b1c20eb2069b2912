# ruff: noqa: E501
r"""Round 117, sources (atk117c): what a reviewer reads of a plan source (its diff, its forge
rendering, the frozen PLAN.yml, MCP ``validate``) is exactly what runs and is hashed; nothing
a source says is dropped silently; a bad source is refused with its code, place and remedy.

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config: the converter alone) of one source per id: the markdown plan with
CommonMark constructs a forge renders as structure (setext headings, ``####`` and indented
step headings, ``*``/``+``/``1.`` bullets, ``__bold__`` fields, nested and lazy lines,
blockquotes, tables, TAB-indented bullets, hard breaks, link reference definitions, closing
``#``s), Plan Contract JSON with a BOM, in UTF-16 and Latin-1, with comments, two documents,
numbers at the canonical edge, references in keys and nested arrays; TOON with ``#`` lines,
dotted keys, declared counts, duplicate keys, delimiters, odd indentation. Part 2, one
``plangate mcp`` session validating four of the same texts. Part 3, the daemon: the agent
commits four ``PLAN.md`` (a setext ``Shared Inputs`` section in the objective; a
``~old~new`` param; ``Retry Count`` and ``Error Recovery`` lines indented as code; a
control) and a ``PLAN.toon`` whose params hold a ``#x`` line; one ``run --once``; Alice
approves what converted; a second pass.

Seen (round 117, 133 ids, ~10-17 s wall on a shared box): 8 classes broke (45 ids, strict
xfails), 88 held. The worst: **md-indented-code-read-as-field** and
**md-single-tilde-strikethrough** (an approved plan ran with what a forge shows as code or
as struck-out text), **md-setext-heading-not-a-section** (an approved plan ran with the
second of two ``Shared Inputs`` sections a forge shows).

1. **md-setext-heading-not-a-section** (6): ``setext-{obj-inputs,obj-wf,obj-objective,
   notes-inputs}:refused``, ``mcp-setext:refused``, ``d-setext:refused``. A setext heading
   (``Shared Inputs`` over a ``---`` line) is an h2 to CommonMark and to every forge; the
   converter reads it as text of the section it stands in. ``## Objective`` holding
   ``Shared Inputs\n-------------\n- to: evil@x.example`` converts with exit 0: the forge
   shows two "Shared Inputs" sections, the first (at the top) saying ``to:
   evil@x.example``, and the plan takes ``ok@example.com`` from the second, with the first
   glued into ``plan.task``. ``Workflow Config\n---\n- Error Recovery: true`` there
   likewise (the plan runs without retries), ``Objective\n---`` a second objective, and
   ``Shared Inputs\n===`` under ``## Notes``. docs/formats.md: "a markdown heading is read as
   CommonMark reads one" and "a markdown section said twice ... is E_SCHEMA_INVALID at its
   second heading ... never the last one kept and the first, which a reviewer reads at the
   top, dropped". (A setext ``Steps``/``Tasks`` elsewhere is refused through its records:
   held.) Reproduce: in examples' markdown plan put ``\nShared Inputs\n-------------\n- to:
   evil@x.example\n`` after the objective's text; ``plangate convert`` it.
2. **md-linkdef-in-descriptive-text** (4): ``linkdef-{obj,obj-reflink,obj-multiline}:shown``,
   ``mcp-linkdef:shown``. A link reference definition (``[r]: /u 'delete all'``) in
   ``## Objective`` renders as nothing on a forge; the converter puts it into ``plan.task``
   (hashed, shown by ``show``) as ``r: /u 'delete all'``, brackets dropped, the hidden title
   and destination kept. docs/formats.md: descriptive text "converts to the text a forge
   shows for it ... a link's destination and title dropped", "never the link's hidden
   title". (Under ``## Notes`` it lands in ``metadata.source.sections`` the same way: not
   hashed, not asserted.)
3. **toon-hash-line-dropped** (6): ``toon-hash-{key,key-space,row,list,step}:kept``,
   ``d-toonhash:kept``. A TOON line whose first non-blank character is ``#`` is skipped by
   the TOON library (its "comment" rule; the TOON spec has no comments, and ``#dry_run`` is
   no valid unquoted key): ``#dry_run: false`` in ``parameters`` vanishes; in a tabular
   array ``h[2]{n,p}:`` over ``#web,80``, ``db,5432``, ``x,1`` the first row vanishes and the
   declared count is met by the other two; ``l[2]:`` over ``- x``, ``#- y``, ``- z`` is
   ``["x", "z"]``. Exit 0, no note. The daemon converted a ``PLAN.toon`` holding ``#x: keep``
   and ran it without ``x``. A judgement: a reviewer fluent in YAML reads ``#`` as a comment;
   one reading the TOON spec reads a key, or an error. Round 116 noted it, unasserted.
4. **non-utf8-source-usage-error** (3): ``enc-{utf16-bom,latin1,md-utf16}:coded``. A source
   that is not UTF-8 is ``E_USAGE`` (not a §10 code) with exit 2 (usage or configuration),
   "not UTF-8 (byte 0)", where the same bytes without a BOM (UTF-16LE) are
   ``E_CONVERT_UNSUPPORTED`` exit 1 at line and column, and PLAN.yml's answer is
   ``E_YAML_PARSE`` exit 1 (docs/errors.md). A judgement: the code and the exit.

5. **md-heading-title-overridden** (3): ``md-{step-title,task-name}-twice:refused``,
   ``mcp-title:refused``. ``### Step 1: Record ok`` with a ``- **Title**: Delete all``
   bullet converts with the ``why`` ``Record: Delete all``; ``### Task 1: Record`` with
   ``- **Name**: Wipe`` prefixes every step's ``why`` with ``Wipe``. Exit 0, no note; the
   forge's heading says the other. docs/formats.md: "A step's heading title is its ``why``",
   "Every field is said once" (a bullet said twice is refused at its second line; so are
   ``Retry Count`` with ``Retries`` and ``Task`` with ``Task ID``: held).
6. **md-single-tilde-strikethrough** (9): ``tilde-{params,input,id,objective,why,action,
   task-steps}:refused``,
   ``mcp-tilde:refused``, ``d-tilde:refused``. GFM strikes text between ONE or two tildes
   (GFM spec 0.29, 6.5, example 491: ``~there~`` is ``<del>there</del>``); the converter
   refuses ``~~x~~`` (held, round 110) and reads ``~x~`` as text: ``{"path": "~old~new"}``
   (a forge shows ``{"path": "oldnew"}`` with ``old`` struck) reached the tool as
   ``~old~new`` after Alice approved; ``- **ID**: ~step_1~`` converts (round 110 refuses a
   struck id); ``- **Action**: ~rec~`` converts to the tool ``_rec_`` (renamed, noted);
   ``Record ~no~ tag`` in the objective and a step title convert with their
   tildes (descriptive text: "Strikethrough ... E_CONVERT_UNSUPPORTED at their line").
   ``~/a ~/b`` (no tilde can close) converts, ``[~step_1~]`` as a dependency is refused
   (no such step; at its path, no line): held.
7. **md-indented-code-read-as-field** (8): ``icode-{timeout,deps,wf,tab-wf,input,
   input-extra}:refused``, ``mcp-icode:refused``, ``d-icode:refused``. A bullet indented
   four spaces (or a TAB) right after a heading or a blank line is an indented code block
   to CommonMark: a forge shows ``- **Timeout**: 999s`` as code. The converter reads it as
   the field: the step's timeout is 999; ``    - Error Recovery: true`` under ``## Workflow
   Config`` and ``    - **Retry Count**: 2`` under the step heading make the action
   ``on_failure: retry, retry: {attempts: 2}`` (the daemon froze and ran it); ``    - to:
   evil@x.example`` is the input. A ```` ```json ```` block in the same place is refused
   "expected ``- **Field**: value``" (held), as is a code block before the first step
   (``icode-steps-head``: held). Reproduce: in the examples' markdown plan replace ``##
   Workflow Config\n`` by ``## Workflow Config\n\n    - Error Recovery: true\n\n`` and
   drop ``- Error Recovery: false``; ``plangate convert`` it.

8. **md-section-name-rendered-alike** (6): ``wf-{emph,strong,code,entity,link}:read-or-refused``,
   ``obj-emph:read-or-refused``. ``## *Workflow Config*`` (``**...**``, a code span, a
   link around the name, ``Workflow&#32;Config``) over ``- Error Recovery: true`` renders
   as the Workflow Config section; the converter keeps it as another section in
   ``metadata.source.sections`` (not hashed) and the plan has no retry, exit 0, no note.
   ``## *Objective*`` makes ``plan.task`` the title. Round 105 refuses a heading holding an
   invisible character, round 116 a record under a homoglyph of ``## Steps``; a heading
   whose RENDERED name is a section's is neither. (``## *Shared Inputs*`` with a param
   reading ``$<inputs.to>`` is refused ``E_REF_UNKNOWN``: held; without one, the inputs
   silently leave the plan, unasserted.) Fixed (fix117m): a ``##`` heading is the section
   its rendered name says, so ``inputs-emph-ref`` now expects the inputs read as the forge
   shows them (the E_REF_UNKNOWN it held came from the section being dropped).

Held: ``####`` step headings, indented ``### Step``, setext ``Steps``/``Tasks``/``Shared
Inputs``/``Workflow Config`` replacing the ATX headings, ``+``/``1.`` bullets, ``__bold__``
fields, blockquoted bullets and steps, tables, lazy and indented continuation lines, a
backslash hard break, link definitions in ``## Steps`` and under the title: refused at their
line; ``*`` bullets and a TAB-indented bullet read as the field the forge shows; nested
bullets read as fields (a nested bullet said again refused "said twice"); closing ``#``s
stripped as CommonMark does and an escaped one kept; BOM and CRLF markdown read as the text;
JSON comments, trailing commas, two documents refused; 2^53 refused, ``1e16``, ``-0``,
``1.0`` as PLAN.yml reads them; references in keys refused (params and inputs), in nested
arrays kept and validated; raw U+2028 in a JSON string kept and written escaped; TOON
declared counts, duplicate keys, odd indentation refused; dotted keys kept literal
(``a.b`` beside ``a: {b:}``: two keys, no path expansion); ``"false"`` stays a string.

Suspected, not asserted: ``- **Timeout:** 30s`` (the colon inside the bold, a common style)
is refused "unknown field '**timeout'" with the field list naming ``timeout``: safe, the
cause misnamed. GitHub-only renderings no CommonMark/GFM reader knows: an emoji
shortcode in a value (``{"mode": ":x:"}`` shows a red cross on github.com, converts as
``:x:``) and ``$...$`` math (``"$HOME$"``); a footnote ``[^1]`` in the objective stays in
``plan.task`` with its definition; ``convert``'s text output for a converted plan that does
not validate (``PLAN.yml:15: E_REF_INVALID ...``) names the line of the PLAN.yml it printed
(not the source's) and no ``remedy:`` line (``--json`` carries the remedy). Nested ``## Shared Inputs`` bullets (``- to: a`` over ``  - cc: b``)
flatten into two sibling inputs where a forge shows ``cc`` under ``to``; a blockquote, a
rule (``***``) or a setext underline in ``## Objective`` keeps its markers in ``plan.task``
(``> quoted``, ``---``) where a forge renders structure.

Not tried: MCP ``submit``, ``plangate check``, the agent-plan and actionplan shapes beyond
JSON encoding, remote mode.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, load_yaml
from mcpkit import answers
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
INPUT = "- to: ok@example.com\n"
OBJ = "Record a tag\n"
STEP2 = (
    "### Step 2: Delete\n- **ID**: step_2\n- **Task**: task_1\n- **Action**: rec\n"
    '- **Parameters**: {"tag": "DANGER"}\n- **Timeout**: 30s\n- **Dependencies**: []\n'
)
END1 = "- **Dependencies**: []\n\n## Shared Inputs"
WF = "## Workflow Config\n- Parallel Execution: false\n- Error Recovery: false\n"
assert PARAMS in MD and INPUT in MD and OBJ in MD and END1 in MD and WF in MD


def _after1(block: str) -> str:
    """The markdown plan with ``block`` in ``## Steps`` after step 1's last bullet."""
    return MD.replace(END1, "- **Dependencies**: []\n" + block + "\n## Shared Inputs")


def _obj(block: str) -> str:
    return MD.replace(OBJ, OBJ + block)


PC = '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", "tool": "rec", "args": ARGS}]}'


def _pc(args: str) -> str:
    return PC.replace("ARGS", args)


TOON_HEAD = "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
TOON_TAIL = (
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)


def _tp(body: str) -> str:
    return (
        TOON_HEAD
        + "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + body
        + TOON_TAIL
    )


REFUSED = ("refused", "E_", r".")
LOCATED = r"(line \d+|:\d+:| at [a-z_]+[\[.:])"

#: id -> (file name, source text or bytes, expectation). Expectations:
#: ("refused", code-regex, text-regex): exit 1, the code, the text, at a place, no traceback;
#: ("param", key, value): converted, params[key] == value (and nothing else added: ``only``);
#: ("params", dict): converted, params exactly that; ("inputs", dict): inputs exactly that;
#: ("task", text): converted, plan.task exactly the text a forge shows;
#: ("coded", ...): exit 1 with a §10 code at a place.
CONVERT: dict[str, tuple[str, str | bytes, tuple[Any, ...]]] = {
    # md-setext-heading-not-a-section
    "setext-obj-inputs:refused": (
        "p.md",
        _obj("\nShared Inputs\n-------------\n- to: evil@x.example\n"),
        ("refused", "E_", r"(?i)(twice|section|heading)"),
    ),
    "setext-obj-wf:refused": (
        "p.md",
        _obj("\nWorkflow Config\n---------------\n- Error Recovery: true\n"),
        ("refused", "E_", r"(?i)(twice|section|heading)"),
    ),
    "setext-obj-objective:refused": (
        "p.md",
        _obj("\nObjective\n---------\nDelete everything\n"),
        ("refused", "E_", r"(?i)(twice|section|heading)"),
    ),
    "setext-notes-inputs:refused": (
        "p.md",
        MD + "\n## Notes\nsee\n\nShared Inputs\n=============\n- to: evil@x.example\n",
        ("refused", "E_", r"(?i)(twice|section|heading)"),
    ),
    # held: setext headings that stand where an ATX one is read, or hold records
    "setext-steps:refused": ("p.md", MD.replace("## Steps\n", "Steps\n-----\n"), REFUSED),
    "setext-tasks:refused": ("p.md", MD.replace("## Tasks\n", "Tasks\n=====\n"), REFUSED),
    "setext-inputs:refused": (
        "p.md",
        MD.replace("## Shared Inputs\n", "Shared Inputs\n-------------\n"),
        REFUSED,
    ),
    "setext-wf:refused": (
        "p.md",
        MD.replace("## Workflow Config\n", "Workflow Config\n---------------\n"),
        REFUSED,
    ),
    "setext-step2:refused": (
        "p.md",
        _after1("\nStep 2: Delete\n--------------\n" + STEP2.split("\n", 1)[1]),
        REFUSED,
    ),
    "setext-notes-in-steps:refused": ("p.md", _after1("\nNotes\n-----\n\n" + STEP2), REFUSED),
    "setext-obj-steps:refused": (
        "p.md",
        _obj("\nSteps\n-----\n" + STEP2),
        ("refused", "E_CONVERT_UNSUPPORTED", r"record under"),
    ),
    "setext-notes-steps:refused": (
        "p.md",
        MD + "\n## Notes\nsee below\n\nSteps\n=====\n\n" + STEP2,
        ("refused", "E_CONVERT_UNSUPPORTED", r"record under"),
    ),
    "setext-title:refused": (
        "p.md",
        MD.replace("# Record plan\n", "Record plan\n===========\n"),
        ("refused-file", "E_PARSE_NONJSON", r"markdown"),
    ),
    # held: other step headings and bullets
    "h4-step:refused": ("p.md", _after1("\n#" + STEP2), REFUSED),
    "indented-h3:refused": ("p.md", _after1("\n   " + STEP2), REFUSED),
    "h1-in-steps:refused": ("p.md", _after1("\n# Other\n\n" + STEP2), REFUSED),
    "plus-bullet:refused": (
        "p.md",
        _after1("\n" + STEP2.replace("- **Dependencies**: []", "+ **Dependencies**: [step_1]")),
        REFUSED,
    ),
    "ordered-bullet:refused": (
        "p.md",
        MD.replace(PARAMS, '1. **Parameters**: {"tag": "ol"}\n'),
        REFUSED,
    ),
    "underscore-bold:refused": (
        "p.md",
        MD.replace(PARAMS, '- __Parameters__: {"tag": "us"}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"unknown field"),
    ),
    "both-bold:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + '- __Parameters__: {"tag": "us"}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"unknown field"),
    ),
    "star-bullet:read": (
        "p.md",
        MD.replace(PARAMS, '* **Parameters**: {"tag": "star"}\n'),
        ("params", {"tag": "star"}),
    ),
    "tab-bullet:read": (
        "p.md",
        MD.replace(PARAMS, '\t- **Parameters**: {"tag": "tab"}\n'),
        ("params", {"tag": "tab"}),
    ),
    "tab-nested-twice:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "\t- **Timeout**: 999s\n"),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "nested-twice:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "  - **Timeout**: 999s\n"),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "quote-bullet:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "> - **Dependencies**: [step_0]\n"),
        REFUSED,
    ),
    "quote-step:refused": ("p.md", _after1("\n> " + STEP2.replace("\n", "\n> ")), REFUSED),
    "nested-quote-step:refused": (
        "p.md",
        _after1("\n> > " + STEP2.replace("\n", "\n> > ")),
        REFUSED,
    ),
    "table-step:refused": (
        "p.md",
        _after1("\n| ID | Action | Parameters |\n|---|---|---|\n| step_2 | rec | {} |\n"),
        REFUSED,
    ),
    "lazy-params:refused": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "lz",\n"x": "LAZY"}\n'),
        REFUSED,
    ),
    "indented-cont-params:refused": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "ic",\n  "x": "CONT"}\n'),
        REFUSED,
    ),
    "hardbreak-params:refused": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "hb"}\\\n  {"x": 1}\n'),
        REFUSED,
    ),
    "lazy-input:refused": ("p.md", MD.replace(INPUT, INPUT + "evil@x.example\n"), REFUSED),
    "indented-cont-input:refused": (
        "p.md",
        MD.replace(INPUT, INPUT + "  evil@x.example\n"),
        REFUSED,
    ),
    "hardbreak-input:refused": (
        "p.md",
        MD.replace(INPUT, "- to: ok@example.com\\\n  evil@x.example\n"),
        REFUSED,
    ),
    "nested-empty-input:refused": (
        "p.md",
        MD.replace(INPUT, "- to:\n  - a@x.example\n  - b@y.example\n"),
        REFUSED,
    ),
    "ordered-nested-input:refused": (
        "p.md",
        MD.replace(INPUT, INPUT + "  1. cc: evil@x.example\n"),
        REFUSED,
    ),
    "lazy-wf:refused": (
        "p.md",
        MD.replace("- Error Recovery: false\n", "- Error Recovery: false\ntrue\n"),
        REFUSED,
    ),
    "closing-hashes-section:read": (
        "p.md",
        MD.replace("## Steps\n", "## Steps ##\n"),
        ("params", {"tag": "a-ok"}),
    ),
    "closing-hashes-step:why": (
        "p.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ok ###\n"),
        ("why", "Record: Record ok"),
    ),
    "escaped-hashes-step:why": (
        "p.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ok \\###\n"),
        ("why", "Record: Record ok ###"),
    ),
    "md-bom:read": ("p.md", "\ufeff" + MD, ("params", {"tag": "a-ok"})),
    "md-crlf:read": ("p.md", MD.replace("\n", "\r\n"), ("params", {"tag": "a-ok"})),
    # md-linkdef-in-descriptive-text
    "linkdef-obj:shown": ("p.md", _obj("\n[x]: /u 'delete all'\n"), ("task", "Record a tag")),
    "linkdef-obj-reflink:shown": (
        "p.md",
        MD.replace(OBJ, "[Record][r] a tag\n\n[r]: /u 'delete all'\n"),
        ("task", "Record a tag"),
    ),
    "linkdef-obj-multiline:shown": (
        "p.md",
        _obj("\n[r]:\n/u\n'delete all'\n"),
        ("task", "Record a tag"),
    ),
    # held: a definition cannot interrupt a paragraph (shown as text); elsewhere refused
    "linkdef-in-para:text": ("p.md", _obj("[r]: /u\n"), ("task", "Record a tag\n[r]: /u")),
    "linkdef-steps:refused": ("p.md", _after1('\n[step_2]: /x "rm"\n'), REFUSED),
    "linkdef-steps-head:refused": (
        "p.md",
        MD.replace("## Steps\n\n", "## Steps\n\n[x]: /y\n\n"),
        REFUSED,
    ),
    "linkdef-title:refused": (
        "p.md",
        MD.replace("# Record plan\n", "# Record plan\n[x]: /y\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"title"),
    ),
    "linkdef-input:refused": ("p.md", MD.replace(INPUT, INPUT + "- [cc]: evil\n"), REFUSED),
    "obj-entity:shown": ("p.md", MD.replace(OBJ, "Record &amp; tag\n"), ("task", "Record & tag")),
    # JSON encodings: non-utf8-source-usage-error
    "enc-utf16-bom:coded": ("p.json", _pc('{"tag": "A"}').encode("utf-16"), ("coded",)),
    "enc-latin1:coded": ("p.json", _pc('{"tag": "A\xe9"}').encode("latin-1"), ("coded",)),
    "enc-md-utf16:coded": ("p.md", MD.encode("utf-16"), ("coded",)),
    "enc-utf16le:coded": ("p.json", _pc('{"tag": "A"}').encode("utf-16-le"), ("coded",)),
    "json-bom:read": ("p.json", "\ufeff" + _pc('{"tag": "A"}'), ("params", {"tag": "A"})),
    "json-comment:refused": (
        "p.json",
        _pc('{"tag": "A", // c\n"x": 1}'),
        ("refused-file", "E_PARSE_NONJSON", r"JSON"),
    ),
    "json-trailing-comma:refused": (
        "p.json",
        _pc('{"tag": "A",}'),
        ("refused-file", "E_PARSE_NONJSON", r"JSON"),
    ),
    "json-two-docs:refused": (
        "p.json",
        _pc('{"tag": "A"}') + '\n{"x": 1}',
        ("refused-file", "E_PARSE_NONJSON", r"after the JSON"),
    ),
    "json-2p53:refused": (
        "p.json",
        _pc('{"tag": "A", "n": 9007199254740992}'),
        ("refused-plan", "E_SCHEMA_INVALID", r"2\^53"),
    ),
    "json-1e16:read": (
        "p.json",
        _pc('{"tag": "A", "n": 1e16}'),
        ("params", {"tag": "A", "n": 1e16}),
    ),
    "json-neg0:read": ("p.json", _pc('{"tag": "A", "n": -0}'), ("params", {"tag": "A", "n": 0})),
    "json-ref-key:refused": (
        "p.json",
        _pc('{"tag": "A", "$<plan.name>": 1}'),
        ("refused-plan", "E_REF_INVALID", r"mapping keys"),
    ),
    "json-ref-input-key:refused": (
        "p.json",
        PC.replace('"steps"', '"inputs": {"$<plan.name>": "x"}, "steps"').replace(
            "ARGS", '{"tag": "A"}'
        ),
        ("refused-plan", "E_SCHEMA_INVALID", r"plain name"),
    ),
    "json-ref-nested-arr:read": (
        "p.json",
        _pc('{"tag": "A", "l": [["$<plan.name>"], [{"k": "${plan.name}"}]]}'),
        ("params", {"tag": "A", "l": [["$<plan.name>"], [{"k": "$<plan.name>"}]]}),
    ),
    "json-ref-nested-fwd:refused": (
        "p.json",
        _pc('{"tag": "A", "l": [[{"k": "$<actions[1].result>"}]]}'),
        ("refused-plan", "E_REF_FORWARD", r"."),
    ),
    "json-lsep:escaped": (
        "p.json",
        _pc('{"tag": "A\u2028B"}'),
        ("params", {"tag": "A\u2028B"}),
    ),
    # md-heading-title-overridden: a heading's title and a bullet say one field twice
    "md-step-title-twice:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "- **Title**: Delete all\n"),
        ("refused", "E_", r"(?i)(twice|title)"),
    ),
    "md-task-name-twice:refused": (
        "p.md",
        MD.replace("- **ID**: task_1\n", "- **ID**: task_1\n- **Name**: Wipe\n"),
        ("refused", "E_", r"(?i)(twice|name)"),
    ),
    # held: a Title bullet under a heading with no title is the why
    "md-step-title-only:why": (
        "p.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1:\n").replace(
            PARAMS, PARAMS + "- **Title**: Delete all\n"
        ),
        ("why", "Record: Delete all"),
    ),
    # held: one field in two conventions of one format
    "md-retries-twice:refused": (
        "p.md",
        MD.replace(PARAMS, PARAMS + "- **Retry Count**: 2\n- **Retries**: 5\n"),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "md-task-taskid:refused": (
        "p.md",
        MD.replace("- **Task**: task_1\n", "- **Task**: task_1\n- **Task ID**: task_2\n"),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "ap-custom-extra:refused": (
        "p.json",
        json.dumps(
            {
                "plan_version": 1,
                "title": "t",
                "steps": [
                    {
                        "step_number": 1,
                        "description": "d",
                        "action": {
                            "type": "custom",
                            "action_type": "rec",
                            "payload": {"tag": "A"},
                            "tag": "EXTRA",
                        },
                    }
                ],
            }
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.action\.tag"),
    ),
    "ap-timeout-both:refused": (
        "p.json",
        json.dumps(
            {
                "plan_version": 1,
                "title": "t",
                "steps": [
                    {
                        "step_number": 1,
                        "description": "d",
                        "action": {"type": "rec", "tag": "A"},
                        "timeout_ms": 5000,
                        "timeout": 9,
                    }
                ],
            }
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.timeout"),
    ),
    "agent-timeout-two-levels:refused": (
        "p.json",
        json.dumps(
            {
                "title": "t",
                "steps": [
                    {
                        "id": "s1",
                        "title": "T",
                        "detail": "D",
                        "tool": {
                            "kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}},
                            "timeout_ms": 1000,
                        },
                        "timeout_ms": 9000,
                    }
                ],
            }
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.timeout_ms"),
    ),
    "agent-two-kinds:refused": (
        "p.json",
        json.dumps(
            {
                "title": "t",
                "steps": [
                    {
                        "id": "s1",
                        "title": "T",
                        "detail": "D",
                        "tool": {
                            "kind": {
                                "Custom": {"name": "rec", "payload": {"tag": "A"}},
                                "Navigate": {"url": "x"},
                            }
                        },
                    }
                ],
            }
        ),
        ("refused", "E_SCHEMA_INVALID", r"steps\[0\]\.tool\.kind"),
    ),
    "agent-gate-in-tool:refused": (
        "p.json",
        json.dumps(
            {
                "title": "t",
                "steps": [
                    {
                        "id": "s1",
                        "title": "T",
                        "detail": "D",
                        "tool": {
                            "kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}},
                            "requires_approval": True,
                        },
                    }
                ],
            }
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", r"requires_approval"),
    ),
    "ts-params-both:refused": (
        "p.json",
        json.dumps(
            {
                "metadata": {"title": "T", "objective": "O"},
                "tasks": [{"id": "task_1", "name": "N"}],
                "steps": [
                    {
                        "id": "s1",
                        "task_id": "task_1",
                        "action": "rec",
                        "parameters": {"tag": "a"},
                        "params": {"tag": "b"},
                    }
                ],
            }
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.params"),
    ),
    "pc-args-params:refused": (
        "p.json",
        _pc('{"tag": "A"}, "params": {"tag": "B"}'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.params"),
    ),
    "pc-timeout-both:refused": (
        "p.json",
        _pc('{"tag": "A"}, "timeout_ms": 1000, "timeout": 99'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"steps\[0\]\.timeout"),
    ),
    # md-single-tilde-strikethrough: GFM strikes `~x~` (one or two tildes, GFM spec 6.5)
    "tilde-params:refused": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a", "path": "~old~new"}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-input:refused": (
        "p.md",
        MD.replace(INPUT, "- to: ~ok@example.com~\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-id:refused": (
        "p.md",
        MD.replace("- **ID**: step_1\n", "- **ID**: ~step_1~\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-objective:refused": (
        "p.md",
        MD.replace(OBJ, "Record ~no~ tag\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-why:refused": (
        "p.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ~not~ ok\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-action:refused": (
        "p.md",
        MD.replace("- **Action**: rec\n", "- **Action**: ~rec~\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-task-steps:refused": (
        "p.md",
        MD.replace("- **Steps**: step_1\n", "- **Steps**: ~step_1~\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"(?i)strike"),
    ),
    "tilde-deps:refused": (
        "p.md",
        _after1("\n" + STEP2.replace("- **Dependencies**: []", "- **Dependencies**: [~step_1~]")),
        ("refused", "E_", r"step_1"),
    ),
    # held: two tildes refused; a tilde that cannot open or close is text
    "tilde2-params:refused": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a", "path": "~~old~~new"}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED", r"strikethrough"),
    ),
    "tilde-home:read": (
        "p.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a", "path": "~/a ~/b"}\n'),
        ("params", {"tag": "a", "path": "~/a ~/b"}),
    ),
    # md-indented-code-read-as-field: a line indented 4 spaces (or a TAB) after a blank line
    # or a heading is an indented code block to CommonMark, shown as code; read as a field
    "icode-timeout:refused": (
        "p.md",
        MD.replace(
            "### Step 1: Record ok\n", "### Step 1: Record ok\n\n    - **Timeout**: 999s\n\n"
        ).replace("- **Timeout**: 30s\n", "", 1),
        REFUSED,
    ),
    "icode-deps:refused": (
        "p.md",
        _after1(
            "\n"
            + STEP2.replace("- **Dependencies**: []\n", "").replace(
                "### Step 2: Delete\n", "### Step 2: Delete\n\n    - **Dependencies**: [step_1]\n\n"
            )
        ),
        REFUSED,
    ),
    "icode-wf:refused": (
        "p.md",
        MD.replace(
            "## Workflow Config\n", "## Workflow Config\n\n    - Error Recovery: true\n\n"
        ).replace("- Error Recovery: false\n", ""),
        REFUSED,
    ),
    "icode-tab-wf:refused": (
        "p.md",
        MD.replace(
            "## Workflow Config\n", "## Workflow Config\n\n\t- Error Recovery: true\n\n"
        ).replace("- Error Recovery: false\n", ""),
        REFUSED,
    ),
    "icode-input:refused": (
        "p.md",
        MD.replace(INPUT, "    - to: evil@x.example\n"),
        REFUSED,
    ),
    "icode-input-extra:refused": (
        "p.md",
        MD.replace(INPUT, "    - cc: evil@x.example\n\n" + INPUT),
        REFUSED,
    ),
    # held: an indented code block where the reader reads no field
    "icode-steps-head:refused": (
        "p.md",
        MD.replace("## Steps\n\n", "## Steps\n\n    ### Step 0: hidden\n\n"),
        REFUSED,
    ),
    # md-section-name-rendered-alike: a `##` heading a forge shows as a section this reader
    # reads (emphasis, code span, a character reference, a link around the name) is kept as
    # another section in metadata.source.sections: its bullets leave the plan
    **{
        f"wf-{name}:read-or-refused": (
            "p.md",
            MD.replace(WF, head + "\n- Parallel Execution: false\n- Error Recovery: true\n"),
            ("retry",),
        )
        for name, head in {
            "emph": "## *Workflow Config*",
            "strong": "## **Workflow Config**",
            "code": "## `Workflow Config`",
            "entity": "## Workflow&#32;Config",
            "link": "## [Workflow Config](x)",
        }.items()
    },
    "obj-emph:read-or-refused": (
        "p.md",
        MD.replace("## Objective\n", "## *Objective*\n"),
        ("task-or-refused", "Record a tag"),
    ),
    # held: plain headings read as CommonMark reads them; an input section under a heading
    # rendered as `Shared Inputs` is read as that section (adapted by fix117m: the round
    # expected E_REF_UNKNOWN, the input section kept as another one; see the docstring)
    "wf-plain:retry": (
        "p.md",
        MD.replace(
            WF, "## Workflow Config   \n- Parallel Execution: false\n- Error Recovery: true\n"
        ),
        ("retry",),
    ),
    "inputs-emph-ref:refused": (
        "p.md",
        MD.replace("## Shared Inputs\n", "## *Shared Inputs*\n").replace(
            '{"tag": "a-ok"}', '{"tag": "a", "x": "$<inputs.to>"}'
        ),
        ("inputs", {"to": "ok@example.com"}),
    ),
    # TOON: toon-hash-line-dropped
    "toon-hash-key:kept": (
        "p.toon",
        _tp("      tag: a\n      #dry_run: false\n"),
        ("kept", "dry_run"),
    ),
    "toon-hash-key-space:kept": (
        "p.toon",
        _tp("      tag: a\n      # dry_run: false\n"),
        ("kept", "dry_run"),
    ),
    "toon-hash-row:kept": (
        "p.toon",
        _tp("      tag: a\n      h[2]{n,p}:\n        #web,80\n        db,5432\n        x,1\n"),
        ("kept", "web"),
    ),
    "toon-hash-list:kept": (
        "p.toon",
        _tp("      tag: a\n      l[2]:\n        - x\n        #- yy7\n        - z\n"),
        ("kept", "yy7"),
    ),
    "toon-hash-step:kept": (
        "p.toon",
        TOON_HEAD
        + "steps[2]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: a\n"
        + "  #- id: s0\n  - id: s2\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: b\n"
        + TOON_TAIL,
        ("kept", "s0"),
    ),
    # held TOON
    "toon-count-rows:refused": (
        "p.toon",
        _tp("      tag: a\n      h[1]{n,p}:\n        web,80\n        db,5432\n"),
        ("refused", "E_SCHEMA_INVALID", r"Declared length"),
    ),
    "toon-count-inline:refused": (
        "p.toon",
        _tp("      tag: a\n      h[3]: a,b\n"),
        ("refused", "E_SCHEMA_INVALID", r"Declared length"),
    ),
    "toon-dup-key:refused": (
        "p.toon",
        _tp("      tag: a\n      tag: b\n"),
        ("refused", "E_SCHEMA_INVALID", r"Duplicate"),
    ),
    "toon-odd-indent:refused": (
        "p.toon",
        _tp("      tag: a\n       odd: 1\n"),
        ("refused", "E_SCHEMA_INVALID", r"multiple of 2"),
    ),
    "toon-2p53:refused": (
        "p.toon",
        _tp("      tag: a\n      m: 9007199254740993\n"),
        ("refused-plan", "E_SCHEMA_INVALID", r"2\^53"),
    ),
    "toon-ref-key:refused": (
        "p.toon",
        _tp('      tag: a\n      "$<plan.name>": 1\n'),
        ("refused-plan", "E_REF_INVALID", r"mapping keys"),
    ),
    "toon-dotted:literal": (
        "p.toon",
        _tp("      tag: a\n      a.b: 1\n      a:\n        b: 2\n"),
        ("params", {"tag": "a", "a.b": 1, "a": {"b": 2}}),
    ),
    "toon-pipe:read": (
        "p.toon",
        _tp("      tag: a\n      h[2|]: a,b|c\n"),
        ("params", {"tag": "a", "h": ["a,b", "c"]}),
    ),
    "toon-bool-str:read": (
        "p.toon",
        _tp('      tag: a\n      dry_run: "false"\n      d2: false\n'),
        ("params", {"tag": "a", "dry_run": "false", "d2": False}),
    ),
    "toon-ref-arr:read": (
        "p.toon",
        _tp('      tag: a\n      l[2]: "$<plan.name>",x\n'),
        ("params", {"tag": "a", "l": ["$<plan.name>", "x"]}),
    ),
    "toon-colon:read": (
        "p.toon",
        _tp("      tag: a\n      u: http://x:80/a\n"),
        ("params", {"tag": "a", "u": "http://x:80/a"}),
    ),
}

#: MCP validate of a text -> the CONVERT id whose expectation it shares
MCP: dict[str, str] = {
    "mcp-setext:refused": "setext-obj-inputs:refused",
    "mcp-linkdef:shown": "linkdef-obj:shown",
    "mcp-h4:refused": "h4-step:refused",
    "mcp-star:read": "star-bullet:read",
    "mcp-title:refused": "md-step-title-twice:refused",
    "mcp-tilde:refused": "tilde-params:refused",
    "mcp-icode:refused": "icode-timeout:refused",
}

# -- the daemon -----------------------------------------------------------------------------

DAEMON_SRC: dict[str, tuple[str, str]] = {
    "d-setext": (
        "PLAN.md",
        md("dsx")
        .replace(OBJ, OBJ + "\nShared Inputs\n-------------\n- to: evil@x.example\n")
        .replace('{"tag": "dsx-ok"}', '{"tag": "dsx", "x": "$<inputs.to>"}'),
    ),
    "d-ok": (
        "PLAN.md",
        md("dok").replace('{"tag": "dok-ok"}', '{"tag": "dok", "x": "$<inputs.to>"}'),
    ),
    "d-tilde": (
        "PLAN.md",
        md("dtl").replace('{"tag": "dtl-ok"}', '{"tag": "dtl", "path": "~old~new"}'),
    ),
    "d-icode": (
        "PLAN.md",
        md("dic")
        .replace("### Step 1: Record ok\n", "### Step 1: Record ok\n\n    - **Retry Count**: 2\n\n")
        .replace("## Workflow Config\n", "## Workflow Config\n\n    - Error Recovery: true\n\n")
        .replace("- Error Recovery: false\n", ""),
    ),
    "d-toonhash": ("PLAN.toon", _tp("      tag: dth\n      y: 1\n      #x: keep\n")),
}


def _convert(lab: Lab, folder: Path, name: str, content: str | bytes) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    done = lab.cli("convert", str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-2000:], "plan": None}
    got["out"] = done.stdout
    if done.returncode == 0 and done.stdout.strip():
        try:
            got["plan"] = load_yaml(done.stdout)
        except Exception:  # a bad text is the finding, kept raw
            got["plan"] = {"raw": done.stdout}
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = list(CONVERT.items())

    def one(i: int) -> None:
        vid, (name, content, _) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = _convert(lab, folder, name, content)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(len(jobs))))
    texts = {vid: CONVERT[src][1] for vid, src in MCP.items()}
    replies = answers(lab, [("validate", {"plan": text}) for text in texts.values()])
    got["mcp"] = {}
    for vid, reply in zip(texts, replies, strict=True):
        result = reply.get("result") or {}
        got["mcp"][vid] = result.get("structuredContent") or {"raw": json.dumps(reply)[:2000]}
    for slug, (name, text) in DAEMON_SRC.items():
        lab.put(f"plans/{slug}/{name}", text)
    lab.commit("agent: plans")
    got["pass"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    for slug in DAEMON_SRC:
        if f"plans/{slug}/PLAN.yml" in got["tree"]:
            approve_file(lab, slug)
    lab.commit("approve the plans", ALICE)
    got["pass2"] = lab.run(check=False).returncode
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r117-sources-atk117c", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 117: {cls}: {what}")


SETEXT = xfail(
    "md-setext-heading-not-a-section",
    "a setext heading (`Shared Inputs` over `---`) is a section to CommonMark and every forge; the converter reads it as text of the section it stands in, so a second `Shared Inputs`/`Workflow Config`/`Objective` section (the one a reviewer reads first) converts silently into plan.task and the later one is used",
)
LINKDEF = xfail(
    "md-linkdef-in-descriptive-text",
    "a link reference definition in `## Objective`, which a forge never shows, converts into plan.task as `r: /u 'delete all'` (destination and hidden title kept)",
)
# toon-hash-line-dropped and non-utf8-source-usage-error: fixed the same day (a TOON line
# beginning with # refused at its line; convert's answer for a non-UTF-8 source is the daemon's)
TITLE2 = xfail(
    "md-heading-title-overridden",
    "a step's `### Step 1: Record ok` heading and a `- **Title**: Delete all` bullet (a task's heading and `- **Name**:`) say one field twice; the bullet silently wins (why `Record: Delete all`), where every other field said twice is refused",
)
TILDE = xfail(
    "md-single-tilde-strikethrough",
    "GFM strikes text between single tildes (`~old~new` renders `old` struck, no tildes; GFM spec 6.5: 'one or two tildes'); the converter reads `~x~` as text in a value, an id, the objective and a step title, where `~~x~~` is refused",
)
ICODE = xfail(
    "md-indented-code-read-as-field",
    "a `- **Timeout**: 999s` (a dependency, `- Error Recovery: true`, a shared input) indented 4 spaces or a TAB after a heading or a blank line is an indented code block to CommonMark, shown as code; the converter reads it as the field",
)
SECTION = xfail(
    "md-section-name-rendered-alike",
    "a `##` heading a forge shows as `Workflow Config`/`Objective` (in emphasis, a code span, a link, with `&#32;`) is read as another section kept in metadata.source.sections: `- Error Recovery: true` under it leaves the plan (no retry), the objective becomes the title",
)
#: every class of the round was fixed the same day (fix117m: the markdown reader's blocks as
#: CommonMark's; the TOON comment line and the encoding answer): the ids pass and keep watch
BROKEN: dict[str, Any] = {}

SECTION10 = r"\bE_(CONVERT_UNSUPPORTED|PARSE_NONJSON|SCHEMA_INVALID|YAML_PARSE)\b"


def _params(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0].get("params") or {}


def _check(got: dict[str, Any], want: tuple[Any, ...]) -> None:
    kind = want[0]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if kind.startswith("refused"):
        code, text = want[1], want[2]
        assert got["rc"] == 1, (got["rc"], got["out"][:1500], got["err"])
        assert re.search(r"\b" + code, got["err"]), got["err"]
        assert re.search(text, got["err"]), got["err"]
        if kind == "refused-plan":  # converted, then PLAN.yml's own check: its line
            assert re.search(r"PLAN\.yml:\d+: E_", got["err"]), got["err"]
            assert "converted, but not valid yet" in got["err"], got["err"]
            return
        assert "remedy" in got["err"], got["err"]
        if kind == "refused":
            assert re.search(LOCATED, got["err"]), got["err"]
        return
    if kind == "coded":
        assert got["rc"] == 1, (got["rc"], got["err"])
        assert re.search(SECTION10, got["err"]), got["err"]
        assert "remedy" in got["err"], got["err"]
        return
    if kind in ("retry", "task-or-refused"):  # read as the forge shows it, or refused
        if got["rc"] == 0:
            plan = got["plan"]
            if kind == "retry":
                assert plan["actions"][0].get("on_failure") == "retry", (
                    f"the forge shows `Error Recovery: true` under Workflow Config; the plan: "
                    f"{plan['actions'][0]}, {(plan.get('metadata') or {}).get('source')}"
                )
            else:
                assert plan["plan"]["task"] == want[1], plan["plan"]
            return
        assert got["rc"] == 1 and re.search(r"\bE_[A-Z_]+", got["err"]), got
        assert re.search(LOCATED, got["err"]), got["err"]
        return
    if kind == "kept":  # in the converted plan, or refused at a place
        if got["rc"] == 0:
            assert want[1] in got["out"], f"converted without {want[1]!r}: {got['out'][:1500]}"
            return
        assert got["rc"] == 1 and re.search(r"\bE_[A-Z_]+", got["err"]), got
        assert re.search(LOCATED, got["err"]), got["err"]
        return
    assert got["rc"] == 0 and got["plan"], got["err"]
    plan = got["plan"]
    if kind == "params":
        assert _params(plan) == want[1], _params(plan)
        for key, value in want[1].items():  # a flag stays a flag, a text a text
            assert type(_params(plan)[key]) is type(value), _params(plan)
    elif kind == "task":
        assert plan["plan"]["task"] == want[1], plan["plan"]
    elif kind == "why":
        assert plan["actions"][0]["why"] == want[1], plan["actions"][0]
    elif kind == "inputs":
        assert plan.get("inputs") == want[1], plan.get("inputs")


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """Refused with its code, at its place, with a remedy; or converted to exactly what the
    source shows a reviewer (its forge rendering, its diff)."""
    _check(lab.got[vid], CONVERT[vid][2])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(MCP), list(MCP), BROKEN))
def test_mcp_validate(lab: Lab, vid: str) -> None:
    """MCP ``validate`` answers each text as ``convert`` should."""
    got = lab.got["mcp"][vid]  # type: ignore[attr-defined]
    assert "valid" in got, got
    want = CONVERT[MCP[vid]][2]
    if want[0].startswith("refused"):
        assert not got["valid"], got
        err = got["errors"][0]
        assert err.get("code", "").startswith("E_") and err.get("remedy"), err
        assert err.get("line") is not None, err
        return
    assert got["valid"] and got.get("plan_yml"), got
    plan = load_yaml(got["plan_yml"])
    if want[0] == "task":
        assert plan["plan"]["task"] == want[1], plan["plan"]
    else:
        assert _params(plan) == want[1], plan


@pytest.mark.parametrize("vid", cases(["d-setext:refused"], ["d-setext"], BROKEN))
def test_daemon_setext(lab: Lab, vid: str) -> None:
    """A committed PLAN.md holding a setext ``Shared Inputs`` section above the real one is
    refused (its row names the code), never converted and run with the second one's value."""
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    calls = lab.calls("dsx")
    assert calls == [], [json.loads(c["stdin"]) for c in calls]
    assert f"plans/{vid}/PLAN.yml" not in tree, tree
    row = lab.got["rows1"].get(f"plans/{vid}", {})  # type: ignore[attr-defined]
    assert re.search(r"E_(SCHEMA_INVALID|CONVERT_UNSUPPORTED)", json.dumps(row)), row


@pytest.mark.parametrize("vid", ["d-ok:ran-once"])
def test_daemon_control(lab: Lab, vid: str) -> None:
    """The control PLAN.md converts, is approved and runs once with its input."""
    assert "plans/d-ok/PLAN.yml" in lab.got["tree"]  # type: ignore[attr-defined]
    calls = lab.calls("dok")
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"])["x"] == "ok@example.com", calls


@pytest.mark.parametrize("vid", cases(["d-toonhash:kept"], ["d-toonhash"], BROKEN))
def test_daemon_toon_hash(lab: Lab, vid: str) -> None:
    """A committed PLAN.toon whose params hold a ``#x: keep`` line is refused, or runs with
    every line it shows; never converted and run with the line dropped."""
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    calls = lab.calls("dth")
    if "plans/d-toonhash/PLAN.yml" not in tree:
        assert calls == [], calls
        row = lab.got["rows1"].get("plans/d-toonhash", {})  # type: ignore[attr-defined]
        assert re.search(r"\bE_[A-Z_]+", json.dumps(row)), row
        return
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    assert "#x" in got or "x" in got, f"the tool got {got}; the source shows #x: keep"


@pytest.mark.parametrize(
    "slug, tag",
    cases(
        ["d-tilde:refused", "d-icode:refused"], [("d-tilde", "dtl"), ("d-icode", "dic-ok")], BROKEN
    ),
)
def test_daemon_rendered_otherwise(lab: Lab, slug: str, tag: str) -> None:
    """A committed PLAN.md whose value a forge renders otherwise (``~old~new`` struck out) or
    whose fields a forge shows as a code block is refused (its row names the code), never
    converted, approved and run."""
    tree = lab.got["tree"]  # type: ignore[attr-defined]
    calls = lab.calls(tag)
    assert calls == [], [json.loads(c["stdin"]) for c in calls]
    assert f"plans/{slug}/PLAN.yml" not in tree, tree
    row = lab.got["rows1"].get(f"plans/{slug}", {})  # type: ignore[attr-defined]
    assert "E_CONVERT_UNSUPPORTED" in json.dumps(row), row
