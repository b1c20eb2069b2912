# ruff: noqa: E501
r"""Round 121, sources (atk121c): what a reviewer reads of a plan (the PLAN.yml in a pull
request, the source it was converted from, ``plangate show``, what ``check``/``validate``/
``hash`` predict) is what the controller freezes and runs; a plan the reviewer cannot read
the same way is refused with its ``E_...`` code.

Lab (one, module scope; the bench's config and recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config) of one source per id: the markdown plan with numbers in other digits,
ASCII-less dependencies, fences a forge draws as pictures, hidden characters; Plan Contract
JSON and TOON with keys said twice under escapes, a number mix; pte and fenced YAML with the
non-specific tag ``!``. Part 2, PLAN.yml texts read by ``validate --json`` and ``show
--format json``: tags (``!``, ``!<!>``, ``!!str``, ``%TAG``), ``%YAML 1.1 # c``, a quoted
``"<<"``. Part 3, ``show`` (text, markdown) of a plan holding terminal escapes, bidi and
zero-width characters, markdown, HTML and a backtick run. Part 4, the daemon: the agent
commits a nested plan whose folder's ``.gitattributes`` says ``PLAN.yml -diff`` (and a
parent pinning it), sources whose folder's attributes say ``-diff``/``binary``/
``linguist-generated``/``PLAN.yml -diff``, a PLAN.yml with ``! false``/``! 0777``, a PLAN.md
whose timeout is ``\u09ea0s``, two ActionPlan PLAN.json with a ``nested_plan`` step (one with
``step-2/PLAN.yml -diff``), a PLAN.md beside a PLAN.yml that says otherwise, a control;
``hash``/``validate`` of two source folders before the commit, ``check`` of the commit (JSON
and text), one ``run --once``, Alice approves every PLAN.yml, a second pass.

Seen (round 121: 76 ids, 46 passed, 30 xfailed; ~30-50 s wall on a shared box). 7 classes
broke. The worst: **yaml-nonspecific-tag-accepted** and **source-diff-hidden-by-attributes**
and **nested-plan-diff-hidden-by-attributes** (approved plans ran with values or actions
the reviewer's diff did not show as they ran).

1. **md-number-any-unicode-digit** (9): ``md-timeout-{bengali,mathbold,devanagari,
   fullwidth-mixed,underscore}:refused``, ``md-retry-{fullwidth,bengali}:refused``,
   ``md-maxretries-bengali:refused``, ``d-md-bengali:refused``. The markdown reader takes a
   ``Timeout``, ``Retry Count`` and ``Max Retries`` with Python's ``int()``: ``- **Timeout**:
   \u09ea0s`` (BENGALI DIGIT FOUR, drawn like an ``8``: a reviewer reads "80s") converts to
   ``timeout: 40``; ``\U0001d7d7s`` is 9, ``\u0969\u0966s`` 30, ``\uff130s`` 30, ``3_0s`` 30;
   ``- **Retry Count**: \uff12`` is ``retry: {attempts: 2}``. Exit 0, no note; the daemon
   converted, froze and ran the ``\u09ea0s`` plan. TOON and task/step JSON refuse the same
   values (``toon-timeout-{bengali,underscore}``, ``toon-maxretries-bengali``,
   ``tsjson-timeout-bengali``: held), and PLAN.yml reads ``3_0`` as a string.
   docs/formats.md: "a number is written in the digits 0-9, one rule for every reader
   (round 109)". Reproduce: ``python -c 'import sys; sys.path[:0]=["tests/adversarial"];
   from sourcekit import md; open("/tmp/p/PLAN.md","w").write(md("a").replace("30s",
   "\u09ea0s"))' && plangate convert /tmp/p/PLAN.md | grep timeout`` -> ``timeout: 40``.
2. **yaml-nonspecific-tag-accepted** (9): ``yml-nonspecific-{bool,octal,null,quoted,key}:
   refused``, ``yml-verbatim-nonspecific:refused``, ``pte-nonspecific-tag:refused``,
   ``md-fenced-yaml-nonspecific:refused``, ``d-nstag:refused``. The non-specific tag ``!``
   (and its verbatim form ``!<!>``) on a scalar is accepted: ``mode: ! 0777`` validates as
   777 and ``dry_run: ! false`` as ``false``; ``convert --from pte`` (and a PLAN.md holding
   one fenced ``yaml`` block) drops the tag and writes ``mode: 777``; the daemon froze the
   PLAN.yml and, on Alice's approval, ``rec`` got ``{"dry_run": false, "mode": 777, ...}``.
   YAML 1.2 resolves a ``!``-tagged scalar as a string (spec 10.2.2/10.3.2: "!"-tagged
   scalars are ``tag:yaml.org,2002:str``): a YAML 1.2 reader sees ``"0777"`` and
   ``"false"``. docs/plan-format.md, "Reading rules": "Refused with ``E_YAML_PARSE`` ...
   explicit tags (``!!str``, ``!custom``)". On a sequence or mapping ``!`` is refused
   ``tag !`` (``yml-nonspecific-seq``: held), as are ``!!str``, ``!<tag:yaml.org,2002:str>``
   and ``%TAG ! tag:yaml.org,2002:`` + ``!str`` (held). Reproduce: a plan with ``mode: !
   0777`` in params; ``plangate validate`` -> valid; ``plangate show --format json`` ->
   ``"mode": 777``.
3. **source-diff-hidden-by-attributes** (3): ``d-src-{nodiff,binary,generated}:refused``.
   The agent commits ``plans/x/PLAN.md`` with ``plans/x/.gitattributes`` ``PLAN.md -diff``
   (``PLAN.json binary``, ``*.md linguist-generated``): ``git log -p`` shows ``Binary files
   /dev/null and b/plans/x/PLAN.md differ`` (a forge folds the generated one), ``check``
   predicts ``convert``, the daemon converts and freezes it, and Alice's approval runs it.
   Round 113 refuses exactly these attributes on a PLAN.yml (``E_ATTRIBUTE_UNSUPPORTED``;
   ``d-src-hides-yml``, attributes hiding the PLAN.yml the conversion writes, is held
   ``unreadable``), and docs/formats.md says "A source is read as git shows it ... git
   shows a file with a NUL as ``Binary files differ``" (refused). The converted PLAN.yml's
   own diff is visible, so a reviewer of the convert commit can read it: a judgement on
   the source's review. Reproduce: ``mkdir -p plans/x && cp <markdown plan> plans/x/PLAN.md
   && echo 'PLAN.md -diff' > plans/x/.gitattributes && git add -A && git commit -m x &&
   git log -p -1 | grep Binary && plangate run --once``.
4. **nested-plan-diff-hidden-by-attributes** (2): ``d-nested-hidden:refused``,
   ``d-conv-nested-hidden:refused``. ``plans/kid/PLAN.yml`` (``status: draft``) with
   ``plans/kid/.gitattributes`` ``PLAN.yml -diff``, pinned by a parent: the parent froze,
   Alice approved it and the kid's action ran, while every diff of the kid reads
   ``Binary files ... differ`` (its own row: ``draft``, no code). Likewise an ActionPlan
   PLAN.json with a ``nested_plan`` step whose folder's ``.gitattributes`` says
   ``step-2/PLAN.yml -diff``: the convert commit writes the hidden child, and both actions
   ran. docs/errors.md, ``E_ATTRIBUTE_UNSUPPORTED``: "an approval whose commit's attributes
   hide the plan is refused"; plan-format.md, Nested plans: "approving the parent approves
   exactly that version". Reproduce: as above with the attribute on the pinned kid, a
   parent ``plan: {path: plans/kid, hash: <plangate hash plans/kid>}``, approve, run.
5. **nested-source-predicted-invalid** (3): ``nested-src-{hash:predicts,validate:valid,
   check:convert}``. An ActionPlan ``plans/x/PLAN.json`` with a ``nested_plan`` step:
   ``plangate hash plans/x`` and ``validate plans/x`` answer ``E_SCHEMA_INVALID at
   actions[1].plan: nested plan plans/x/step-2: plans/x/step-2 does not exist`` (``hash`` of
   the absolute path: "write the plan's folder relative to the repository") and ``check``
   predicts ``invalid``, while the daemon converts it (writing ``step-2/PLAN.yml``), freezes
   it and runs parent and kid on one approval (``d-conv-nested:ran-once``). docs/formats.md:
   "``plangate hash`` of a source prints the hash the controller will freeze", "``plangate
   validate`` ... reads the source as the daemon does", "``plangate check`` ... reports it
   as the daemon will treat it after the merge"; plan-format.md, "The hash": "``plangate
   hash PATH`` ... for a plan source ...: the hash of the PLAN.yml it converts to, the one
   the controller will freeze". The reviewer gets no hash to compare with
   what is frozen. (The control PLAN.md: hash, validate and check predict it: held.)
6. **check-silent-on-source-beside-plan** (3): ``d-beside-check:warns``,
   ``d-beside-check-text:warns``, ``d-readded-check:warns``. A commit adding
   ``plans/x/PLAN.md`` (what a forge renders for the reviewer) beside a ``PLAN.yml`` with
   another param: ``plangate check`` (JSON and text) reports ``plans/x: merging submits it;
   the controller freezes it`` with no word of the source; a later commit editing the
   source again beside the converted PLAN.yml (the source edited after its conversion) is
   checked as ``{"plans": []}``: nothing at all. docs/formats.md ("Checking a source before committing it", of ``check``):
   "Beside a PLAN.yml it warns that the controller runs that file." (``validate
   plans/x/PLAN.md`` does warn.)
7. **convert-number-mix-misreported** (1): ``pc-number-mix:located``. A Plan Contract's args
   ``{"a": 1E2, "b": 0.1e1, "c": -0, "d": 1e+2, "e": 12345678901234567890}`` is refused
   ``E_CONVERT_UNSUPPORTED: a value does not survive as YAML (a lone surrogate or another
   character YAML cannot carry)`` with no location; without ``a``-``d`` the big integer is
   ``E_SCHEMA_INVALID at actions[0].params.e`` as documented. Refused, the cause misnamed:
   docs/formats.md "Every such problem of a source is reported at once, each at its
   location".


Fixed (2026-12-06, fix122s): **md-number-any-unicode-digit**: the markdown reader
(``markdown._value``) read ``Timeout``, ``Estimated Time``, ``Retry Count`` and ``Max
Retries`` with ``int()`` then ``float()``, which take any Unicode digit and ``_``; its
``_NUMBER`` pattern's ``\d`` did too. A number there is now the strict JSON reader's
(``jsonread.read``, the reader of every JSON source and of a markdown ``Parameters``) on an
ASCII ``[0-9]`` pattern, anything else text the converter refuses ``E_SCHEMA_INVALID`` at its
line (``030`` and ``+5`` too, which JSON does not write). **yaml-nonspecific-tag-accepted**:
ruamel's parser marks a scalar tagged ``!`` (or ``!<!>``) "implicit", so
``yamlio._explicit_tag`` let it through and the plain-scalar rules read it; every written
tag is now explicit there, ``E_YAML_PARSE`` ``tag !`` at its line, for every reader of
YAML (PLAN.yml, pte, a fenced ``yaml`` block: all go through ``yamlio.read_yaml``).
**source-diff-hidden-by-attributes**: round 113's attribute rule was asked of the plan
file alone; ``sources.review_hidden`` now holds it, and ``sources.source_outcome`` (the
status row and ``check``) and ``Freezing._commit_conversion`` (the daemon) ask it of the
source first: such a source waits ``E_ATTRIBUTE_UNSUPPORTED`` unconverted (a file the
conversion writes that the attributes hide is written, then held as round 113 holds it).
**nested-plan-diff-hidden-by-attributes**: ``Freezing._review_hidden`` (freeze, the status
row's blocker, each approval) now judges the plan file of every nested plan the plan pins
in that commit as well (``_pinned_files``). **nested-source-predicted-invalid**:
``discovery.load_source`` (``hash``, ``validate``, ``freeze``) converted with the folder as
given (an absolute path pinned ``/tmp/.../step-2``) and validated the parent before its
nested plans existed; ``check`` likewise. The folder is now the one relative to the
repository, and both validate inside ``nested.writing(...)``: nested plans read as if the
conversion's files were written over the tree they are read from, as the daemon validates
them after its convert commit. **check-silent-on-source-beside-plan**: ``check`` reported
sources only in folders with no plan; a source the range adds or changes beside a PLAN.yml
now brings that plan's report with ``warnings`` (``check._sources_beside``), in JSON, text and
markdown. **convert-number-mix-misreported**, its cause: ``convert._canonical`` fell back to
``json.dumps`` text when the hash could not write the data (the big integer), and compared
``100.0`` to the ``100`` read back; it now compares leaf by leaf, each number as the hash
writes it, and the mix is ``E_SCHEMA_INVALID at actions[0].params.e`` as the integer alone.
``pc-number-mix:located`` stays xfail: it asks for the source's place ``steps[0].args.e``,
while a lone big integer is reported at the converted PLAN.yml's place by PLAN.yml's check
(round 117's ``toon-2p53:refused`` holds exactly that); not changed here.

Held: markdown ``Timeout`` ``\uff13\uff10\uff53``, ``3\u066b5s``, ``30ms`` refused and ASCII
read; dependencies and tasks named in other digits (``\u09e7``, ``[\uff11]``) refused "does
not exist"; JSON and TOON keys said twice under an escape (``"dry\u005frun"``) or quoted
refused, a TOON ``\u005f`` key read as ``a_b``; a lone surrogate refused; fences
``mermaid``, ``math``, ``geojson``, ``~~~mermaid`` refused ``E_PARSE_NONJSON``; a NBSP at a
value's edge, RLO in a param key, ZWSP in a task's step list, VT, FF, U+2028, ``Step 1&#58;``
and a code span with two spaces refused; ``!!str``, verbatim and ``%TAG`` tags, ``!`` on a
sequence and ``%YAML 1.1 # c`` refused; plain ``0777`` is 777 and the core schema's other
forms read as documented (``0O17``, ``1_0``, ``1e`` strings; ``1.e3``, ``012``, ``+.5``,
``0x1f``, ``-0.0`` numbers); a quoted ``"<<"`` key stays a
key; ``show`` text escapes ESC, CR, bidi and zero-width characters; ``show --format
markdown`` escapes ``|``, ``<b>``, links, ``## `` and ``<!--`` in author text and fences the
params longer than a 7-backtick run; a ``PLAN.yml -diff`` attribute is held
``E_ATTRIBUTE_UNSUPPORTED`` (the source then converted); the working-tree kid edited after
the pin is ``E_PLAN_HASH_MISMATCH`` in ``show`` (scratch, not asserted); the control PLAN.md
converts, is predicted and runs once.

Suspected, not asserted: ``plangate show plans/x`` of a source folder (PLAN.md, PLAN.json)
reads the source as YAML (``E_YAML_PARSE: did not find expected <document start>``,
``unknown key `steps```) where ``validate`` and ``hash`` convert it; ``check`` predicts
``convert`` (with a hash) for the source whose folder hides ``PLAN.yml``, which the daemon
converts and then holds ``unreadable``; an agent's ``plans/x/step-2/PLAN.json`` committed
beside an ActionPlan parent whose conversion writes ``plans/x/step-2/PLAN.yml``: the
conversion is made beside that source (a twin folder would be ``E_PLAN_AMBIGUOUS``), and the
source's row waits "converting would replace the plan". PLAN.yml refuses plain ``=`` ("unsupported value type tag:yaml.org,2002:value") and ``<<``
as a value or list item ("merge key"), strings in YAML 1.2 (over-refusal, safe). Forge-only
renderings in ``show
--format markdown``: ``@alice`` and ``:x:`` are not escaped; a bare ``https://`` URL is
escaped only by ``\.``.

Not tried: MCP ``validate``/``submit``, remote mode, agent-plan ``overlays`` semantics,
``working-tree-encoding``/``ident``/``filter`` attributes on sources, the web UI's rendering.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases, load_yaml, plan_text
from sourcekit import approve_file, md
from test_round2_execution_kit import shared

# -- sources --------------------------------------------------------------------------------

MD = md("a")
TIMEOUT = "- **Timeout**: 30s\n"
STEP1 = "### Step 1: Record ok\n"
WF_OFF = "- Error Recovery: false\n"
assert TIMEOUT in MD and STEP1 in MD and WF_OFF in MD


def _timeout(value: str) -> str:
    """The markdown plan with step 1's ``Timeout`` bullet saying ``value``."""
    return MD.replace(TIMEOUT, f"- **Timeout**: {value}\n")


