# ruff: noqa: E501
r"""Round 123, sources (atk123c): what a reviewer reads of a plan (the PLAN.yml in a pull
request, the source it was converted from, ``plangate show``) is what the controller freezes
and runs; a plan the reviewer cannot read the same way is refused with its ``E_...`` code;
``check``/``hash``/``validate``/``show`` predict what the daemon does.

Lab (one, module scope, built once under ``shared``'s lock; the bench's config, approvers
``alice@example.com``/``*@ops.example.com``, the recorder ``rec``). Part 1, ``plangate
convert SRC`` (no config) of one source per id (``test_convert``, 48 ids): TOON values,
list items, tabular cells and quoted keys with U+200E/U+2064/U+200B/U+2800/U+FE0F/U+FFA0 at
an edge, U+2028 and VT in a TOON value; NFC twins (``café``/``cafe<U+0301>``, KELVIN SIGN/``K``)
in TOON, JSON (escaped, nested, in a list), markdown ``Parameters`` and ``## Shared Inputs``;
param keys holding U+E0001 written as a surrogate pair, a lone surrogate (key and value),
U+FE0F/U+FE00 after ASCII, U+2800, U+1D173, U+13430, U+FFA0, U+1160, U+E0FFF; a step id
``fetch<U+FE0F>``; markdown bullets indented by U+00A0, a marker followed by U+200B, U+3000,
U+2002; ``Error Recovery: false<U+200E>``, ``Timeout: 4<U+200B>5s``, a shared-input name
with U+200E, ``## Steps<U+FE0F>``, ``ID: step_1<U+FE0F>``; fenced YAML with a flow key
``dry_run<U+200E>`` and a merge key; ``dry_run`` said twice as ``dry\u005frun`` (JSON) and
``"dry_run"`` (TOON); a ``Parameters`` object followed by U+200E, a key escaped
``dry_run\u200e``; an ActionPlan whose nested kid's payload key holds U+2065; two controls.
Part 2, PLAN.yml texts read by ``validate --json`` and ``show --format json``
(``test_plan_yml_plain_edge``, 20 ids): the invisible-edge rule in flow mappings and
sequences, an explicit ``?`` key, a nested key, a sequence item, a folded plain scalar, a
leading BOM, U+FE0F/U+2800/U+2065/U+FFA0/U+3000 edges, NFC/KELVIN twin keys (block and
flow), an anchor name, a key said plain and quoted, a merge key overridden. Part 3, the
daemon: the agent commits in one commit 12 ``PLAN.md`` sources each hidden by git's own
reading of a ``.gitattributes`` line (root: a quoted pattern, an octal-escaped pattern
``"plans/d-octal/PLAN\056md"``, ``*.md`` glob, ``**/`` prefix with ``binary``, a bracket class
``PLAN.[mM]d``, a CRLF line, a macro of a macro, ``linguist-generated=true``,
``gitlab-generated``, ``plans/d-folder/**``, padded white space; ``plans/team/.gitattributes``
for ``plans/team/d-team``), a ``PLAN.md`` symlink to ``notes/real.md``, an ActionPlan
``PLAN.json`` with a nested step beside the agent's ``step-2/PLAN.yml``, two sources in one
folder, a source beside a ``plan.yml``, and three controls (``diff`` set again by the plan
folder's attributes, ``!diff``, a plain one). Before the pass: ``hash`` and ``show --format
json`` of each folder, and for 6 held ones and the control ``show`` as text, markdown,
toon, of the source file, and with ``--config``; ``check`` of the commit; ``run --once``;
Alice approves every pending PLAN.yml; a second pass; ``status --json`` after each.

Seen (round 123: 165 ids, 121 passed, 44 xfailed; ~45-50 s wall with ``-n 1`` on a shared
box). 1 class broke.

1. **show-ignores-source-hold** (44): ``{d-quoted,d-octal,d-glob,d-star2,d-class,d-crlf,
   d-macro2,d-lgtrue,d-gitlab,d-folder,d-ws,d-team,d-symlink,d-nestkid}:show-json`` and
   ``{d-quoted,d-lgtrue,d-gitlab,d-team,d-symlink,d-nestkid}:{show-text,show-markdown,
   show-toon,show-file,show-config}``. The daemon holds each of these committed sources
   (rows ``unreadable`` with ``E_ATTRIBUTE_UNSUPPORTED``, ``E_UNSAFE_PATH`` for the symlink,
   ``E_CONVERT_UNSUPPORTED`` "converting would replace the plan plans/d-nestkid/step-2/PLAN.yml
   the branch already holds"), ``check`` says ``invalid``/``held`` and ``hash``/``validate``/
   ``freeze --check`` say the code and no hash (all held), yet ``plangate show`` of the
   folder or of the source file, in every format, exits 0 and renders the converted plan
   with ``Status: pending_approval - waiting to be frozen`` and ``Hash: sha256:...  (not
   frozen)``: a hash nothing will ever freeze, the plan shown as if it were on its way. For
   the symlink it follows the link and renders ``notes/real.md`` (the daemon reads no
   link). With ``--config`` the JSON ``status`` is ``unreadable`` and the code goes to stderr,
   but the plan and its hash are still printed and the exit is 0. docs/formats.md, "Checking a
   source before committing it": "a source the daemon would not convert (two sources, a twin,
   a claim of the plan file's place beside it) is its folder's code, as its row says
   (``E_PLAN_AMBIGUOUS``; ``hash``, ``show`` and ``freeze`` answer the same and write nothing;
   round 74). So is a source the daemon holds by the commit the checkout is at (round 122)
   ... the committed ``.gitattributes`` hide it (``E_ATTRIBUTE_UNSUPPORTED``), it is a
   symlink or gitlink (``E_UNSAFE_PATH``), or its conversion would write over a plan file";
   and "Rendering": ``show`` of a source "is shown as the daemon converts it ... (its hash is
   the one the controller will freeze ...); a source that does not convert shows the
   conversion's problems with their codes". Round 122's fix gave the hold rule to ``hash``,
   ``validate`` and ``freeze --check`` (``CheckoutHolds``) and gave ``show`` the source's
   conversion, but ``show`` does not ask the hold. (The E_PLAN_AMBIGUOUS holds, ``d-two``
   and ``d-claim``, are refused by ``show``: held.) Reproduce: in a plans repo, ``echo
   'plans/x/PLAN.md linguist-generated' > .gitattributes``, a markdown plan at
   ``plans/x/PLAN.md``, commit; ``plangate hash plans/x`` -> ``E_ATTRIBUTE_UNSUPPORTED``, exit
   1; ``plangate show plans/x`` -> ``Hash: sha256:...  (not frozen)``, exit 0; ``plangate
   run --once`` -> row ``unreadable`` ``E_ATTRIBUTE_UNSUPPORTED``, nothing converted.

Fixed (2026-12-07, show124): ``show`` of a source converted it without asking the hold
rules ``hash``, ``validate`` and ``freeze`` ask (``commands/show.py`` called
``converted_source`` with no ``holds``). It now asks them of the commit the checkout is at
(``_shared.checkout_holds``), so a held source is its code, exit 1, no plan, no hash.

Held: every convert variant of part 1 is refused with its code and location (the round-122
fixes cover list items, tabular cells, quoted TOON keys, U+FE0F after ASCII, U+2800/U+FFA0/
U+1160 fillers, surrogate-pair escapes; NFC/KELVIN twins in TOON, nested JSON, lists,
markdown ``Parameters``; a lone surrogate is ``E_CONVERT_UNSUPPORTED``; the markdown bullet
rule refuses U+00A0 indentation and U+200B/U+3000/U+2002 after a marker); the controls
convert as written; every PLAN.yml variant of part 2 is ``E_YAML_PARSE`` at its line and
``show`` prints no plan. Daemon: every attribute spelling git honours (quoted, octal escape,
glob, ``**``, class, CRLF line, nested macro, ``=true``, ``gitlab-generated``, folder
``**``, padded white space, a parent folder's file) holds the source with
``E_ATTRIBUTE_UNSUPPORTED`` (row, ``check``, ``hash``) and nothing ran; the symlink and the
nested step over the agent's kid are held (``E_UNSAFE_PATH``, ``E_CONVERT_UNSUPPORTED``);
the controls (``diff`` re-set, ``!diff``, plain) ran once as written on Alice's approval,
``hash``/``show`` of the plain one predicting the frozen hash.

Suspected, not asserted: a markdown shared input whose value ends with U+200E
(``- to: ok@example.com<U+200E>``) converts to ``"ok@example.com\u200e"`` (escaped in the
PLAN.yml; the source's diff shows ``ok@example.com``; no doc line extends the edge rule to
markdown bullet values, which "render as written"); ``- **Action**: rec<U+200E>`` and a
Plan Contract tool ``rec<U+200B>`` become the tool ``rec_`` (noted in ``tool_names``);
tools ``d<U+00E9>ploy`` and ``de<U+0301>ploy`` (one name to a reviewer) convert to two tools
``d_ploy`` and ``de_ploy`` (not refused as one name twice); a key ``dry<U+FF3F>run`` beside
``dry_run`` converts (NFKC twins are not NFC twins); markdown shared-input NFC twins are
refused only after conversion, as the converted PLAN.yml's ``E_YAML_PARSE`` at its own
line 12 (held: exit 1, row ``E_CONVERT_UNSUPPORTED``); ``**/x/PLAN.md binary`` followed by
a later ``*.md diff`` holds a source whose ``git log -p`` shows its text (over-refusal, seen
in scratch, not asserted); ``PLAN.markdown`` in a plan folder gets no row at all.

Not tried: MCP ``validate``/``submit``, remote mode, the web UI, ``working-tree-encoding``,
filter drivers (``filter=lfs``), a submodule with content, case-only renames after a
conversion, libraries pinned by hash onto a held source, Agent Plan sources (the shape I
wrote was not detected), ``show`` of a gitlink source, uncommitted ``.gitattributes`` edits.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, plan_text
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
TIMEOUT = "- **Timeout**: 30s\n"
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
WF = "- Parallel Execution: false\n- Error Recovery: false\n"
SHARED = "- to: ok@example.com\n"
assert TIMEOUT in MD and PARAMS in MD and WF in MD and SHARED in MD


def _pc(args: str, tool: str = "rec") -> str:
    """A Plan Contract whose one step calls ``tool`` with ``args`` (JSON text, as written)."""
    return (
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", '
        '"tool": "' + tool + '", "args": ' + args + "}]}"
    )


def _toon(params: str = "      tag: x\n") -> str:
    """The task/step plan in TOON, its one step's ``parameters`` lines ``params``."""
    return (
        "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + params
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
    )


