"""The markdown plan format of ``toon-plan`` (``# Title``, ``## Objective``, ``## Tasks``,
``## Steps``, ``## Shared Inputs``, ``## Workflow Config``) read into its JSON shape.

Each ``### Task N: Name`` / ``### Step N: Title`` heading starts a record whose
``- **Field**: value`` bullets are its fields; lists are written ``a, b`` or ``[a, b]``,
times with an ``s`` suffix. A bullet this reader does not know is E_CONVERT_UNSUPPORTED at
its line; other ``##`` sections are kept as text in the plan's metadata.

Its blocks are CommonMark's, the ones a forge renders (round 117): a setext heading is
refused, an indented code block is never a field, a ``##`` heading is the section its
rendered name says, and a link reference definition is no text. Its headings are the ATX
headings CommonMark finds (round 126): indented up to three spaces they are sections and
records as any other; inside a block quote or a list item they belong to it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from controller.errors import Problem
from controller.plan.convert import commonmark, jsonread
from controller.plan.convert.common import (
    STEP_HEADING,
    Ctx,
    Loc,
    first_line,
    numbered_in_place,
)
from controller.plan.refs import format_path

#: A ``-``/``*`` bullet as CommonMark reads one: indented by spaces or tabs, the marker, then
#: a space or a tab (a no-break space or another Unicode space after the marker makes no
#: list item: the line continues the bullet above it on every forge; round 122).
_BULLET = re.compile(r"^[ \t]*[-*][ \t]+(?:\*\*(.+?)\*\*|([^:]+?))\s*:\s*(.*)$")
#: A line that reads as an ATX heading once a character no review shows is taken out of it
#: (refused, round 105). Headings themselves are CommonMark's (:attr:`commonmark.Rendered.
#: headings`): ``#``s indented up to three spaces, then a space or a tab (a no-break space
#: makes a paragraph on every forge), the title, optional closing ``#``s.
_HEADING = re.compile(r"^(#{1,3})[ \t]+(.*?)[ \t]*(?:[ \t]#*)?[ \t]*$")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", re.ASCII)
_RECORD = re.compile(r"^(?:task|step)\s*[\w.-]*\s*:\s*(.*)$", re.I)
#: Where raw HTML starts (CommonMark, "Raw HTML"): an open or closing tag (its name, then
#: white space, ``/``, ``>`` or the line's end), a processing instruction, a declaration, a
#: CDATA section. A comment, ``<!--``, is refused anywhere outside a fence (round 108).
_RAW_HTML = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$)|<\?|<![A-Za-z]|<!\[CDATA\[")
#: A CommonMark autolink (``<https://...>``, ``<a@b.c>``): shown as its text, never HTML.
_AUTOLINK = re.compile(
    r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
)
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: The fields whose values name a step or task: compared with each other as written.
_ID_FIELDS = {"id", "task_id", "steps", "dependencies"}
#: The fields of a record that are descriptive text, kept as a forge shows them (:func:`_prose`).
_PROSE_FIELDS = {"description", "title", "name"}
TASK_FIELDS = {
    "id": "id",
    "description": "description",
    "agent": "agent_type",
    "agent type": "agent_type",
    "steps": "steps",
    "dependencies": "dependencies",
    "estimated time": "estimated_time",
    "tools": "tools_required",
    "tools required": "tools_required",
    "name": "name",
}
STEP_FIELDS = {
    "id": "id",
    "task": "task_id",
    "task id": "task_id",
    "action": "action",
    "type": "step_type",
    "step type": "step_type",
    "parameters": "parameters",
    "timeout": "timeout",
    "dependencies": "dependencies",
    "retry count": "retry_count",
    "retries": "retry_count",
    "title": "title",
}
CONFIG_FIELDS = {
    "parallel execution": "parallel_execution",
    "error recovery": "error_recovery",
    "max retries": "max_retries",
}
LISTS = {"steps", "dependencies", "tools_required"}
NUMBERS = {"estimated_time", "timeout", "retry_count", "max_retries"}
FLAGS = {"parallel_execution", "error_recovery"}


def parse(text: str, ctx: Ctx) -> dict[str, Any]:
    """The plan as the JSON form of ``toon-plan`` would hold it."""
    doc = commonmark.read(text)
    sections = _sections(text, doc, ctx)
    data: dict[str, Any] = {"metadata": {}, "tasks": [], "steps": []}
    seen: dict[str, int] = {}
    for level, title, line, body in sections:
        key = _section_name(title, doc)
        said = "title" if level == 1 else key
        if said in seen:
            # every section is said once, as every bullet is: never the last one kept and
            # the first, which the reviewer read at the top, dropped (round 103)
            heading = "the `# ` title" if level == 1 else f"`## {title}`"
            message = f"line {line}: {heading} is said twice (first at line {seen[said]})"
            ctx.problems.append(
                Problem("E_SCHEMA_INVALID", message, said, line, jsonread.REPEATED_REMEDY)
            )
            continue
        seen[said] = line
        if level == 1:
            data["metadata"]["title"] = _prose(title, ("title",), line, doc, ctx)
            _preamble(body, doc, ctx)
        elif key == "objective":
            _no_records(body, (key,), f"under `## {title}`, {_KEPT}", doc, ctx)
            data["metadata"]["objective"] = _descriptive(body, (key,), line, doc, ctx)
        elif key in ("tasks", "steps"):
            fields = TASK_FIELDS if key == "tasks" else STEP_FIELDS
            data[key] = _records(body, key, fields, doc, ctx)
        elif key == "shared inputs":
            data["shared_inputs"] = _inputs(body, line, doc, ctx)
        elif key == "workflow config":
            data["workflow_config"] = _fields(body, CONFIG_FIELDS, ("workflow_config",), doc, ctx)
        else:
            _no_records(body, ("sections", title), f"under `## {title}`, {_KEPT}", doc, ctx)
            text = _descriptive(body, ("sections", title), line, doc, ctx)
            data["metadata"].setdefault("sections", {})[title] = text
    return data


def _section_name(title: str, doc: commonmark.Rendered) -> str:
    """A ``##`` heading's name as a forge shows it, lowercased: ``## *Workflow Config*``,
    ``## `Objective` ``, ``## [Steps](x)`` and ``## Workflow&#32;Config`` are the sections
    they render as (round 117, ``md-section-name-rendered-alike``: kept as another section
    in ``metadata.source.sections``, unhashed, the ``Error Recovery: true`` under it left
    the plan). Said with the plain heading too, the section is said twice."""
    shown, refused = commonmark.shown_text(title, doc.env)
    return (title if refused is not None else shown).lower()


#: How a record in descriptive text is said to be out of place.
_KEPT = "a section this reader keeps as text"
_PLACES = "put steps under `## Steps` and tasks under `## Tasks` (spelled so, once)"


def _no_records(
    body: list[tuple[int, str]], loc: Loc, where: str, doc: commonmark.Rendered, ctx: Ctx
) -> bool:
    """Refuse a ``### Step N:`` / ``### Task N:`` record ``where`` this reader reads no
    records: it reads to its reviewer as a step and would never run. Under ``## Stеps`` (a
    Cyrillic ``е``), ``## Step`` or ``## Notes`` (round 105), under ``## Objective`` too
    (round 116, ``md-step-in-objective``: the record became ``plan.task`` text), and between
    the title and the first ``##`` section (:func:`_preamble`). True when one was found."""
    for number, line in body:
        if _is_record(number, doc):
            ctx.lines[loc] = number
            ctx.unsupported(
                loc,
                f"line {number}: `{line.strip()}` is a record {where}: it would never run",
                _PLACES,
            )
            return True
    return False