def _retry(value: str) -> str:
    """Error recovery on, step 1's ``Retry Count`` saying ``value``."""
    return MD.replace(STEP1, STEP1 + f"- **Retry Count**: {value}\n").replace(
        WF_OFF, "- Error Recovery: true\n"
    )


def _max_retries(value: str) -> str:
    return MD.replace(WF_OFF, f"- Error Recovery: true\n- Max Retries: {value}\n")


def _md_input(line: str) -> str:
    return MD.replace("- to: ok@example.com\n", line + "\n")


def _md_params(params: str) -> str:
    return MD.replace('{"tag": "a-ok"}', params)


def _noid_two(dep: str, task: str = "1") -> str:
    """The plan with no ID bullets (steps known by their heading's number) and a second step
    whose ``Dependencies`` says ``dep`` and whose ``Task`` says ``task``."""
    text = (
        MD.replace("- **ID**: step_1\n", "")
        .replace("- **ID**: task_1\n", "")
        .replace("- **Steps**: step_1", "- **Steps**: 1, 2")
        .replace("- **Task**: task_1", "- **Task**: 1")
    )
    two = (
        f"### Step 2: Second\n- **Task**: {task}\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "two"}}\n- **Timeout**: 30s\n- **Dependencies**: {dep}\n\n'
    )
    return text.replace("\n## Shared Inputs", "\n" + two + "## Shared Inputs")


