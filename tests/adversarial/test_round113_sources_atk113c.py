# ruff: noqa: E501
"""Round 113, sources (atk113c): what a reviewer sees of a plan (the line-based git diff of
a source or of PLAN.yml, a forge's CommonMark rendering of a ``PLAN.md``, ``plangate show``
and its ``--format markdown`` PR comment) is exactly what runs; two spellings that look alike
never convert or run differently; a source's problem is refused with a code at its location.

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config: the converter alone) of sources the test writes, one per id. Part 2,
``plangate show``/``validate`` of PLAN.yml variants written into the lab's repo (with its
config): YAML edge cases and the ``--format markdown`` comment rendered with markdown-it-py
(CommonMark + GFM tables/strikethrough, as a forge renders it). Part 3, the daemon: the agent
commits ``plans/d-bare/PLAN.md`` (a bare ActionPlan JSON object, no fence, one value holding
``<!-- ; rm -rf ~ -->``), ``plans/d-baretoon/PLAN.md`` (bare TOON holding the same) and
``plans/d-ok/PLAN.md`` (control: the markdown plan); one ``run --once`` pass.

Variants (``<variant>:<what>``):

- ``bare-*``: a ``PLAN.md`` (a file every forge renders as markdown) holding a bare JSON object
  (ActionPlan, Plan Contract) or bare TOON, whose value holds what CommonMark renders as other
  text (an HTML comment, an open tag, a link, emphasis, a character reference, a backslash
  escape); controls: a ```` ```json ```` fence, a 4-space indented block, a ``.txt`` reply;
- ``sp-*``: a non-ASCII space (U+00A0, U+2009, U+3000, U+202F) at the end of an unquoted
  TOON or YAML-source key or value, where the same text with an ASCII space is trimmed
  (``dry_run : true`` is ``dry_run``); controls with the ASCII space;
- ``nf-*``: a JSON number no double holds because it overflows (``1e400``) or is no JSON at
  all (``NaN``, ``Infinity``) in every JSON-carrying source: must be refused at its location
  (and line, in markdown) as ``1e-400`` is;
- ``md-*``: markdown block constructs around a step's bullets (lazy and indented
  continuation lines, ``+``/``1.``/``>`` markers, a table, a setext heading, a thematic break,
  link reference definitions, a hard line break, ``__bold__``, a nested bullet, an indented
  code block) and a step heading holding a link;
- ``json-*``: duplicate keys spelled by escape, trailing commas, comments, two objects, a lone
  surrogate, a NBSP as JSON white space; a BOM and a raw U+2028 in a string (controls);
- ``toon-*``: quoted keys with dots (no path expansion), nested arrays (controls);
- ``yml-*`` (PLAN.yml): directives, document markers, raw U+2028/NEL in block scalars and
  comments, keys said twice by quoting or escape, references spelled ``$< inputs.to>`` or with
  a full-width ``＞``, ``1e400``, ``.inf``, ``.nan``; ``show`` escaping non-ASCII spaces;
- ``mdr-*``: ``plangate show --format markdown`` of a plan whose name, task and ``why`` hold
  markdown (an HTML comment, a pipe, a link, emphasis, references, tags, backticks, ``~~``):
  the rendered comment must show each character as written.
- ``prose-*``: a markdown plan's step heading, title and objective holding markup: the
  converted ``why``/``name``/``task`` must be the text a forge renders (or refused);
- ``yml-legacy-*``, ``md-legacy-*``, ``pte-legacy-*``: legacy ``${...}`` references with
  white space or a zero-width character in odd places;
- ``ag-timeout-*``: Agent Plan ``timeout_ms`` to seconds, and the refusal's message;
- ``tshow-*``: ``show --format toon`` decoded with toon-format against ``show --format json``;
- ``enc-*``, ``yml-utf*``: UTF-16/32 plans and sources (git shows them as binary);
- ``ctl-*``: terminal controls written as YAML escapes, through ``show``;
- ``d-attr-*`` (daemon): a committed ``.gitattributes`` (root or the plan folder's) marking a
  PLAN.yml ``-diff``, ``binary``, ``linguist-generated``; control ``text eol=lf``; each
  approved by Alice, one more pass.

Seen (round 113, 161 ids, ~16 s wall on an idle box): 7 classes broke (52 ids, strict
xfails), 109 held.

1. **md-bare-data-rendered** (10): ``bare-json-{comment,tag,link,emph,entity,bslash}:hidden``,
   ``bare-pc-comment:hidden``, ``bare-toon-comment:hidden``, ``d-bare:held``,
   ``d-baretoon:held``. A ``PLAN.md`` holding a bare ActionPlan/Plan Contract JSON object or
   bare TOON (no fence) converts as data, so ``{"cmd": "ls <!-- ; rm -rf ~ -->"}`` runs what
   every forge's rendered view shows as ``ls `` (a tag, a link's destination, ``*...*``,
   ``&shy;``, ``\\"`` alike); the daemon converts and freezes both. The markdown plan format
   refuses each of these (round 108-110); a fenced block, a 4-space indented block and a
   ``.txt`` reply convert (controls, held). Round 110/111 noted "bare-JSON PLAN.md read as
   JSON" as open; this confirms it hides values and extends it to TOON.
2. **space-lookalike-in-source** (13): ``sp-toon-{nbsp,thin,ideo}-key``,
   ``sp-toon-nbsp-{val,false,number,item}``, ``sp-yml-{nbsp-key,nnbsp-val,nbsp-false,
   flow-nbsp-false}``, ``sp-pte-nbsp-key`` (``:lookalike``), ``d-toon-nbsp:held``. TOON and
   YAML sources trim an ASCII space at a plain key's or value's edge (``dry_run : true`` is
   ``dry_run``, ``dry_run:  false`` is ``false``: controls held) but keep U+00A0, U+2009,
   U+3000, U+202F: ``dry_run<NBSP>: true`` converts to the key ``"dry_run\\u00a0"`` and
   ``dry_run: <NBSP>false`` to the (truthy) string ``"\\u00a0false"``, each shown by a diff
   exactly as its ASCII twin. The markdown reader treats NBSP as the space it looks like
   (``- to<NBSP>: x`` is ``to``) or refuses it (a trailing NBSP in a value): held.
3. **nonfinite-number-unlocated** (8): ``nf-json-{1e400,nan,inf}:location``,
   ``nf-pc-nan:location``, ``nf-md-{nan,1e400}:line``, ``nf-reply-inf:location``,
   ``nf-toon-1e400:location``. ``NaN``, ``-Infinity`` and ``1e400`` are refused, but as
   ``E_CONVERT_UNSUPPORTED: not plain JSON data: Out of range float values are not JSON
   compliant`` (Python's text) with no path and, in a markdown plan, no line (TOON: ``not valid
   TOON: Number 1e400 is out of range``, no line); ``1e-400`` is named ``at
   steps[0].action.n`` with the exact-double rule's message (held). docs/formats.md: every
   problem "at its location", markdown "also gives the line".
4. **md-prose-markup-kept** (9): ``prose-heading-{link,emph,entity,escape,strike,image}:why``,
   ``prose-title-{link,entity}:name``, ``prose-objective-link:task``. A markdown plan's step
   heading, title and objective become ``why``, ``plan.name`` and ``plan.task`` as their
   markdown source (``[Record](x '; delete all')``, ``Rec&shy;ord``, ``~~Delete~~``), which the
   forge renders as other text (round 110/111's open note on a heading's link, confirmed and
   wider). Values and ids already must render as written.
5. **gitattributes-hides-plan-diff** (4): ``d-attr-{nodiff,binary,generated,nested}:noted``.
   The agent's committed ``.gitattributes`` (root or the plan folder's own) marks its
   ``PLAN.yml`` ``-diff``, ``binary`` or ``linguist-generated``: ``git show``/``git log -p``
   print ``Binary files /dev/null and b/plans/.../PLAN.yml differ`` (a forge collapses a
   generated file), the controller freezes it with no note, and Alice's approval runs it
   (``completed``). Control ``text eol=lf`` (diff shows every line) runs once.
6. **legacy-ref-spaced-opener** (7): ``yml-legacy-{space-inputs,tab-inputs,space-actions,
   2space-plan,zw-inputs}:refused``, ``md-legacy-space:ref``, ``pte-legacy-space:ref``.
   ``${ inputs.to }`` (a space, TAB, two spaces or U+200B after ``${``) validates and the tool
   gets the text verbatim, while ``${inputs.to }``, ``${inputs .to}``, ``${inputs. to}`` and
   ``$< inputs.to>`` are ``E_REF_INVALID`` (held): a reviewer reads both as the reference.
7. **timeout-limit-message-rounded** (1): ``ag-timeout-over-by-1ms:message``. An Agent Plan
   ``timeout_ms: 86400001`` is refused with ``86400 s is over PLAN.yml's longest timeout
   (86400 s)``.

Held: YAML strictness in PLAN.yml (raw U+2028/NEL in block scalars and comments, lone CR in
plain, quoted and block scalars, VT, ESC, NUL, UTF-16/32 files, keys said twice by quoting or
escape, ``$< inputs.to>``, ``$<inputs.to＞``, ``1e400``, ``.inf``, ``.nan``); ``show`` escapes
U+00A0/U+2009/U+FEFF/U+2028 on the param's line, and ``show`` text and markdown print
ESC/CR/BS/C1 controls written as YAML escapes (SGR conceal, CR overwrite, OSC 8 links) escaped
(``ctl-*``); ``show --format markdown`` renders name, task
and why character for character (comments, pipes, links, emphasis, references, tags,
backticks, ``~~``, backslashes) and keeps the table's four cells; ``show --format toon``
decodes to ``show --format json`` (number-like strings, keys with ``:``/``[``/``,``/``|``,
empty keys, nested and mixed arrays); markdown block constructs around a step's bullets are
refused at their line (lazy/indented continuation, ``+``/``1.``/``>`` markers, tables, setext
headings, thematic breaks, link reference definitions, hard breaks, ``__bold__``, nested
bullets, indented code, front matter); JSON duplicate keys by escape, trailing commas,
comments, two objects, lone surrogates, NBSP as white space, UTF-16 sources; TOON quoted
dotted keys (no path expansion) and nested arrays convert as written, and TOON and YAML
sources refuse a key said twice through an escape (``"dry\\u005frun"``), ``[#2]`` length
markers, an unclosed quote and an unknown escape; Agent Plan
``timeout_ms`` 1500/999/1000 are 1.5/0.999/1 s, 0 and negatives refused.

Not tried: symlinked, case-folded and twin plan files (rounds 69-81 cover them), LFS pointers
and submodules, MCP ``validate``/``submit`` of the same sources (one converter), remote mode.
Suspected, not asserted: a TOON array with a TAB delimiter (``a[2<TAB>]: x y<TAB>z`` is
``["x y", "z"]``) shows its field boundary as white space; ``\\u0024<inputs.to>`` in a JSON or
TOON source (or ``"\\x24<inputs.to>"`` in PLAN.yml) is a live reference that its source shows
as an escape; pte ``$${inputs.to}`` becomes ``$$<inputs.to>`` (the literal ``$<inputs.to>``,
not the ``${inputs.to}`` the shell convention reads); TOON ``d: x #c`` is the value ``x #c``
(TOON has no comments); GitHub's own extensions (``$...$`` math, ``:emoji:`` shortcodes) render
a markdown value otherwise and are outside the CommonMark check; PLAN.yml itself keeps a
NBSP key (``show`` escapes it, a diff shows ``dry_run : true``), by docs/formats.md's choice
for hidden characters in PLAN.yml.

Reproduce: ``printf 'metadata:\\n  title: T\\n  objective: O\\ntasks[1]{id,name}:\\n  task_1,N\\n
steps[1]:\\n  - id: s1\\n    task_id: task_1\\n    action: rec\\n    parameters:\\n      dry_run:
\\xc2\\xa0false\\n' > a.toon; plangate convert a.toon`` (params ``{dry_run: "\\u00a0false"}``);
``plangate convert PLAN.md`` of a bare ActionPlan JSON with ``"cmd": "ls <!-- x -->"``.
"""

