# ruff: noqa: E501
r"""Round 125, sources (atk125c): what a reviewer reads of a plan source (its diff, the page a
forge renders for a ``PLAN.md``, ``plangate show``/``hash``/``check``) is what the controller
converts, freezes and runs; a source that cannot be read is refused with its ``E_...`` code and
never half-converted; the predictions agree with the daemon.

Lab (one, module scope, built once under ``shared``'s lock; the bench's config, approvers
``alice@example.com``/``*@ops.example.com``, the recorder ``rec``; for the daemon part the
config adds ``limits: {max_plan_bytes: 65536}``). Part 1, ``plangate convert SRC`` (no
config) of one source per id (``test_convert``, 69 ids): encodings (UTF-16 LE/BE without a
BOM, UTF-16/UTF-32 with one, for JSON, TOON and markdown; a UTF-8 BOM before JSON, TOON and
markdown); JSON numbers (2^53+1, a 20-digit integer, ``-0``/``-0.0``/``1E2``), ``steps`` said
twice at the top level, a member said twice in a metadata object (``estimates``), a trailing
comma, a ``/* */`` comment, ``timeout_ms`` 0 and negative, arrays nested 100000 deep in
``args`` and in metadata; TOON 2^53+1, ``1E400``, the number forms ``05 -0 1e2 1. .5 +5 1_000
0x10 -0.0 1.0``, a tabular header naming a field twice (``{k,k}``), a length marker over and
under its count, a tabular row wider than its header, a list item's object with a key twice,
a ``[#2]`` marker, a ``\/`` escape, the ``|`` delimiter, a quoted header field holding a
comma, CRLF rows, metadata nested 3000 deep; markdown bullets with ``+``, ``1.``,
``__Timeout__``, ``**Timeout:**``, a quoted ``> - **Retry Count**``, a link reference
definition whose multi-line title hides a bullet or a ``### Step 2`` heading, a lazy
continuation line of ``Parameters`` and of a shared input, a hard line break in a shared
input, YAML front matter, a table as ``## Shared Inputs``, a trailing backslash after a
timeout, closing ``##`` sequences on a section and a step heading, a TAB after ``##``, mixed
CRLF/LF lines, bullets indented one and three spaces or with three spaces after the marker,
``- - -``/``* * *`` rules among a step's bullets, ``Parameters`` in a fence inside the item;
merge conflict markers committed in a markdown step, in ``## Notes``, in TOON and in JSON; and
ATX headings indented one to three spaces (a heading to CommonMark and every forge):
`` ### Step 2:`` under ``## Objective`` and under ``## Notes``, `` ## Workflow Config`` after
``## Notes`` and in the objective, ``   ## Shared Inputs`` after ``## Notes``, ``  # Record
plan``, ``   ### Step 1:``, ``  ## Steps``. Part 2, the daemon: the agent commits in one
commit a plain ``PLAN.md`` (``d-control``), a ``PLAN.json`` with a UTF-8 BOM, a UTF-16
``PLAN.json``, a ``PLAN.md`` with an indented ``### Step 2: Back up first`` in its objective,
one with an indented ``## Workflow Config`` after ``## Notes``, ``d-swap``, three sources
(JSON, TOON, markdown) whose params hold ``1E2 -0.0 0.1``, the largest double, 5e-324, NFD
``e\u0301``, a surrogate pair, U+2028, six sources that are no plan (a JSON list, an empty
JSON, an empty markdown, a TOON root array, a fenced YAML list, ``steps`` an object) and a
30 KB ``PLAN.json`` whose PLAN.yml is 70 KB. Before the pass: ``hash``, ``validate`` and
``show --format json`` of each folder (``--config`` for the big one) and ``check`` of the
commit; ``run --once``; Alice approves every converted plan in one commit; the agent then
removes ``d-swap``'s approved PLAN.yml and commits a new ``PLAN.md`` (another tag) before any
pass ran it; a second pass; then the agent commits the plain source again, edited
(``d-control-evil``), beside its converted and run PLAN.yml: ``hash``/``validate``/``show``
(text, JSON, markdown) of the source, ``hash`` of the folder, ``check``, a third pass.

Ids: ``test_convert[...]`` (69): refused with its code and located message, or converted to
exactly what it shows. ``test_source_runs_as_predicted[d-control|d-bom]``: the predicted hash
is the frozen one, ``check`` said ``convert``, it ran once as written.
``test_numbers_reach_tool_as_shown[d-num-json|d-num-toon|d-num-md]``: the tool's stdin equals
what ``show`` printed. ``test_odd_source_refused_alike[...]`` (6): ``hash``, ``check`` and the
row agree on the code, nothing written, the pass goes on. ``test_utf16_source_held``/
``test_utf16_source_code_agrees``, ``test_big_source_held``/``test_big_source_hash_predicts``:
never converted nor run, and every predictor says so with the row's code.
``test_indented_step_held``/``test_indented_step_predicted``/
``test_indented_workflow_frozen_as_shown``: the daemon's reading of indented headings.
``test_source_swapped_after_approval``: a new source replacing an approved plan waits for a
new approval. ``test_source_beside_plan_not_run`` and
``test_show_source_beside_plan[show-text|show-json|show-markdown]``: a source beside a
converted plan is a note, and every reader says so.

Seen (round 125: 92 ids, 77 passed, 15 xfailed (strict); ~25 s wall with ``-n 1`` on a
shared box). 4 classes broke.

1. **md-indented-heading-read-as-text** (10; fails open for the review, closed for what
   runs: a step and settings the reviewer reads are dropped, nothing unseen runs):
   ``test_convert[md-indented-step-under-objective, md-indented-step-under-notes,
   md-indented-workflow-after-notes, md-indented-workflow-in-objective,
   md-indented-shared-after-notes, md-indented-title, md-indented-first-step,
   md-indented-steps-section]``, ``test_indented_step_held``,
   ``test_indented_workflow_frozen_as_shown``. CommonMark reads a line of one to three spaces
   then ``#``s as an ATX heading, and every forge renders it so; the markdown reader takes it
   for text of the section above. `` ### Step 2: Back up first`` (one space) under ``##
   Objective`` or ``## Notes`` converts (exit 0) into ``plan.task``/``metadata.source.sections``
   text, where round 116's rule refuses the unindented record ("would never run"): in the
   daemon the plan converted, froze at the predicted hash and ran ``d-ihstep-ok`` on Alice's
   approval; the backup step a reviewer read before it never existed. `` ## Workflow Config``
   with ``Error Recovery: true``/``Max Retries: 2`` after ``## Notes`` or inside the objective
   becomes text: the plan (and the daemon's frozen ``d-ihwf``) has no ``on_failure: retry``.
   ``   ## Shared Inputs`` after ``## Notes`` becomes Notes text: the plan has no ``inputs``
   (a ``$<inputs.to>`` then fails ``E_REF_UNKNOWN`` in the converted PLAN.yml, far from the
   line). ``  # Record plan``, ``   ### Step 1:`` and ``  ## Steps`` are refused, but with
   the wrong problem (``title`` is empty, "text before the first ### heading", task fields
   unknown). In a section whose bullets are read (Steps, Tasks, Shared Inputs, Workflow
   Config) the indented heading line is refused ("expected ``- **Field**: value``"), so
   nothing a reviewer does not see is read. docs/formats.md, "A source is read as git shows
   it": "a markdown heading is read as CommonMark reads one"; "A ``### Step N:`` or ``### Task
   N:`` record under ``## Objective`` or any other section kept as text is
   ``E_CONVERT_UNSUPPORTED`` at its line: it reads as a step and would never run"; "Nothing is
   dropped silently".
2. **non-utf8-source-code-split** (1, fails closed, the code differs):
   ``test_utf16_source_code_agrees``. A UTF-16 ``PLAN.json`` with a BOM is refused
   everywhere, but ``hash``/``validate``/``show`` say ``E_YAML_PARSE: not UTF-8 text (byte
   0)`` while the daemon's row says ``E_USAGE: cannot convert ...: is not UTF-8 (byte 0)``
   (``check`` says ``invalid`` with no code). docs/errors.md: ``E_YAML_PARSE`` covers "text that
   is not UTF-8"; ``E_USAGE`` is "a command was called wrongly".
3. **show-source-beside-plan-unwarned** (3, fails open for the review):
   ``test_show_source_beside_plan[show-text, show-json, show-markdown]``. After the source
   converted and ran, the agent commits an edited ``PLAN.md`` beside the ``PLAN.yml``. ``hash``
   and ``validate`` of the source print its hash with "warning: PLAN.yml is beside it: the
   controller runs that file", and ``check`` warns; ``show plans/d-control/PLAN.md`` in every
   format exits 0 with no warning and renders the edited source's plan as ``Status:
   pending_approval - waiting to be frozen``, ``Hash: sha256:...  (not frozen)``, a hash the
   controller will never freeze (the third pass ran nothing of it). docs/formats.md,
   "Rendering": a source path "is shown as the daemon converts it ... (its hash is the one the
   controller will freeze ...)"; "Beside an existing PLAN.yml, such files are left alone (notes,
   not plans)"; round 123's fix of ``show`` for held sources.
4. **hash-source-ignores-size-limit** (1, fails open for the prediction):
   ``test_big_source_hash_predicts``. A 30 KB ``PLAN.json`` whose converted PLAN.yml is 70 KB
   (each raw ``e<U+0301>``, 3 bytes, is written ``e\u0301``, 7) under ``limits.max_plan_bytes:
   65536``: ``validate --config`` says ``E_PLAN_TOO_LARGE``, ``check`` says ``invalid``, the
   daemon's row says ``E_PLAN_TOO_LARGE`` and nothing runs; ``hash --config`` prints
   ``sha256:...`` and exits 0 (it refuses a source whose plan is over ``max_actions``:
   ``E_LIMIT_EXCEEDED``, exit 1). docs/formats.md: "``plangate hash`` of a source prints the hash
   the controller will freeze"; plan-format.md: "the hash of the PLAN.yml it converts to, the
   one the controller will freeze". (``hash --config`` of a plain PLAN.yml over the limit also
   prints its hash, so this may be ``hash`` not asking the byte limit at all.)

Fixed (2026-12-07, fix126s): all four classes; the 15 strict xfails pass, their marks
removed (94 ids with the two added below). 1. The markdown reader found headings with a
line regex anchored at column 0, so an ATX heading indented 1-3 spaces was body text. Now
:func:`controller.plan.convert.commonmark.read` lists every ATX heading markdown-it finds
(``Rendered.headings``: its level, text, and the block quote or list item holding it), and
``markdown._sections``, ``_records`` and ``_is_record`` (the record rule of sections kept as
text) ask it: an indented heading is the section or record the unindented one is. A
``#``-``###`` heading inside a block quote or a list item (``markdown._contained``) is
``E_CONVERT_UNSUPPORTED`` at its line, naming the container: it is part of it to
CommonMark, no section (``> ## Workflow Config`` under ``## Notes`` had stayed Notes text).
``md-indented-steps-section`` (``  ## Steps`` two spaces in, after the task's last bullet
and a blank line) is such a heading: CommonMark, and a forge's ``<li>``, put it inside that
list item, so its want is now "refused at line 13, inside a list item" (the attacker's
"converted" assumed a top-level heading); ``md-indented-steps-section-1`` (one space, a
top-level heading) converts, and ``md-quoted-workflow-in-notes`` is refused. The markdown
plan detection (``source._MD_PLAN``) allows the indentation too, and text before the first
heading (``    # Title``, a code block above the title) is refused at its line
(``markdown._before_title``; it had been dropped). 2. The daemon's
``service.sources.convert_source`` decoded a source itself (``E_USAGE``); it and
``discovery.converted_source`` now share :func:`controller.plan.discovery.source_text`
(``E_YAML_PARSE`` not UTF-8, ``E_PLAN_TOO_LARGE`` over 4 MiB), so the row and ``check``
(``source_outcome``) say the code ``hash``/``validate``/``show`` say. 3. ``show`` of a source
asks ``discovery_warning`` (``plan_beside``, the rule ``hash`` and ``validate`` warn by):
the warning on stderr and in the view, and beside a PLAN.yml the reason "not the plan: the
controller runs PLAN.yml and never converts this" (``commands.show._source_warning``).
4. ``hash`` read no config: ``hash_plan`` now takes ``--config`` (by the usual precedence)
and reads the file (``read_plan``) or source (``load_source``) under it, as ``validate``.
Tests: tests/plan/test_convert_round126.py, tests/commands/test_source_predictions_round126.py.
Left: ``hash`` of a one-line ``PLAN.json`` over ``max_actions`` still says
``PLAN.json:10`` (a line of the PLAN.yml it converts to, as docs/formats.md documents).

Held: UTF-16/32 sources are refused (a NUL at its line and column, or "not UTF-8") and never
half-converted, and the other plans of the pass go on; a UTF-8 BOM is dropped and the plan
runs as written at its predicted hash; JSON integers past 2^53, repeated members at the top
level and in metadata, trailing commas, comments, zero/negative ``timeout_ms`` and
100000-deep arrays are refused with their codes (``E_CONVERT_UNSUPPORTED`` "cannot be read
safely", no traceback); TOON applies the exact-double rule, refuses duplicate header fields,
length mismatches, wide rows, bad escapes and deep nesting, and keeps ``05``/``1.``/``+5``/
``1_000``/``0x10`` as the strings they are; every markdown bullet or block a forge shows
otherwise (``+``/``1.`` markers, ``__x__``, quotes, a definition's hidden title, lazy and
hard-break continuations, front matter, a table, thematic breaks, a fence in an item,
conflict markers) is refused at its line; closing ``#`` sequences, a TAB after ``##``,
indented bullets and wide marker spacing read as CommonMark reads them; numbers and text
reach the tool exactly as ``show`` printed them in all three formats; sources that are no
plan get one code from ``hash``, ``check`` and the row; a source replacing an approved,
not-yet-run PLAN.yml converts to a plan waiting for a new approval and neither version ran;
the edited source beside the run plan ran nothing, and ``hash``/``validate``/``check`` warn.

Seen but not asserted: a Plan Contract ``timeout_ms: 1500.7`` converts to ``timeout:
1.5007000000000001``; TOON accepts ``\u0041`` in a quoted string (the TOON spec lists only
``\\ \" \n \r \t``); a heading inside a block quote (``> ## Workflow Config``) is kept as Notes
text (a forge shows it quoted, so not asserted); a source under 200000 ``[`` in a markdown
``Parameters`` takes ~5 s to refuse; ``hash`` of a one-line ``PLAN.json`` whose plan is over
``max_actions`` says ``plans/x/PLAN.json:10: E_LIMIT_EXCEEDED`` (line 10 of the PLAN.yml it
becomes, under the source's name), and the daemon commits such a conversion and then marks it
``invalid`` (row ``problem`` null, the code only in ``reason``); a shared input
``- to:    ok   @example.com`` converts with its inner spaces (a browser shows one); TOON
``dry_run:`` with no value converts to ``{}``.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
STEP1 = "### Step 1: Record ok\n"
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
TIMEOUT = "- **Timeout**: 30s\n"
WF = "## Workflow Config\n- Parallel Execution: false\n- Error Recovery: false\n"
SHARED = "## Shared Inputs\n- to: ok@example.com\n"
OBJ = "## Objective\nRecord a tag\n"
for _part in (STEP1, PARAMS, TIMEOUT, WF, SHARED, OBJ):
    assert _part in MD, _part


def _pc(args: str, extra: str = "", step_extra: str = "") -> str:
    """A Plan Contract whose one step calls ``rec`` with ``args`` (JSON text, as written)."""
    return (
        '{"plan_version": 1, "skill_id": "s", "goal": "g"' + extra + ', "steps": [{"step_id": "a", '
        '"tool": "rec", "args": ' + args + step_extra + "}]}"
    )


def _toon(params: str = "      tag: x\n", meta: str = "") -> str:
    """The task/step plan in TOON, its one step's ``parameters`` lines ``params``."""
    return (
        "metadata:\n  title: T\n  objective: O\n" + meta + "tasks[1]{id,name}:\n  task_1,N\n"
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + params
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
    )