def _key(cp: int) -> str:
    """A Plan Contract whose args hold the key ``dry_run`` + the code point ``cp``, raw."""
    return _pc('{"tag": "x", "dry_run' + chr(cp) + '": true}')


def _ap_kid_key() -> str:
    """An ActionPlan whose nested kid's payload holds the key ``dry_run<U+2065>``."""
    kid_step = {
        "type": "custom",
        "action_type": "rec",
        "payload": {"tag": "k", "dry_run\u2065": True},
    }
    kid = {
        "plan_version": 1,
        "title": "K",
        "steps": [{"step_number": 1, "action": kid_step, "description": "k"}],
    }
    parent_step = {"type": "custom", "action_type": "rec", "payload": {"tag": "x"}}
    return json.dumps(
        {
            "plan_version": 1,
            "title": "T",
            "steps": [
                {"step_number": 1, "action": parent_step, "description": "d"},
                {
                    "step_number": 2,
                    "action": {"type": "nested_plan", "plan": kid},
                    "description": "n",
                },
            ],
        },
        ensure_ascii=False,
    )


TWICE = r"said twice|NFC"

#: vid -> (file name, content, expectation). ("refused", code regex, text regex): exit 1 with
#: the code; ("params", {...}): converted, action 1's params exactly.
CONVERT: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    # TOON: the round-122 edge rule, at a list item, a tabular row's cell, a quoted key
    "toon-list-item-lrm:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[2]: web\u200e,db\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "toon-list-item-2064:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      flags[1]: true\u2064\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+2064"),
    ),
    "toon-table-cell-lrm:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      rows[1]{a,b}:\n        ok\u200e,1\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "toon-quoted-key-zwsp:refused": (
        "PLAN.toon",
        _toon('      tag: x\n      "dry_run\u200b": true\n'),
        ("refused", "E_SCHEMA_INVALID", r"U\+200B"),
    ),
    "toon-value-braille-blank:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u2800\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+2800"),
    ),
    "toon-value-vs16-after-ascii:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\ufe0f\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+FE0F"),
    ),
    "toon-value-halfwidth-filler:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\uffa0\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+FFA0"),
    ),
    "toon-key-vs16:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run\ufe0f: true\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+FE0F"),
    ),
    "toon-u2028-in-value:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      note: a\u2028dry_run: true\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"U\+2028"),
    ),
    "toon-vt-in-value:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      note: a\x0bb\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"U\+000B"),
    ),
    # NFC twins beyond round 122's JSON pair
    "toon-nfc-twin-keys:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      caf\u00e9: safe\n      cafe\u0301: evil\n"),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "toon-kelvin-twin-keys:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      \u212a: 1\n      K: 2\n"),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "json-kelvin-twin-keys:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "\u212a": 1, "K": 2}'),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "json-nfc-twin-escaped:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "caf\\u00e9": "safe", "cafe\\u0301": "evil"}'),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "json-nfc-twin-nested:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "o": {"caf\u00e9": "safe", "cafe\u0301": "evil"}}'),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "json-nfc-twin-in-list:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "o": [{"caf\u00e9": "safe", "cafe\u0301": "evil"}]}'),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "md-nfc-twin-params:refused": (
        "PLAN.md",
        MD.replace(
            PARAMS, '- **Parameters**: {"tag": "a-ok", "caf\u00e9": "s", "cafe\u0301": "e"}\n'
        ),
        ("refused", "E_SCHEMA_INVALID", TWICE),
    ),
    "md-nfc-twin-shared-inputs:refused": (
        "PLAN.md",
        MD.replace(SHARED, "- caf\u00e9: s\n- cafe\u0301: e\n"),
        ("refused", "E_SCHEMA_INVALID|E_YAML_PARSE", r"duplicate|said twice|NFC"),
    ),
    # the name rule (one Unicode-property class): keys written as surrogate pairs, variation
    # selectors after ASCII, blank glyphs, fillers, a musical format control
    "json-key-tag-char-surrogates:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "dry_run\\udb40\\udc01": true}'),
        ("refused", "E_SCHEMA_INVALID", r"U\+E0001"),
    ),
    "json-key-lone-surrogate:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "dry_run\\udc00": true}'),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID|E_PARSE_NONJSON", r"surrogate"),
    ),
    "json-value-lone-surrogate:refused": (
        "PLAN.json",
        _pc('{"tag": "x\\ud800"}'),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID|E_PARSE_NONJSON", r"surrogate"),
    ),
    "json-key-vs16:refused": (
        "PLAN.json",
        _key(0xFE0F),
        ("refused", "E_SCHEMA_INVALID", r"U\+FE0F"),
    ),
    "json-key-vs1:refused": (
        "PLAN.json",
        _key(0xFE00),
        ("refused", "E_SCHEMA_INVALID", r"U\+FE00"),
    ),
    "json-key-braille-blank:refused": (
        "PLAN.json",
        _key(0x2800),
        ("refused", "E_SCHEMA_INVALID", r"U\+2800"),
    ),
    "json-key-u1d173:refused": (
        "PLAN.json",
        _key(0x1D173),
        ("refused", "E_SCHEMA_INVALID", r"U\+1D173"),
    ),
    "json-key-u13430:refused": (
        "PLAN.json",
        _key(0x13430),
        ("refused", "E_SCHEMA_INVALID", r"U\+13430"),
    ),
    "json-key-halfwidth-filler:refused": (
        "PLAN.json",
        _key(0xFFA0),
        ("refused", "E_SCHEMA_INVALID", r"U\+FFA0"),
    ),
    "json-key-jungseong-filler:refused": (
        "PLAN.json",
        _key(0x1160),
        ("refused", "E_SCHEMA_INVALID", r"U\+1160"),
    ),
    "json-key-ue0fff:refused": (
        "PLAN.json",
        _key(0xE0FFF),
        ("refused", "E_SCHEMA_INVALID", r"U\+E0FFF"),
    ),
    "json-stepid-vs16:refused": (
        "PLAN.json",
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "fetch", '
        '"tool": "rec", "args": {"tag": "x"}}, {"step_id": "fetch\ufe0f", "tool": "rec", '
        '"args": {"tag": "y"}}]}',
        ("refused", "E_SCHEMA_INVALID", r"step_id|step id"),
    ),
    # markdown: bullets CommonMark does not see, values a forge shows otherwise
    "md-nbsp-indented-bullet:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "\u00a0- **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"line \d+"),
    ),
    "md-zwsp-after-marker:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "-\u200b **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"line \d+"),
    ),
    "md-ideographic-space-marker:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "-\u3000**Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"line \d+"),
    ),
    "md-en-space-marker-workflow:refused": (
        "PLAN.md",
        MD.replace(WF, "- Parallel Execution: false\n-\u2002Error Recovery: true\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"line \d+"),
    ),
    "md-workflow-false-lrm:refused": (
        "PLAN.md",
        MD.replace(WF, "- Parallel Execution: false\n- Error Recovery: false\u200e\n"),
        ("refused", "E_SCHEMA_INVALID", r"error_recovery"),
    ),
    "md-timeout-zwsp:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- **Timeout**: 4\u200b5s\n"),
        ("refused", "E_SCHEMA_INVALID", r"timeout"),
    ),
    "md-shared-key-lrm:refused": (
        "PLAN.md",
        MD.replace(SHARED, "- to\u200e: ok@example.com\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "md-heading-vs16:refused": (
        "PLAN.md",
        MD.replace("## Steps\n", "## Steps\ufe0f\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+FE0F"),
    ),
    "md-id-vs16:refused": (
        "PLAN.md",
        MD.replace("- **ID**: step_1\n", "- **ID**: step_1\ufe0f\n"),
        ("refused", "E_SCHEMA_INVALID", r"step id"),
    ),
    "md-fenced-yaml-flow-key-lrm:refused": (
        "PLAN.md",
        "```yaml\n" + plan_text("y", params="o: {dry_run\u200e: true}\n") + "```\n",
        ("refused", "E_YAML_PARSE", r"U\+200E"),
    ),
    # the same key said twice in another spelling; a merge key; a nested ActionPlan's kid
    "json-dup-key-by-escape:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "dry_run": false, "dry\\u005frun": true}'),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "toon-dup-key-quoted:refused": (
        "PLAN.toon",
        _toon('      tag: x\n      dry_run: false\n      "dry_run": true\n'),
        ("refused", "E_SCHEMA_INVALID", r"[Dd]uplicate|said twice"),
    ),
    "md-params-trailing-lrm:refused": (
        "PLAN.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok"}\u200e\n'),
        ("refused", "E_SCHEMA_INVALID", r"parameters"),
    ),
    "md-params-key-escaped-lrm:refused": (
        "PLAN.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok", "dry_run\\u200e": true}\n'),
        ("refused", "E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "md-fenced-yaml-merge-key:refused": (
        "PLAN.md",
        "```yaml\n" + plan_text("y", params="<<: {dry_run: true}\n") + "```\n",
        ("refused", "E_YAML_PARSE", r"merge"),
    ),
    "ap-nested-kid-key-u2065:refused": (
        "PLAN.json",
        _ap_kid_key(),
        ("refused", "E_SCHEMA_INVALID", r"U\+2065"),
    ),
    # controls: read as shown
    "toon-plain:read": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\n"),
        ("params", {"tag": "x", "dry_run": False}),
    ),
    "json-emoji-vs16-value:read": (
        "PLAN.json",
        _pc('{"tag": "x", "note": "\u2764\ufe0f"}'),
        ("params", {"tag": "x", "note": "\u2764\ufe0f"}),
    ),
}


