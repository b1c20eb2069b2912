# ruff: noqa: E501
r"""Round 122, sources (atk122c): what a reviewer reads of a plan (the PLAN.yml in a pull
request, the source it was converted from, ``plangate show``) is what the controller freezes
and runs; a plan the reviewer cannot read the same way is refused with its ``E_...`` code;
``check``/``hash``/``validate`` predict what the daemon does.

Lab (one, module scope, built once under ``shared``'s lock; the bench's config, approvers
``alice@example.com``/``*@ops.example.com``, the recorder ``rec``). Part 1, ``plangate
convert SRC`` (no config) of one source per id: Plan Contract JSON, TOON and markdown plans
with default-ignorable code points in param keys (U+2065 and 12 others), NFC-twin keys, a
lone CR in TOON, TOON values ending with U+200E/U+202E/U+2064/U+3164/U+200B, CRLF TOON,
list markers followed by a no-break space, ATX closing sequences, ``*``/``+``/``1.``/task-list
bullets, ``__x__``/``*x*``/``**x:**`` field names,
lazy continuation lines, a fenced ``yaml`` reply. Part 2, PLAN.yml texts read by ``validate
--json`` and ``show --format json``: a plain key or value whose edge holds U+200E, U+202E,
U+2066, U+2064, U+034F, U+3164, U+E0001, U+061C (and U+200B, U+2060, U+00A0 as controls).
Part 3, the daemon: the agent commits in one commit sources hidden by a ROOT
``.gitattributes`` (``plans/d-rootattr/PLAN.md -diff``), by ``plans/.gitattributes``
(``d-parentattr/PLAN.json binary``) and by a root macro (``[attr]hidden -diff``); a
``PLAN.json`` committed as a symlink to ``notes/real.json``, a plan folder that is a symlink,
a gitlink ``PLAN.json`` and a gitlink folder; a TOON source with a lone CR, one whose
``dry_run: true`` ends with U+200E; a PLAN.md whose params key holds U+2065; a PLAN.json
with NFC-twin keys; an ActionPlan with a nested step
beside the agent's own ``step-2/PLAN.yml`` (``d-nestkid``) or ``step-2/PLAN.md``
(``d-nestsrc``), and beside ``step-2/.gitattributes`` ``PLAN.yml -diff``; sources under
``ident``, ``export-subst`` and ``text eol=crlf``; kids pinned by parents and hidden by the
root (``linguist-generated``) or the plans folder's attributes (``-diff``); a PLAN.yml hidden
by the root's; two PLAN.yml whose plain key/value ends with U+200E/U+2064; ``Plan.md``; a
PLAN.md beside a PLAN.yml; a control. Then ``hash``/``validate --json``/``freeze
--check``/``show --format json`` of 9 folders, ``check`` of the commit (JSON), one ``run
--once``, Alice approves every pending PLAN.yml, a second pass, ``status --json`` after each.

Seen (round 122: 126 ids, 78 passed, 48 xfailed; ~20-45 s wall with ``-n 1`` on a shared
box). 10 classes broke. The worst: **yaml-plain-edge-invisible**, **toon-edge-invisible**,
**key-ignorable-u2065**, **toon-lone-cr-accepted**: approved plans ran with a key or value
the reviewer's diff did not show as it ran.

1. **yaml-plain-edge-invisible** (13): ``yml-key-{lrm,rlo,lri,invisible-plus,cgj,
   hangul-filler,tag-char,lead-alm}:refused``, ``yml-value-{true-lrm,lead-2064-octal}:
   refused``, ``md-fenced-yaml-value-2064:refused``, ``d-ymlkey:nothing-ran``,
   ``d-ymlval:nothing-ran``. In PLAN.yml itself a plain key ``dry_run<U+200E>: true`` (LRM;
   RLO U+202E, LRI U+2066, INVISIBLE PLUS U+2064, CGJ U+034F, HANGUL FILLER U+3164, LANGUAGE
   TAG U+E0001, a leading ALM U+061C) validates, and ``dry_run: true<U+2064>`` is the string
   ``"true\u2064"``, ``mode: <U+2064>0777`` the string ``"\u20640777"``. ``git diff`` shows
   ``dry_run: true`` for each; the daemon froze both committed plans and on Alice's
   approval ``rec`` got ``{"dry_run\u200e": true, ...}`` and ``{"dry_run": "true\u2064",
   ...}``. Only ``show`` prints them escaped. The same value in a fenced ``yaml`` PLAN.md
   converts to ``dry_run: "true\u2064"``. U+200B, U+2060 and U+00A0 at the same edges are
   ``E_YAML_PARSE`` (held). docs/plan-format.md, "Reading rules": "A plain (unquoted) key or
   value that begins or ends with a space other than the ASCII one ... or an invisible
   character (U+200B, U+00AD, U+FEFF, ...) is ``E_YAML_PARSE`` at its line (round 113): YAML
   trims an ASCII space there and keeps these, so ``dry_run<U+00A0>: true`` is another key
   than the ``dry_run : true`` a diff shows." Reproduce: ``python -c 'import sys;
   sys.path[:0]=["tests/adversarial", "."]; from advkit import plan_text;
   open("/tmp/p/PLAN.yml","w").write(plan_text("y", params="dry_run\u200e: true\n"))'
   && plangate validate /tmp/p/PLAN.yml`` -> ``valid``; ``plangate show --format json
   /tmp/p/PLAN.yml`` -> ``"dry_run\u200e": true``; ``git diff`` shows ``dry_run: true``.
2. **key-ignorable-u2065** (5): ``{json,toon,md}-key-u2065:refused``,
   ``json-key-u2065-escaped:refused``, ``d-u2065:nothing-ran``. A params key ``dry_run``
   + U+2065 (unassigned, Default_Ignorable_Code_Point: the block 2060..206F) converts from a
   Plan Contract (raw or written ``\u2065``), TOON and a markdown ``Parameters`` value; the
   daemon converted ``plans/d-u2065/PLAN.md`` and ``rec`` got ``{"dry_run\u2065": true}``.
   U+2064, U+2066, U+206A, U+FFF0, U+E0002, U+E0100, U+180B, U+034F, U+17B4, U+1BCA0,
   U+3164 and U+115F are refused, and so is a step id ``fetch<U+2065>`` and a heading
   holding U+2065 (held). docs/formats.md, "no name hides a character (round 110)": a key
   "holding a format character or another default-ignorable code point ... is
   ``E_SCHEMA_INVALID`` at its location, however it is spelled (raw or ``\u200b``)".
   Reproduce: ``printf '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps":
   [{"step_id": "1", "tool": "rec", "args": {"dry_run\\u2065": true}}]}' > PLAN.json &&
   plangate convert PLAN.json`` -> exit 0, ``"dry_run\u2065": true``.
3. **toon-lone-cr-accepted** (5): ``toon-lone-cr-{value,key,quoted,list}:refused``,
   ``d-tooncr:nothing-ran``. A lone CR in a TOON source stays in the value or key it
   interrupts: ``      note: n<CR>      dry_run: true`` converts to ``note: "n\r
   dry_run: true"`` and no ``dry_run`` (a terminal or a review showing the CR as a break
   reads ``dry_run: true``); ``<CR>dry_run: true`` is the key ``"\rdry_run"``; ``hosts[1]:
   web<CR>db`` the list ``["web\rdb"]``. ``check`` predicted ``convert``, the daemon froze it,
   and ``rec`` got ``{"note": "n\r      dry_run: true", "tag": "dtc"}``. A lone CR in a
   markdown source is refused at its line and column (held), CRLF TOON reads as LF (held).
   docs/formats.md: "TOON rows end at LF alone and a lone CR is refused by its reader".
   Reproduce: a TOON task/step plan with ``printf '      note: n\r      dry_run: true\n'`` in
   its ``parameters`` -> ``plangate convert PLAN.toon`` exits 0.
4. **nfc-twin-keys** (2): ``json-nfc-twin-keys:refused``, ``d-nfc:nothing-ran``. A
   PLAN.json whose args hold ``"caf\u00e9": "safe"`` and ``"cafe\u0301": "evil"`` written raw
   (every diff shows ``"café"`` said twice) converts to two keys (written escaped in the
   PLAN.yml) and the daemon ran ``rec`` with both. docs/formats.md, "Every field is said
   once": "an object that names a member twice is ``E_SCHEMA_INVALID`` ... JSON leaves the
   meaning to the reader". (The same page says a key "NFC would change, still converts and is
   written escaped (round 107)": a judgement on the source's review, where the two cannot be
   told apart.)
5. **md-nbsp-list-marker** (2): ``md-nbsp-marker-after-params:refused``,
   ``md-nbsp-marker-workflow:refused``. ``-<U+00A0>**Timeout**: 45s`` under ``- **Parameters**:
   {"tag": "a-ok"}`` is no list item to CommonMark (markdown-it-py ``commonmark`` renders it
   inside the Parameters ``<li>``: ``{"tag": "a-ok"}\n- <strong>Timeout</strong>: 45s``), yet
   the converter reads Parameters ``{"tag": "a-ok"}`` and ``timeout: 45``;
   ``-<U+00A0>Error Recovery: true`` in ``## Workflow Config`` turns retries on. docs/formats.md:
   "a markdown value renders as written (round 110) ... the text the converter reads of a
   ``Parameters`` value ... must be the text CommonMark renders for it, character for
   character", and of headings "a no-break space after them makes a paragraph on every forge,
   and none here". Impact is low (the words stay visible).
6. **source-prediction-ignores-hold** (9): ``d-rootattr:{hash,validate,freeze-check}``,
   ``d-parentattr:{hash,validate}``, ``d-macro:{hash,freeze-check}``,
   ``d-symlink:{hash,validate}``. The daemon holds these sources (rows
   ``E_ATTRIBUTE_UNSUPPORTED`` for the three hidden by the root's or ``plans/``'s attributes
   or a macro; ``E_UNSAFE_PATH`` for the symlinked ``PLAN.json``) and ``check`` predicts
   ``invalid`` (held), but ``plangate hash plans/x`` prints a hash, ``validate`` says
   ``valid (sha256:...)`` and ``freeze --check`` says "the controller converts it to
   PLAN.yml and freezes that as sha256:..." (for the symlink: the hash of the link's
   target). docs/formats.md: "``plangate hash`` of a source prints the hash the controller
   will freeze"; "``plangate validate plans/x/PLAN.json`` ... reads the source as the daemon
   does: ... a source the daemon would not convert ... is its folder's code, as its row
   says". Reproduce: ``echo 'plans/x/PLAN.md -diff' > .gitattributes`` + a markdown plan at
   ``plans/x/PLAN.md``, commit, ``plangate hash plans/x`` -> a hash; ``plangate run --once``
   -> row ``unreadable`` ``E_ATTRIBUTE_UNSUPPORTED``.
7. **nested-source-over-agent-kid** (4): ``d-nestkid:{hash,validate,check,row}``. An
   ActionPlan ``plans/x/PLAN.json`` with a ``nested_plan`` step, committed with the agent's
   own ``plans/x/step-2/PLAN.yml`` (``n: evil``): ``hash``/``validate`` print a hash and
   ``valid``, ``check`` predicts ``convert`` with that hash; the daemon converts nothing and
   ``status --json`` has no row for ``plans/x`` at all (only ``plans/x/step-2``, ``draft``).
   docs/formats.md: "A source that does not convert is not committed: the plan waits with
   the error (``plangate status`` shows ``cannot convert plans/x/PLAN.json: ...``)";
   "``plangate check`` ... reports it as the daemon will treat it after the merge".
   Reproduce: that folder, commit, ``plangate check --base HEAD~1 --head HEAD``, ``plangate
   run --once``, ``plangate status --json | grep plans/x``.
8. **nested-source-kid-mispredicted** (1): ``d-nestsrc:check-kid``. The same parent with
   the agent's ``step-2/PLAN.md`` (tag ``dnsevil``): ``check`` predicts ``plans/x/step-2:
   convert`` with that PLAN.md's hash; the daemon's convert commit writes the parent's own
   kid as ``step-2/PLAN.yml`` beside it (the PLAN.md a note, no warning) and runs parent and
   kid (``d-nestsrc`` ran ``parent, kid``; nothing of ``dnsevil``: held). The reviewer was
   told the PLAN.md she read becomes the kid.
9. **show-reads-source-as-yaml** (2): ``d-control:show``, ``d-ident:show``. ``plangate show
   --format json plans/x`` of a source folder reads ``PLAN.md`` (and ``PLAN.toon``) as YAML
   (``E_YAML_PARSE: did not find expected <document start>``; for the TOON one with a CR
   "U+000D CARRIAGE RETURN ... outside a quoted string") and a ``PLAN.json`` as a flow
   mapping ("the top level must be a block mapping ..."),
   while ``hash``/``validate`` convert it and the daemon freezes and runs it: the reviewer's
   view shows no plan. No doc line promises ``show`` converts a source (round 121 listed it
   as suspected); asserted as the reviewer's view of what the controller freezes.
   Fixed (2026-12-06, show123): ``show`` of a source reads it as ``validate`` and ``hash``
   do (``discovery.converted_source``), its nested plans as the convert commit writes them,
   and says so (``Source: PLAN.md, shown as the daemon converts it``; ``converted_from`` in
   the JSON); docs/formats.md says it.
10. **toon-edge-invisible** (5): ``toon-value-{lrm,rlo,invisible-plus,hangul-filler}:
   refused``, ``d-toonedge:nothing-ran``. An unquoted TOON value ending with U+200E, U+202E,
   U+2064 or U+3164 converts to a string: ``dry_run: false<U+200E>`` is ``"false\u200e"``
   (truthy), where the diff shows ``dry_run: false``; the daemon converted ``dry_run:
   true<U+200E>`` and ``rec`` got ``{"dry_run": "true\u200e"}``. ``dry_run: false<U+200B>``
   is refused (held: "begins or ends with U+200B, which a review shows as a space or as
   nothing"). docs/formats.md, "a space lookalike at an unquoted edge (round 113)": "YAML and
   TOON trim an ASCII space at the edge of an unquoted key or value and keep ... the invisible
   U+200B, U+200C, U+200D, U+2060, U+FEFF, U+00AD, U+180E ... in TOON, which has no escape to
   write one visibly, every key or string with one at its edge is ``E_SCHEMA_INVALID``". The
   list there is the seven; a bidi mark and an invisible operator are shown as nothing alike
   (the reader's own message gives that reason). Reproduce: the TOON task/step plan with
   ``printf '      dry_run: false\xe2\x80\x8e\n'`` in its parameters -> ``plangate convert
   PLAN.toon`` -> ``dry_run: "false\u200e"``.

Fixed (2026-12-06, fix123s): classes 1-5 and 10 (the readers'; 32 ids). The cause of
**yaml-plain-edge-invisible**, **toon-edge-invisible** and **key-ignorable-u2065** was hand
lists: the unquoted-edge rule of YAML and TOON (``yamlio.edge_lookalike``) knew seven
invisible characters, the name rule (``display.first_ignorable``) category Cf plus a list of
the other default-ignorables that left out the unassigned U+2065, and a legacy opener
(``refs._LEGACY_OPEN``) its own list. Now one class, by Unicode property, is defined once
and generated with ``display``'s table (``display.is_invisible`` -> ``INVISIBLE``): every
format character (Cf), every Default_Ignorable_Code_Point whole (``DEFAULT_IGNORABLE``, its
unassigned ranges included) and the blank glyphs; ``display.edge_blank`` (it, or a Unicode
space, at an edge; an emoji's variation selector kept) is the edge rule of PLAN.yml, YAML
sources (fenced too) and TOON, ``first_ignorable`` the name rule of every converted source.
**toon-lone-cr-accepted**: the TOON reader (``convert/source._toon``) refuses a lone CR,
NEL, U+2028 and U+2029 at their line and column (``HIDDEN_LINES``, the markdown reader's),
``E_CONVERT_UNSUPPORTED``. **nfc-twin-keys**: two keys of one object equal in NFC are one
member said twice: ``jsonread.nfc_twins`` in the strict reader's ``value_problems`` (JSON,
markdown values, TOON: ``E_SCHEMA_INVALID``) and ``yamlio._key_said`` (PLAN.yml and YAML
sources: a duplicate key, ``E_YAML_PARSE``). **md-nbsp-list-marker**: the markdown reader's
bullet (``markdown._BULLET``) is CommonMark's: indented by spaces or tabs, its marker
followed by a space or a tab, so ``-<U+00A0>**Timeout**: 45s`` is no field
(``E_CONVERT_UNSUPPORTED`` at its line). Tests: tests/plan/test_convert_round122.py.

Fixed (2026-12-06, fix123p): **source-prediction-ignores-hold**,
**nested-source-over-agent-kid** and **nested-source-kid-mispredicted**. Cause: the daemon's
rules for a committed source lived in three places: ``source_outcome``
(``controller/service/sources.py``: the status rows and ``check``) asked the attributes only;
the pass (``freezing.py`` ``_commit_conversion``/``_check_writable``) also refused a
conversion writing over a plan file the branch holds (the agent's ``step-2/PLAN.yml``) and
read a symlinked source's link text (``E_PARSE_NONJSON``); and ``hash``/``validate``/``freeze
--check`` (``discovery.load_source``) asked none of them. So the row and ``check`` said
``convert`` (no row at all) where the pass waited, and the readers printed hashes nothing
froze. Now one pair of rules, ``sources.source_held`` (a link or gitlink entry:
``E_UNSAFE_PATH``; attributes hiding it: ``E_ATTRIBUTE_UNSUPPORTED``) and
``sources.written_held`` (a file the conversion writes over a plan file or a link/file the
branch holds: ``E_CONVERT_UNSUPPORTED``/``E_UNSAFE_PATH``; not refused by bytes, so the
obstacle removed releases the source), is asked by ``source_outcome``, by the pass, and by
the readers through ``CheckoutHolds`` (the commit the checkout is at, the entry as ``git
add`` would store it). ``check`` walks the sources in the pass's order and reports a folder
whose PLAN.yml an earlier conversion writes (a parent's nested step) as that plan, with a
warning that its own source is a note beside it. Tests:
``tests/service/test_source_holds_predicted.py``.

Held: the daemon holds a source hidden by the ROOT ``.gitattributes``, by ``plans/``'s or by
a root macro (``E_ATTRIBUTE_UNSUPPORTED``, nothing run), parents pinning kids so hidden
(``-diff`` from ``plans/``, ``linguist-generated`` from the root), a kid hidden by
``step-2/.gitattributes`` written by a convert commit, a PLAN.yml hidden by the root's; a
symlinked source, a symlinked plan folder, a gitlink ``PLAN.json`` and a gitlink folder
have ``E_UNSAFE_PATH`` rows and never run (``validate`` of the linked folder warns "would
never pick it up"); ``Plan.md`` is ``E_CONVERT_UNSUPPORTED`` on its row and ``held`` in
``check``; ``ident`` (``$Id$``), ``export-subst`` (``$Format:%H$``) and ``text eol=crlf`` on a
TOON source run as the diff shows; a PLAN.md beside a PLAN.yml: ``check`` warns, the
PLAN.yml runs, ``hash`` of the folder is the PLAN.yml's; the control PLAN.md's hash,
validate, freeze --check and check predict the frozen hash, and it ran once. Convert: 12
other default-ignorable code points in keys, a step id with U+2065 (and, in scratch, a
heading with it), a lone CR in markdown, a TOON value ending with U+200B, CRLF TOON, a TOON
length mismatch, text after a PLAN.json's object, ATX closing sequences (read as the
section), an indented heading, ``*`` and TAB bullets read,
``+``/``1.``/task-list/quoted bullets, ``__x__``/``*x*``/``**x:**``/zero-width field names,
lazy continuation lines and a fenced YAML key with U+200E refused.

Suspected, not asserted: a markdown ``Parameters`` value holding GitHub inline math
(``{"cmd": "ls $x % ; rm -rf ~$"}``) converts as written, where GitHub's math renderer would
show only ``x`` (``%`` starts a TeX comment; not observed here); TOON ``dry_run: false # was
true`` is the string ``"false # was true"`` and ``mode: 0777`` the string ``"0777"`` (PLAN.yml
reads 777), both per TOON's own rules; ``- **Action**: re&#99;`` converts to the tool
``re__99_`` (a forge shows ``rec``; the catalog then refuses it); a parent pinning a
source-only kid (``plans/ks/PLAN.md``, pinned by ``plangate hash plans/ks``) is marked
``invalid`` ("no PLAN.yml in plans/ks") in the pass that converts the kid and stays so; the
symlinked source's folder row reads the link's target path as the source
(``E_PARSE_NONJSON``) beside its ``E_UNSAFE_PATH`` row; ``validate``/``show`` of an
uncommitted symlink ``PLAN.yml`` follow it.

Not tried: MCP ``validate``/``submit``, remote mode, the web UI, ``working-tree-encoding``
on a source (the bench wrote it wrongly), filter drivers, a submodule with content, case-only
renames after a conversion, TOON key folding (``expandPaths``), Agent Plan ``overlays``.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, load_yaml, plan_text
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
TIMEOUT = "- **Timeout**: 30s\n"
PARAMS = '- **Parameters**: {"tag": "a-ok"}\n'
WF = "- Parallel Execution: false\n- Error Recovery: false\n"
RETRY_ON = "- Parallel Execution: false\n- Error Recovery: true\n- Max Retries: 2\n"
assert TIMEOUT in MD and PARAMS in MD and WF in MD


def _pc(args: str) -> str:
    """A Plan Contract whose one step calls ``rec`` with ``args`` (JSON text, as written)."""
    return (
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", '
        '"tool": "rec", "args": ' + args + "}]}"
    )


def _toon(params: str = "      tag: x\n", nl: str = "\n") -> str:
    """The task/step plan in TOON, its one step's ``parameters`` lines ``params``."""
    text = (
        "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n"
        + params
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
    )
    return text.replace("\n", nl)