DEEP = "[" * 100000 + "]" * 100000
PC = _pc('{"tag": "x-ok", "n": 1}')

#: an indented (1-3 spaces) ATX heading: a heading to CommonMark and every forge
IH_STEP_OBJ = MD.replace(
    OBJ,
    OBJ
    + '\n ### Step 2: Back up first\n- **ID**: step_0\n- **Action**: rec\n- **Parameters**: {"tag": "a-backup"}\n',
)
IH_STEP_NOTES = MD.replace(
    SHARED, "## Notes\nnothing\n\n  ### Step 2: Back up first\n- **Action**: rec\n\n" + SHARED
)
IH_WF_NOTES = MD.replace(
    WF,
    "## Notes\nx\n\n ## Workflow Config\n- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 2\n",
)
IH_WF_OBJ = MD.replace(WF, "").replace(
    OBJ,
    OBJ
    + "\n   ## Workflow Config\n- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 2\n",
)
IH_SHARED = MD.replace(SHARED, "## Notes\nnothing\n\n   " + SHARED)

#: vid -> (file name, content (str or bytes), want); want is ("refused", code regex, message
#: regex) or ("converted", check) with check(plan) -> bool
CONVERT: dict[str, tuple[str, Any, tuple[Any, ...]]] = {
    # encodings: git shows UTF-16/32 as binary (NULs); a UTF-8 BOM is not shown and harmless
    "json-utf16le": (
        "PLAN.json",
        PC.encode("utf-16-le"),
        ("refused", "E_CONVERT_UNSUPPORTED", "NUL"),
    ),
    "json-utf16be": (
        "PLAN.json",
        PC.encode("utf-16-be"),
        ("refused", "E_CONVERT_UNSUPPORTED", "NUL"),
    ),
    "json-utf16-bom": ("PLAN.json", PC.encode("utf-16"), ("refused", "E_[A-Z_]+", "UTF-8")),
    "json-utf32-bom": ("PLAN.json", PC.encode("utf-32"), ("refused", "E_[A-Z_]+", "UTF-8")),
    "toon-utf16-bom": (
        "PLAN.toon",
        _toon().encode("utf-16"),
        ("refused", "E_[A-Z_]+", "UTF-8|NUL"),
    ),
    "md-utf16-bom": ("PLAN.md", MD.encode("utf-16"), ("refused", "E_[A-Z_]+", "UTF-8|NUL")),
    "json-utf8-bom": (
        "PLAN.json",
        b"\xef\xbb\xbf" + PC.encode(),
        ("converted", lambda p: _params(p) == {"tag": "x-ok", "n": 1}),
    ),
    "toon-utf8-bom": (
        "PLAN.toon",
        "\ufeff" + _toon(),
        ("converted", lambda p: _params(p) == {"tag": "x"}),
    ),
    "md-utf8-bom": (
        "PLAN.md",
        "\ufeff" + MD,
        ("converted", lambda p: _params(p) == {"tag": "a-ok"}),
    ),
    # JSON numbers and syntax
    "json-int-2p53-plus1": (
        "PLAN.json",
        _pc('{"tag": "x", "n": 9007199254740993}'),
        ("refused", "E_SCHEMA_INVALID", "2\\^53"),
    ),
    "json-int-huge": (
        "PLAN.json",
        _pc('{"tag": "x", "n": 12345678901234567890}'),
        ("refused", "E_SCHEMA_INVALID", "2\\^53"),
    ),
    "json-neg-zero-exp": (
        "PLAN.json",
        _pc('{"tag": "x", "n": -0, "m": -0.0, "k": 1E2}'),
        ("converted", lambda p: _params(p) == {"tag": "x", "n": 0, "m": 0, "k": 100}),
    ),
    "json-dup-steps": (
        "PLAN.json",
        _pc('{"tag": "x"}')[:-1]
        + ', "steps": [{"step_id": "b", "tool": "rec", "args": {"tag": "evil"}}]}',
        ("refused", "E_SCHEMA_INVALID", "said twice"),
    ),
    "json-dup-metadata": (
        "PLAN.json",
        _pc('{"tag": "x"}', extra=', "estimates": {"a": 1, "a": 2}'),
        ("refused", "E_SCHEMA_INVALID", "said twice"),
    ),
    "json-trailing-comma": (
        "PLAN.json",
        _pc('{"tag": "x",}'),
        ("refused", "E_PARSE_NONJSON", "JSON"),
    ),
    "json-comment": (
        "PLAN.json",
        _pc('{"tag": "x" /* dry_run: false */}'),
        ("refused", "E_PARSE_NONJSON", "JSON"),
    ),
    "json-timeout-ms-zero": (
        "PLAN.json",
        _pc('{"tag": "x"}', step_extra=', "timeout_ms": 0'),
        ("refused", "E_SCHEMA_INVALID", "timeout_ms"),
    ),
    "json-timeout-ms-negative": (
        "PLAN.json",
        _pc('{"tag": "x"}', step_extra=', "timeout_ms": -5000'),
        ("refused", "E_SCHEMA_INVALID", "timeout_ms"),
    ),
    "json-deep-args": (
        "PLAN.json",
        _pc('{"tag": "x", "d": ' + DEEP + "}"),
        ("refused", "E_CONVERT_UNSUPPORTED", "deep|safely"),
    ),
    "json-deep-metadata": (
        "PLAN.json",
        _pc('{"tag": "x"}', extra=', "estimates": ' + DEEP),
        ("refused", "E_CONVERT_UNSUPPORTED", "deep|safely"),
    ),
    # TOON: numbers, headers, length markers, delimiters, escapes
    "toon-int-2p53-plus1": (
        "PLAN.toon",
        _toon("      tag: x\n      n: 9007199254740993\n"),
        ("refused", "E_SCHEMA_INVALID", "2\\^53"),
    ),
    "toon-1e400": (
        "PLAN.toon",
        _toon("      tag: x\n      n: 1E400\n"),
        ("refused", "E_SCHEMA_INVALID", "not finite"),
    ),
    "toon-number-forms": (
        "PLAN.toon",
        _toon(
            "      tag: x\n      a: 05\n      b: -0\n      c: 1e2\n      d: 1.\n      e: .5\n      f: +5\n      g: 1_000\n      h: 0x10\n      i: -0.0\n      k: 1.0\n"
        ),
        (
            "converted",
            lambda p: (
                _params(p)
                == {
                    "tag": "x",
                    "a": "05",
                    "b": 0,
                    "c": 100,
                    "d": "1.",
                    "e": ".5",
                    "f": "+5",
                    "g": "1_000",
                    "h": "0x10",
                    "i": 0,
                    "k": 1,
                }
            ),
        ),
    ),
    "toon-tabular-dup-field": (
        "PLAN.toon",
        _toon("      tag: x\n      rows[2]{k,k}:\n        a,b\n        c,d\n"),
        ("refused", "E_SCHEMA_INVALID", "[Dd]uplicate"),
    ),
    "toon-length-over": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[3]: a,b\n"),
        ("refused", "E_SCHEMA_INVALID", "length"),
    ),
    "toon-length-under": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[1]: a,b\n"),
        ("refused", "E_SCHEMA_INVALID", "length"),
    ),
    "toon-tabular-row-wide": (
        "PLAN.toon",
        _toon("      tag: x\n      rows[1]{a,b}:\n        1,2,3\n"),
        ("refused", "E_SCHEMA_INVALID", "values"),
    ),
    "toon-list-item-dup": (
        "PLAN.toon",
        _toon("      tag: x\n      items[1]:\n        - a: 1\n          a: 2\n"),
        ("refused", "E_SCHEMA_INVALID", "[Dd]uplicate"),
    ),
    "toon-length-hash-marker": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[#2]: a,b\n"),
        ("refused", "E_SCHEMA_INVALID", "bracket|TOON"),
    ),
    "toon-bad-escape": (
        "PLAN.toon",
        _toon('      tag: "x\\/y"\n'),
        ("refused", "E_SCHEMA_INVALID", "escape"),
    ),
    "toon-pipe-delimiter": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[2|]: a,b|c\n"),
        ("converted", lambda p: _params(p) == {"tag": "x", "hosts": ["a,b", "c"]}),
    ),
    "toon-quoted-header-field": (
        "PLAN.toon",
        _toon('      tag: x\n      rows[1]{"a,b",c}:\n        1,2\n'),
        ("converted", lambda p: _params(p) == {"tag": "x", "rows": [{"a,b": 1, "c": 2}]}),
    ),
    "toon-crlf": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\n").replace("\n", "\r\n"),
        ("converted", lambda p: _params(p) == {"tag": "x", "dry_run": False}),
    ),
    "toon-deep-metadata": (
        "PLAN.toon",
        _toon(
            meta="  extra:\n"
            + "".join("    " + "  " * i + f"k{i}:\n" for i in range(3000))
            + "    "
            + "  " * 3000
            + "v: 1\n"
        ),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", "deep"),
    ),
    # markdown: list markers, bold spellings, quotes, definitions, continuations, front matter
    "md-plus-bullet": (
        "PLAN.md",
        MD.replace(TIMEOUT, "+ **Timeout**: 999s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 20"),
    ),
    "md-ordered-bullet": (
        "PLAN.md",
        MD.replace(TIMEOUT, "1. **Timeout**: 999s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 20"),
    ),
    "md-underscore-strong": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- __Timeout__: 999s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 20"),
    ),
    "md-colon-in-strong": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- **Timeout:** 999s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 20"),
    ),
    "md-quoted-bullet": (
        "PLAN.md",
        MD.replace(TIMEOUT, TIMEOUT + "> - **Retry Count**: 5\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 21"),
    ),
    "md-refdef-hides-bullet": (
        "PLAN.md",
        MD.replace(
            STEP1 + "- **ID**: step_1\n",
            STEP1 + "[r]: /u '\n- **Timeout**: 1s\n'\n- **ID**: step_1\n",
        ).replace(TIMEOUT, ""),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 16"),
    ),
    "md-refdef-hides-step": (
        "PLAN.md",
        MD.replace("## Steps\n\n", "## Steps\n\n[r]: /u '\n### Step 2: Evil\n'\n\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 1[67]"),
    ),
    "md-lazy-params": (
        "PLAN.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok",\n"dry_run": false}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID", "line 20|:19"),
    ),
    "md-lazy-shared": (
        "PLAN.md",
        MD.replace("- to: ok@example.com\n", "- to: ok@example.com\nevil@example.com\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 25"),
    ),
    "md-hard-break-shared": (
        "PLAN.md",
        MD.replace("- to: ok@example.com\n", "- to: ok@example.com  \nevil@example.com\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 25"),
    ),
    "md-front-matter": (
        "PLAN.md",
        "---\ntitle: x\nrequires_approval: true\n---\n" + MD,
        ("refused", "E_PARSE_NONJSON|E_CONVERT_UNSUPPORTED", "PLAN.md"),
    ),
    "md-table-shared": (
        "PLAN.md",
        MD.replace(
            "- to: ok@example.com\n", "| name | value |\n|---|---|\n| to | ok@example.com |\n"
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 24"),
    ),
    "md-backslash-break": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- **Timeout**: 30s\\\n"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", "timeout"),
    ),
    "md-closing-hashes-wf": (
        "PLAN.md",
        MD.replace(
            WF,
            "## Workflow Config ##\n- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 2\n",
        ),
        (
            "converted",
            lambda p: (
                _act(p).get("on_failure") == "retry" and _act(p).get("retry") == {"attempts": 2}
            ),
        ),
    ),
    "md-closing-hashes-step": (
        "PLAN.md",
        MD.replace(STEP1, "### Step 1: Record ok ###\n"),
        ("converted", lambda p: _act(p).get("why") == "Record: Record ok"),
    ),
    "md-tab-after-hashes": (
        "PLAN.md",
        MD.replace(WF, WF.replace("## ", "##\t").replace("false\n- Error", "false\n- Error")),
        ("converted", lambda p: _params(p) == {"tag": "a-ok"}),
    ),
    "md-crlf-mixed": (
        "PLAN.md",
        MD.replace("## Steps\n", "## Steps\r\n").replace(TIMEOUT, TIMEOUT.replace("\n", "\r\n")),
        ("converted", lambda p: _act(p).get("timeout") == 30),
    ),
    # markdown: bullets CommonMark reads (indented up to 3, spaces after the marker), rules, fences
    "md-bullet-indented-1": (
        "PLAN.md",
        MD.replace(TIMEOUT, " - **Timeout**: 45s\n"),
        ("converted", lambda p: _act(p).get("timeout") == 45),
    ),
    "md-bullet-indented-3": (
        "PLAN.md",
        MD.replace(TIMEOUT, "   - **Timeout**: 45s\n"),
        ("converted", lambda p: _act(p).get("timeout") == 45),
    ),
    "md-bullet-spaces-after-marker": (
        "PLAN.md",
        MD.replace(TIMEOUT, "-   **Timeout**: 45s\n"),
        ("converted", lambda p: _act(p).get("timeout") == 45),
    ),
    "md-thematic-break-dashes": (
        "PLAN.md",
        MD.replace(TIMEOUT, TIMEOUT + "- - -\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 21"),
    ),
    "md-thematic-break-stars": (
        "PLAN.md",
        MD.replace(TIMEOUT, TIMEOUT + "* * *\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 21"),
    ),
    "md-params-in-item-fence": (
        "PLAN.md",
        MD.replace(PARAMS, '- **Parameters**:\n  ```json\n  {"tag": "a-ok"}\n  ```\n'),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", "parameters"),
    ),
    # a merge's conflict markers committed as they are
    "md-conflict-in-step": (
        "PLAN.md",
        MD.replace(
            PARAMS,
            "<<<<<<< HEAD\n"
            + PARAMS
            + "=======\n"
            + PARAMS.replace("a-ok", "a-evil")
            + ">>>>>>> evil\n",
        ),
        ("refused", "E_CONVERT_UNSUPPORTED", "line 19"),
    ),
    "md-conflict-in-notes": (
        "PLAN.md",
        MD.replace(SHARED, "## Notes\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> evil\n\n" + SHARED),
        ("refused", "E_CONVERT_UNSUPPORTED", "setext"),
    ),
    "toon-conflict": (
        "PLAN.toon",
        _toon("<<<<<<< HEAD\n      tag: x\n=======\n      tag: y\n>>>>>>> evil\n"),
        ("refused", "E_SCHEMA_INVALID", "line 11"),
    ),
    "json-conflict": (
        "PLAN.json",
        _pc('\n<<<<<<< HEAD\n{"tag": "x"}\n=======\n{"tag": "y"}\n>>>>>>> evil\n'),
        ("refused", "E_PARSE_NONJSON", "line 2"),
    ),
    # markdown: an ATX heading indented 1-3 spaces is a heading to CommonMark (and a forge)
    "md-indented-step-under-objective": (
        "PLAN.md",
        IH_STEP_OBJ,
        ("refused", "E_CONVERT_UNSUPPORTED", "line 6"),
    ),
    "md-indented-step-under-notes": (
        "PLAN.md",
        IH_STEP_NOTES,
        ("refused", "E_CONVERT_UNSUPPORTED", r"line \d+"),
    ),
    "md-indented-workflow-after-notes": ("PLAN.md", IH_WF_NOTES, ("retries",)),
    "md-indented-workflow-in-objective": ("PLAN.md", IH_WF_OBJ, ("retries",)),
    "md-indented-shared-after-notes": ("PLAN.md", IH_SHARED, ("inputs",)),
    "md-indented-title": (
        "PLAN.md",
        MD.replace("# Record plan\n", "  # Record plan\n"),
        ("converted", lambda p: p["plan"]["name"] == "Record plan"),
    ),
    "md-indented-first-step": (
        "PLAN.md",
        MD.replace(STEP1, "   " + STEP1),
        ("converted", lambda p: _params(p) == {"tag": "a-ok"}),
    ),
    # fix126s: two spaces after the task's last bullet and a blank line continue that item
    # (its text starts at column 2): a heading inside the list item to CommonMark (and the
    # forge's <li>), no section; refused at its line. One space makes the section.
    "md-indented-steps-section": (
        "PLAN.md",
        MD.replace("## Steps\n", "  ## Steps\n"),
        (
            "refused",
            "E_CONVERT_UNSUPPORTED",
            r"line 13: `## Steps` is a heading inside a list item",
        ),
    ),
    "md-indented-steps-section-1": (
        "PLAN.md",
        MD.replace("## Steps\n", " ## Steps\n"),
        ("converted", lambda p: _params(p) == {"tag": "a-ok"}),
    ),
    "md-quoted-workflow-in-notes": (
        "PLAN.md",
        MD.replace(WF, "## Notes\nx\n\n> ## Workflow Config\n- Error Recovery: true\n"),
        (
            "refused",
            "E_CONVERT_UNSUPPORTED",
            r"line \d+: `> ## Workflow Config` is a heading inside a block quote",
        ),
    ),
}