def _is_record(number: int, doc: commonmark.Rendered) -> bool:
    """The line is a ``### Step N:`` / ``### Task N:`` heading as CommonMark reads one,
    indented up to three spaces (round 126, ``md-indented-heading-read-as-text``:
    `` ### Step 2: Back up first`` in the objective is a step heading on every forge, and
    became ``plan.task`` text; the plan ran without the backup step its reviewer read)."""
    heading = doc.headings.get(number)
    return heading is not None and heading.level == 3 and bool(_RECORD.match(heading.text))


def _preamble(body: list[tuple[int, str]], doc: commonmark.Rendered, ctx: Ctx) -> None:
    """What stands between the ``# `` title and the first ``##`` heading belongs to no
    section this reader reads: refused at its first line, never dropped (round 116,
    ``md-preamble-dropped``: a whole ``### Step 2:`` record there, or a ``- **Requires
    Approval**: true`` bullet, converted to nothing, and the daemon ran a one-action plan
    whose diff showed two steps). Text in every other place is read or refused at its line;
    descriptive text has ``## Objective`` and sections of its own."""
    loc: Loc = ("preamble",)
    where = "between the `# ` title and the first `##` section"
    if _no_records(body, loc, where, doc, ctx):
        return
    number, line = next(((n, text) for n, text in body if text.strip()), (0, ""))
    if not number:
        return
    ctx.lines[loc] = number
    ctx.unsupported(
        loc,
        f"line {number}: {first_line(line, 60)!r} stands between the `# ` title and the "
        "first `##` section, where this reader reads nothing: a reviewer reads it as part of "
        "the plan",
        "put descriptive text under `## Objective` or a section of its own (`## Notes`); "
        + _PLACES,
    )