from __future__ import annotations

import html as htmllib
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from sourcekit import convert_source, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------


def _ap(action: dict[str, Any], extra: str = "") -> str:
    text = json.dumps(
        {
            "plan_version": 1,
            "title": "t",
            "steps": [{"step_number": 1, "action": action, "description": "d"}],
        },
        indent=1,
        ensure_ascii=False,
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra) if extra else text


def _rec(**kw: Any) -> dict[str, Any]:
    return {"type": "rec", "tag": "A", **kw}


def _pc(extra: str = "", tag: str = "A") -> str:
    text = json.dumps(
        {
            "plan_version": 1,
            "skill_id": "s",
            "goal": "g",
            "steps": [{"step_id": "1", "tool": "rec", "args": {"tag": tag}}],
        }
    )
    return text.replace('"tag": "A"', '"tag": "A", ' + extra) if extra else text


TOON_HEAD = "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
TOON_TAIL = (
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)


def _toon(steps: str) -> str:
    return TOON_HEAD + steps + TOON_TAIL


def _toon_params(body: str) -> str:
    return _toon(
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n" + body
    )


AP_YML = (
    "plan_version: 1\ntitle: t\nsteps:\n  - step_number: 1\n"
    "    action:\n      type: rec\n      tag: A\n%s    description: d\n"
)