# -- the daemon -----------------------------------------------------------------------------

#: slug -> (file, content): committed in one agent commit
DAEMON: dict[str, tuple[str, Any]] = {
    "d-control": ("PLAN.md", md("d-control")),
    "d-bom": ("PLAN.json", b"\xef\xbb\xbf" + _pc('{"tag": "d-bom-ok"}').encode()),
    "d-utf16": ("PLAN.json", _pc('{"tag": "d-utf16-ok"}').encode("utf-16")),
    "d-ihstep": (
        "PLAN.md",
        md("d-ihstep").replace(
            OBJ,
            OBJ
            + '\n ### Step 2: Back up first\n- **ID**: step_0\n- **Action**: rec\n- **Parameters**: {"tag": "d-ihstep-backup"}\n',
        ),
    ),
    "d-swap": ("PLAN.md", md("d-swap")),
    "d-ihwf": (
        "PLAN.md",
        md("d-ihwf").replace(
            WF,
            "## Notes\nx\n\n ## Workflow Config\n- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 2\n",
        ),
    ),
}
#: params with numbers and text each reader might take otherwise (``1E2``, ``-0.0``, 5e-324,
#: the largest double, an NFD ``e\u0301``, a surrogate pair, U+2028)
NUM_ARGS = (
    '{"tag": "%s", "a": 1E2, "b": -0.0, "c": 0.1, "d": 1.7976931348623157e308, "e": 5e-324, '
    '"f": "e\\u0301", "g": 1.5e-7, "h": 123456789.125, "i": "\\u00e9", "j": [1.0, 2.50], '
    '"k": 9007199254740991, "l": -9007199254740991.0, "m": "\\ud83d\\ude00", "n": "a\\u2028b"}'
)
NUM_TOON = (
    "      a: 1E2\n      b: -0.0\n      c: 0.1\n      d: 1.7976931348623157e308\n      e: 5e-324\n"
    "      g: 1.5e-7\n      h: 123456789.125\n      j[2]: 1.0,2.50\n      k: 9007199254740991\n"
    '      l: -9007199254740991.0\n      n: "a\\u2028b"\n'
)
DAEMON.update(
    {
        "d-num-json": (
            "PLAN.json",
            '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", "args": '
            + NUM_ARGS % "d-num-json-ok"
            + "}]}",
        ),
        "d-num-toon": (
            "PLAN.toon",
            _toon("      tag: d-num-toon-ok\n" + NUM_TOON).replace("      tag: x\n", ""),
        ),
        "d-num-md": (
            "PLAN.md",
            md("d-num-md").replace('{"tag": "d-num-md-ok"}', NUM_ARGS % "d-num-md-ok"),
        ),
    }
)
NUMS = ["d-num-json", "d-num-toon", "d-num-md"]
#: sources no reader takes for a plan: refused alike by every predictor and the daemon
ODD: dict[str, tuple[str, str]] = {
    "d-odd-list": ("PLAN.json", "[]"),
    "d-odd-empty": ("PLAN.json", ""),
    "d-odd-md-empty": ("PLAN.md", ""),
    "d-odd-toon-root-array": ("PLAN.toon", "[2]: a,b\n"),
    "d-odd-yaml-list-fence": ("PLAN.md", "```yaml\n- a\n```\n"),
    "d-odd-steps-object": ("PLAN.json", '{"plan_version": 1, "goal": "g", "steps": {"a": 1}}'),
}
DAEMON.update(ODD)
#: a 30 KB source whose PLAN.yml, every NFD pair escaped (``e\\u0301``: 3 bytes become 7), is
#: over the lab's ``limits.max_plan_bytes: 65536``
BIG_LIMIT = 65536
DAEMON["d-big"] = (
    "PLAN.json",
    '{"plan_version": 1, "goal": "g", "steps": [{"step_id": "a", "tool": "rec", "args": '
    '{"tag": "d-big-ok", "v": "' + "e\u0301" * 10000 + '"}}]}',
)
CONVERTS = ["d-control", "d-bom", "d-ihstep", "d-ihwf", "d-swap", *NUMS]