def _md_params(params: str) -> str:
    return MD.replace(PARAMS, f"- **Parameters**: {params}\n")


def _key(cp: int) -> str:
    """A Plan Contract whose args hold the key ``dry_run`` + the code point ``cp``."""
    return _pc('{"tag": "x", "dry_run' + chr(cp) + '": false}')


#: vid -> (file name, content, expectation). ("refused", code regex, text regex): exit 1 with
#: the code; ("params", {...}): converted, action 1's params exactly; ("timeout", n);
#: ("retry", n): on_failure retry with n attempts.
CONVERT: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    # no name hides a character: U+2065 is a default-ignorable code point (2060..206F)
    "json-key-u2065:refused": (
        "PLAN.json",
        _key(0x2065),
        ("refused", "E_SCHEMA_INVALID", r"U\+2065"),
    ),
    "toon-key-u2065:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run\u2065: false\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+2065"),
    ),
    "md-key-u2065:refused": (
        "PLAN.md",
        _md_params('{"tag": "a-ok", "dry_run\u2065": false}'),
        ("refused", "E_SCHEMA_INVALID", r"U\+2065"),
    ),
    "json-key-u2065-escaped:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "dry_run\\u2065": false}'),
        ("refused", "E_SCHEMA_INVALID", r"U\+2065"),
    ),
    "json-key-u2066:refused": (
        "PLAN.json",
        _key(0x2066),
        ("refused", "E_SCHEMA_INVALID", r"U\+2066"),
    ),
    "json-key-u206a:refused": (
        "PLAN.json",
        _key(0x206A),
        ("refused", "E_SCHEMA_INVALID", r"U\+206A"),
    ),
    "json-key-ufff0:refused": (
        "PLAN.json",
        _key(0xFFF0),
        ("refused", "E_SCHEMA_INVALID", r"U\+FFF0"),
    ),
    "json-key-ue0002:refused": (
        "PLAN.json",
        _key(0xE0002),
        ("refused", "E_SCHEMA_INVALID", r"U\+E0002"),
    ),
    "json-key-ue0100:refused": (
        "PLAN.json",
        _key(0xE0100),
        ("refused", "E_SCHEMA_INVALID", r"U\+E0100"),
    ),
    "json-key-u180b:refused": (
        "PLAN.json",
        _key(0x180B),
        ("refused", "E_SCHEMA_INVALID", r"U\+180B"),
    ),
    "json-key-u034f:refused": (
        "PLAN.json",
        _key(0x034F),
        ("refused", "E_SCHEMA_INVALID", r"U\+034F"),
    ),
    "json-key-u17b4:refused": (
        "PLAN.json",
        _key(0x17B4),
        ("refused", "E_SCHEMA_INVALID", r"U\+17B4"),
    ),
    "json-key-u1bca0:refused": (
        "PLAN.json",
        _key(0x1BCA0),
        ("refused", "E_SCHEMA_INVALID", r"U\+1BCA0"),
    ),
    "toon-key-u3164:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run\u3164: false\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+3164"),
    ),
    "md-key-u115f:refused": (
        "PLAN.md",
        _md_params('{"tag": "a-ok", "dry_run\u115f": false}'),
        ("refused", "E_SCHEMA_INVALID", r"U\+115F"),
    ),
    "pc-stepid-u2065:refused": (
        "PLAN.json",
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "fetch", '
        '"tool": "rec", "args": {"tag": "x"}}, {"step_id": "fetch\u2065", "tool": "rec", '
        '"args": {"tag": "y"}}, {"step_id": "send", "tool": "rec", "args": {"tag": "z"}, '
        '"depends_on": ["fetch\u2065"]}]}',
        ("refused", "E_SCHEMA_INVALID", r"step_id|depends_on"),
    ),
    # NFC twins: two keys a diff of the source shows as one said twice
    "json-nfc-twin-keys:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "caf\u00e9": "safe", "cafe\u0301": "evil"}'),
        ("refused", "E_SCHEMA_INVALID", r"caf|twice|NFC"),
    ),
    # TOON: rows end at LF alone, a lone CR is refused by its reader
    "toon-lone-cr-value:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      note: n\r      dry_run: true\n"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"U\+000D|CR|carriage|\\r"),
    ),
    "toon-lone-cr-key:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      \rdry_run: true\n"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"U\+000D|CR|carriage|\\r"),
    ),
    "toon-lone-cr-quoted:refused": (
        "PLAN.toon",
        _toon('      tag: "x\r      dry_run: true"\n'),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"U\+000D|CR|carriage|\\r"),
    ),
    "toon-lone-cr-list:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[1]: web\rdb\n"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"U\+000D|CR|carriage|\\r"),
    ),
    "toon-value-lrm:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u200e\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "toon-value-rlo:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u202e\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+202E"),
    ),
    "toon-value-invisible-plus:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u2064\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+2064"),
    ),
    "toon-value-hangul-filler:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u3164\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+3164"),
    ),
    "toon-value-zwsp:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\u200b\n"),
        ("refused", "E_SCHEMA_INVALID", r"U\+200B"),
    ),
    "toon-crlf:read": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\n", nl="\r\n"),
        ("params", {"tag": "x", "dry_run": False}),
    ),
    "toon-crlf-one-line:read": (
        "PLAN.toon",
        _toon("      tag: x\n      dry_run: false\r\n"),
        ("params", {"tag": "x", "dry_run": False}),
    ),
    "toon-length-mismatch:refused": (
        "PLAN.toon",
        _toon("      tag: x\n      hosts[3]: web,db\n"),
        ("refused", "E_SCHEMA_INVALID", r"[Ll]ength|found"),
    ),
    "md-lone-cr:refused": (
        "PLAN.md",
        MD.replace(PARAMS + TIMEOUT, PARAMS[:-1] + "\r- **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"U\+000D"),
    ),
    "json-trailing-object:refused": (
        "PLAN.json",
        _pc('{"tag": "x"}') + "\n{}",
        ("refused", "E_PARSE_NONJSON", r"after"),
    ),
    "json-trailing-comment:refused": (
        "PLAN.json",
        _pc('{"tag": "x"}') + "\n// dry_run: true",
        ("refused", "E_PARSE_NONJSON", r"after"),
    ),
    # markdown: a list marker then a no-break space is no list item to CommonMark: the line
    # is a lazy continuation of the bullet above it (rendered inside it)
    "md-nbsp-marker-after-params:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "-\u00a0**Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID", r"."),
    ),
    "md-nbsp-marker-workflow:refused": (
        "PLAN.md",
        MD.replace(WF, "- Parallel Execution: false\n-\u00a0Error Recovery: true\n"),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID", r"."),
    ),
    # markdown headings and bullets a forge reads as the converter does (held)
    "md-atx-closing-workflow:read": (
        "PLAN.md",
        MD.replace("## Workflow Config\n", "## Workflow Config ##\n").replace(WF, RETRY_ON),
        ("retry", 2),
    ),
    "md-atx-closing-steps:read": (
        "PLAN.md",
        MD.replace("## Steps\n", "## Steps #\n"),
        ("params", {"tag": "a-ok"}),
    ),
    "md-atx-indented-workflow:refused": (
        "PLAN.md",
        MD.replace("## Workflow Config\n", "   ## Workflow Config\n").replace(WF, RETRY_ON),
        ("refused", "E_CONVERT_UNSUPPORTED", r"."),
    ),
    "md-star-bullet:read": (
        "PLAN.md",
        MD.replace(TIMEOUT, "* **Timeout**: 45s\n"),
        ("timeout", 45),
    ),
    "md-tab-after-marker:read": (
        "PLAN.md",
        MD.replace(TIMEOUT, "-\t**Timeout**: 45s\n"),
        ("timeout", 45),
    ),
    "md-plus-bullet:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "+ **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"Timeout"),
    ),
    "md-ordered-bullet:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "1. **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"Timeout"),
    ),
    "md-underscore-strong:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- __Timeout__: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"timeout"),
    ),
    "md-colon-in-strong:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- **Timeout:** 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"timeout"),
    ),
    "md-emphasis-name:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- *Timeout*: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"timeout"),
    ),
    "md-task-list-item:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- [ ] **Timeout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"timeout"),
    ),
    "md-zw-field-name:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, "- **Time\u200bout**: 45s\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"time"),
    ),
    "md-quoted-bullet:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, TIMEOUT + "> - **Dependencies**: []\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"Dependencies"),
    ),
    "md-lazy-params:refused": (
        "PLAN.md",
        MD.replace(PARAMS, '- **Parameters**: {"tag": "a-ok",\n"dry_run": false}\n'),
        ("refused", "E_CONVERT_UNSUPPORTED|E_SCHEMA_INVALID", r"dry_run|parameters"),
    ),
    "md-fenced-yaml-key-lrm:refused": (
        "PLAN.md",
        "```yaml\n" + plan_text("y", params="dry_run\u200e: true\n") + "```\n",
        ("refused", "E_YAML_PARSE|E_SCHEMA_INVALID", r"U\+200E"),
    ),
    "md-fenced-yaml-value-2064:refused": (
        "PLAN.md",
        "```yaml\n" + plan_text("y", params="dry_run: true\u2064\n") + "```\n",
        ("refused", "E_YAML_PARSE", r"line|:\d+"),
    ),
    "md-lazy-field:refused": (
        "PLAN.md",
        MD.replace(TIMEOUT, TIMEOUT + "**Retry Count**: 5\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"Retry"),
    ),
}