PC = '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": [{"step_id": "1", "tool": "rec", "args": ARGS}]}'


def _pc(args: str) -> str:
    return PC.replace("ARGS", args)


def _toon(step_extra: str = "", params: str = "      tag: x\n", wf_extra: str = "") -> str:
    return (
        "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\n"
        "steps[1]:\n  - id: s1\n    task_id: task_1\n    action: rec\n"
        + step_extra
        + "    parameters:\n"
        + params
        + "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n"
        + ("  error_recovery: true\n" + wf_extra if wf_extra else "  error_recovery: false\n")
    )


TS_JSON = (
    '{"metadata": {"title": "T", "objective": "O"}, "tasks": [{"id": "task_1", "name": "N"}], '
    '"steps": [{"id": "s1", "task_id": "task_1", "action": "rec", "parameters": {"tag": "x"}, '
    '"timeout": TIMEOUT}], "shared_inputs": {}, "workflow_config": {"parallel_execution": false, '
    '"error_recovery": false}}'
)


def _fence(info: str) -> str:
    body = _pc('{"tag": "x"}')
    return f"```{info}\n{body}\n```\n"


#: a PLAN.yml (the bench's one-action plan) with ``extra`` lines in step 1's params
def _yml(extra: str, head: str = "") -> str:
    return head + plan_text("y", params=extra)