def _ap_yml(body: str) -> str:
    return AP_YML % body


MD = md("a")
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
assert PARAMS in MD


def _mdp(new: str) -> str:
    return MD.replace(PARAMS, new)


HIDE = "ls <!-- ; rm -rf ~ -->"

#: id -> (file name, source, --from): each must be refused with an E_ code; an id ending
#: ``:location`` must name the value's place (``at steps[0]...``), ``:line`` its line too
REFUSED: dict[str, tuple[str, str, str]] = {
    # md-bare-data-rendered (break): a forge renders the PLAN.md; the converter reads data
    "bare-json-comment:hidden": ("PLAN.md", _ap(_rec(cmd=HIDE)), ""),
    "bare-json-tag:hidden": ("PLAN.md", _ap(_rec(cmd="<x y='; rm -rf ~'>")), ""),
    "bare-json-link:hidden": ("PLAN.md", _ap(_rec(cmd="[ls](u '; rm -rf ~')")), ""),
    "bare-json-emph:hidden": ("PLAN.md", _ap(_rec(a="rm *.log", b="x*")), ""),
    "bare-json-entity:hidden": ("PLAN.md", _ap(_rec(a="rm -rf /srv/a&shy;b")), ""),
    "bare-json-bslash:hidden": ("PLAN.md", _ap(_rec(a='say \\"hi\\"')), ""),
    "bare-pc-comment:hidden": ("PLAN.md", _pc(tag="<!-- x -->"), ""),
    "bare-toon-comment:hidden": (
        "PLAN.md",
        _toon_params("      cmd: ls <!-- ; rm -rf ~ -->\n"),
        "",
    ),
    # sp-lookalike-key (break): a non-ASCII space kept where the ASCII one is trimmed
    "sp-toon-nbsp-key:lookalike": ("a.toon", _toon_params("      dry_run\u00a0: true\n"), ""),
    "sp-toon-thin-key:lookalike": ("a.toon", _toon_params("      dry_run\u2009: true\n"), ""),
    "sp-toon-ideo-key:lookalike": ("a.toon", _toon_params("      dry_run\u3000: true\n"), ""),
    "sp-toon-nbsp-val:lookalike": ("a.toon", _toon_params("      path: /srv/app\u00a0\n"), ""),
    "sp-yml-nbsp-key:lookalike": ("a.yml", _ap_yml("      dry_run\u00a0: true\n"), ""),
    "sp-yml-nnbsp-val:lookalike": ("a.yml", _ap_yml("      path: /srv/app\u202f\n"), ""),
    "sp-toon-nbsp-false:lookalike": ("a.toon", _toon_params("      dry_run: \u00a0false\n"), ""),
    "sp-toon-nbsp-number:lookalike": ("a.toon", _toon_params("      replicas: \u00a05\n"), ""),
    "sp-toon-nbsp-item:lookalike": ("a.toon", _toon_params("      hosts[2]: a,\u00a0b\n"), ""),
    "sp-yml-nbsp-false:lookalike": ("a.yml", _ap_yml("      dry_run: \u00a0false\n"), ""),
    "sp-yml-flow-nbsp-false:lookalike": ("a.yml", _ap_yml("      o: {dry_run: \u00a0false}\n"), ""),
    "sp-pte-nbsp-key:lookalike": (
        "a.yml",
        'plan:\n  name: "t"\n  task: "t"\n  status: pending_approval\navailable_tools:\n'
        '  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: "w"\n    params:\n'
        "      tag: a\n      dry_run\u00a0: true\n",
        "pte",
    ),
    # nonfinite-number-unlocated (break): refused, but with Python's text and no place
    "nf-json-1e400:location": ("a.json", _ap(_rec(), '"n": 1e400'), ""),
    "nf-json-nan:location": ("a.json", _ap(_rec(), '"n": NaN'), ""),
    "nf-json-inf:location": ("a.json", _ap(_rec(), '"n": -Infinity'), ""),
    "nf-pc-nan:location": ("a.json", _pc('"n": NaN'), ""),
    "nf-md-nan:line": ("PLAN.md", _mdp('- **Parameters**: {"tag": "a-ok", "n": NaN}\n'), ""),
    "nf-md-1e400:line": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok", "n": 1e400}\n'),
        "",
    ),
    "nf-reply-inf:location": ("r.md", "```json\n" + _ap(_rec(), '"n": Infinity') + "\n```\n", ""),
    "nf-toon-1e400:location": ("a.toon", _toon_params("      n: 1e400\n"), ""),
    # held: the exact-double rule's own message
    "nf-json-1e-400:location": ("a.json", _ap(_rec(), '"n": 1e-400'), ""),
    # markdown block constructs (held)
    "md-lazy-cont:line": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok"}\nand more text\n'),
        "",
    ),
    "md-indent-cont:line": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok"}\n  and more text\n'),
        "",
    ),
    "md-plus-marker:line": ("PLAN.md", _mdp('+ **Parameters**: {"tag": "a-ok"}\n'), ""),
    "md-ordered-marker:line": ("PLAN.md", _mdp('1. **Parameters**: {"tag": "a-ok"}\n'), ""),
    "md-blockquote:line": ("PLAN.md", _mdp('> - **Parameters**: {"tag": "a-ok"}\n'), ""),
    "md-underscore-bold:line": ("PLAN.md", _mdp('- __Parameters__: {"tag": "a-ok"}\n'), ""),
    "md-table:line": ("PLAN.md", _mdp('| **Parameters** | {"tag": "a-ok"} |\n|---|---|\n'), ""),
    "md-nested-bullet:line": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok"}\n  - **Timeout**: 90s\n'),
        "",
    ),
    "md-setext-after-bullet:line": (
        "PLAN.md",
        MD.replace("- **Dependencies**: []\n", "- **Dependencies**: []\n\nNotes\n-----\n"),
        "",
    ),
    "md-thematic-break:line": (
        "PLAN.md",
        MD.replace("## Shared Inputs\n", "***\n## Shared Inputs\n"),
        "",
    ),
    "md-linkref-in-step:line": (
        "PLAN.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ok\n[x]: https://e.example\n"),
        "",
    ),
    "md-linkref-in-inputs:line": (
        "PLAN.md",
        MD.replace("- to: ok@example.com\n", "- to: ok@example.com\n\n[to]: evil@example.com\n"),
        "",
    ),
    "md-hard-break:line": ("PLAN.md", _mdp('- **Parameters**: {"tag": "a-ok"}  \n'), ""),
    "md-backslash-break:param": ("PLAN.md", _mdp('- **Parameters**: {"tag": "a-ok"}\\\n'), ""),
    "md-indented-code:line": (
        "PLAN.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ok\n\n    - **Timeout**: 1s\n\n"),
        "",
    ),
    "md-nbsp-input-trailing:line": (
        "PLAN.md",
        MD.replace("- to: ok@example.com", "- to: ok@example.com\u00a0"),
        "",
    ),
    "md-front-matter:parse": ("PLAN.md", "---\nparams: {dry_run: false}\n---\n" + MD, ""),
    "md-setext-steps:section": ("PLAN.md", MD.replace("## Steps\n", "Steps\n-----\n"), ""),
    # JSON strictness (held)
    "json-escaped-dup:key": ("a.json", _ap(_rec(), '"t\\u0061g": "B"'), ""),
    "json-trailing-comma:parse": ("a.json", _ap(_rec()).replace('"A"', '"A",'), ""),
    "json-comment:parse": ("a.json", _ap(_rec(), '"x": 1 /* y */'), ""),
    "json-two-objects:parse": ("a.json", _ap(_rec()) + _ap(_rec(tag="B")), ""),
    "json-lone-surrogate:value": ("a.json", _ap(_rec(), '"n": "\\ud800"'), ""),
    "enc-json-utf16:utf8": ("a.json", "", ""),
    "enc-md-utf16:utf8": ("PLAN.md", "", ""),
    "enc-toon-utf16:utf8": ("a.toon", "", ""),
    "md-legacy-space:ref": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok", "x": "${ inputs.to }"}\n'),
        "",
    ),
    "pte-legacy-space:ref": (
        "a.yml",
        'plan:\n  name: "t"\n  task: "t"\n  status: pending_approval\ninputs:\n  to: x\n'
        'available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: "w"\n'
        '    params:\n      tag: a\n      v: "${ inputs.to }"\n',
        "pte",
    ),
    "md-legacy-space-end:ref": (
        "PLAN.md",
        _mdp('- **Parameters**: {"tag": "a-ok", "x": "${inputs.to }"}\n'),
        "",
    ),
    "toon-escaped-dup:key": (
        "a.toon",
        _toon_params('      dry_run: false\n      "dry\\u005frun": true\n'),
        "",
    ),
    "yml-src-escaped-dup:key": (
        "a.yml",
        _ap_yml('      dry_run: false\n      "dry\\x5frun": true\n'),
        "",
    ),
    "toon-length-marker-hash:header": ("a.toon", _toon_params("      a[#2]: x,y\n"), ""),
    "toon-unclosed-quote:value": ("a.toon", _toon_params('      a: "x\n'), ""),
    "toon-bad-escape:value": ("a.toon", _toon_params('      a: "x\\qy"\n'), ""),
    "json-nbsp-whitespace:parse": ("a.json", _ap(_rec()).replace('"tag":', '\u00a0"tag":'), ""),
}