def _yml(extra: str) -> str:
    """The bench's one-action PLAN.yml with ``extra`` lines (6-space indent) in its params."""
    return plan_text("y", params=extra)


#: PLAN.yml texts read by ``validate --json`` and ``show --format json`` (no config): a plain
#: key or value whose edge holds a character no diff shows is ``E_YAML_PARSE`` at its line,
#: in flow style, an explicit key, a nested mapping, a sequence, a multi-line scalar too
YAML_EDGE: dict[str, str] = {
    "yml-flow-key-lrm:refused": "o: {dry_run\u200e: true}\n",
    "yml-flow-value-2064:refused": "o: {dry_run: true\u2064}\n",
    "yml-flow-seq-lrm:refused": "hosts: [web, db\u200e]\n",
    "yml-explicit-key-lrm:refused": "? dry_run\u200e\n: true\n",
    "yml-key-vs16:refused": "dry_run\ufe0f: true\n",
    "yml-value-vs16:refused": "dry_run: true\ufe0f\n",
    "yml-key-braille-blank:refused": "dry_run\u2800: true\n",
    "yml-value-u2065:refused": "dry_run: true\u2065\n",
    "yml-key-halfwidth-filler:refused": "dry_run\uffa0: true\n",
    "yml-multiline-plain-edge:refused": "note: first\n  second\u200e\n",
    "yml-nested-key-lrm:refused": "o:\n  dry_run\u200e: true\n",
    "yml-seq-item-lrm:refused": "hosts:\n  - db\u200e\n",
    "yml-nfc-twin-keys:refused": "caf\u00e9: safe\ncafe\u0301: evil\n",
    "yml-kelvin-twin-keys:refused": "\u212a: 1\nK: 2\n",
    "yml-nfc-twin-flow:refused": "o: {caf\u00e9: safe, cafe\u0301: evil}\n",
    "yml-value-ideographic-space:refused": "dry_run: true\u3000\n",
    "yml-key-lead-bom:refused": "\ufeffdry_run: true\n",
    "yml-anchor-lrm:refused": "a: &x\u200e true\n",
    "yml-dup-key-quoted:refused": 'dry_run: false\n"dry_run": true\n',
    "yml-merge-key-override:refused": "<<: {dry_run: true}\ndry_run: false\n",
}