#: vid -> (file name, content, expectation). Expectations: ("refused", code regex, text
#: regex): exit 1, the code, a location, a remedy; ("timeout", n): converted, the action's
#: timeout is n; ("retry", n): on_failure retry with n attempts; ("params", {...}).
CONVERT: dict[str, tuple[str, str | bytes, tuple[Any, ...]]] = {
    # markdown numbers: a number is written in the digits 0-9, one rule for every reader
    "md-timeout-bengali:refused": (
        "PLAN.md",
        _timeout("\u09ea0s"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Tt]imeout|digit"),
    ),
    "md-timeout-mathbold:refused": (
        "PLAN.md",
        _timeout("\U0001d7d7s"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Tt]imeout|digit"),
    ),
    "md-timeout-devanagari:refused": (
        "PLAN.md",
        _timeout("\u0969\u0966s"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Tt]imeout|digit"),
    ),
    "md-timeout-fullwidth-mixed:refused": (
        "PLAN.md",
        _timeout("\uff130s"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Tt]imeout|digit"),
    ),
    "md-timeout-underscore:refused": (
        "PLAN.md",
        _timeout("3_0s"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Tt]imeout|digit"),
    ),
    "md-retry-fullwidth:refused": (
        "PLAN.md",
        _retry("\uff12"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Rr]etr|digit"),
    ),
    "md-retry-bengali:refused": (
        "PLAN.md",
        _retry("\u09ea"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Rr]etr|digit"),
    ),
    "md-maxretries-bengali:refused": (
        "PLAN.md",
        _max_retries("\u09e8"),
        ("refused", "E_SCHEMA_INVALID|E_CONVERT_UNSUPPORTED", r"[Rr]etr|digit"),
    ),
    "md-timeout-fullwidth-all:refused": (
        "PLAN.md",
        _timeout("\uff13\uff10\uff53"),
        ("refused", "E_SCHEMA_INVALID", r"[Tt]imeout"),
    ),
    "md-timeout-arabic-decimal:refused": (
        "PLAN.md",
        _timeout("3\u066b5s"),
        ("refused", "E_SCHEMA_INVALID", r"[Tt]imeout"),
    ),
    "md-timeout-ms:refused": (
        "PLAN.md",
        _timeout("30ms"),
        ("refused", "E_SCHEMA_INVALID", r"[Tt]imeout"),
    ),
    "md-timeout-ascii:read": ("PLAN.md", _timeout("45s"), ("timeout", 45)),
    "md-retry-ascii:read": ("PLAN.md", _retry("2"), ("retry", 2)),
    "toon-timeout-bengali:refused": (
        "PLAN.toon",
        _toon("    timeout: \u09ea0\n"),
        ("refused", "E_SCHEMA_INVALID", r"timeout"),
    ),
    "toon-timeout-underscore:refused": (
        "PLAN.toon",
        _toon("    timeout: 3_0\n"),
        ("refused", "E_SCHEMA_INVALID", r"timeout"),
    ),
    "toon-maxretries-bengali:refused": (
        "PLAN.toon",
        _toon(wf_extra="  max_retries: \u09ea\n"),
        ("refused", "E_SCHEMA_INVALID", r"max_retries"),
    ),
    "tsjson-timeout-bengali:refused": (
        "PLAN.json",
        TS_JSON.replace("TIMEOUT", '"\u09ea0"'),
        ("refused", "E_SCHEMA_INVALID", r"timeout"),
    ),
    # one field said once, however it is spelled
    "pc-dup-escaped-key:refused": (
        "PLAN.json",
        _pc('{"dry_run": true, "dry\\u005frun": false}'),
        ("refused", "E_SCHEMA_INVALID", r"said twice"),
    ),
    "toon-dup-escaped-key:refused": (
        "PLAN.toon",
        _toon(params='      dry_run: true\n      "dry\\u005frun": false\n'),
        ("refused", "E_SCHEMA_INVALID", r"[Dd]uplicate|twice"),
    ),
    "toon-dup-quoted-key:refused": (
        "PLAN.toon",
        _toon(params='      "dry_run": true\n      dry_run: false\n'),
        ("refused", "E_SCHEMA_INVALID", r"[Dd]uplicate|twice"),
    ),
    "toon-escape-key:read": (
        "PLAN.toon",
        _toon(params='      tag: x\n      "a\\u005fb": 1\n'),
        ("params", {"tag": "x", "a_b": 1}),
    ),
    # a number mix whose one bad number must be the one reported, at its place
    "pc-number-mix:located": (
        "PLAN.json",
        _pc('{"a": 1E2, "b": 0.1e1, "c": -0, "d": 1e+2, "e": 12345678901234567890}'),
        ("refused-at", "E_SCHEMA_INVALID", r"\.e\b"),
    ),
    "pc-lone-surrogate:refused": (
        "PLAN.json",
        _pc('{"tag": "x", "y": "\\ud800"}'),
        ("refused-any", "E_[A-Z_]+", r"surrogate"),
    ),
    # a fence a forge draws as a picture, never as the text
    "md-fence-mermaid:refused": (
        "PLAN.md",
        _fence("mermaid"),
        ("refused-any", "E_PARSE_NONJSON", r"mermaid"),
    ),
    "md-fence-math:refused": (
        "PLAN.md",
        _fence("math"),
        ("refused-any", "E_PARSE_NONJSON", r"math"),
    ),
    "md-fence-geojson:refused": (
        "PLAN.md",
        _fence("geojson"),
        ("refused-any", "E_PARSE_NONJSON", r"geojson"),
    ),
    "md-fence-tilde-mermaid:refused": (
        "PLAN.md",
        _fence("mermaid").replace("```", "~~~"),
        ("refused-any", "E_PARSE_NONJSON", r"mermaid"),
    ),
    # hidden characters
    "md-input-nbsp-edge:refused": (
        "PLAN.md",
        _md_input("- to: ok@example.com\u00a0"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"."),
    ),
    "md-param-rlo-key:refused": (
        "PLAN.md",
        _md_params('{"tag": "a-ok", "\u202edry": 1}'),
        ("refused-any", "E_SCHEMA_INVALID", r"U\+202E"),
    ),
    "md-task-steps-zw:refused": (
        "PLAN.md",
        MD.replace("- **Steps**: step_1\n", "- **Steps**: step_1\u200b\n"),
        ("refused", "E_SCHEMA_INVALID", r"step_1"),
    ),
    "md-vt-in-input:refused": (
        "PLAN.md",
        _md_input("- to: ok@\x0bexample.com"),
        ("refused-any", "E_CONVERT_UNSUPPORTED", r"U\+000B"),
    ),
    "md-ff-before-heading:refused": (
        "PLAN.md",
        MD.replace("## Shared Inputs", "\x0c## Shared Inputs"),
        ("refused-any", "E_CONVERT_UNSUPPORTED", r"U\+000C"),
    ),
    "md-ls-in-input:refused": (
        "PLAN.md",
        _md_input("- to: ok@example.com\u2028- cc: evil@x.example"),
        ("refused-any", "E_CONVERT_UNSUPPORTED", r"U\+2028"),
    ),
    "md-entity-step-heading:refused": (
        "PLAN.md",
        MD.replace(STEP1, "### Step 1&#58; Record ok\n"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"Step"),
    ),
    "md-codespan-spaces:refused": (
        "PLAN.md",
        _md_input("- to: `  ok@example.com  `"),
        ("refused", "E_CONVERT_UNSUPPORTED", r"."),
    ),
    # a number character but 0-9 in a step or task reference (held: no such step)
    "md-dep-bengali-one:refused": (
        "PLAN.md",
        _noid_two("\u09e7"),
        ("refused-any", "E_SCHEMA_INVALID", r"does not exist"),
    ),
    "md-dep-fullwidth-one:refused": (
        "PLAN.md",
        _noid_two("[\uff11]"),
        ("refused-any", "E_SCHEMA_INVALID", r"does not exist"),
    ),
    "md-task-bengali-one:refused": (
        "PLAN.md",
        _noid_two("1", task="\u09e7"),
        ("refused", "E_SCHEMA_INVALID", r"does not exist"),
    ),
    "md-noid-ascii:read": ("PLAN.md", _noid_two("1"), ("needs", [[], [1]])),
    # YAML sources: pte (converted), a tag the reading rules refuse
    "pte-nonspecific-tag:refused": (
        "plan.yml",
        _yml("dry_run: ! false\nmode: ! 0777\n"),
        ("refused-any", "E_YAML_PARSE", r"tag"),
    ),
    "md-fenced-yaml-nonspecific:refused": (
        "PLAN.md",
        "```yaml\n" + _yml("mode: ! 0777\n") + "```\n",
        ("refused-any", "E_YAML_PARSE", r"tag"),
    ),
}