def _sections(
    text: str, doc: commonmark.Rendered, ctx: Ctx
) -> list[tuple[int, str, int, list[tuple[int, str]]]]:
    """(level, title, line, body lines) of each # and ## section, its heading CommonMark's
    (indented up to three spaces, not inside a block quote or a list item: round 126,
    `` ## Workflow Config`` after ``## Notes`` had been Notes text, its retries dropped,
    while every forge showed the section); ### stay in the body. A
    heading holding a character no review shows (zero-width, a bidi mark, a soft hyphen:
    :data:`controller.display.HIDDEN`) is refused at its line: ``## Steps`` with a U+200B
    read as another section, its steps kept as text, while git and a forge show ``## Steps``
    (round 105). Fenced code is where CommonMark puts it (round 110), :func:`_fences`."""
    from controller.display import HIDDEN, first_hidden

    out: list[tuple[int, str, int, list[tuple[int, str]]]] = []
    fenced = _fences(doc, ctx)
    _setext(doc, ctx)
    # git's lines: LF alone ends one (the source reader refused every other line end,
    # source.HIDDEN_LINES); a CRLF file's CR is the line's end, not its text
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        fence = number in fenced
        heading = doc.headings.get(number)
        hidden = None if fence else first_hidden(line)
        if not fence:
            _raw_html(line, number, ctx)
        if hidden is not None and _HEADING.match(HIDDEN.sub("", line).strip()):
            ctx.lines[("headings", number)] = number
            ctx.invalid(
                ("headings", number),
                f"line {number}: a heading holding U+{ord(hidden):04X}, a "
                "character review tools do not show: it would read as another heading",
                "remove the character from the heading",
            )
        if heading is not None and heading.nested and heading.level <= 3:
            _contained(heading, line, ctx)  # refused, and no line of any section
        elif heading is not None and heading.level <= 2:
            out.append((heading.level, heading.text, number, []))
        elif out:
            out[-1][3].append((number, line))
        elif line.strip() and ("title",) not in ctx.lines:
            _before_title(number, line, ctx)
    return out


def _before_title(number: int, line: str, ctx: Ctx) -> None:
    """Refuse what stands before the first heading (the ``# `` title) at its line, once: it
    belongs to no section, and a forge shows it at the top of the plan (``    # Title``
    four spaces in is a code block there, and the title another heading below it)."""
    loc: Loc = ("title",)
    ctx.lines[loc] = number
    ctx.unsupported(
        loc,
        f"line {number}: {first_line(line, 60)!r} stands before the `# ` title, where this "
        "reader reads nothing: a reviewer reads it as part of the plan",
        "start the file with its `# Title` line (at most three spaces before the `#`)",
    )


def _contained(heading: commonmark.Heading, line: str, ctx: Ctx) -> None:
    """Refuse a ``#``, ``##`` or ``###`` heading inside a block quote or a list item at its
    line: a forge shows a heading there, and CommonMark makes it a part of the quote or the
    item, no section or record (round 126: ``  ## Steps`` after a task's last bullet and a
    blank line is inside that bullet's item; round 109: ``> ### Step 2:``). This reader
    takes sections and records from headings outside both, so one inside is neither read as
    one nor kept as text a reviewer would read as one."""
    what, start = heading.inside or ("a container", heading.line)
    number = heading.line
    ctx.lines[("headings", number)] = number
    ctx.unsupported(
        ("headings", number),
        f"line {number}: `{line.strip()}` is a heading inside {what} (from line {start}): "
        "CommonMark reads it as part of that, no section or step of the plan",
        "write the heading at the start of its line (at most three spaces), outside `>` "
        "quotes; after a list, a line indented as far as an item's text continues that item",
    )