# -- the daemon ------------------------------------------------------------------------------


def _nested_ap(tag: str) -> str:
    """An ActionPlan whose step 2 is a nested plan (converted to ``<folder>/step-2``)."""
    step = {"type": "custom", "action_type": "rec"}
    kid = {
        "plan_version": 1,
        "title": "Kid",
        "steps": [
            {
                "step_number": 1,
                "action": {**step, "payload": {"tag": tag, "n": "kid"}},
                "description": "kid step",
            }
        ],
    }
    return json.dumps(
        {
            "plan_version": 1,
            "title": "Parent",
            "steps": [
                {
                    "step_number": 1,
                    "action": {**step, "payload": {"tag": tag, "n": "parent"}},
                    "description": "first",
                },
                {
                    "step_number": 2,
                    "action": {"type": "nested_plan", "plan": kid},
                    "description": "nested",
                },
            ],
        },
        indent=1,
    )


#: the root .gitattributes: each line hides one source the way git reads attributes
ROOT_ATTRS = (
    '"plans/d-quoted/PLAN.md" -diff\n'
    '"plans/d-octal/PLAN\\056md" -diff\n'
    "plans/d-glob/*.md -diff\n"
    "**/d-star2/PLAN.md binary\n"
    "plans/d-class/PLAN.[mM]d -diff\n"
    "plans/d-crlf/PLAN.md -diff\r\n"
    "[attr]deep hidden2\n[attr]hidden2 -diff\nplans/d-macro2/PLAN.md deep\n"
    "plans/d-lgtrue/PLAN.md linguist-generated=true\n"
    "plans/d-gitlab/PLAN.md gitlab-generated\n"
    "plans/d-folder/** -diff\n"
    "plans/d-ws/PLAN.md   \t -diff   \n"
    "plans/d-reenable/PLAN.md -diff\n"
    "plans/d-unspec/PLAN.md !diff\n"
)