#: PLAN.yml texts read by ``plangate validate --json`` and ``show --format json`` (no config):
#: ("refused", regex) or ("params", {...})
YAML_CASES: dict[str, tuple[str, tuple[Any, ...]]] = {
    "yml-nonspecific-bool:refused": (_yml("dry_run: ! false\n"), ("refused", r"tag")),
    "yml-nonspecific-octal:refused": (_yml("mode: ! 0777\n"), ("refused", r"tag")),
    "yml-nonspecific-null:refused": (_yml("x: ! null\n"), ("refused", r"tag")),
    "yml-nonspecific-quoted:refused": (_yml('x: ! "q"\n'), ("refused", r"tag")),
    "yml-nonspecific-key:refused": (_yml("! dry_run: false\n"), ("refused", r"tag")),
    "yml-verbatim-nonspecific:refused": (_yml("mode: !<!> 0777\n"), ("refused", r"tag")),
    "yml-nonspecific-seq:refused": (_yml("x: ! [a]\n"), ("refused", r"tag")),
    "yml-str-tag:refused": (_yml("mode: !!str 0777\n"), ("refused", r"tag")),
    "yml-verbatim-str:refused": (
        _yml("mode: !<tag:yaml.org,2002:str> 0777\n"),
        ("refused", r"tag"),
    ),
    "yml-tag-directive-str:refused": (
        _yml("mode: !str 0777\n", "%TAG ! tag:yaml.org,2002:\n---\n"),
        ("refused", r"tag"),
    ),
    "yml-yaml11-commented:refused": (
        _yml("mode: 0777\n", "%YAML 1.1 # old\n---\n"),
        ("refused", r"%YAML"),
    ),
    "yml-plain-octal:read": (_yml("mode: 0777\n"), ("params", {"tag": "y", "mode": 777})),
    "yml-core-number-forms:read": (
        _yml("a: 0O17\nb: 1.e3\nc: 012\nd: 1_0\ne: +.5\nf: 0x1f\ng: 1e\nh: -0.0\n"),
        (
            "params",
            {
                "tag": "y",
                "a": "0O17",
                "b": 1000,
                "c": 12,
                "d": "1_0",
                "e": 0.5,
                "f": 31,
                "g": "1e",
                "h": 0,
            },
        ),
    ),
    "yml-quoted-merge-key:read": (
        _yml('"<<": {dry_run: false}\n'),
        ("params", {"tag": "y", "<<": {"dry_run": False}}),
    ),
}

#: show renderings (held): a why/param holding terminal escapes, bidi controls, markdown
SHOW_PLAN = """\
plan:
  name: "n [click](https://evil.example) | col <b>x</b>"
  task: "line1\\n## Approved by Alice\\n<!-- hide -->"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "why \\e[2K\\rSAFE \\u202eevil\\u202c zw\\u200bx"
    params:
      tag: "show"
      x: "a\\n```````\\n</details>\\n# Approved\\n"
      "dry\\u200brun": false
"""

# -- the daemon ------------------------------------------------------------------------------