def _daemon(lab: Lab, got: dict[str, Any]) -> None:
    lab.write_config(extra=f"limits: {{max_plan_bytes: {BIG_LIMIT}}}\n")
    for slug, (name, content) in DAEMON.items():
        lab.put(f"plans/{slug}/{name}", content)
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent: sources", who=AGENT)
    pre: dict[str, Any] = {}
    asks = []
    for slug in DAEMON:
        asks.append((slug, "hash", ["hash", f"plans/{slug}"]))
        asks.append((slug, "validate", ["validate", f"plans/{slug}"]))
        asks.append((slug, "show-json", ["show", "--format", "json", f"plans/{slug}"]))

    cfg = str(lab.config)
    asks.append(("d-big", "hash-config", ["hash", "--config", cfg, "plans/d-big"]))
    asks.append(("d-big", "validate-config", ["validate", "--config", cfg, "plans/d-big"]))
    asks.append(("d-big", "show-config", ["show", "--quiet", "--config", cfg, "plans/d-big"]))

    def ask(i: int) -> None:
        slug, what, argv = asks[i]
        done = lab.cli(*argv, cwd=lab.repo)
        pre[f"{slug}:{what}"] = (done.returncode, done.stdout[-3000:], done.stderr[-1500:])

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(ask, range(len(asks))))
    got["pre"] = pre
    got["check"] = lab.check_plans("HEAD", ALICE[1], base="HEAD~1")
    got["pass1"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/")}
    got["tree1"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["frozen"] = {}
    for slug in CONVERTS:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        if path.exists():
            got["frozen"][slug] = load_yaml(path.read_text(encoding="utf-8"))
            approve_file(lab, slug)
    lab.git("add", "-A", "plans")
    lab.git("commit", "-q", "--allow-empty", "-m", "approve the plans", who=ALICE)
    # before the pass runs it, the agent replaces Alice's approved d-swap by a new source
    lab.git("rm", "-q", "plans/d-swap/PLAN.yml")
    lab.put("plans/d-swap/PLAN.md", md("d-swap").replace("d-swap-ok", "d-swap-evil"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent: the plan again, as a source", who=AGENT)
    got["swap_check"] = lab.check_plans("HEAD", ALICE[1], base="HEAD~1")
    got["pass2"] = lab.run(check=False).returncode
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/")}
    got["calls"] = {slug: lab.calls(f"{slug}-ok") for slug in DAEMON}
    got["calls"]["d-ihstep-backup"] = lab.calls("d-ihstep-backup")
    got["calls"]["d-swap-evil"] = lab.calls("d-swap-evil")
    # the agent commits a new source beside the converted (and run) plan
    lab.put("plans/d-control/PLAN.md", md("d-control").replace("d-control-ok", "d-control-evil"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent: edit the source", who=AGENT)
    beside: dict[str, Any] = {}
    for what, argv in {
        "hash": ["hash", "plans/d-control/PLAN.md"],
        "validate": ["validate", "plans/d-control/PLAN.md"],
        "show-text": ["show", "plans/d-control/PLAN.md"],
        "show-json": ["show", "--format", "json", "plans/d-control/PLAN.md"],
        "show-markdown": ["show", "--format", "markdown", "plans/d-control/PLAN.md"],
        "hash-folder": ["hash", "plans/d-control"],
    }.items():
        done = lab.cli(*argv, cwd=lab.repo)
        beside[what] = (done.returncode, done.stdout[-3000:], done.stderr[-1500:])
    got["beside"] = beside
    got["beside_check"] = lab.check("HEAD", ALICE[1], base="HEAD~1").stdout
    got["pass3"] = lab.run(check=False).returncode
    got["rows3"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/")}
    got["evil"] = lab.calls("d-control-evil")
    got["swap_late"] = lab.calls("d-swap-ok") + lab.calls("d-swap-evil")


def _convert(lab: Lab, folder: Path, name: str, content: Any) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    done = lab.cli("convert", str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-2500:], "plan": None}
    got["out"] = done.stdout[-3000:]
    if done.returncode == 0 and done.stdout.strip():
        try:
            got["plan"] = load_yaml(done.stdout)
        except Exception as why:
            got["err"] += f"\n(read back: {why})"
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

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, range(len(jobs))))
    _daemon(lab, got)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r125-sources-atk125c", _build)


def _act(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0]


def _params(plan: dict[str, Any] | None) -> dict[str, Any]:
    return _act(plan).get("params") or {}


# -- broken ---------------------------------------------------------------------------------

#: Fixed (fix126s): md-indented-heading-read-as-text (see the docstring).
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """``plangate convert``: a source git or a forge shows otherwise than the converter reads
    it is refused with its code and location; one read alike converts to what it shows."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    want = CONVERT[vid][2]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if want[0] == "refused":
        assert got["rc"] == 1, (got["rc"], _act(got["plan"]), got["out"][-1500:], got["err"])
        assert re.search(r"\b(" + want[1] + r")\b", got["err"]), got["err"]
        assert re.search(want[2], got["err"]), got["err"]
        return
    if want[0] == "retries":
        # the forge shows a Workflow Config section with Error Recovery and Max Retries 2:
        # the plan retries, or the source is refused at the heading
        if got["rc"] == 1:
            assert re.search(r"E_CONVERT_UNSUPPORTED", got["err"]), got["err"]
            return
        act = _act(got["plan"])
        assert act.get("on_failure") == "retry" and act.get("retry") == {"attempts": 2}, (
            act,
            got["plan"],
        )
        return
    if want[0] == "inputs":
        if got["rc"] == 1:
            assert re.search(r"E_CONVERT_UNSUPPORTED", got["err"]), got["err"]
            return
        assert (got["plan"] or {}).get("inputs") == {"to": "ok@example.com"}, got["plan"]
        return
    assert got["rc"] == 0 and got["plan"], (got["rc"], got["err"])
    assert want[1](got["plan"]), got["plan"]


# -- daemon ---------------------------------------------------------------------------------


def _ran(lab: Lab, slug: str) -> list[Any]:
    return [json.loads(c["stdin"]) for c in lab.got["calls"][slug]]  # type: ignore[attr-defined]


def _row(lab: Lab, slug: str, which: str = "rows2") -> dict[str, Any]:
    return lab.got[which].get(f"plans/{slug}") or {}  # type: ignore[attr-defined]


def _code(row: dict[str, Any]) -> str | None:
    return (row.get("problem") or {}).get("code")


@pytest.mark.parametrize("slug", ["d-control", "d-bom"])
def test_source_runs_as_predicted(lab: Lab, slug: str) -> None:
    """A plain source (and a JSON one with a UTF-8 BOM, which no diff shows and no reader
    keeps) is converted, frozen at the hash ``hash``/``validate``/``show``/``check`` said
    before the pass, and runs once as written on Alice's approval."""
    got = lab.got  # type: ignore[attr-defined]
    rc, out, err = got["pre"][f"{slug}:hash"]
    assert rc == 0 and out.strip().startswith("sha256:"), (rc, out, err)
    predicted = out.strip().split()[0]
    shown = json.loads(got["pre"][f"{slug}:show-json"][1])
    assert shown["hash"] == predicted, shown.get("hash")
    assert predicted in got["pre"][f"{slug}:validate"][1], got["pre"][f"{slug}:validate"]
    assert got["check"].get(f"plans/{slug}", (None,))[0] == "convert", got["check"]
    assert _row(lab, slug, "rows1").get("frozen_hash") == predicted, _row(lab, slug, "rows1")
    assert _ran(lab, slug) == [{"tag": f"{slug}-ok"}], _ran(lab, slug)


def test_utf16_source_held(lab: Lab) -> None:
    """A UTF-16 ``PLAN.json`` (git: ``Binary files differ``) is never converted nor run; its
    row is ``unreadable`` with a code, ``hash``/``validate``/``show`` refuse it, ``check`` says
    it will not convert, and the other plans of the pass go on."""
    got = lab.got  # type: ignore[attr-defined]
    assert _ran(lab, "d-utf16") == []
    assert "plans/d-utf16/PLAN.yml" not in got["tree1"], got["tree1"]
    row = _row(lab, "d-utf16", "rows1")
    assert row.get("status") == "unreadable" and _code(row), row
    for what in ("hash", "validate", "show-json"):
        rc, out, err = got["pre"][f"d-utf16:{what}"]
        assert rc == 1 and "sha256:" not in out and re.search(r"\bE_[A-Z_]+\b", err), (
            what,
            rc,
            out,
            err,
        )
    assert got["check"].get("plans/d-utf16", (None,))[0] in ("invalid", "held"), got["check"]
    assert _ran(lab, "d-control"), "the other plans of the pass stalled"


def test_utf16_source_code_agrees(lab: Lab) -> None:
    """What ``hash``/``validate``/``show`` say of a source that is not UTF-8 is the code the
    daemon's row then says (errors.md: text that is not UTF-8 is ``E_YAML_PARSE``)."""
    got = lab.got  # type: ignore[attr-defined]
    said = re.search(r"\b(E_[A-Z_]+)\b", got["pre"]["d-utf16:hash"][2])
    row = _row(lab, "d-utf16", "rows1")
    assert said and _code(row) == said.group(1), (
        said and said.group(1),
        _code(row),
        row.get("reason"),
    )


def test_indented_step_held(lab: Lab) -> None:
    """A ``PLAN.md`` whose objective holds `` ### Step 2: Back up first`` (one space before
    it: a step heading on every forge) is refused at that line (round 116: a step record
    under a section kept as text "would never run"): nothing converts or runs."""
    got = lab.got  # type: ignore[attr-defined]
    assert "plans/d-ihstep/PLAN.yml" not in got["tree1"], got["frozen"].get("d-ihstep")
    assert _ran(lab, "d-ihstep") == [], _ran(lab, "d-ihstep")
    assert _code(_row(lab, "d-ihstep", "rows1")) == "E_CONVERT_UNSUPPORTED", _row(
        lab, "d-ihstep", "rows1"
    )


def test_indented_step_predicted(lab: Lab) -> None:
    """Whatever the converter makes of the indented step heading, ``hash``/``check`` say it
    before the pass: the frozen hash is the one predicted, or both refuse."""
    got = lab.got  # type: ignore[attr-defined]
    rc, out, _ = got["pre"]["d-ihstep:hash"]
    row = _row(lab, "d-ihstep", "rows1")
    if rc == 0:
        assert row.get("frozen_hash") == out.strip().split()[0], row
        assert got["check"]["plans/d-ihstep"][0] == "convert", got["check"]
    else:
        assert row.get("status") in ("unreadable", "invalid"), row
    assert _ran(lab, "d-ihstep-backup") == [], "a step nobody saw ran"


def test_indented_workflow_frozen_as_shown(lab: Lab) -> None:
    """A ``PLAN.md`` whose `` ## Workflow Config`` (one space before it) turns Error Recovery
    on with Max Retries 2 is frozen with that retry, or refused at the heading."""
    got = lab.got  # type: ignore[attr-defined]
    plan = got["frozen"].get("d-ihwf")
    if plan is None:
        assert _code(_row(lab, "d-ihwf", "rows1")) == "E_CONVERT_UNSUPPORTED", _row(
            lab, "d-ihwf", "rows1"
        )
        return
    act = _act(plan)
    assert act.get("on_failure") == "retry" and act.get("retry") == {"attempts": 2}, act


def test_source_beside_plan_not_run(lab: Lab) -> None:
    """A source committed again beside the converted PLAN.yml is a note: nothing of it runs,
    the plan's row keeps its hash, and ``hash``/``validate`` of the source and ``check`` of
    the commit warn that the PLAN.yml is what the controller runs."""
    got = lab.got  # type: ignore[attr-defined]
    assert got["evil"] == [], got["evil"]
    assert _row(lab, "d-control", "rows3").get("hash") == _row(lab, "d-control", "rows1").get(
        "hash"
    )
    for what in ("hash", "validate"):
        rc, out, err = got["beside"][what]
        assert re.search(r"PLAN\.yml is beside it", err), (what, rc, out, err)
    assert re.search(r"PLAN\.md is beside PLAN\.yml", got["beside_check"]), got["beside_check"][
        -2000:
    ]
    rc, out, _ = got["beside"]["hash-folder"]
    assert rc == 0 and out.strip().split()[0] == _row(lab, "d-control", "rows1").get("hash")


@pytest.mark.parametrize("what", ["show-text", "show-json", "show-markdown"])
def test_show_source_beside_plan(lab: Lab, what: str) -> None:
    """``show`` of a source beside a PLAN.yml says, as ``hash`` and ``validate`` do, that the
    controller runs the PLAN.yml (or refuses): never the source's plan alone as "waiting to be
    frozen" under a hash the controller will never freeze."""
    rc, out, err = lab.got["beside"][what]  # type: ignore[attr-defined]
    assert rc != 0 or re.search(r"beside|controller runs|not the plan", out + err), (
        rc,
        out[:1500],
        err,
    )


def test_source_swapped_after_approval(lab: Lab) -> None:
    """Alice approved the converted ``d-swap``; before any pass ran it, the agent removed the
    PLAN.yml and committed a new ``PLAN.md`` (another tag). The new source converts to a plan
    waiting for an approval: neither version runs (two passes), and ``check`` of the commit
    predicts no run."""
    got = lab.got  # type: ignore[attr-defined]
    assert _ran(lab, "d-swap") == [] and _ran(lab, "d-swap-evil") == [] and got["swap_late"] == []
    assert _row(lab, "d-swap").get("status") == "pending_approval", _row(lab, "d-swap")
    assert got["swap_check"].get("plans/d-swap", (None,))[0] in ("convert", "none"), got[
        "swap_check"
    ]


@pytest.mark.parametrize("slug", NUMS)
def test_numbers_reach_tool_as_shown(lab: Lab, slug: str) -> None:
    """A JSON, TOON and markdown source holding ``1E2``, ``-0.0``, ``0.1``, the largest double,
    5e-324, an NFD ``e\u0301``, ``é``, ``[1.0, 2.50]``, +-(2^53-1), a surrogate pair and U+2028:
    the tool gets exactly the params ``show --format json`` of the source printed before the
    pass (integral floats as integers, text as written), once, on Alice's approval."""
    got = lab.got  # type: ignore[attr-defined]
    rc, out, err = got["pre"][f"{slug}:show-json"]
    assert rc == 0, (rc, err)
    shown = json.loads(out)["actions"][0]["params"]
    ran = _ran(lab, slug)
    assert ran == [shown], (ran, shown)
    assert shown["a"] == 100 and shown["b"] == 0 and shown["j"] == [1, 2.5], shown
    if slug != "d-num-toon":
        assert shown["f"] == "e\u0301" and shown["m"] == "\U0001f600", shown


@pytest.mark.parametrize("slug", list(ODD))
def test_odd_source_refused_alike(lab: Lab, slug: str) -> None:
    """A source that is no plan (a JSON list, an empty file, a TOON root array, a fenced YAML
    list, ``steps`` an object) is refused by ``hash`` with a code, ``check`` says ``invalid``,
    the daemon's row says the same code, nothing is written, and the pass goes on."""
    got = lab.got  # type: ignore[attr-defined]
    rc, out, err = got["pre"][f"{slug}:hash"]
    said = re.search(r"\b(E_[A-Z_]+)\b", err)
    assert rc == 1 and "sha256:" not in out and said, (rc, out, err)
    assert got["check"].get(f"plans/{slug}", (None,))[0] == "invalid", got["check"].get(
        f"plans/{slug}"
    )
    row = _row(lab, slug, "rows1")
    assert row.get("status") == "unreadable" and _code(row) == said.group(1), (said.group(1), row)
    assert f"plans/{slug}/PLAN.yml" not in got["tree1"]
    assert _ran(lab, "d-control"), "the pass stalled"


def test_big_source_held(lab: Lab) -> None:
    """A source under the size limit whose PLAN.yml is over it (escapes take 7 bytes where the
    source took 3): ``validate --config`` says ``E_PLAN_TOO_LARGE``, ``check`` says ``invalid``,
    the daemon's row says ``E_PLAN_TOO_LARGE`` and nothing runs."""
    got = lab.got  # type: ignore[attr-defined]
    assert len(DAEMON["d-big"][1].encode()) < BIG_LIMIT
    rc, out, err = got["pre"]["d-big:validate-config"]
    assert rc == 1 and "E_PLAN_TOO_LARGE" in out + err, (rc, out, err)
    assert got["check"].get("plans/d-big", (None,))[0] == "invalid", got["check"].get("plans/d-big")
    row = _row(lab, "d-big", "rows1")
    assert "E_PLAN_TOO_LARGE" in json.dumps(row), row
    assert lab.calls("d-big-ok") == []


def test_big_source_hash_predicts(lab: Lab) -> None:
    """``hash --config`` of that source says ``E_PLAN_TOO_LARGE`` and no hash, as it refuses a
    source whose plan is over ``limits.max_actions``: "``plangate hash`` of a source prints the
    hash the controller will freeze", and the controller freezes nothing."""
    rc, out, err = lab.got["pre"]["d-big:hash-config"]  # type: ignore[attr-defined]
    assert rc == 1 and "sha256:" not in out and "E_PLAN_TOO_LARGE" in err, (rc, out[:200], err)