#: sources some .gitattributes hides: the daemon holds them (E_ATTRIBUTE_UNSUPPORTED)
ATTR_HELD = [
    "d-quoted",
    "d-octal",
    "d-glob",
    "d-star2",
    "d-class",
    "d-crlf",
    "d-macro2",
    "d-lgtrue",
    "d-gitlab",
    "d-folder",
    "d-ws",
    "d-team",
]
#: sources the daemon holds otherwise: a symlinked PLAN.md, a nested step over the agent's kid
OTHER_HELD = {"d-symlink": "E_UNSAFE_PATH", "d-nestkid": "E_CONVERT_UNSUPPORTED"}
#: sources shown as written: ``diff`` set again below, ``!diff``, a plain one
CONTROLS = ["d-reenable", "d-unspec", "d-control"]
AMBIGUOUS = ["d-two", "d-claim"]
SHOW_HELD = ["d-quoted", "d-lgtrue", "d-gitlab", "d-team", "d-symlink", "d-nestkid"]


def _folder(slug: str) -> str:
    return f"plans/team/{slug}" if slug == "d-team" else f"plans/{slug}"


def _daemon(lab: Lab, got: dict[str, Any]) -> None:
    repo = lab.repo
    for slug in ATTR_HELD + CONTROLS:
        lab.put(f"{_folder(slug)}/PLAN.md", md(slug))
    lab.put(".gitattributes", ROOT_ATTRS)
    lab.put("plans/team/.gitattributes", "d-team/PLAN.md -diff\n")
    lab.put("plans/d-reenable/.gitattributes", "PLAN.md diff\n")
    lab.put("notes/real.md", md("d-symlink"))
    (repo / "plans" / "d-symlink").mkdir(parents=True)
    os.symlink("../../notes/real.md", repo / "plans" / "d-symlink" / "PLAN.md")
    lab.put("plans/d-nestkid/PLAN.json", _nested_ap("d-nestkid-ok"))
    lab.put(
        "plans/d-nestkid/step-2/PLAN.yml",
        plan_text("d-nestkid-ok", status="draft", params="n: evil\n"),
    )
    # sources the daemon holds E_PLAN_AMBIGUOUS (round 74's rule for show: held)
    lab.put("plans/d-two/PLAN.md", md("d-two"))
    lab.put("plans/d-two/PLAN.toon", _toon("      tag: d-two-ok\n      evil: true\n"))
    lab.put("plans/d-claim/PLAN.md", md("d-claim"))
    lab.put("plans/d-claim/plan.yml", plan_text("d-claim-ok", params="evil: true\n"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent: sources", who=AGENT)
    got["attr"] = {
        slug: lab.git("check-attr", "-a", "--", f"{_folder(slug)}/PLAN.md")
        for slug in ATTR_HELD + CONTROLS
    }
    got["log_p"] = {
        slug: lab.git("log", "-p", "-1", "--format=%s", "--", _folder(slug))
        for slug in ATTR_HELD + CONTROLS
    }
    # what a reviewer asks before the controller's pass
    pre: dict[str, Any] = {}
    asks: list[tuple[str, str, list[str]]] = []
    for slug in ATTR_HELD + list(OTHER_HELD) + ["d-control"]:
        asks.append((slug, "hash", ["hash", _folder(slug)]))
        asks.append((slug, "show-json", ["show", "--format", "json", _folder(slug)]))
    for slug in AMBIGUOUS:
        asks.append((slug, "show-json", ["show", "--format", "json", _folder(slug)]))
        asks.append((slug, "hash", ["hash", _folder(slug)]))
    for slug in [*SHOW_HELD, "d-control"]:
        src = "PLAN.json" if slug == "d-nestkid" else "PLAN.md"
        asks.append((slug, "show-text", ["show", _folder(slug)]))
        asks.append((slug, "show-markdown", ["show", "--format", "markdown", _folder(slug)]))
        asks.append((slug, "show-toon", ["show", "--format", "toon", _folder(slug)]))
        asks.append((slug, "show-file", ["show", "--format", "json", f"{_folder(slug)}/{src}"]))
        asks.append(
            (
                slug,
                "show-config",
                ["show", "--format", "json", "--config", str(lab.config), _folder(slug)],
            )
        )

    def ask(i: int) -> None:
        slug, what, argv = asks[i]
        done = lab.cli(*argv, cwd=repo)
        pre[f"{slug}:{what}"] = (done.returncode, done.stdout[-3000:], done.stderr[-1500:])

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(ask, range(len(asks))))
    got["pre"] = pre
    got["check"] = lab.check_plans("HEAD", ALICE[1], base="HEAD~1")
    got["pass"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/")}
    tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["tree1"] = tree
    approved = []
    for slug in ATTR_HELD + list(OTHER_HELD) + CONTROLS:
        path = repo / _folder(slug) / "PLAN.yml"
        pending = f"{_folder(slug)}/PLAN.yml" in tree and "pending_approval" in path.read_text()
        if pending and slug != "d-team":
            approve_file(lab, slug)
            approved.append(slug)
    got["approved"] = approved
    lab.git("add", "-A", "plans")
    lab.git("commit", "-q", "--allow-empty", "-m", "approve the plans", who=ALICE)
    got["pass2"] = lab.run(check=False).returncode
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/")}
    got["calls"] = {slug: lab.calls(f"{slug}-ok") for slug in ATTR_HELD + CONTROLS + ["d-symlink"]}
    got["calls"]["d-nestkid"] = lab.calls("d-nestkid-ok")
    for slug in AMBIGUOUS:
        got["calls"][slug] = lab.calls(f"{slug}-ok")


def _convert(lab: Lab, folder: Path, name: str, content: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8", "surrogatepass"))
    done = lab.cli("convert", str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-2000:], "plan": None}
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

    ykeys = list(YAML_EDGE)

    def yone(i: int) -> None:
        folder = root / "yml" / f"y{i}"
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(_yml(YAML_EDGE[ykeys[i]]), encoding="utf-8")
        valid = lab.cli("validate", "--json", "PLAN.yml", cwd=folder)
        show = lab.cli("show", "--format", "json", "PLAN.yml", cwd=folder)
        got[ykeys[i]] = {
            "rc": valid.returncode,
            "out": valid.stdout[-3000:],
            "err": valid.stderr[-1500:],
            "show": show.stdout[-3000:],
        }

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, range(len(jobs))))
        list(pool.map(yone, range(len(ykeys))))
    _daemon(lab, got)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r123-sources-atk123c", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 123: {cls}: {what}")