ATTR_SRC = {
    # slug -> (file, text, .gitattributes of the folder)
    "d-src-nodiff": ("PLAN.md", md("dsn"), "PLAN.md -diff\n"),
    "d-src-binary": ("PLAN.json", _pc('{"tag": "dsb"}'), "PLAN.json binary\n"),
    "d-src-generated": ("PLAN.md", md("dsg"), "*.md linguist-generated\n"),
    "d-src-hides-yml": ("PLAN.md", md("dsy"), "PLAN.yml -diff\n"),
}


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


TAG_OF = {
    "d-src-nodiff": "dsn-ok",
    "d-src-binary": "dsb",
    "d-src-generated": "dsg-ok",
    "d-src-hides-yml": "dsy-ok",
    "d-nested-hidden": "dnk",
    "d-nstag": "dnt",
    "d-md-bengali": "dmb-ok",
    "d-control": "dok-ok",
    "d-conv-nested-hidden": "dch",
    "d-conv-nested": "dcn",
}


def _convert(lab: Lab, folder: Path, name: str, content: str | bytes) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    told = ["--from", "pte"] if name == "plan.yml" else []
    done = lab.cli("convert", *told, str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-2000:], "plan": None}
    got["out"] = done.stdout
    if done.returncode == 0 and done.stdout.strip():
        try:
            got["plan"] = load_yaml(done.stdout)
        except Exception:  # a bad text is the finding, kept raw
            got["plan"] = {"raw": done.stdout}
    return got


def _read_yaml(lab: Lab, folder: Path, text: str) -> dict[str, Any]:
    path = folder / "PLAN.yml"
    path.write_text(text, encoding="utf-8")
    done = lab.cli("validate", "--json", str(path), cwd=folder)
    got: dict[str, Any] = {
        "rc": done.returncode,
        "out": done.stdout[-3000:],
        "err": done.stderr[-1500:],
    }
    shown = lab.cli("show", "--format", "json", str(path), cwd=folder)
    try:
        got["show"] = json.loads(shown.stdout)
    except ValueError:
        got["show"] = {"raw": shown.stdout[-1500:]}
    return got


def _daemon(lab: Lab, got: dict[str, Any]) -> None:
    # a nested plan whose own folder's attributes hide its diff, committed first
    lab.write("d-nested-kid", plan_text("dnk", status="draft"))
    lab.put("plans/d-nested-kid/.gitattributes", "PLAN.yml -diff\n")
    lab.commit("agent: a nested plan")
    pin = lab.cli("hash", str(lab.repo / "plans" / "d-nested-kid")).stdout.split()[-1]
    got["pin"] = pin
    lab.write(
        "d-nested-hidden",
        "plan:\n  name: d-nested-hidden\n  task: t\n  status: pending_approval\n"
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    plan: {{path: plans/d-nested-kid, hash: "{pin}"}}\n    why: nested\n',
    )
    for slug, (name, text, attrs) in ATTR_SRC.items():
        lab.put(f"plans/{slug}/{name}", text)
        lab.put(f"plans/{slug}/.gitattributes", attrs)
    lab.write("d-nstag", plan_text("dnt", params="dry_run: ! false\nmode: ! 0777\n"))
    lab.put("plans/d-md-bengali/PLAN.md", md("dmb").replace(TIMEOUT, "- **Timeout**: \u09ea0s\n"))
    lab.put("plans/d-control/PLAN.md", md("dok"))
    lab.put("plans/d-conv-nested-hidden/PLAN.json", _nested_ap("dch"))
    lab.put("plans/d-conv-nested-hidden/.gitattributes", "step-2/PLAN.yml -diff\n")
    lab.put("plans/d-conv-nested/PLAN.json", _nested_ap("dcn"))
    # what a reviewer asks of the two sources before they are committed
    got["pre"] = {}
    for slug in ("d-conv-nested", "d-control"):
        hashed = lab.cli("hash", f"plans/{slug}", cwd=lab.repo)
        valid = lab.cli("validate", "--json", f"plans/{slug}", cwd=lab.repo)
        got["pre"][slug] = {
            "hash": (hashed.returncode, hashed.stdout.strip(), hashed.stderr[-800:]),
            "validate": (valid.returncode, valid.stdout[-1500:], valid.stderr[-800:]),
        }
    lab.put("plans/d-beside/PLAN.md", md("dbs"))
    lab.write("d-beside", plan_text("dbs", params="evil: true\n"))
    lab.commit("agent: plans")
    got["check"] = lab.check_plans("HEAD", ALICE[1], base="HEAD~1")
    told = lab.check("HEAD", ALICE[1], base="HEAD~1")
    try:
        got["check_json"] = {p["plan"]: p for p in json.loads(told.stdout)["plans"]}
    except (ValueError, KeyError, TypeError):
        got["check_json"] = {"raw": told.stdout[-1500:] + told.stderr[-800:]}
    told = lab.cli(
        "check", "--config", str(lab.config), "--base", "HEAD~1", "--head", "HEAD",
        "--as", ALICE[1], cwd=lab.repo,
    )  # fmt: skip
    got["check_text"] = told.stdout + told.stderr
    got["log_p"] = {
        slug: lab.git("log", "-p", "--format=%s", "--", f"plans/{slug}")
        for slug in ("d-nested-kid", *ATTR_SRC)
    }
    for slug in ("d-nested-kid", "d-src-nodiff", "d-src-binary"):
        if "Binary files" not in got["log_p"][slug]:  # the bench's premise, not the defence
            raise BenchError(f"git log -p shows {slug}: {got['log_p'][slug][-600:]}")
    got["pass"] = lab.run(check=False).returncode
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["tree1"] = tree
    # the source edited after its conversion: the agent commits a PLAN.md again beside the
    # converted PLAN.yml, saying another param; a reviewer reads that diff
    lab.put("plans/d-control/PLAN.md", md("dok").replace('"dok-ok"}', '"dok-ok", "x": "edited"}'))
    lab.commit("agent: edit the source")
    told = lab.check("HEAD", ALICE[1], base="HEAD~1")
    try:
        got["check_json2"] = {p["plan"]: p for p in json.loads(told.stdout)["plans"]}
    except (ValueError, KeyError, TypeError):
        got["check_json2"] = {"raw": told.stdout[-1500:] + told.stderr[-800:]}
    for slug in TAG_OF:
        if f"plans/{slug}/PLAN.yml" in tree:
            path = lab.repo / "plans" / slug / "PLAN.yml"
            if (
                "status: pending_approval" in path.read_text()
                or "pending_approval" in path.read_text()
            ):
                approve_file(lab, slug)
    lab.commit("approve the plans", ALICE)
    got["pass2"] = lab.run(check=False).returncode
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    got["tree2"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans")
    got["calls"] = {slug: lab.calls(tag) for slug, tag in TAG_OF.items()}
    for slug in ("d-conv-nested-hidden",):
        if "Binary files" not in lab.git("log", "-p", "--format=%s", "--", f"plans/{slug}/step-2"):
            raise BenchError(f"git log -p shows {slug}/step-2 in full")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = list(CONVERT.items())

    def one(i: int) -> None:
        vid, (name, content, _) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = _convert(lab, folder, name, content)

    ykeys = list(YAML_CASES)

    def yone(i: int) -> None:
        folder = root / "yml" / f"y{i}"
        folder.mkdir(parents=True)
        got[ykeys[i]] = _read_yaml(lab, folder, YAML_CASES[ykeys[i]][0])

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, range(len(jobs))))
        list(pool.map(yone, range(len(ykeys))))
    folder = root / "show"
    folder.mkdir()
    (folder / "PLAN.yml").write_text(SHOW_PLAN, encoding="utf-8")
    got["show-text"] = lab.cli("show", str(folder / "PLAN.yml"), cwd=folder).stdout
    got["show-md"] = lab.cli(
        "show", "--format", "markdown", str(folder / "PLAN.yml"), cwd=folder
    ).stdout
    _daemon(lab, got)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r121-sources-atk121c", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 121: {cls}: {what}")