def _setext(doc: commonmark.Rendered, ctx: Ctx) -> None:
    """Refuse each setext heading (a line over ``===`` or ``---``) at its line: a heading to
    CommonMark and every forge, text of its section to this reader, which reads ATX headings
    (round 117, ``md-setext-heading-not-a-section``: ``Shared Inputs`` over ``---`` in the
    objective showed a first ``Shared Inputs`` section whose ``to: evil@x.example`` went
    into ``plan.task``, and the plan took the second one's value)."""
    for number in doc.setext:
        ctx.lines[("headings", number)] = number
        ctx.unsupported(
            ("headings", number),
            f"line {number}: a setext heading (a line over a `===` or `---` line): a forge "
            "shows it as a section heading, and the reader would read it as text",
            "write headings as `# Title` and `## Section`; a rule under text needs a blank "
            "line before it, or write it `***`",
        )


def _fences(doc: commonmark.Rendered, ctx: Ctx) -> set[int]:
    """The lines inside fenced code blocks, as CommonMark reads them: this reader and a forge
    agree on every line that is code (round 110: a ```` ``` y ```` line, a ```` ``` ```` under a
    ```` ```` ```` opener, or one indented four spaces closed no fence on a forge, which showed
    ``## Steps`` and every step as code under ``## Notes``, while a hand scan closed it and
    read the steps; a TAB or four spaces before ```` ``` ```` opens none). A fence never closed
    is refused at its opening line: a forge shows the rest of its container as code."""
    for fence in doc.fences:
        if not fence.closed:
            ctx.lines[("fences", fence.start)] = fence.start
            ctx.unsupported(
                ("fences", fence.start),
                f"line {fence.start}: a fenced code block that is never closed as CommonMark "
                "closes one: a forge's rendered view shows all that follows it as code, and "
                "the reader would read it",
                "close the block with a line of the opening fence's character, at least as "
                "many, indented at most three spaces and with nothing after it",
            )
    return doc.fenced()


def _raw_html(line: str, number: int, ctx: Ctx) -> None:
    """Raw HTML in a line outside a fenced block: an HTML comment anywhere (round 108), any
    other construct CommonMark passes through as HTML outside a code span (round 109)."""
    if "<!--" in line:
        _comment(number, ctx)
        return
    found = _html_in(line)
    if found is None:
        return
    ctx.lines[("html", number)] = number
    ctx.unsupported(
        ("html", number),
        f"line {number}: raw HTML (`{found}`): a forge's rendered view of the plan hides "
        "it, and the reader would read it",
        "remove it; a value that needs the text writes `<` as \\u003c in its JSON string, "
        "or the text goes in a code span or a fenced code block",
    )


def _html_in(line: str) -> str | None:
    """The start of the first raw HTML of ``line`` as CommonMark reads inline text: outside a
    code span and an autolink, not after a backslash. A tag's start is enough (its
    attributes may go on to the next line of the paragraph), and so is an opener of a
    processing instruction, a declaration or a CDATA section (unclosed, one starts an HTML
    block that a forge hides to its end): refusing a rare ``<b c`` that would show as text
    costs less than reading what a reviewer never saw (``"ls <? ; rm -rf ~ ?>"``)."""
    at = 0
    while at < len(line):
        char = line[at]
        if char == "\\":
            at += 2 if line[at + 1 : at + 2] in _PUNCTUATION else 1
        elif char == "`":
            run = len(line[at:]) - len(line[at:].lstrip("`"))
            ticks = "`" * run
            close = re.compile(rf"(?<!`){ticks}(?!`)").search(line, at + run)
            at = close.end() if close else at + run
        elif char == "<":
            link = _AUTOLINK.match(line, at)
            tag = None if link else _RAW_HTML.match(line, at)
            if tag:
                return tag.group(0)
            at = link.end() if link else at + 1
        else:
            at += 1
    return None


def _comment(number: int, ctx: Ctx) -> None:
    """An HTML comment anywhere outside a fenced block, a whole line or inside a value: a
    forge's rendered view of the PLAN.md hides it, and this reader would read it (round 103
    refused a comment block; round 108: ``{"cmd": "ls <!-- ; rm -rf ~ -->"}`` showed as
    ``"cmd": "ls "``)."""
    ctx.lines[("comments", number)] = number
    ctx.unsupported(
        ("comments", number),
        f"line {number}: an HTML comment (`<!--`): a forge's rendered view of the plan "
        "hides it, and the reader would read it",
        "remove the comment; a value that needs the text writes `<` as \\u003c in its JSON "
        "string, or the text goes in a fenced code block",
    )