_LOCATED = (":location", ":line")

#: a source saved as UTF-16 (git shows it as binary): refused as no UTF-8 (exit 1 or 2)
UTF16: dict[str, bytes] = {
    "enc-json-utf16:utf8": _ap(_rec()).encode("utf-16"),
    "enc-md-utf16:utf8": MD.encode("utf-16"),
    "enc-toon-utf16:utf8": _toon("steps[1]{id,task_id,action}:\n  s1,task_1,rec\n").encode(
        "utf-16"
    ),
}


def _p(plan: dict[str, Any]) -> dict[str, Any]:
    return (plan.get("actions") or [{}])[0].get("params") or {}


#: id -> (file name, source, check of the converted plan): converts, exactly as written
CONVERTS: dict[str, tuple[str, str, Any]] = {
    "bare-fenced-json:control": (
        "PLAN.md",
        "```json\n" + _ap(_rec(cmd=HIDE)) + "\n```\n",
        lambda p: _p(p).get("cmd") == HIDE,
    ),
    "bare-indented-json:control": (
        "PLAN.md",
        "    " + _ap(_rec(cmd=HIDE)).replace("\n", "\n    "),
        lambda p: _p(p).get("cmd") == HIDE,
    ),
    "bare-txt-reply:control": ("r.txt", _ap(_rec(cmd=HIDE)), lambda p: _p(p).get("cmd") == HIDE),
    "sp-toon-ascii-key:control": (
        "a.toon",
        _toon_params("      dry_run : true\n"),
        lambda p: _p(p) == {"dry_run": True},
    ),
    "sp-toon-ascii-val:control": (
        "a.toon",
        _toon_params("      path: /srv/app \n"),
        lambda p: _p(p) == {"path": "/srv/app"},
    ),
    "sp-toon-ascii-false:control": (
        "a.toon",
        _toon_params("      dry_run:  false\n"),
        lambda p: _p(p) == {"dry_run": False},
    ),
    "sp-yml-ascii-key:control": (
        "a.yml",
        _ap_yml("      dry_run : true\n"),
        lambda p: _p(p) == {"tag": "A", "dry_run": True},
    ),
    "sp-md-nbsp-input-key:control": (
        "PLAN.md",
        MD.replace("- to: ok@example.com", "- to\u00a0: ok@example.com"),
        lambda p: p.get("inputs") == {"to": "ok@example.com"},
    ),
    "md-star-marker:control": (
        "PLAN.md",
        _mdp('* **Parameters**: {"tag": "a-ok"}\n'),
        lambda p: _p(p) == {"tag": "a-ok"},
    ),
    "md-closing-hashes:control": (
        "PLAN.md",
        MD.replace("### Step 1: Record ok\n", "### Step 1: Record ok ###\n"),
        lambda p: p["actions"][0]["why"] == "Record: Record ok",
    ),
    "json-bom:control": ("a.json", "\ufeff" + _ap(_rec()), lambda p: _p(p) == {"tag": "A"}),
    "json-raw-lsep-in-string:control": (
        "a.json",
        _ap(_rec(tag="A\u2028B")),
        lambda p: _p(p) == {"tag": "A\u2028B"},
    ),
    "toon-quoted-dotted-key:control": (
        "a.toon",
        _toon_params('      "a.b": 1\n      a.c: 2\n'),
        lambda p: _p(p) == {"a.b": 1, "a.c": 2},
    ),
    "toon-nested-arrays:control": (
        "a.toon",
        _toon_params("      a[2]:\n        - [2]: 1,2\n        - [1]: x\n"),
        lambda p: _p(p) == {"a": [[1, 2], ["x"]]},
    ),
}