MIX = xfail(
    "convert-number-mix-misreported",
    "a Plan Contract holding `1E2` beside an integer past 2^53 was refused E_CONVERT_UNSUPPORTED 'a value does not survive as YAML' with no location (fixed on fix122s: now E_SCHEMA_INVALID at actions[0].params.e, as the big integer alone); this id asks for the source's place `steps[0].args.e`, where a lone big integer is reported by PLAN.yml's check at the converted plan's place (rounds 111, 117: held)",
)
BROKEN: dict[str, Any] = {
    # fixed on fix122s: md-number-any-unicode-digit, yaml-nonspecific-tag-accepted,
    # source-diff-hidden-by-attributes, nested-plan-diff-hidden-by-attributes,
    # nested-source-predicted-invalid, check-silent-on-source-beside-plan (docstring);
    # convert-number-mix-misreported's cause is fixed, its located form is not (docstring)
    "pc-number-mix:located": MIX,
}

LOCATED = r"(line \d+|:\d+:| at [a-z_]+[\[.:])"


def _params(plan: dict[str, Any] | None) -> dict[str, Any]:
    return ((plan or {}).get("actions") or [{}])[0].get("params") or {}


def _check(got: dict[str, Any], want: tuple[Any, ...]) -> None:
    kind = want[0]
    assert "internal error" not in got["err"] and "Traceback" not in got["err"], got["err"]
    if kind.startswith("refused"):
        code, text = want[1], want[2]
        assert got["rc"] == 1, (got["rc"], got["out"][:1500], got["err"])
        assert re.search(r"\b(" + code + r")\b", got["err"]), got["err"]
        assert re.search(text, got["err"]), got["err"]
        if kind == "refused":
            assert re.search(LOCATED, got["err"]), got["err"]
        if kind == "refused-at":  # the bad value named at its place, nothing else blamed
            assert "does not survive" not in got["err"], got["err"]
            assert re.search(r"steps\[0\]\.args" + text, got["err"]), got["err"]
        return
    assert got["rc"] == 0 and got["plan"], got["err"]
    action = got["plan"]["actions"][0]
    if kind == "timeout":
        assert action.get("timeout") == want[1], action
    elif kind == "retry":
        assert action.get("on_failure") == "retry", action
        assert (action.get("retry") or {}).get("attempts") == want[1], action
    elif kind == "params":
        assert _params(got["plan"]) == want[1], _params(got["plan"])
    elif kind == "needs":
        assert [a.get("needs") for a in got["plan"]["actions"]] == want[1], got["plan"]["actions"]


@pytest.mark.parametrize("vid", cases(list(CONVERT), list(CONVERT), BROKEN))
def test_convert(lab: Lab, vid: str) -> None:
    """``plangate convert``: refused with its code, at its place; or converted to exactly
    what the source shows a reviewer."""
    _check(lab.got[vid], CONVERT[vid][2])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(list(YAML_CASES), list(YAML_CASES), BROKEN))
def test_plan_yml_reading(lab: Lab, vid: str) -> None:
    """PLAN.yml's reading rules: an explicit tag (the non-specific ``!`` too), a ``%YAML``
    other than 1.2, are ``E_YAML_PARSE`` at their line; a plain value reads as YAML 1.2's
    core schema says."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    want = YAML_CASES[vid][1]
    assert "Traceback" not in got["err"], got["err"]
    if want[0] == "refused":
        report = json.loads(got["out"])
        assert got["rc"] == 1 and report["valid"] is False, (got["rc"], got["show"])
        codes = [(e["code"], e.get("line"), e["message"]) for e in report["errors"]]
        assert any(
            c == "E_YAML_PARSE" and line and re.search(want[1], m) for c, line, m in codes
        ), codes
        return
    assert got["rc"] == 0, got["out"]
    assert got["show"]["actions"][0]["params"] == want[1], got["show"]["actions"][0]


def test_show_text_escapes(lab: Lab) -> None:
    """``show``'s text view prints a terminal escape, a bidi control and a zero-width
    character escaped, never raw (held)."""
    text = lab.got["show-text"]  # type: ignore[attr-defined]
    assert "[1] rec" in text, text
    for raw in ("\x1b", "\u202e", "\u200b", "\r"):
        assert raw not in text, (raw, text)
    assert "\\x1b" in text or "\\u001b" in text, text
    assert "dry\\u200brun" in text, text


def test_show_markdown_escapes(lab: Lab) -> None:
    """``show --format markdown``: author text adds no column, heading, HTML or link, and the
    params' fence is longer than any backtick run inside (held)."""
    text = lab.got["show-md"]  # type: ignore[attr-defined]
    assert "<b>" not in text and "](https://evil.example)" not in text, text
    assert "\n## Approved" not in text and "<!-- hide" not in text, text
    head = text.splitlines()[0]
    assert "\\|" in head or "&#124;" in head, head
    fences = re.findall(r"^(`{3,})json$", text, flags=re.M)
    assert fences and len(fences[0]) > 7, fences
    assert "\n</details>\n" in text and text.count("</details>") == 2, text