def _paragraph(body: list[tuple[int, str]]) -> str:
    return "\n".join(line for _, line in body).strip()


def _records(
    body: list[tuple[int, str]],
    kind: str,
    fields: dict[str, str],
    doc: commonmark.Rendered,
    ctx: Ctx,
) -> list[dict[str, Any]]:
    records: list[tuple[str, int, list[tuple[int, str]]]] = []
    for number, line in body:
        heading = doc.headings.get(number)
        if heading is not None and heading.level == 3:
            records.append((heading.text, number, []))
        elif records:
            records[-1][2].append((number, line))
        elif line.strip():
            ctx.unsupported((kind,), f"line {number}: text before the first ### heading")
    out = []
    for index, (title, number, lines) in enumerate(records):
        loc: Loc = (kind, index)
        ctx.lines[loc] = number
        if kind == "steps":
            _step_number(title, index, loc, ctx)
        record = _fields(lines, fields, loc, doc, ctx)
        named = _RECORD.match(title)
        label = named.group(1) if named else title
        label = _prose(label, loc, number, doc, ctx)
        _titled_twice(record, "name" if kind == "tasks" else "title", label, loc, ctx)
        out.append(record)
    if not any("id" in record for record in out):  # all or none: never half by headings
        for index, (record, (title, number, _lines)) in enumerate(zip(out, records, strict=True)):
            _heading_id(record, kind, title, (kind, index), number, ctx)
    return out


def _heading_id(
    record: dict[str, Any], kind: str, title: str, loc: Loc, number: int, ctx: Ctx
) -> None:
    """Where no record of its kind has an ``- **ID**:`` bullet, each is known by its heading's
    number (``### Step 2:`` is step ``2``, ``### Task 1:`` task ``1``), which is how a reader
    of the file refers to it (a user's trial: ``- **Dependencies**: 1`` under ``### Step 2``
    was refused "step '1' does not exist", and each step "a non-empty string is required",
    with no line). Where some have one, a record without stays refused: its heading's
    number is no name the others use (round 108, ``md-noid``: a task listing ``step_2``
    would name no step)."""
    if "id" in record:
        return
    match = STEP_HEADING.match(title) if kind == "steps" else _TASK_HEADING.match(title)
    if match is not None:
        record["id"] = match.group(1)
        ctx.lines[(*loc, "id")] = number


#: A task's heading with its number (``Task 1: Name``), as a step's is (:data:`STEP_HEADING`).
_TASK_HEADING = re.compile(r"^[Tt][Aa][Ss][Kk][ \t]*([0-9]+)(?=$|[\s:/]|[.\-](?![0-9]))")


def _titled_twice(record: dict[str, Any], key: str, label: str, loc: Loc, ctx: Ctx) -> None:
    """The heading's title is the record's ``key`` (a step's ``title``, a task's ``name``);
    a ``- **Title**:``/``- **Name**:`` bullet under a heading that has one says it twice:
    refused at the bullet, as every field said twice is, never the bullet silently read
    over the heading a forge shows (round 117, ``md-heading-title-overridden``: ``### Step 1:
    Record ok`` with ``- **Title**: Delete all`` ran with the why ``Record: Delete all``).
    A heading with no title (``### Step 1:``) takes the bullet's."""
    if key not in record:
        record[key] = label
    elif label:
        bullet = ctx.lines.get((*loc, key))
        message = (
            f"line {bullet}: the {key} is said twice: by the heading at line "
            f"{ctx.lines.get(loc)} and by `- **{key.title()}**:`"
        )
        ctx.problems.append(
            Problem(
                "E_SCHEMA_INVALID",
                message,
                format_path((*loc, key)),
                bullet,
                f"say the {key} once: in the heading, or in the bullet under a heading with none",
            )
        )


def _step_number(title: str, index: int, loc: Loc, ctx: Ctx) -> None:
    """A step's heading is ``### Step N:``, N its place in the digits 0-9, as ActionPlan's
    ``step_number`` (:func:`~controller.plan.convert.common.numbered_in_place`): steps run and
    are numbered as written, so ``Step 2`` written first is refused, never action 1 under
    another number (round 108). A heading that writes no such N (``Step II``, ``Step Two``,
    ``Step #2``, ``Step (2)``, ``Step ２``, ``Step ②``, ``### 2.``, ``### Fetch``) is refused
    too: a reader reads a number in it, or none, and the step ran in written order under
    another (round 109)."""
    line = ctx.lines.get(loc)
    match = STEP_HEADING.match(title)
    if match is None:
        ctx.unsupported(
            loc,
            f"line {line}: `### {title}` is no `### Step N:` heading with N in the digits "
            "0-9: a reader takes what it says for the step's number, and steps run in the "
            "order written",
            "head each step `### Step N: Title`, N its place 1..N in the digits 0-9",
        )
        return
    token = match.group(1)
    numbered_in_place(ctx, loc, int(token), index, f"line {line}: `### Step {token}`: step")