_HEAD = "### Step 1: Record ok\n"

#: id -> (markdown source, field, the source text of that field): the converted field must
#: be the text CommonMark renders for it (or the source refused)
PROSE: dict[str, tuple[str, str, str]] = {
    "prose-heading-link:why": (
        "### Step 1: [Record](x '; delete all')\n",
        "why",
        "[Record](x '; delete all')",
    ),
    "prose-heading-emph:why": ("### Step 1: Record *only the* ok\n", "why", "Record *only the* ok"),
    "prose-heading-entity:why": (
        "### Step 1: Rec&shy;ord &amp; ok\n",
        "why",
        "Rec&shy;ord &amp; ok",
    ),
    "prose-heading-escape:why": ("### Step 1: Record \\*ok\\*\n", "why", "Record \\*ok\\*"),
    "prose-heading-strike:why": (
        "### Step 1: ~~Delete~~ Record ok\n",
        "why",
        "~~Delete~~ Record ok",
    ),
    "prose-heading-image:why": ("### Step 1: ![Record](x 'rm')\n", "why", "![Record](x 'rm')"),
    "prose-title-link:name": ("# [Record](x 'y') plan\n", "name", "[Record](x 'y') plan"),
    "prose-title-entity:name": ("# Rec&shy;ord plan\n", "name", "Rec&shy;ord plan"),
    "prose-objective-link:task": (
        "Record [a](x 'rm -rf') tag\n",
        "task",
        "Record [a](x 'rm -rf') tag",
    ),
}


def _prose_source(vid: str) -> str:
    line, field, _ = PROSE[vid]
    if field == "why":
        return MD.replace(_HEAD, line)
    if field == "name":
        return MD.replace("# Record plan\n", line)
    return MD.replace("Record a tag\n", line)


def _agent(timeout_ms: Any) -> str:
    step = {
        "id": "s1",
        "title": "T",
        "detail": "D",
        "tool": {
            "kind": {"Custom": {"name": "rec", "payload": {"tag": "A"}}},
            "timeout_ms": timeout_ms,
        },
    }
    return json.dumps({"title": "t", "steps": [step]})


#: id -> (timeout_ms, the converted timeout in seconds, or None: refused)
AGENT_TIMEOUTS: dict[str, tuple[Any, Any]] = {
    "ag-timeout-1500:seconds": (1500, 1.5),
    "ag-timeout-999:seconds": (999, 0.999),
    "ag-timeout-1000:seconds": (1000, 1),
    "ag-timeout-0:refused": (0, None),
    "ag-timeout-negative:refused": (-5, None),
    "ag-timeout-over-by-1ms:message": (86400001, None),
}

# -- PLAN.yml variants (part 2) -------------------------------------------------------------

INPUTS = "inputs:\n  to: x\navailable_tools:"


def _yml(tag: str, params: str) -> str:
    return plan_text(tag, params=params).replace("available_tools:", INPUTS)


#: id -> PLAN.yml text (or bytes) that `validate` must refuse (exit 1, an E_ code)
YML_REFUSED: dict[str, Any] = {
    # a plain key or value with a space lookalike at its edge: PLAN.yml is refused too, one
    # rule with the converted sources (round 113 fix; these four were `show-escaped` ids, held
    # by `show` escaping them, while the pull request's diff showed the trimmed twin)
    "yml-nbsp-key:refused": _yml("sk1", "dry_run\u00a0: true\n"),
    "yml-thin-key:refused": _yml("sk2", "dry_run\u2009: true\n"),
    "yml-nbsp-val:refused": _yml("sk3", "path: /srv/app\u00a0\n"),
    "yml-nbsp-false:refused": _yml("sk8", "dry_run: \u00a0false\n"),
    "yml-utf16le:refused": plan_text("u16").encode("utf-16"),
    "yml-utf16be:refused": b"\xfe\xff" + plan_text("u16b").encode("utf-16-be"),
    "yml-utf32:refused": plan_text("u32").encode("utf-32"),
    "yml-raw-nul:refused": plan_text("nul", params='x: "a\x00b"\n').encode(),
    "yml-block-lsep:refused": _yml("yb", "x: |\n  a\u2028b\n"),
    "yml-block-nel:refused": _yml("yn", "x: |\n  a\u0085b\n"),
    "yml-comment-lsep:refused": _yml("yc", "x: a # c\u2028y: 2\n"),
    "yml-quoted-dup:refused": _yml("yq", '"tag": other\n'),
    "yml-escaped-dup:refused": _yml("ye", '"t\\x61g": other\n'),
    "yml-ref-space:refused": _yml("yr", 'x: "$< inputs.to>"\n'),
    "yml-ref-fullwidth-gt:refused": _yml("yg", 'x: "$<inputs.to\uff1e"\n'),
    "yml-float-1e400:refused": _yml("yf", "x: 1e400\n"),
    "yml-inf:refused": _yml("yi", "x: .inf\n"),
    "yml-nan:refused": _yml("ya", "x: .nan\n"),
    # legacy-ref-spaced-opener (break): `${ inputs.to }` is left as text the tool gets
    "yml-legacy-space-inputs:refused": _yml("lg1", 'x: "${ inputs.to }"\n'),
    "yml-legacy-tab-inputs:refused": _yml("lg2", 'x: "${\\tinputs.to}"\n'),
    "yml-legacy-space-actions:refused": plan_text(
        "lg3",
        extra_actions='  - id: 2\n    tool: rec\n    why: "w"\n    params:\n      tag: "${ actions[1].result }"\n',
    ),
    "yml-legacy-2space-plan:refused": _yml("lg4", 'x: "${  plan.name}"\n'),
    "yml-legacy-zw-inputs:refused": _yml("lg5", 'x: "${\\u200binputs.to}"\n'),
    # held: a space anywhere else in a legacy reference is E_REF_INVALID
    "yml-legacy-space-end:refused": _yml("lg6", 'x: "${inputs.to }"\n'),
    "yml-legacy-space-dot:refused": _yml("lg7", 'x: "${inputs .to}"\n'),
    "yml-legacy-space-name:refused": _yml("lg8", 'x: "${inputs. to}"\n'),
    "yml-lone-cr-plain:refused": _yml("cr1", "x: a\r      dry_run: true\n"),
    "yml-lone-cr-quoted:refused": _yml("cr2", 'x: "a\rb"\n'),
    "yml-lone-cr-block:refused": _yml("cr3", "x: |\n  a\rb\n"),
    "yml-vt:refused": _yml("cr4", "x: a\x0bb\n"),
    "yml-ansi-escape:refused": _yml("cr5", "x: a\x1b[2Kb\n"),
    "yml-unicode-dollar-ref:refused": _yml("yu", 'x: "\\u0024<inputs.missing>"\n'),
}