def _row(lab: Lab, slug: str, which: str = "rows2") -> dict[str, Any]:
    return lab.got[which].get(f"plans/{slug}", {})  # type: ignore[attr-defined]


DAEMON_REFUSED = [
    "d-src-nodiff:refused",
    "d-src-binary:refused",
    "d-src-generated:refused",
    "d-src-hides-yml:refused",
    "d-nested-hidden:refused",
    "d-nstag:refused",
    "d-md-bengali:refused",
    "d-conv-nested-hidden:refused",
]


@pytest.mark.parametrize("vid", cases(DAEMON_REFUSED, DAEMON_REFUSED, BROKEN))
def test_daemon_refused(lab: Lab, vid: str) -> None:
    """A committed plan or source a reviewer cannot read as it runs (its diff hidden by the
    folder's attributes, its nested plan's diff hidden, a YAML tag, a digit no reader of
    another format takes) waits with its code after Alice's approval: nothing ran."""
    slug = vid.split(":")[0]
    calls = lab.got["calls"][slug]  # type: ignore[attr-defined]
    row = _row(lab, slug)
    assert calls == [], (f"ran: {[json.loads(c['stdin']) for c in calls]}", row.get("status"))
    assert re.search(r"\bE_[A-Z_]+", json.dumps(row)), row


@pytest.mark.parametrize("vid", ["d-control:ran-once"])
def test_daemon_control(lab: Lab, vid: str) -> None:
    """The control PLAN.md converts, is approved and runs once."""
    calls = lab.got["calls"]["d-control"]  # type: ignore[attr-defined]
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"]) == {"tag": "dok-ok"}, calls


def _frozen_hash(lab: Lab, slug: str) -> str:
    return str(_row(lab, slug, "rows1").get("hash"))


PREDICTIONS = ["nested-src-hash:predicts", "ctl-src-hash:predicts"]


@pytest.mark.parametrize("vid", cases(PREDICTIONS, PREDICTIONS, BROKEN))
def test_source_hash_predicts(lab: Lab, vid: str) -> None:
    """``plangate hash plans/x`` of a source folder prints the hash the controller freezes."""
    slug = {"nested": "d-conv-nested", "ctl": "d-control"}[vid.split("-")[0]]
    rc, out, err = lab.got["pre"][slug]["hash"]  # type: ignore[attr-defined]
    frozen = _frozen_hash(lab, slug)
    assert frozen.startswith("sha256:"), _row(lab, slug, "rows1")
    assert rc == 0 and out.split()[-1:] == [frozen], (rc, out, err, frozen)


VALIDATIONS = ["nested-src-validate:valid", "ctl-src-validate:valid"]


@pytest.mark.parametrize("vid", cases(VALIDATIONS, VALIDATIONS, BROKEN))
def test_source_validate_predicts(lab: Lab, vid: str) -> None:
    """``plangate validate plans/x`` reads a source as the daemon does: valid where the daemon
    converts and freezes it."""
    slug = {"nested": "d-conv-nested", "ctl": "d-control"}[vid.split("-")[0]]
    assert _frozen_hash(lab, slug).startswith("sha256:"), _row(lab, slug, "rows1")
    rc, out, err = lab.got["pre"][slug]["validate"]  # type: ignore[attr-defined]
    assert rc == 0 and json.loads(out)["valid"] is True, (rc, out, err)


CHECKS = ["nested-src-check:convert", "ctl-src-check:convert"]


@pytest.mark.parametrize("vid", cases(CHECKS, CHECKS, BROKEN))
def test_source_check_predicts(lab: Lab, vid: str) -> None:
    """``plangate check`` of the commit adding a source predicts ``convert``, as the daemon
    then does."""
    slug = {"nested": "d-conv-nested", "ctl": "d-control"}[vid.split("-")[0]]
    assert _frozen_hash(lab, slug).startswith("sha256:"), _row(lab, slug, "rows1")
    told = lab.got["check"]  # type: ignore[attr-defined]
    assert told.get(f"plans/{slug}", (None, []))[0] == "convert", told


@pytest.mark.parametrize("vid", ["d-conv-nested:ran-once"])
def test_daemon_nested_source_runs(lab: Lab, vid: str) -> None:
    """The nested ActionPlan converts, and on Alice's approval its parent and nested actions
    run once each (the daemon's side of the predictions above)."""
    calls = [json.loads(c["stdin"])["n"] for c in lab.got["calls"]["d-conv-nested"]]  # type: ignore[attr-defined]
    assert calls == ["parent", "kid"], calls


BESIDE_IDS = ["d-beside-check:warns", "d-beside-check-text:warns", "d-readded-check:warns"]


@pytest.mark.parametrize("vid", cases(BESIDE_IDS, BESIDE_IDS, BROKEN))
def test_check_warns_source_beside_plan(lab: Lab, vid: str) -> None:
    """``plangate check`` of a commit adding a PLAN.md beside a PLAN.yml that says otherwise
    warns that the controller runs the PLAN.yml (the source a forge renders is no plan)."""
    if vid.startswith("d-readded"):
        entry = lab.got["check_json2"].get("plans/d-control")  # type: ignore[attr-defined]
        block = json.dumps(entry or lab.got["check_json2"])  # type: ignore[attr-defined]
    elif vid.startswith("d-beside-check-text"):
        text = lab.got["check_text"]  # type: ignore[attr-defined]
        start = text.find("plans/d-beside:")
        assert start >= 0, text[-2000:]
        end = text.find("\nplans/", start + 1)
        block = text[start : end if end > 0 else len(text)]
    else:
        entry = lab.got["check_json"].get("plans/d-beside")  # type: ignore[attr-defined]
        assert entry, lab.got["check_json"]  # type: ignore[attr-defined]
        block = json.dumps(entry)
    assert "PLAN.md" in block, f"no word of the source PLAN.md: {block[:1500]}"