BROKEN: dict[str, Any] = {}

LOCATED = r"(line \d+|:\d+:| at [a-z_]+[\[.:])"


def _params(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0].get("params") or {}


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """``plangate convert``: a source a reviewer reads otherwise than the converter (a hidden
    character at an edge or in a name, NFC twin keys, a line break git does not make, a bullet
    CommonMark does not see) is refused with its code; one read alike converts to exactly what
    it shows."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    want = CONVERT[vid][2]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if want[0] == "refused":
        assert got["rc"] == 1, (got["rc"], _params(got["plan"]), got["out"][:1200], got["err"])
        assert re.search(r"\b(" + want[1] + r")\b", got["err"]), got["err"]
        assert re.search(want[2], got["err"]), got["err"]
        return
    assert got["rc"] == 0 and got["plan"], got["err"]
    assert _params(got["plan"]) == want[1], _params(got["plan"])


@pytest.mark.parametrize("vid", cases(list(YAML_EDGE), list(YAML_EDGE), BROKEN))
def test_plan_yml_plain_edge(lab: Lab, vid: str) -> None:
    """PLAN.yml's reading rules: a plain key or value that begins or ends with an invisible
    character or a space other than the ASCII one (in block or flow style, an explicit key, a
    sequence item, a folded scalar), or two keys equal in NFC, is ``E_YAML_PARSE`` at its
    line; ``show`` prints no plan for it."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in got["err"], got["err"]
    try:
        report = json.loads(got["out"])
    except ValueError:
        report = {"valid": None, "errors": [], "raw": got["out"][-800:]}
    try:
        params = json.loads(got["show"])["actions"][0]["params"]
    except (ValueError, KeyError, IndexError, TypeError):
        params = None
    assert got["rc"] == 1 and report.get("valid") is False, (got["rc"], params, report)
    errors = [(e.get("code"), e.get("line")) for e in report.get("errors") or []]
    assert any(c == "E_YAML_PARSE" and line for c, line in errors), errors
    assert params is None, params