#: id -> (PLAN.yml text, the `show` text line the reviewer must see)
YML_SHOWN: dict[str, tuple[str, str]] = {
    "yml-bom-mid:show-escaped": (_yml("sk4", "x: a\ufeffb\n"), "\\ufeff"),
    "yml-quoted-lsep:show-escaped": (_yml("sk5", 'x: "a\u2028b"\n'), "\\u2028"),
    "yml-bom-start:control": ("\ufeff" + _yml("sk6", ""), 'param tag = "sk6"'),
    "yml-crlf:control": (_yml("sk9", "").replace("\n", "\r\n"), 'param tag = "sk9"'),
    "yml-docmarkers:control": ("---\n" + _yml("sk7", "") + "...\n", 'param tag = "sk7"'),
}

#: id -> params lines of a PLAN.yml holding a terminal control written as a YAML escape
#: (valid: a reviewer sees the escape in the diff); `show` text and markdown must print none
CTL: dict[str, str] = {
    "ctl-sgr-conceal:show-clean": 'x: "\\e[8mrm -rf ~\\e[0m"\n',
    "ctl-cr-overwrite:show-clean": 'x: "safe\\rEVIL"\n',
    "ctl-backspaces:show-clean": 'x: "rm -rf ~\\b\\b\\b\\b\\b\\b\\bls     "\n',
    "ctl-osc8-link:show-clean": 'x: "\\e]8;;http://e\\e\\\\link\\e]8;;\\e\\\\"\n',
    "ctl-c1-csi:show-clean": 'x: "a\\x9bb"\n',
    "ctl-key-sgr:show-clean": '"\\e[8mdry_run": true\n',
}

#: id -> text written as the plan's name, task and the action's why
MDR: dict[str, str] = {
    "mdr-comment:shown": "ok <!-- ; also deletes prod -->",
    "mdr-pipe:shown": "a | b",
    "mdr-link:shown": "[safe](x 'deletes prod')",
    "mdr-emph:shown": "rm *.log and x*",
    "mdr-entity:shown": "a&shy;b &lt;x&gt;",
    "mdr-tag:shown": "<b>x</b> <span hidden>deletes prod</span>",
    "mdr-backticks:shown": "a `b` c",
    "mdr-refdef:shown": "[x]",
    "mdr-autolink:shown": "<https://e.example>",
    "mdr-strike:shown": "~~old~~ new",
    "mdr-backslash:shown": "a\\*b",
}

#: id -> params lines of a PLAN.yml whose `show --format toon` must decode (toon-format) to
#: exactly its `show --format json`
TOON_SHOW: dict[str, str] = {
    "tshow-numberlike:roundtrip": 'a: "05"\nb: "1e3"\nc: "true"\nd: "null"\ne: "-"\nf: "-1"\ng: ""\nh: " x "\ni: "1.0"\nj: 1.5\nk: "0x10"\n',
    "tshow-keys:roundtrip": '"a:b": 1\n"a[2]": 2\n"-x": 3\n"a b": 4\n"": 5\n"#c": 6\n"a,b": 7\n"a|b": 8\n"a\\tb": 9\n"{x}": 10\n"a.b": 11\n',
    "tshow-strings:roundtrip": 'a: "x,y"\nb: "x|y"\nc: "x\\ty"\nd: "a\\u2028b"\ne: "a\\u00a0"\nf: "[1]"\ng: "{a}"\nh: "- x"\ni: "a: b"\nj: "\\"q\\""\nk: "back\\\\slash"\nl: "\\n"\n',
    "tshow-arrays:roundtrip": 'a: []\nb: [[]]\nc: [{}]\nd: [1, "1", true, "true", null]\ne: [{x: 1}, {x: 2, y: 3}]\nf: [{x: 1}, {x: [1, 2]}]\ng: {}\nh: [[1, 2], [3]]\ni: [" a", "b "]\nj: [{"a,b": 1}]\n',
}

#: slug -> the committed `.gitattributes` attributes of its PLAN.yml
ATTRS: dict[str, str] = {
    "d-attr-nodiff": "-diff",
    "d-attr-binary": "binary",
    "d-attr-generated": "linguist-generated=true",
    "d-attr-eol": "text eol=lf",  # control: a diff shows every line
    "d-attr-nested": "",  # its own folder's .gitattributes says `PLAN.yml -diff`
}

DAEMON = {
    "d-bare": _ap(_rec(tag="dbare", cmd=HIDE)),
    "d-baretoon": _toon_params("      tag: dbt\n      cmd: ls <!-- ; rm -rf ~ -->\n"),
    "d-ok": md("okk"),
}

#: a PLAN.toon the daemon converts: `dry_run: <NBSP>false` reads `dry_run: false` in a diff
DAEMON_TOON = {
    "d-toon-nbsp": _toon_params("      tag: dtn\n      dry_run: \u00a0false\n"),
}