def _fields(
    lines: list[tuple[int, str]],
    fields: dict[str, str],
    loc: Loc,
    doc: commonmark.Rendered,
    ctx: Ctx,
) -> dict[str, Any]:
    record: dict[str, Any] = {}
    code = _indented(doc)
    for number, line in lines:
        if not line.strip() or _is_code(number, line, code, loc, ctx):
            continue
        match = _BULLET.match(line)
        if not match:
            ctx.lines[loc] = number
            ctx.unsupported(
                loc, f"line {number}: expected `- **Field**: value`, got {line.strip()!r}"
            )
            continue
        label = (match.group(1) or match.group(2)).strip().lower()
        key = fields.get(label)
        if key is None:
            ctx.lines[(*loc, label)] = number
            ctx.unsupported(
                (*loc, label),
                f"line {number}: unknown field {label!r} (known: {', '.join(sorted(fields))})",
            )
            continue
        if key in record:
            _said_twice(ctx, (*loc, key), label, number)
            continue
        ctx.lines[(*loc, key)] = number
        if key in _ID_FIELDS or key == "parameters":
            kind = "an id" if key in _ID_FIELDS else "a value"
            _rendered_as_written(match.group(3), (*loc, key), number, doc, ctx, kind)
        elif key not in _PROSE_FIELDS:
            _struck(match.group(3), (*loc, key), number, doc, ctx)
        if key in _PROSE_FIELDS:
            record[key] = _prose(match.group(3).strip(), (*loc, key), number, doc, ctx)
            continue
        record[key] = _value(match.group(3).strip(), key, (*loc, key), ctx)
    return record


def _indented(doc: commonmark.Rendered) -> dict[int, int]:
    """Each line of an indented code block -> the block's first line."""
    return {line: block.start for block in doc.indented for line in block.lines}


def _is_code(number: int, line: str, code: dict[int, int], loc: Loc, ctx: Ctx) -> bool:
    """Refuse an indented code block where this reader reads fields or inputs, once at its
    first line: a bullet indented four spaces or a TAB after a heading or a blank line is
    code to CommonMark, shown so by a forge (round 117, ``md-indented-code-read-as-field``:
    ``    - **Timeout**: 999s`` and ``    - Error Recovery: true`` were read as the fields,
    and the daemon ran an approved plan with retries its reviewer saw as code)."""
    start = code.get(number)
    if start is None:
        return False
    if start == number:
        where = (*loc, "code", number)
        ctx.lines[where] = number
        ctx.unsupported(
            where,
            f"line {number}: {line.strip()!r} is in an indented code block (four spaces or a "
            "TAB first, after a heading or a blank line): a forge shows it as code, not as a "
            "field",
            "start the bullet at the line's start (at most three spaces before its `-`), or "
            "remove the code block",
        )
    return True


def _rendered_as_written(
    text: str, loc: Loc, number: int, doc: commonmark.Rendered, ctx: Ctx, kind: str
) -> None:
    """A value the converter reads (an id, a list of them, ``Parameters``, a shared input and
    its name) must render, to CommonMark, as exactly its raw text: what a reviewer reads on
    a forge is what runs (:func:`controller.plan.convert.commonmark.rendered_otherwise`).
    ``step\\_1``, ``step&#95;1`` and ``*step_1*`` render as ``step_1``, another step's id to
    the converter (rounds 109, 110); ``{"cmd": "[ls](u '; rm -rf ~')"}`` renders as
    ``{"cmd": "ls"}``, ``&quot;`` and ``\\"`` as a ``"`` that ends no JSON string (round
    110). Code spans, shown as written, pass. Raw HTML is refused by its own rule, once."""
    if ("html", number) in ctx.lines or ("comments", number) in ctx.lines:
        return
    found = commonmark.rendered_otherwise(text, doc.env)
    if found is None:
        return
    ctx.lines.setdefault(loc, number)
    if kind != "a value":
        ctx.unsupported(
            loc,
            f"line {number}: {found} in {kind}: a forge renders it as another character "
            "or as markup, so it reads as another id or name",
            "write ids and names in plain characters, without markdown: no backslash "
            "escapes, character references, emphasis, strikethrough or links",
        )
        return
    ctx.unsupported(
        loc,
        f"line {number}: {found} in a value: a forge's rendered view of the plan shows "
        "other text than the converter reads",
        "put the value in a code span (`...`), or write the character as a JSON escape "
        "(`*` as \\u002a, `&` as \\u0026, `[` as \\u005b, `\\` as \\u005c)",
    )