def _ran(lab: Lab, slug: str) -> list[Any]:
    return [json.loads(c["stdin"]) for c in lab.got["calls"][slug]]  # type: ignore[attr-defined]


def _rows(lab: Lab, slug: str, which: str = "rows2") -> dict[str, Any]:
    folder = _folder(slug)
    return {
        k: v
        for k, v in lab.got[which].items()  # type: ignore[attr-defined]
        if k == folder or k.startswith(folder + "/")
    }


def test_bench_premise_attributes(lab: Lab) -> None:
    """The bench's premise: git itself gives each hidden source ``-diff``/``binary``/
    ``linguist-generated``/``gitlab-generated`` (``git check-attr``), and ``git log -p`` shows
    ``Binary files`` for the ``-diff``/``binary`` ones; the controls keep their diff."""
    attr = lab.got["attr"]  # type: ignore[attr-defined]
    for slug in ATTR_HELD:
        said = attr[slug]
        assert re.search(
            r": (diff: unset|binary: set|linguist-generated: (set|true)|gitlab-generated: set)",
            said,
        ), (slug, said)
    for slug in CONTROLS:
        assert "diff: unset" not in attr[slug] and "Binary files" not in lab.got["log_p"][slug], (  # type: ignore[attr-defined]
            slug,
            attr[slug],
        )


HELD = ATTR_HELD + list(OTHER_HELD)


@pytest.mark.parametrize("slug", HELD)
def test_daemon_holds_source(lab: Lab, slug: str) -> None:
    """A committed source hidden by .gitattributes as git reads them (a quoted or
    octal-escaped pattern, a glob, ``**``, a bracket class, a CRLF line, a macro of a macro,
    ``linguist-generated=true``, ``gitlab-generated``, a folder's ``**``, padded white space,
    a parent folder's attributes), a symlinked source and a nested step over the agent's own
    ``step-2/PLAN.yml`` are never converted nor run on Alice's approval; the row names the
    code."""
    code = OTHER_HELD.get(slug, "E_ATTRIBUTE_UNSUPPORTED")
    assert _ran(lab, slug) == [], _ran(lab, slug)
    assert f"{_folder(slug)}/PLAN.yml" not in lab.got["tree1"], lab.got["tree1"]  # type: ignore[attr-defined]
    rows = _rows(lab, slug, "rows1")
    assert re.search(r"\b" + code + r"\b", json.dumps(rows)), rows