def _yml(extra: str, tag: str = "y") -> str:
    """The bench's one-action PLAN.yml with ``extra`` lines (6-space indent) in its params."""
    return plan_text(tag, params=extra)


#: PLAN.yml texts read by ``validate --json`` and ``show --format json`` (no config): a plain
#: key or value whose edge holds a character no diff shows is ``E_YAML_PARSE`` at its line
YAML_EDGE: dict[str, str] = {
    "yml-key-lrm:refused": "dry_run\u200e: true\n",
    "yml-key-rlo:refused": "dry_run\u202e: true\n",
    "yml-key-lri:refused": "dry_run\u2066: true\n",
    "yml-key-invisible-plus:refused": "dry_run\u2064: true\n",
    "yml-key-cgj:refused": "dry_run\u034f: true\n",
    "yml-key-hangul-filler:refused": "dry_run\u3164: true\n",
    "yml-key-tag-char:refused": "dry_run\U000e0001: true\n",
    "yml-key-lead-alm:refused": "\u061cdry_run: true\n",
    "yml-value-true-lrm:refused": "dry_run: true\u200e\n",
    "yml-value-lead-2064-octal:refused": "mode: \u20640777\n",
    "yml-key-zwsp:refused": "dry_run\u200b: true\n",
    "yml-key-wj:refused": "dry_run\u2060: true\n",
    "yml-value-zwsp:refused": "dry_run: true\u200b\n",
    "yml-value-nbsp:refused": "dry_run: true\u00a0\n",
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


def _parent(slug: str, kid: str, kid_hash: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\navailable_tools:\n"
        f'  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {{tag: "{slug}"}}\n'
        f'  - id: 2\n    plan: {{path: plans/{kid}, hash: "{kid_hash}"}}\n    why: nested\n'
    )


ROOT_ATTRS = (
    "[attr]hidden -diff\n"
    "plans/d-rootattr/PLAN.md -diff\n"
    "plans/d-macro/PLAN.md hidden\n"
    "plans/d-kid2/PLAN.yml linguist-generated\n"
    "plans/d-ymlroot/PLAN.yml -diff\n"
)
PLANS_ATTRS = "d-parentattr/PLAN.json binary\nd-kid1/PLAN.yml -diff\n"

#: slug -> the ``rec`` tag its actions carry
TAG_OF = {
    "d-rootattr": "dra-ok",
    "d-parentattr": "dpa",
    "d-macro": "dmc-ok",
    "d-symlink": "dsy",
    "d-dirlink": "ddl-ok",
    "d-tooncr": "dtc",
    "d-u2065": "dig-ok",
    "d-nfc": "dnf",
    "d-nestkid": "dnk",
    "d-nestattr": "dna",
    "d-nestsrc": "dns",
    "d-nestsrc-kidsrc": "dnsevil-ok",
    "d-ident": "did",
    "d-tooneol": "dte",
    "d-subst": "dsu",
    "d-par1": "d-par1",
    "d-par2": "d-par2",
    "d-ymlroot": "dyr",
    "d-ymlkey": "dyk",
    "d-toonedge": "dto",
    "d-ymlval": "dyv",
    "d-beside": "dbs",
    "d-control": "dct-ok",
}
PREDICT_SLUGS = [
    "d-rootattr",
    "d-parentattr",
    "d-macro",
    "d-symlink",
    "d-nestkid",
    "d-control",
    "d-tooncr",
    "d-beside",
    "d-ident",
]


def _daemon(lab: Lab, got: dict[str, Any]) -> None:
    repo = lab.repo
    lab.put("plans/d-rootattr/PLAN.md", md("dra"))
    lab.put("plans/d-parentattr/PLAN.json", _pc('{"tag": "dpa"}'))
    lab.put("plans/d-macro/PLAN.md", md("dmc"))
    lab.put("notes/real.json", _pc('{"tag": "dsy", "evil": true}'))
    (repo / "plans" / "d-symlink").mkdir(parents=True)
    os.symlink("../../notes/real.json", repo / "plans" / "d-symlink" / "PLAN.json")
    lab.put("notes/dl/PLAN.md", md("ddl"))
    os.symlink("../notes/dl", repo / "plans" / "d-dirlink")
    lab.put(
        "plans/d-tooncr/PLAN.toon",
        _toon("      tag: dtc\n      note: n\r      dry_run: true\n"),
    )
    lab.put(
        "plans/d-u2065/PLAN.md",
        md("dig").replace('{"tag": "dig-ok"}', '{"tag": "dig-ok", "dry_run\u2065": true}'),
    )
    lab.put(
        "plans/d-nfc/PLAN.json", _pc('{"tag": "dnf", "caf\u00e9": "safe", "cafe\u0301": "evil"}')
    )
    # an ActionPlan with a nested step, and the agent's own PLAN.yml where the kid is written
    lab.put("plans/d-nestkid/PLAN.json", _nested_ap("dnk"))
    lab.put("plans/d-nestkid/step-2/PLAN.yml", plan_text("dnk", status="draft", params="n: evil\n"))
    # the same with the agent's own PLAN.md (a source) where the kid is written
    lab.put("plans/d-nestsrc/PLAN.json", _nested_ap("dns"))
    lab.put("plans/d-nestsrc/step-2/PLAN.md", md("dnsevil"))
    lab.put("plans/d-nestattr/PLAN.json", _nested_ap("dna"))
    lab.put("plans/d-nestattr/step-2/.gitattributes", "PLAN.yml -diff\n")
    lab.put("plans/d-ident/PLAN.json", _pc('{"tag": "did", "note": "$Id$"}'))
    lab.put("plans/d-ident/.gitattributes", "PLAN.json ident\n")
    lab.put("plans/d-subst/PLAN.json", _pc('{"tag": "dsu", "note": "$Format:%H$"}'))
    lab.put("plans/d-subst/.gitattributes", "PLAN.json export-subst\n")
    lab.put("plans/d-tooneol/PLAN.toon", _toon("      tag: dte\n      dry_run: false\n"))
    lab.put("plans/d-tooneol/.gitattributes", "PLAN.toon text eol=crlf\n")
    lab.write("d-kid1", plan_text("dk1", status="draft"))
    lab.write("d-kid2", plan_text("dk2", status="draft"))
    lab.write("d-ymlroot", plan_text("dyr"))
    lab.put("plans/d-toonedge/PLAN.toon", _toon("      tag: dto\n      dry_run: true\u200e\n"))
    lab.write("d-ymlkey", plan_text("dyk", params="dry_run\u200e: true\n"))
    lab.write("d-ymlval", plan_text("dyv", params="dry_run: true\u2064\n"))
    lab.put("plans/d-beside/PLAN.md", md("dbs"))
    lab.write("d-beside", plan_text("dbs", params="evil: true\n"))
    lab.put("plans/d-case/Plan.md", md("dcs"))
    lab.put("plans/d-control/PLAN.md", md("dct"))
    lab.put(".gitattributes", ROOT_ATTRS)
    lab.put("plans/.gitattributes", PLANS_ATTRS)
    for slug, kid in (("d-par1", "d-kid1"), ("d-par2", "d-kid2")):
        kid_hash = lab.cli("hash", f"plans/{kid}", cwd=repo).stdout.split()[-1]
        lab.write(slug, _parent(slug, kid, kid_hash))
    lab.git("add", "-A")
    # a gitlink committed where a source would be
    lab.git(
        "update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans/d-gitlink/PLAN.json"
    )
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},plans/d-subfolder")
    lab.git("commit", "-q", "-m", "agent: plans", who=AGENT)
    got["log_p"] = {
        slug: lab.git("log", "-p", "-1", "--format=%s", "--", f"plans/{slug}")
        for slug in ("d-rootattr", "d-parentattr", "d-macro", "d-kid1", "d-kid2", "d-ymlroot")
    }
    for slug, text in got["log_p"].items():
        if "Binary files" not in text and slug != "d-kid2":  # the bench's premise
            raise BenchError(f"git log -p shows {slug}: {text[-600:]}")
    # what a reviewer asks of the committed sources before the controller's pass
    got["pre"] = {}
    for slug in PREDICT_SLUGS:
        one: dict[str, Any] = {}
        for name, argv in (
            ("hash", ["hash"]),
            ("validate", ["validate", "--json"]),
            ("freeze-check", ["freeze", "--check"]),
            ("show", ["show", "--format", "json"]),
        ):
            done = lab.cli(*argv, f"plans/{slug}", cwd=repo)
            one[name] = (done.returncode, done.stdout[-3000:], done.stderr[-1500:])
        got["pre"][slug] = one
    done = lab.cli("validate", "plans/d-dirlink", cwd=repo)
    got["pre-dirlink"] = (done.returncode, done.stdout + done.stderr)
    got["check"] = lab.check_plans("HEAD", ALICE[1], base="HEAD~1")
    told = lab.check("HEAD", ALICE[1], base="HEAD~1")
    try:
        got["check_json"] = {p["plan"]: p for p in json.loads(told.stdout)["plans"]}
    except (ValueError, KeyError, TypeError):
        got["check_json"] = {"raw": told.stdout[-1500:] + told.stderr[-800:]}
    got["pass"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["tree1"] = tree
    done = lab.cli("hash", "plans/d-nestsrc/step-2/PLAN.yml", cwd=repo)
    got["nestsrc-kid-hash"] = (done.returncode, done.stdout.strip(), done.stderr[-600:])
    for slug in TAG_OF:
        path = repo / "plans" / slug / "PLAN.yml"
        if f"plans/{slug}/PLAN.yml" in tree and "pending_approval" in path.read_text():
            approve_file(lab, slug)
    lab.git("add", "-A", "plans")
    lab.git("commit", "-q", "-m", "approve the plans", who=ALICE)
    got["pass2"] = lab.run(check=False).returncode
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["tree2"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["calls"] = {slug: lab.calls(tag) for slug, tag in TAG_OF.items()}


def _convert(lab: Lab, folder: Path, name: str, content: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8"))
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
    return shared(tmp_path_factory, "r122-sources-atk122c", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 122: {cls}: {what}")


U2065 = xfail(
    "key-ignorable-u2065",
    "a params key `dry_run<U+2065>` (a default-ignorable code point, 2060..206F, unassigned) converts from JSON, TOON and markdown and the daemon ran it; U+2064, U+2066, U+206A, U+FFF0 ... are refused",
)
NFC = xfail(
    "nfc-twin-keys",
    "a PLAN.json whose args hold `caf\\u00e9` and `cafe\\u0301` raw (one key said twice to every diff) converts to two keys, and the tool got both",
)
TOONCR = xfail(
    "toon-lone-cr-accepted",
    "a lone CR in a TOON source is kept inside the value (or key) it interrupts; `note: n<CR>      dry_run: true` converted to note 'n\\r      dry_run: true' and no dry_run, and the daemon ran it",
)
NBSP = xfail(
    "md-nbsp-list-marker",
    "`-<U+00A0>**Timeout**: 45s` is a lazy continuation of the bullet above to CommonMark (rendered inside it), and the converter reads it as its own bullet",
)
PREDICT = xfail(
    "source-prediction-ignores-hold",
    "`hash`/`validate`/`freeze --check` of a source the daemon holds (attributes hiding it, a symlink) print 'valid' and the hash 'the controller ... freezes', while the daemon never converts it",
)
NESTKID = xfail(
    "nested-source-over-agent-kid",
    "an ActionPlan PLAN.json with a nested step beside the agent's own step-2/PLAN.yml: hash/validate/check predict `convert` with a hash; the daemon converts nothing and `status` has no row for the plan",
)
NESTSRC = xfail(
    "nested-source-kid-mispredicted",
    "beside an ActionPlan PLAN.json with a nested step the agent commits step-2/PLAN.md: `check` predicts `plans/x/step-2: convert` with that PLAN.md's hash, while the daemon writes the parent's kid there and leaves the PLAN.md a note",
)
EDGE = xfail(
    "yaml-plain-edge-invisible",
    "a plain PLAN.yml key or value ending (or beginning) with U+200E, U+202E, U+2066, U+2064, U+034F, U+3164, U+E0001 or U+061C validates (only U+200B, U+2060, U+00A0 ... are E_YAML_PARSE): the diff shows `dry_run: true`, the tool got `dry_run\\u200e` or the string 'true\\u2064'",
)
TOONEDGE = xfail(
    "toon-edge-invisible",
    "an unquoted TOON value ending with U+200E, U+202E, U+2064 or U+3164 converts to a string (`dry_run: false<U+200E>` is 'false\\u200e', truthy; the daemon ran `dry_run: true<U+200E>` as the string); only U+200B and the listed ones are refused",
)
SHOW = xfail(
    "show-reads-source-as-yaml",
    "`plangate show plans/x` of a source folder parses PLAN.md/PLAN.json as YAML (E_YAML_PARSE, 'the top level must be a block mapping') where hash/validate convert it",
)

BROKEN: dict[str, Any] = {}

LOCATED = r"(line \d+|:\d+:| at [a-z_]+[\[.:])"


def _params(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0].get("params") or {}


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """``plangate convert``: a source a reviewer reads otherwise than the converter (a hidden
    character, a lone CR, a line CommonMark renders inside another bullet) is refused with
    its code; one read alike converts to exactly what it shows."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    want = CONVERT[vid][2]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if want[0] == "refused":
        assert got["rc"] == 1, (got["rc"], _params(got["plan"]), got["out"][:1200], got["err"])
        assert re.search(r"\b(" + want[1] + r")\b", got["err"]), got["err"]
        assert re.search(want[2], got["err"]), got["err"]
        return
    assert got["rc"] == 0 and got["plan"], got["err"]
    action = got["plan"]["actions"][0]
    if want[0] == "params":
        assert _params(got["plan"]) == want[1], _params(got["plan"])
    elif want[0] == "timeout":
        assert action.get("timeout") == want[1], action
    elif want[0] == "retry":
        assert action.get("on_failure") == "retry", action
        assert (action.get("retry") or {}).get("attempts") == want[1], action


@pytest.mark.parametrize("vid", cases(list(YAML_EDGE), list(YAML_EDGE), BROKEN))
def test_plan_yml_plain_edge(lab: Lab, vid: str) -> None:
    """PLAN.yml's reading rules: a plain key or value that begins or ends with an invisible
    character (a bidi mark, a format character, a filler) or a space other than the ASCII one
    is ``E_YAML_PARSE`` at its line: the diff shows ``dry_run: true`` while the tool would get
    another key, or a string."""
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


def _row(lab: Lab, slug: str, which: str = "rows2") -> dict[str, Any]:
    return lab.got[which].get(f"plans/{slug}", {})  # type: ignore[attr-defined]


def _ran(lab: Lab, slug: str) -> list[Any]:
    return [json.loads(c["stdin"]) for c in lab.got["calls"][slug]]  # type: ignore[attr-defined]


NOTHING_RAN = [
    "d-tooncr:nothing-ran",
    "d-u2065:nothing-ran",
    "d-nfc:nothing-ran",
    "d-rootattr:nothing-ran",
    "d-parentattr:nothing-ran",
    "d-macro:nothing-ran",
    "d-symlink:nothing-ran",
    "d-dirlink:nothing-ran",
    "d-nestattr:nothing-ran",
    "d-par1:nothing-ran",
    "d-par2:nothing-ran",
    "d-ymlroot:nothing-ran",
    "d-ymlkey:nothing-ran",
    "d-toonedge:nothing-ran",
    "d-ymlval:nothing-ran",
]


@pytest.mark.parametrize("vid", cases(NOTHING_RAN, NOTHING_RAN, BROKEN))
def test_daemon_refused(lab: Lab, vid: str) -> None:
    """A committed source or plan a reviewer cannot read as it would run (a lone CR in TOON,
    a hidden key, NFC twin keys, attributes hiding it or a pinned kid from the root or a
    parent folder, a macro, a symlink) is not run on Alice's approval, and its row says a
    code."""
    slug = vid.split(":")[0]
    assert _ran(lab, slug) == [], (f"ran: {_ran(lab, slug)}", _row(lab, slug).get("status"))
    rows = {k: v for k, v in lab.got["rows2"].items() if k.startswith(f"plans/{slug}")}  # type: ignore[attr-defined]
    assert re.search(r"\bE_[A-Z_]+", json.dumps(rows)), rows


HELD_RUNS = [
    "d-control:ran-once",
    "d-ident:as-diff",
    "d-subst:as-diff",
    "d-tooneol:as-diff",
    "d-beside:runs-plan-yml",
]


@pytest.mark.parametrize("vid", HELD_RUNS)
def test_daemon_runs_what_diff_shows(lab: Lab, vid: str) -> None:
    """Controls: the markdown source runs once as shown; ``ident`` leaves ``$Id$`` as the diff
    shows it; a TOON source checked out CRLF (``text eol=crlf``) runs ``dry_run: false``; a
    PLAN.md beside a PLAN.yml is a note, the PLAN.yml runs."""
    slug = vid.split(":")[0]
    want = {
        "d-control": [{"tag": "dct-ok"}],
        "d-ident": [{"tag": "did", "note": "$Id$"}],
        "d-subst": [{"tag": "dsu", "note": "$Format:%H$"}],
        "d-tooneol": [{"tag": "dte", "dry_run": False}],
        "d-beside": [{"tag": "dbs", "evil": True}],
    }[slug]
    assert _ran(lab, slug) == want, (_ran(lab, slug), _row(lab, slug))


ROW_CODES = {
    "d-rootattr:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-parentattr:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-macro:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-symlink:row": "E_UNSAFE_PATH",
    "d-dirlink:row": "E_UNSAFE_PATH",
    "d-gitlink:row": "E_UNSAFE_PATH",
    "d-subfolder:row": "E_UNSAFE_PATH",
    "d-case:row": "E_CONVERT_UNSUPPORTED",
    "d-par1:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-par2:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-nestattr:row": "E_ATTRIBUTE_UNSUPPORTED",
    "d-nestkid:row": "E_[A-Z_]+",
}


@pytest.mark.parametrize("vid", cases(list(ROW_CODES), list(ROW_CODES), BROKEN))
def test_status_row_says_code(lab: Lab, vid: str) -> None:
    """After the first pass, the ``status`` row of each held source or plan names its code
    (a source that does not convert "waits with the error"; docs/formats.md)."""
    slug = vid.split(":")[0]
    rows = {k: v for k, v in lab.got["rows1"].items() if k.startswith(f"plans/{slug}")}  # type: ignore[attr-defined]
    tree = lab.got["tree1"]  # type: ignore[attr-defined]
    converted = f"plans/{slug}/PLAN.yml" in tree
    text = json.dumps(rows)
    if slug == "d-nestkid" and converted:
        return  # converted: the other ids judge it
    assert re.search(r"\b" + ROW_CODES[vid] + r"\b", text), (converted, rows)


def _frozen(lab: Lab, slug: str) -> str | None:
    row = _row(lab, slug, "rows1")
    value = row.get("hash")
    return str(value) if value and f"plans/{slug}/PLAN.yml" in lab.got["tree1"] else None  # type: ignore[attr-defined]


PREDICTIONS = [
    "d-rootattr:hash",
    "d-rootattr:validate",
    "d-rootattr:freeze-check",
    "d-parentattr:hash",
    "d-parentattr:validate",
    "d-macro:hash",
    "d-macro:freeze-check",
    "d-symlink:hash",
    "d-symlink:validate",
    "d-nestkid:hash",
    "d-nestkid:validate",
    "d-control:hash",
    "d-control:validate",
    "d-control:freeze-check",
    "d-beside:hash",
]


@pytest.mark.parametrize("vid", cases(PREDICTIONS, PREDICTIONS, BROKEN))
def test_cli_predicts_daemon(lab: Lab, vid: str) -> None:
    """``hash``/``validate``/``freeze --check`` of a committed source folder predict what the
    daemon does: the hash it freezes, or (a source it holds or never converts) no hash and
    the code its row says (docs/formats.md: "``plangate hash`` of a source prints the hash
    the controller will freeze"; "``validate`` ... reads the source as the daemon does")."""
    slug, what = vid.split(":")
    rc, out, err = lab.got["pre"][slug][what]  # type: ignore[attr-defined]
    frozen = _frozen(lab, slug)
    said = out + err
    if slug == "d-beside":  # the PLAN.yml runs: hash of the folder is the PLAN.yml's
        assert rc == 0 and frozen and frozen in out, (rc, said, frozen)
        return
    if frozen:
        assert rc == 0 and frozen in said, (rc, said, frozen)
        return
    hashes = re.findall(r"sha256:[0-9a-f]{64}", said)
    assert rc != 0 and not hashes, (
        f"the daemon froze nothing (row {_row(lab, slug, 'rows1').get('reason')!r}), "
        f"{what} said rc={rc}: {said[-700:]}"
    )
    assert re.search(r"\bE_[A-Z_]+", said), said


def test_dirlink_validate_warns(lab: Lab) -> None:
    """``validate`` of a plan folder that is a symlink says the controller never picks it up
    (held)."""
    rc, said = lab.got["pre-dirlink"]  # type: ignore[attr-defined]
    assert rc != 0 or "never pick it up" in said, said


CHECKS = {
    "d-rootattr:check": ("invalid", "held"),
    "d-parentattr:check": ("invalid", "held"),
    "d-macro:check": ("invalid", "held"),
    "d-symlink:check": ("invalid", "held"),
    "d-case:check": ("held", "invalid"),
    "d-tooncr:check": ("convert",),
    "d-control:check": ("convert",),
    "d-nestkid:check": ("convert",),
}


@pytest.mark.parametrize("vid", cases(list(CHECKS), list(CHECKS), BROKEN))
def test_check_predicts_daemon(lab: Lab, vid: str) -> None:
    """``plangate check`` of the commit predicts each source as the daemon then treats it:
    ``convert`` only where the daemon converts it (with the hash it freezes), else
    ``held``/``invalid`` with a code."""
    slug = vid.split(":")[0]
    outcome, _ = lab.got["check"].get(f"plans/{slug}", (None, []))  # type: ignore[attr-defined]
    converted = f"plans/{slug}/PLAN.yml" in lab.got["tree1"]  # type: ignore[attr-defined]
    entry = json.dumps(lab.got["check_json"].get(f"plans/{slug}"))  # type: ignore[attr-defined]
    if converted:
        assert outcome == "convert", (outcome, entry)
        assert str(_frozen(lab, slug)) in entry, (entry, _frozen(lab, slug))
        return
    assert outcome in ("held", "invalid"), (
        f"check said {outcome!r}; the daemon converted nothing: rows {json.dumps({k: v for k, v in lab.got['rows1'].items() if k.startswith(f'plans/{slug}')})[:600]}",  # type: ignore[attr-defined]
        entry[:800],
    )
    assert re.search(r"\bE_[A-Z_]+", entry), entry


@pytest.mark.parametrize("vid", cases(["d-nestsrc:check-kid"], ["d-nestsrc:check-kid"], BROKEN))
def test_check_predicts_nested_kid(lab: Lab, vid: str) -> None:
    """An ActionPlan PLAN.json with a nested step, and the agent's ``step-2/PLAN.md`` where
    its conversion writes the kid: ``check`` predicts for ``plans/<x>/step-2`` what the
    daemon does there (the parent's kid written as step-2/PLAN.yml, its PLAN.md left as a
    note), never ``convert`` of the PLAN.md with a hash nothing freezes."""
    outcome, _ = lab.got["check"].get("plans/d-nestsrc/step-2", (None, []))  # type: ignore[attr-defined]
    entry = json.dumps(lab.got["check_json"].get("plans/d-nestsrc/step-2"))  # type: ignore[attr-defined]
    rc, kid_hash, err = lab.got["nestsrc-kid-hash"]  # type: ignore[attr-defined]
    assert "plans/d-nestsrc/step-2/PLAN.yml" in lab.got["tree1"], lab.got["tree1"]  # type: ignore[attr-defined]
    assert rc == 0 and kid_hash.startswith("sha256:"), (rc, kid_hash, err)
    if outcome == "convert":
        assert kid_hash in entry, (
            f"check: plans/d-nestsrc/step-2 {outcome}: {entry[:600]}; the daemon wrote the "
            f"parent's kid there, hashing to {kid_hash}"
        )


def test_nested_source_runs_parent_kid(lab: Lab) -> None:
    """The parent converts and runs its own kid (as its PLAN.json shows), never the agent's
    ``step-2/PLAN.md`` (held)."""
    assert [c["n"] for c in _ran(lab, "d-nestsrc")] == ["parent", "kid"], _ran(lab, "d-nestsrc")
    assert _ran(lab, "d-nestsrc-kidsrc") == [], _ran(lab, "d-nestsrc-kidsrc")


def test_check_warns_source_beside(lab: Lab) -> None:
    """``check`` of a commit adding a PLAN.md beside a PLAN.yml warns that the PLAN.yml runs
    (round 121's fix, held)."""
    entry = json.dumps(lab.got["check_json"].get("plans/d-beside"))  # type: ignore[attr-defined]
    assert "PLAN.md" in entry, entry


SHOWS = ["d-control:show", "d-ident:show"]


@pytest.mark.parametrize("vid", cases(SHOWS, SHOWS, BROKEN))
def test_show_source_folder(lab: Lab, vid: str) -> None:
    """``plangate show --format json plans/x`` of a source folder shows the plan the daemon
    freezes (its hash and its actions' params), or refuses with the source's own verdict,
    never a YAML parse error of a file that is no YAML."""
    slug = vid.split(":")[0]
    rc, out, err = lab.got["pre"][slug]["show"]  # type: ignore[attr-defined]
    frozen = _frozen(lab, slug)
    assert frozen, _row(lab, slug, "rows1")
    assert rc == 0, (rc, out[-600:], err[-600:])
    data = json.loads(out)
    assert data.get("hash") == frozen, (data.get("hash"), frozen)
    assert data["actions"][0]["params"].get("tag") == TAG_OF[slug], data["actions"][0]