def _struck(text: str, loc: Loc, number: int, doc: commonmark.Rendered, ctx: Ctx) -> None:
    """Refuse struck-out text in a value no other rule renders (``- **Action**: ~rec~``, a
    type, a time): a forge shows it struck out, the converter would read its words (round
    117, ``md-single-tilde-strikethrough``: ``~rec~`` became the tool ``_rec_``). GFM
    strikes between one tilde or two; ids and ``Parameters`` refuse it as markup already."""
    found = commonmark.struck(text, doc.env)
    if found is None:
        return
    ctx.lines.setdefault(loc, number)
    ctx.unsupported(
        loc,
        f"line {number}: {found} in a value: a forge shows the text struck out, and the "
        "converter would read it",
        "remove the tildes, or put the value in a code span (`...`)",
    )


def _prose(text: str, loc: Loc, number: int, doc: commonmark.Rendered, ctx: Ctx) -> str:
    """Descriptive text (the title, the objective, another section, a record's heading,
    title, name or description) as a forge shows it, which is what its reviewer read:
    emphasis and links as their words, an escape or a character reference as its character
    (round 113, ``md-prose-markup-kept``: ``### Step 1: [Record](x '; delete all')`` became
    a ``why`` holding the link's hidden title). Strikethrough and images, whose words read
    otherwise than they show, are refused at their line."""
    shown, refused = commonmark.shown_text(text, doc.env)
    if refused is None:
        return shown
    if refused.startswith("raw HTML"):
        return text  # refused at its line by the raw HTML rule already (_raw_html)
    ctx.lines.setdefault(loc, number)
    ctx.unsupported(
        loc,
        f"line {number}: {refused} in descriptive text: a forge shows it otherwise than its "
        "words read (struck out, or as a picture)",
        "write the title, objective or description as plain text",
    )
    return ""


def _descriptive(
    body: list[tuple[int, str]], loc: Loc, line: int, doc: commonmark.Rendered, ctx: Ctx
) -> str:
    """A section kept as text (the objective, ``## Notes``) as a forge shows it: each code
    block, fenced or indented, as its code, the text between them as :func:`_prose`, one
    blank line apart (round 116, ``md-fence-in-descriptive-text``: read as one paragraph, a
    ```` ```bash ```` block became ``bash rm -rf /tmp/x`` in ``plan.task``, its info string
    glued to the code, and a ``~~~ python`` block kept its fences; in an indented block,
    ``*x*`` read as emphasis). A link reference definition shows as nothing, and converts
    to nothing (round 117, ``md-linkdef-in-descriptive-text``: ``[r]: /u 'delete all'``
    became ``r: /u 'delete all'`` in ``plan.task``)."""
    blocks = {block.start: block for block in doc.code()}
    parts: list[str] = []
    run: list[tuple[int, str]] = []
    end = 0
    for number, text in body:
        if number <= end or number in doc.definitions:  # code just read; shown as nothing
            continue
        block = blocks.get(number)
        if block is None:
            run.append((number, text))
            continue
        parts += [_prose(_paragraph(run), loc, line, doc, ctx), block.content.rstrip("\n")]
        run, end = [], block.end
    parts.append(_prose(_paragraph(run), loc, line, doc, ctx))
    return "\n\n".join(part for part in parts if part)


def _said_twice(ctx: Ctx, loc: Loc, label: str, number: int) -> None:
    """A bullet written twice: refused, never the last one kept (round 57)."""
    first = ctx.lines.get(loc)
    message = f"line {number}: `{label}` is said twice (first at line {first})"
    ctx.problems.append(
        Problem("E_SCHEMA_INVALID", message, format_path(loc), number, jsonread.REPEATED_REMEDY)
    )