@pytest.mark.parametrize("slug", HELD)
def test_check_predicts_hold(lab: Lab, slug: str) -> None:
    """``plangate check`` of the commit predicts each held source as ``held``/``invalid``,
    never ``convert``."""
    outcome, _ = lab.got["check"].get(_folder(slug), (None, []))  # type: ignore[attr-defined]
    assert outcome in ("held", "invalid"), (outcome, lab.got["check"].get("raw"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", HELD)
def test_hash_predicts_hold(lab: Lab, slug: str) -> None:
    """``plangate hash plans/x`` of a held source prints no hash and says the code its row
    says (docs/formats.md: "``hash``, ``validate`` and ``freeze --check`` say the code and no
    hash")."""
    rc, out, err = lab.got["pre"][f"{slug}:hash"]  # type: ignore[attr-defined]
    said = out + err
    assert rc != 0 and not re.search(r"sha256:[0-9a-f]{64}", said), (rc, said[-600:])
    assert re.search(r"\bE_[A-Z_]+", said), said


SHOW_IDS = [f"{slug}:show-json" for slug in HELD] + [
    f"{slug}:{what}"
    for slug in SHOW_HELD
    for what in ("show-text", "show-markdown", "show-toon", "show-file", "show-config")
]


@pytest.mark.parametrize("vid", cases(SHOW_IDS, SHOW_IDS, BROKEN))
def test_show_held_source(lab: Lab, vid: str) -> None:
    """``plangate show`` of a committed source the daemon holds answers as ``hash`` and
    ``validate`` do: the code, and no plan with a hash nothing will freeze (docs/formats.md:
    a source the daemon would not convert "is its folder's code, as its row says
    (``E_PLAN_AMBIGUOUS``; ``hash``, ``show`` and ``freeze`` answer the same and write
    nothing; round 74). So is a source the daemon holds by the commit the checkout is at
    (round 122)"; and of ``show``: "a source that does not convert shows the conversion's
    problems with their codes")."""
    rc, out, err = lab.got["pre"][vid]  # type: ignore[attr-defined]
    said = out + err
    hashes = re.findall(r"sha256:[0-9a-f]{64}", said)
    assert rc != 0 and not hashes, (
        f"show printed a plan (rc={rc}, {sorted(set(hashes))[:1]}); the daemon holds it: "
        f"{said[:400]}"
    )
    assert re.search(r"\bE_[A-Z_]+", said), said


CONTROL_SHOWS = [
    "d-control:show-json",
    "d-control:show-text",
    "d-control:show-markdown",
    "d-control:show-file",
]


@pytest.mark.parametrize("vid", CONTROL_SHOWS)
def test_show_control_predicts_frozen(lab: Lab, vid: str) -> None:
    """The control: ``show`` of a committed PLAN.md (json, text, markdown, the file) prints
    the hash the daemon then froze (held)."""
    rc, out, err = lab.got["pre"][vid]  # type: ignore[attr-defined]
    row = lab.got["rows1"].get("plans/d-control", {})  # type: ignore[attr-defined]
    frozen = str(row.get("hash") or "")
    assert frozen.startswith("sha256:"), row
    assert rc == 0 and frozen in out, (rc, out[:600], err[-400:], frozen)


def test_hash_control_predicts_frozen(lab: Lab) -> None:
    """``hash`` of the control folder is the hash the daemon froze (held)."""
    rc, out, err = lab.got["pre"]["d-control:hash"]  # type: ignore[attr-defined]
    row = lab.got["rows1"].get("plans/d-control", {})  # type: ignore[attr-defined]
    assert rc == 0 and row.get("hash") and str(row["hash"]) in out, (rc, out, err, row)


@pytest.mark.parametrize("slug", CONTROLS)
def test_control_runs_as_shown(lab: Lab, slug: str) -> None:
    """Sources whose diff git shows (``diff`` set again by the plan folder's attributes,
    ``!diff``, none) convert, and run once as written on Alice's approval."""
    assert slug in lab.got["approved"], (lab.got["approved"], _rows(lab, slug, "rows1"))  # type: ignore[attr-defined]
    assert _ran(lab, slug) == [{"tag": f"{slug}-ok"}], (_ran(lab, slug), _rows(lab, slug))


@pytest.mark.parametrize("slug", AMBIGUOUS)
def test_ambiguous_source_held_everywhere(lab: Lab, slug: str) -> None:
    """Two sources in one folder, or a source beside a ``plan.yml`` claiming the plan file's
    place: ``show`` and ``hash`` say ``E_PLAN_AMBIGUOUS`` and print no hash, the row says it,
    nothing runs (round 74's rule, held: the rule ``show`` breaks for the round-122 holds)."""
    for what in ("show-json", "hash"):
        rc, out, err = lab.got["pre"][f"{slug}:{what}"]  # type: ignore[attr-defined]
        said = out + err
        assert rc != 0 and "E_PLAN_AMBIGUOUS" in said, (what, rc, said[:400])
        assert not re.search(r"sha256:[0-9a-f]{64}", said), (what, said[:400])
    assert re.search(r"E_PLAN_AMBIGUOUS", json.dumps(_rows(lab, slug, "rows1"))), _rows(
        lab, slug, "rows1"
    )
    assert _ran(lab, slug) == [], _ran(lab, slug)