def _visible(markdown: str) -> str:
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", rendered))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = [*REFUSED.items(), *((k, (v[0], v[1], "")) for k, v in CONVERTS.items())]
    jobs = [j for j in jobs if not j[0].startswith("enc-")]
    jobs += [(k, (REFUSED[k][0], UTF16[k], "")) for k in UTF16]
    jobs += [(k, ("PLAN.md", _prose_source(k), "")) for k in PROSE]
    jobs += [(k, ("a.json", _agent(v[0]), "")) for k, v in AGENT_TIMEOUTS.items()]

    def one(i: int) -> None:
        vid, (name, content, fmt) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = convert_source(lab, folder, name, content, fmt)

    # part 2: PLAN.yml variants, read by validate and show (the lab's config)
    ymls: dict[str, str] = dict(YML_REFUSED)
    ymls.update({k: v[0] for k, v in YML_SHOWN.items()})
    for k, w in MDR.items():
        q = w.replace("\\", "\\\\").replace('"', '\\"')
        tag = k.split(":")[0]
        text = plan_text(tag)
        text = text.replace(f'name: "{tag}"', f'name: "{q}"')
        text = text.replace(f'task: "attack variant {tag}"', f'task: "{q}"')
        text = text.replace(f'why: "record that variant {tag} ran"', f'why: "{q}"')
        ymls[k] = text
    for k, body in CTL.items():
        ymls[k] = plan_text(k.split(":")[0], params=body)
    for k, body in TOON_SHOW.items():
        ymls[k] = plan_text(k.split(":")[0], params=body)
    slugs = {k: f"y{i}" for i, k in enumerate(ymls)}
    for k, text in ymls.items():
        lab.write(slugs[k], text)

    def two(k: str) -> None:
        path = str(lab.repo / "plans" / slugs[k] / "PLAN.yml")
        if k in YML_REFUSED:
            done = lab.cli("validate", path)
            got[k] = {"rc": done.returncode, "out": done.stdout + done.stderr}
        elif k in YML_SHOWN:
            done = lab.cli("show", path)
            got[k] = {"rc": done.returncode, "out": done.stdout + done.stderr}
        elif k in CTL:
            text = lab.cli("show", path)
            mdown = lab.cli("show", "--format", "markdown", path)
            got[k] = {
                "rc": (text.returncode, mdown.returncode),
                "out": text.stdout + mdown.stdout,
                "err": (text.stderr + mdown.stderr)[-600:],
            }
        elif k in TOON_SHOW:
            as_json = lab.cli("show", "--format", "json", path)
            as_toon = lab.cli("show", "--format", "toon", path)
            got[k] = {
                "rc": (as_json.returncode, as_toon.returncode),
                "json": as_json.stdout,
                "toon": as_toon.stdout,
                "err": (as_json.stderr + as_toon.stderr)[-600:],
            }
        else:
            done = lab.cli("show", "--format", "markdown", path)
            got[k] = {"rc": done.returncode, "out": done.stdout, "err": done.stderr[-600:]}

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(one, range(len(jobs))))
        list(pool.map(two, list(ymls)))
    # part 3: the daemon
    lab.git("rm", "-r", "-q", "--cached", "--ignore-unmatch", "plans")
    for slug in slugs.values():
        (lab.repo / "plans" / slug / "PLAN.yml").unlink()
    for slug, text in DAEMON.items():
        lab.put(f"plans/{slug}/PLAN.md", text)  # as written: a bare body stays bare
    for slug, text in DAEMON_TOON.items():
        lab.write(slug, text, "PLAN.toon")
    lab.put(".gitattributes", "".join(f"plans/{s}/PLAN.yml {a}\n" for s, a in ATTRS.items() if a))
    lab.put("plans/d-attr-nested/.gitattributes", "PLAN.yml -diff\n")
    for slug in ATTRS:
        lab.write(slug, plan_text(slug))
    agent_commit = lab.commit("agent: plans")
    done = lab.run(check=False)
    got["pass"] = {"rc": done.returncode, "err": done.stderr[-1500:]}
    got["rows"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["attr_diff"] = {
        slug: lab.git("show", "--format=", agent_commit, "--", f"plans/{slug}/PLAN.yml")
        for slug in ATTRS
    }
    for slug in ATTRS:
        lab.approve(slug)
    done = lab.run(check=False)
    got["pass2"] = {"rc": done.returncode, "err": done.stderr[-1500:]}
    got["attr_rows"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-a")}
    got["attr_calls"] = {slug: len(lab.calls(slug)) for slug in ATTRS}
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["plans"] = {}
    for slug in [*DAEMON, *DAEMON_TOON]:
        if f"plans/{slug}/PLAN.yml" in got["tree"]:
            got["plans"][slug] = lab.plan(slug)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r113-sources-atk113c", _build)


def _mark(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 113: {cls}: {what}")


#: fixed the same day (2026-12-05): md-bare-data-rendered, legacy-ref-spaced-opener,
#: timeout-limit-message-rounded (docs/threat-model.md, "Round 113").
BROKEN: dict[str, Any] = {}
# fixed the next session: space-lookalike-in-source (yamlio.edge_lookalike, in YAML's plain
# values and TOON), nonfinite-number-unlocated (jsonread.number keeps the text, refused at
# its place)
# md-prose-markup-kept: fixed (descriptive text converts as a forge shows it, markdown._prose)
# gitattributes-hides-plan-diff: fixed (WorkTree.review_hiding: not frozen, no approval counts)


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """What reads two ways, or what a reviewer cannot see, is refused with a code (exit 1,
    never an internal error); ``:location``/``:line`` ids name its place."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is None, f"converted: {got['plan']}"
    if vid.startswith("enc-"):
        assert got["rc"] in (1, 2) and "UTF-8" in got["err"], got
    else:
        assert got["rc"] == 1, got
    assert "internal error" not in got["err"], got["err"]
    assert "E_" in got["err"], got["err"]
    if vid.endswith(_LOCATED):
        assert re.search(r" at (steps|shared_inputs)", got["err"]), got["err"]
        assert "not JSON compliant" not in got["err"], got["err"]
    if vid.endswith(":line"):
        assert re.search(r"PLAN\.md:\d+:", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_read(lab: Lab, vid: str) -> None:
    """Written so every reader reads it alike, the source converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert CONVERTS[vid][2](got["plan"]), got["plan"]


@pytest.mark.parametrize("vid", cases(list(YML_REFUSED), list(YML_REFUSED), BROKEN))
def test_planyml_refused(lab: Lab, vid: str) -> None:
    """PLAN.yml's strict reader refuses what reads two ways, with a code."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] == 1, got
    assert "E_" in got["out"] and "internal error" not in got["out"], got["out"]


@pytest.mark.parametrize("vid", cases(list(YML_SHOWN), list(YML_SHOWN), BROKEN))
def test_planyml_show_escapes(lab: Lab, vid: str) -> None:
    """``plangate show`` prints a character a reviewer cannot tell from a space (or none)
    escaped, on the param's own line."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] == 0, got
    assert YML_SHOWN[vid][1] in got["out"], got["out"][-800:]


@pytest.mark.parametrize("vid", cases(list(MDR), list(MDR), BROKEN))
def test_markdown_comment_renders_as_written(lab: Lab, vid: str) -> None:
    """The ``--format markdown`` PR comment, rendered as CommonMark (GFM tables), shows the
    plan's name, task and why character for character, in the heading, the summary and the
    action table's cell."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] == 0, got
    text = MDR[vid]
    visible = _visible(got["out"])
    assert visible.count(text) >= 3, (text, visible[:900])
    # the action table keeps its four cells
    row = next(line for line in got["out"].splitlines() if line.startswith("| 1 |"))
    cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
    assert len(cells) == 4, row


@pytest.mark.parametrize(
    "vid",
    cases(
        ["d-bare:held", "d-baretoon:held", "d-toon-nbsp:held"],
        ["d-bare", "d-baretoon", "d-toon-nbsp"],
        BROKEN,
    ),
)
def test_daemon_bare_source_not_frozen(lab: Lab, vid: str) -> None:
    """The daemon does not convert a PLAN.md whose rendered view hides a value: no PLAN.yml
    is committed, and the row says a code."""
    got = lab.got  # type: ignore[attr-defined]
    assert vid not in got["plans"], got["plans"].get(vid)
    row = got["rows"].get(f"plans/{vid}") or {}
    assert (row.get("problem") or {}).get("code", "").startswith("E_"), row


@pytest.mark.parametrize("vid", cases(["d-ok:converted", "d-pass:ok"], ["ok", "pass"], BROKEN))
def test_daemon_control(lab: Lab, vid: str) -> None:
    """Control: the plain markdown plan beside them is converted as written; the pass ends 0."""
    got = lab.got  # type: ignore[attr-defined]
    if vid == "pass":
        assert got["pass"]["rc"] == 0, got["pass"]
        return
    plan = got["plans"].get("d-ok") or {}
    assert [a.get("params") for a in plan.get("actions") or []] == [{"tag": "okk-ok"}], plan


def _inline(text: str) -> str:
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("strikethrough").renderInline(text)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.parametrize("vid", cases(list(PROSE), list(PROSE), BROKEN))
def test_markdown_prose_converts_as_rendered(lab: Lab, vid: str) -> None:
    """A step heading's title, the plan's title and objective convert to the text a forge
    renders for them (what the reviewer read), or the source is refused at its line."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    if got["plan"] is None:
        assert got["rc"] == 1 and re.search(r"PLAN\.md:\d+:", got["err"]), got
        return
    _, field, source = PROSE[vid]
    plan = got["plan"]
    value = plan["actions"][0]["why"] if field == "why" else plan["plan"][field]
    shown = _inline(source)
    assert value == shown or value.endswith(": " + shown), (value, shown)


@pytest.mark.parametrize("vid", cases(list(AGENT_TIMEOUTS), list(AGENT_TIMEOUTS), BROKEN))
def test_agent_timeout_ms(lab: Lab, vid: str) -> None:
    """Milliseconds become exactly those seconds; a timeout no plan can hold is refused at
    ``steps[0].tool.timeout_ms`` with a message that says the value given."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    ms, seconds = AGENT_TIMEOUTS[vid]
    if seconds is not None:
        assert got["plan"] is not None, got["err"]
        assert got["plan"]["actions"][0]["timeout"] == seconds, got["plan"]["actions"][0]
        return
    assert got["plan"] is None and got["rc"] == 1, got
    assert "at steps[0].tool.timeout_ms" in got["err"], got["err"]
    if ms > 86400000:
        said = re.search(r"timeout_ms: ([0-9.]+) s is over", got["err"])
        assert said and float(said.group(1)) * 1000 == ms, got["err"]


@pytest.mark.parametrize("vid", cases(list(TOON_SHOW), list(TOON_SHOW), BROKEN))
def test_show_toon_decodes_to_json(lab: Lab, vid: str) -> None:
    """``show --format toon`` decodes (toon-format, strict) to exactly ``show --format json``."""
    import toon_format

    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] == (0, 0), got["err"]
    assert toon_format.decode(got["toon"]) == json.loads(got["json"]), got["toon"][-800:]


_ATTR_IDS = [f"{s}:noted" for s in ATTRS]


@pytest.mark.parametrize("vid", cases(_ATTR_IDS, list(ATTRS), BROKEN))
def test_attributes_hiding_the_diff(lab: Lab, vid: str) -> None:
    """A plan whose committed attributes make git show no line of it (``-diff``, ``binary``;
    ``linguist-generated`` collapses it on a forge) is not frozen and run as if reviewed: its
    row names a problem or a hold, and the approval runs nothing. Control: ``text eol=lf``,
    whose diff shows every line, runs once."""
    got = lab.got  # type: ignore[attr-defined]
    diff = got["attr_diff"][vid]
    row = got["attr_rows"].get(f"plans/{vid}") or {}
    if vid == "d-attr-eol":
        assert "+  name:" in diff, diff
        assert got["attr_calls"][vid] == 1, row
        return
    if vid != "d-attr-generated":
        assert "Binary files" in diff and "+  name:" not in diff, diff  # what git shows
    assert row.get("problem") or row.get("held"), row
    assert got["attr_calls"][vid] == 0, row


@pytest.mark.parametrize("vid", cases(list(CTL), list(CTL), BROKEN))
def test_show_prints_no_terminal_control(lab: Lab, vid: str) -> None:
    """A value holding ESC, CR, BS or a C1 control (a YAML escape, valid) is printed escaped by
    ``show`` and ``show --format markdown``: no control character reaches the reviewer's
    terminal or comment, and the escape is there to read."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] == (0, 0), got["err"]
    bad = [
        hex(ord(c)) for c in got["out"] if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) < 0xA0
    ]
    assert not bad, bad
    assert (
        "\\x1b" in got["out"]
        or "\\u001b" in got["out"]
        or "\\r" in got["out"]
        or "\\b" in got["out"]
        or "\\x9b" in got["out"]
        or "\\u009b" in got["out"]
    ), got["out"][-600:]