def _json(text: str, loc: Loc, ctx: Ctx) -> Any:
    """A JSON value of a bullet, read by the strict reader (its problems at the bullet's
    line); raises :class:`json.JSONDecodeError` for text that is not JSON."""
    read = jsonread.read(text)
    ctx.problems.extend(read.problems(loc, ctx.lines.get(loc)))
    return read.value


def _unspanned(text: str) -> str:
    """``text`` without its backticks when it is wholly one code span (a forge shows its
    content, in a code font), else as written: one rule for every value position, a bullet's
    and a shared input's name and value alike (round 116, ``md-input-codespan-kept``:
    ``- n: `cs-val` `` became the input ``"`cs-val`"`` while ``Parameters`` dropped them;
    a bare ``strip("`")`` also read ``` `rec` x ``` as ``rec` x``)."""
    content = commonmark.code_span(text)
    return text if content is None else content


def _value(text: str, key: str, loc: Loc, ctx: Ctx) -> Any:
    text = _unspanned(text)
    if key in LISTS:
        if text.startswith("["):
            try:
                return _json(text, loc, ctx)
            except json.JSONDecodeError:
                text = text.strip("[]")
        return [item.strip().strip("`\"'") for item in text.split(",") if item.strip()]
    if key in NUMBERS:
        # one number rule for every reader (round 109): the strict JSON reader's, the digits
        # 0-9 alone; never Python's int()/float(), which read any Unicode digit and `3_0`
        # (round 121, md-number-any-unicode-digit: `\u09ea0s`, a Bengali four drawn like an
        # 8, was 40 s). Anything else stays text, for the converter to refuse at its line.
        number = text.removesuffix("s").strip()
        if not _NUMBER.fullmatch(number):
            return text
        try:
            return _json(number, loc, ctx)
        except ValueError:
            return text
    if key == "parameters":
        try:
            return _json(text, loc, ctx)
        except json.JSONDecodeError:
            return text
    lowered = text.lower()
    if key in FLAGS and lowered in ("true", "false"):
        return lowered == "true"  # any other word stays text, for the converter to refuse
    return text


def _inputs(
    body: list[tuple[int, str]], line: int, doc: commonmark.Rendered, ctx: Ctx
) -> dict[str, Any]:
    text = _paragraph(body)
    if not text or (text.startswith("(") and text.endswith(")")):
        return {}  # the template's "(Optional shared data)" placeholder
    fenced = _one_fence(body, doc)
    try:
        read = jsonread.read(fenced if fenced is not None else _unspanned(text))
    except json.JSONDecodeError:
        read = None
    if read is not None and fenced is None:
        first = next(number for number, raw in body if raw.strip())
        _rendered_as_written(text, ("shared_inputs",), first, doc, ctx, "a value")
    if read is not None and isinstance(read.value, dict):
        ctx.problems.extend(read.problems(("shared_inputs",), line))
        return read.value
    out: dict[str, Any] = {}
    code = _indented(doc)
    for number, raw in body:
        if _is_code(number, raw, code, ("shared_inputs",), ctx):
            continue
        match = _BULLET.match(raw)
        if match:
            written = (match.group(1) or match.group(2)).strip()
            name = _unspanned(written)
            where = ("shared_inputs", name)
            _rendered_as_written(written, where, number, doc, ctx, "a shared input's name")
            _rendered_as_written(match.group(3), where, number, doc, ctx, "a value")
            content = commonmark.code_span(match.group(3))
            value = match.group(3).strip() if content is None else content
            if name in out:
                _said_twice(ctx, ("shared_inputs", name), name, number)
                continue
            ctx.lines[("shared_inputs", name)] = number
            try:
                out[name] = _json(value, ("shared_inputs", name), ctx)
            except json.JSONDecodeError:
                out[name] = value
        elif raw.strip():
            ctx.lines[("shared_inputs",)] = number
            ctx.unsupported(
                ("shared_inputs",),
                f"line {number}: write shared inputs as a JSON "
                "object in a ```json block or as `- name: value` bullets",
            )
            return {}
    return out


def _one_fence(body: list[tuple[int, str]], doc: commonmark.Rendered) -> str | None:
    """The text of the fenced ``json`` block (or one with no info string) that is the whole
    of ``body``, as CommonMark reads it; None when the body is anything else."""
    lines = [number for number, text in body if text.strip()]
    for fence in doc.fences:
        whole = bool(lines) and (lines[0], lines[-1]) == (fence.start, fence.end)
        if whole and fence.closed and fence.info.strip() in ("", "json"):
            return fence.content
    return None
