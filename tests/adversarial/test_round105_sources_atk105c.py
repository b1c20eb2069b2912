# ruff: noqa: E501
"""Round 105, sources (atk105c): what a reviewer reads in a plan SOURCE (a ``PLAN.md`` in the
markdown plan format, a ``PLAN.toon``, a ``PLAN.json`` Plan Contract, task/step plan or Agent
Plan, a model's reply) is exactly what the conversion freezes and runs (docs/formats.md, "A
source is read as git shows it", "Nothing is dropped silently", "Every field is said once",
the one-to-one tool-name rule). Round 103's fixes attacked at their edges, and new classes.

Lab (one, module scope; the bench's config, the recorder ``rec`` echoing its params). Part 1,
``plangate convert SRC`` (no config: the converter alone) of sources the test writes, each
read back as YAML. Part 2, the daemon: the agent commits ``plans/d-*/PLAN.md`` in one commit;
pass 1 converts and freezes; Alice approves both converted plans; pass 2 runs them.

Variants (``<variant>:<what>``):

- ``md-{zw,shy,lrm,wj,bom}:section``: a second ``## Steps`` whose heading carries a hidden
  character (U+200B, soft hyphen, U+200E, U+2060, U+FEFF): to a reviewer (diff or forge) the
  source says ``## Steps`` twice; must: refused as a section said twice (round 103), or its
  step converted; ``md-{inputs,cfg}zw:section`` the same for ``## Shared Inputs`` /
  ``## Workflow Config`` (round 103's criterion: refused, or the first kept);
- markdown constructs a forge renders as no step (``~~~`` fence, unclosed fence, fence
  indented 3, fence with an info string, tab-indented code, blockquote, setext heading,
  ``<div>``/``<details>`` HTML blocks, ``####``), a field name with U+200B, ``[a b]``
  dependencies, ``##<NBSP>Steps``/``## Steps ##``/``## steps`` said twice: must: refused with
  an E_ code; read as written: trailing ``#``s of a step heading, a code-spanned / escaped /
  Kelvin-sign ``Action`` (renamed only with a ``tool_names`` note), ``*`` bullets, CRLF, a
  U+200B in a step heading, ``###<NBSP>Step 2`` (git shows a step: it converts);
- references and graphs: Plan Contract diamond in source order (the reference keeps its
  step), a source order the converter keeps (``E_REF_FORWARD``), ``actions[01]``,
  ``$<...>``, nested, embedded and ``outputs`` references under reordering, self/unknown
  dependencies, an unmapped ``when`` field; task/step task-level dependencies reordering a
  reference, task self/unknown dependencies, a task listing another task's step, a
  cross-task step dependency (reordered with a note); markdown ``${...}``/``$<...>`` under
  reordering;
- Agent Plan kinds: ``Type-Text`` (another tool), ``TYPE_TEXT``, ``Type.Text``,
  ``type_text``, ``Custom type_text``, ``TypeTekt`` beside the Kelvin-sign spelling
  (refused: one name), U+200B / fullwidth / long-s spellings (renamed with a note),
  ``TypeTe<KELVIN SIGN>t`` alone (``ap-kelvin:kind``), two kinds in one object, a wrapper with
  extra fields, two steps sharing an ``id`` with their ``metadata`` (``ap-dupid:metadata``);
- TOON: a quoted key said twice (``title``, ``shared_inputs``), a field header said twice,
  a repeated ``parameters`` key, dotted keys, tab indentation, a quoted number/boolean, a
  leading zero, an extra row value: refused; ``|`` and tab delimiters read per the header;
- replies: a ``~~~`` fence beside a backtick fence, a fence inside an HTML comment, an
  indented object before a fence: refused;
- daemon: ``d-zw:runs`` (the ``## Steps<U+200B>`` PLAN.md, approved: the step the reviewer
  read under the second heading must run, or the source be refused), ``d-ok:runs``
  (control: a plain PLAN.md runs once on Alice's approval).

Seen (round 105): 3 classes broke.

1. **A hidden character in a section heading escapes the section-said-twice rule**
   (``md-section-hidden``): ``md-zw:section``, ``md-shy:section``, ``md-lrm:section``,
   ``md-wj:section``, ``md-bom:section``, ``d-zw:runs``. ``## Steps<U+200B>`` is shown as
   ``## Steps`` by git and a forge, but the reader takes it for another section: its step is
   put in ``metadata.source.sections``, never runs, no refusal; the daemon freezes it and
   Alice's approval runs only the first section's step. Should: refuse a heading with a
   hidden/format character (or compare headings after removing them, and refuse the repeat).
2. **An Agent Plan kind's non-ASCII letter folds to ASCII without a note**
   (``kind-ascii-fold``): ``ap-kelvin:kind``: ``TypeTe<U+212A>t`` becomes ``type_tekt``
   (``str.lower`` maps the Kelvin sign to ``k``) with no ``tool_names`` entry, where the same
   name as a ``Custom`` name, a Plan Contract ``tool`` or a markdown ``Action`` becomes
   ``_ill`` with its note (``md-kelvin:tool``, ``pc-kelvin:tool`` held). Should: rename any
   non-identifier character to ``_`` with the note, as elsewhere.
3. **Agent Plan step ids said twice: the last step's metadata wins** (``ap-step-id-twice``):
   ``ap-dupid:metadata``: two steps ``id: "1"`` convert; ``metadata.source.step_metadata``
   keeps only ``{"1": <the second's metadata>}``, the first's is dropped silently (task/step
   JSON refuses a repeated step id: ``tp-dupid:id``, round 103). Should: refuse a repeated
   step id, as the other formats do.

Held: every other id: fences, code blocks, HTML blocks, blockquotes and setext headings are
refused, never a silent step; sections said twice (case, trailing ``#``, NBSP) refused;
``actions[N]`` references under reordering refused in every syntax the converter rewrites,
and in markdown and task/step plans; cycles, self- and unknown dependencies refused; Agent
Plan kinds folding together by case, ``_``, ``.`` or Kelvin sign refused; TOON duplicate
keys/fields, dotted keys, tabs, quoted scalars refused; two-fence replies refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases
from sourcekit import approve_file as _approve_file
from sourcekit import as_json as _j
from sourcekit import convert_source as _convert
from sourcekit import md
from sourcekit import tags as _tags
from test_round2_execution_kit import shared

EVIL = "\n".join(
    [
        "### Step 2: Two",
        "- **ID**: step_2",
        "- **Task**: task_1",
        "- **Action**: rec",
        '- **Parameters**: {"tag": "TAG-two"}',
    ]
)


def ins(tag: str, block: str) -> str:
    """``block`` (with ``TAG``) inserted before ``## Shared Inputs``."""
    return md(tag).replace("## Shared Inputs", block.replace("TAG", tag) + "\n\n## Shared Inputs")


def second(tag: str, heading: str) -> str:
    """A second steps section under ``heading``, holding step 2."""
    return ins(tag, heading + "\n\n" + EVIL)


def wrap(tag: str, before: str, after: str, prefix: str = "") -> str:
    body = "\n".join(prefix + x for x in EVIL.split("\n"))
    return ins(tag, before + body + after)


HIDDEN = {"zw": "\u200b", "shy": "\u00ad", "lrm": "\u200e", "wj": "\u2060", "bom": "\ufeff"}

TOON = """\
metadata:
  title: Record plan
  objective: Record a tag
tasks[1]{id,name}:
  task_1,Record
steps[1]{id,task_id,action,step_type,timeout}:
  step_1,task_1,rec,AGENT_EXECUTION,30
shared_inputs: {}
workflow_config:
  parallel_execution: false
  error_recovery: false
"""
TROW = "steps[1]{id,task_id,action,step_type,timeout}:\n  step_1,task_1,rec,AGENT_EXECUTION,30"


def contract(steps: list[dict[str, Any]], **more: Any) -> str:
    return _j({"plan_version": 1, "skill_id": "s", "goal": "record", "steps": steps, **more})


def cst(sid: str, deps: tuple[str, ...] = (), **args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"step_id": sid, "tool": "rec", "args": {"tag": sid, **args}}
    if deps:
        out["depends_on"] = list(deps)
    return out


def pos(body: Any) -> str:
    """fetch (needs auth), auth, send (needs fetch, ``body``): reordered auth, fetch, send."""
    return contract([cst("fetch", ("auth",)), cst("auth"), cst("send", ("fetch",), body=body)])


def taskstep(
    tasks: list[dict[str, Any]], steps: list[dict[str, Any]], parallel: bool = False
) -> str:
    return _j(
        {
            "metadata": {"title": "T", "objective": "o"},
            "tasks": tasks,
            "steps": steps,
            "shared_inputs": {},
            "workflow_config": {"parallel_execution": parallel, "error_recovery": False},
        }
    )


def tst(sid: str, task: str, deps: tuple[str, ...] = (), **p: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": sid,
        "task_id": task,
        "action": "rec",
        "parameters": {"tag": sid, **p},
    }
    if deps:
        out["dependencies"] = list(deps)
    return out


def task(tid: str, steps: list[str], deps: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"id": tid, "name": tid.upper(), "steps": steps}
    if deps:
        out["dependencies"] = list(deps)
    return out


def ap(*kinds: dict[str, Any]) -> str:
    return _j(
        {
            "title": "T",
            "steps": [
                {"id": str(i + 1), "title": f"s{i}", "tool": {"kind": k}}
                for i, k in enumerate(kinds)
            ],
        }
    )


TT = {"TypeText": {"text": "x"}}


def kind(name: str) -> dict[str, Any]:
    return {name: {"text": "y"}}


def md_reorder(ref: str) -> str:
    text = md("mr").replace("- **Dependencies**: []", "- **Dependencies**: [step_2]")
    text = text.replace("- **Steps**: step_1", "- **Steps**: step_1, step_2, step_3")
    extra = (
        '### Step 2: Auth\n- **ID**: step_2\n- **Task**: task_1\n- **Action**: rec\n- **Parameters**: {"tag": "mr-auth"}\n\n'
        '### Step 3: Send\n- **ID**: step_3\n- **Task**: task_1\n- **Action**: rec\n- **Parameters**: {"tag": "mr-send", "body": "'
        + ref
        + '"}\n- **Dependencies**: step_1'
    )
    return text.replace("## Shared Inputs", extra + "\n\n## Shared Inputs")


ONE = {
    "plan_version": 1,
    "skill_id": "s",
    "goal": "record",
    "steps": [{"step_id": "s1", "tool": "rec", "args": {"tag": "one"}}],
}
EV1 = json.dumps(ONE).replace('"one"', '"evil"')

#: id -> (file name, content, --from or "")
SOURCES: dict[str, tuple[str, str, str]] = {
    # -- markdown: hidden characters in a section heading
    **{
        f"md-{k}:section": (f"h{k}.md", second(f"h{k}", "## Steps" + c), "")
        for k, c in HIDDEN.items()
    },
    "md-inputszw:section": (
        "iz.md",
        md("iz").replace(
            "- to: ok@example.com\n",
            "- to: ok@example.com\n\n## Shared Inputs\u200b\n- to: evil@example.com\n",
        ),
        "",
    ),
    "md-cfgzw:section": (
        "cz.md",
        md("cz").replace("- Error Recovery: false", "- Error Recovery: true")
        + "\n## Workflow Config\u200b\n- Parallel Execution: false\n- Error Recovery: false\n",
        "",
    ),
    # -- markdown: said twice in other spellings, refused
    "md-nbsp2:section": ("nb2.md", second("nb2", "##\u00a0Steps"), ""),
    "md-trail2:section": ("tr2.md", second("tr2", "## Steps ##"), ""),
    "md-lower2:section": ("lo2.md", second("lo2", "## steps"), ""),
    # -- markdown: constructs a forge shows as no step
    "md-tilde:fence": ("tilde.md", wrap("tl", "~~~\n", "\n~~~"), ""),
    "md-unclosed:fence": (
        "unclosed.md",
        md("uc").replace(
            "## Shared Inputs", "```\n" + EVIL.replace("TAG", "uc") + "\n\n## Shared Inputs"
        ),
        "",
    ),
    "md-indent3:fence": ("indent3.md", wrap("i3", "   ```\n", "\n   ```"), ""),
    "md-info:fence": ("info.md", wrap("if", "```text title\n", "\n```"), ""),
    "md-tab:code": ("tab.md", wrap("tab", "", "", "\t"), ""),
    "md-bq:quote": ("bq.md", wrap("bq", "", "", "> "), ""),
    "md-setext:heading": ("setext.md", second("se", "Steps\n-----"), ""),
    "md-div:html": ("div.md", wrap("dv", "<div>\n", "\n</div>"), ""),
    "md-details:html": ("details.md", wrap("dt", "<details>\n\n", "\n\n</details>"), ""),
    "md-h4:heading": (
        "h4.md",
        md("h4").replace("### Step 1: Record ok", "#### Step 1: Record ok"),
        "",
    ),
    "md-fieldzw:bullet": (
        "fzw.md",
        md("fz").replace("- **Timeout**: 30s", "- **Time\u200bout**: 30s"),
        "",
    ),
    "md-depspace:deps": (
        "dsp.md",
        md("ds").replace("- **Dependencies**: []", "- **Dependencies**: [step_1 step_9]"),
        "",
    ),
    # -- markdown: read as written
    "md-trailhash:title": (
        "th.md",
        md("th").replace("### Step 1: Record ok", "### Step 1: Record ok ###"),
        "",
    ),
    "md-codespan:tool": ("cs.md", md("cs").replace("- **Action**: rec", "- **Action**: `rec`"), ""),
    "md-escape:tool": ("es.md", md("es").replace("- **Action**: rec", "- **Action**: re\\_c"), ""),
    "md-kelvin:tool": (
        "mk.md",
        md("mk").replace("- **Action**: rec", "- **Action**: \u212aill"),
        "",
    ),
    "md-star:bullet": ("star.md", md("sb").replace("- **Action**: rec", "* **Action**: rec"), ""),
    "md-crlf:lines": ("crlf.md", md("crlf").replace("\n", "\r\n"), ""),
    "md-titlezw:step": ("tzw.md", ins("tzw", EVIL.replace("### Step 2", "### Step\u200b 2")), ""),
    "md-nbsp:heading": ("nbh.md", ins("nbh", EVIL.replace("### Step 2", "###\u00a0Step 2")), ""),
    # -- references and graphs
    "pc-diamond:ref": (
        "diamond.json",
        contract(
            [
                cst("a"),
                cst("b", ("a",)),
                cst("c", ("a",)),
                cst("d", ("b", "c"), body="${actions[3].result}"),
            ]
        ),
        "",
    ),
    "pc-topo:ref": (
        "topo.json",
        contract([cst("a"), cst("b"), cst("c", ("a",), body="${actions[2].result}")]),
        "",
    ),
    "pc-lead0:ref": ("lead0.json", pos("${actions[01].result}"), ""),
    "pc-angle:ref": ("angle.json", pos("$<actions[1].result>"), ""),
    "pc-nest:ref": ("nest.json", pos({"x": ["${actions[1].result}"]}), ""),
    "pc-embed:ref": ("embed.json", pos("pre-${actions[1].result}-post"), ""),
    "pc-outputs:ref": ("outputs.json", pos("${actions[1].outputs.x}"), ""),
    "pc-self:dep": ("self.json", contract([cst("a", ("a",)), cst("b")]), ""),
    "pc-unknown:dep": ("unk.json", contract([cst("a"), cst("b", ("zz",))]), ""),
    "pc-when:field": ("when.json", contract([{**cst("a"), "when": False}]), ""),
    "pc-kelvin:tool": (
        "pck.json",
        contract([{"step_id": "s1", "tool": "\u212aill", "args": {}}]),
        "",
    ),
    "tp-taskdep:ref": (
        "taskdep.json",
        taskstep(
            [task("t1", ["a"], ("t2",)), task("t2", ["b"]), task("t3", ["c"])],
            [tst("a", "t1"), tst("b", "t2"), tst("c", "t3", body="${actions[1].result}")],
        ),
        "",
    ),
    "tp-taskself:dep": (
        "taskself.json",
        taskstep([task("t1", ["a"], ("t1",))], [tst("a", "t1")]),
        "",
    ),
    "tp-taskunknown:dep": (
        "taskunk.json",
        taskstep([task("t1", ["a"], ("t9",))], [tst("a", "t1")]),
        "",
    ),
    "tp-taskother:task": (
        "taskother.json",
        taskstep([task("t1", ["a", "b"]), task("t2", ["b"])], [tst("a", "t1"), tst("b", "t2")]),
        "",
    ),
    "tp-tasklist:task": (
        "tasklist.json",
        taskstep([task("t1", ["a"]), task("t2", [])], [tst("a", "t2")]),
        "",
    ),
    "tp-xdep:order": (
        "xdep.json",
        taskstep(
            [task("t1", ["a"]), task("t2", ["b"])],
            [tst("a", "t1", ("b",)), tst("b", "t2")],
            parallel=True,
        ),
        "",
    ),
    "md-ref:ref": ("mdref.md", md_reorder("${actions[1].result}"), ""),
    "md-refangle:ref": ("mdref2.md", md_reorder("$<actions[1].result>"), ""),
    # -- Agent Plan kinds
    "ap-hyph:kind": ("aphyph.json", ap(TT, kind("Type-Text")), "agent-plan"),
    "ap-upper:kind": ("apupper.json", ap(TT, kind("TYPE_TEXT")), "agent-plan"),
    "ap-dot:kind": ("apdot.json", ap(TT, kind("Type.Text")), "agent-plan"),
    "ap-snake:kind": ("apsnake.json", ap(TT, kind("type_text")), "agent-plan"),
    "ap-custom:kind": (
        "apcustom.json",
        ap(TT, {"Custom": {"name": "type_text", "payload": {}}}),
        "agent-plan",
    ),
    "ap-kel2:kind": ("apkel2.json", ap(kind("TypeTekt"), kind("TypeTe\u212at")), "agent-plan"),
    "ap-zw:kind": ("apzw.json", ap(TT, kind("TypeText\u200b")), "agent-plan"),
    "ap-fullw:kind": ("apfullw.json", ap(TT, kind("\uff34ypeText")), "agent-plan"),
    "ap-longs:kind": ("aplongs.json", ap(kind("Sclick"), kind("\u017fclick")), "agent-plan"),
    "ap-kelvin:kind": ("apkelvin.json", ap(TT, kind("TypeTe\u212at")), "agent-plan"),
    "ap-twokeys:kind": (
        "aptwo.json",
        ap({"Navigate": {"url": "u"}, "TypeText": {"text": "x"}}),
        "agent-plan",
    ),
    "ap-wrapextra:wrap": (
        "apwrap.json",
        _j(
            {
                "plan": json.loads(ap(TT)),
                "steps": [{"id": "9", "title": "evil", "tool": {"kind": TT}}],
            }
        ),
        "agent-plan",
    ),
    "ap-wrap2:wrap": (
        "apwrap2.json",
        _j({"plan": {"plan": json.loads(ap(TT)), "title": "X"}, "overlays": {}}),
        "agent-plan",
    ),
    "ap-dupid:metadata": (
        "apdup.json",
        _j(
            {
                "title": "T",
                "steps": [
                    {"id": "1", "title": "a", "tool": {"kind": TT}, "metadata": {"m": "first"}},
                    {"id": "1", "title": "b", "tool": {"kind": TT}, "metadata": {"m": "second"}},
                ],
            }
        ),
        "agent-plan",
    ),
    # -- TOON
    "toon-qkey:key": (
        "qkey.toon",
        TOON.replace("  title: Record plan\n", '  title: Record plan\n  "title": Evil plan\n'),
        "",
    ),
    "toon-qkey2:key": (
        "qkey2.toon",
        TOON.replace("shared_inputs: {}\n", 'shared_inputs: {}\n"shared_inputs":\n  to: evil\n'),
        "",
    ),
    "toon-dupfield:field": (
        "dupf.toon",
        TOON.replace(
            TROW,
            "steps[1]{id,task_id,action,step_type,action}:\n  step_1,task_1,rec,AGENT_EXECUTION,evil",
        ),
        "",
    ),
    "toon-dupparam:key": (
        "dupp.toon",
        TOON.replace(
            TROW,
            "steps[1]:\n  - id: step_1\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: t-ok\n    parameters:\n      tag: t-evil",
        ),
        "",
    ),
    "toon-dotkey:key": ("dot.toon", TOON + "workflow_config.parallel_execution: true\n", ""),
    "toon-tabindent:indent": (
        "tabi.toon",
        TOON.replace("  title: Record plan", "\ttitle: Record plan"),
        "",
    ),
    "toon-qtimeout:type": ("qt.toon", TOON.replace(",30\n", ',"30"\n'), ""),
    "toon-qbool:type": (
        "qb.toon",
        TOON.replace("parallel_execution: false", 'parallel_execution: "false"'),
        "",
    ),
    "toon-lead0:number": ("l0.toon", TOON.replace(",30\n", ",030\n"), ""),
    "toon-extracol:row": ("xc.toon", TOON.replace(",30\n", ",30,evil\n"), ""),
    "toon-pipe:delim": (
        "pipe.toon",
        TOON.replace(
            TROW,
            "steps[1|]{id|task_id|action|step_type|timeout}:\n  step_1|task_1|rec,evil|AGENT_EXECUTION|30",
        ),
        "",
    ),
    "toon-tab:delim": (
        "tabd.toon",
        TOON.replace(
            TROW,
            "steps[1\t]{id\ttask_id\taction\tstep_type\ttimeout}:\n  step_1\ttask_1\trec\tAGENT_EXECUTION\t30",
        ),
        "",
    ),
    # -- replies
    "reply-tilde:fence": (
        "rtilde.md",
        "~~~json\n" + EV1 + "\n~~~\n\n```json\n" + json.dumps(ONE) + "\n```\n",
        "",
    ),
    "reply-comment:fence": (
        "rcomment.md",
        "<!--\n```json\n" + EV1 + "\n```\n-->\n```json\n" + json.dumps(ONE) + "\n```\n",
        "",
    ),
    "reply-indent:code": (
        "rindent.md",
        "    " + EV1 + "\n\n```json\n" + json.dumps(ONE) + "\n```\n",
        "",
    ),
}

DAEMON = {
    "d-zw": second("dzw", "## Steps\u200b"),
    "d-ok": md("dok"),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    folder = root / "src"
    folder.mkdir()
    for vid, (name, content, fmt) in SOURCES.items():
        got[vid] = _convert(lab, folder, name, content, fmt)
    for slug, content in DAEMON.items():
        lab.write(slug, content, "PLAN.md")
    lab.commit("agent: plan sources", AGENT)
    lab.run()
    frozen: dict[str, Any] = {}
    for slug in DAEMON:
        try:
            frozen[slug] = lab.plan(slug)
        except BenchError:  # not converted: no PLAN.yml at HEAD
            frozen[slug] = None
    got["frozen"] = frozen
    for slug in DAEMON:
        if frozen[slug] is not None:
            _approve_file(lab, slug)
    lab.commit("alice: approve", ALICE)
    lab.run()
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r105-sources-atk105c", _build)


def _tools(plan: dict[str, Any]) -> list[str]:
    return [str(a.get("tool")) for a in plan.get("actions") or []]


def _renamed(plan: dict[str, Any]) -> dict[str, Any]:
    return plan["metadata"]["converted_from"].get("tool_names") or {}


#: round 105's three classes (md-section-hidden, kind-ascii-fold, ap-step-id-twice; 8 ids)
#: were fixed the same session (r105sources): no id is expected to break
BROKEN: dict[str, Any] = {}

# -- part 1: plangate convert ------------------------------------------------------------

HIDDEN_IDS = [f"md-{k}:section" for k in HIDDEN]


@pytest.mark.parametrize("vid", cases(HIDDEN_IDS, HIDDEN_IDS, BROKEN))
def test_hidden_heading_is_no_new_section(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    tag = vid.split(":")[0][3:]
    plan = got["plan"]
    assert plan is None or f"h{tag}-two" in _tags(plan), (
        f"the second ## Steps (a hidden character in its heading) converted to no action: {_tags(plan)}; "
        f"sections {plan['metadata'].get('source', {}).get('sections')}"
    )
    if plan is None:
        assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


FIRST = {
    "md-inputszw:section": lambda p: (p.get("inputs") or {}).get("to") == "ok@example.com",
    "md-cfgzw:section": lambda p: all(a.get("on_failure") == "retry" for a in p["actions"]),
}


@pytest.mark.parametrize("vid", cases(list(FIRST), list(FIRST), BROKEN))
def test_hidden_heading_keeps_the_first(lab: Lab, vid: str) -> None:
    plan = lab.got[vid]["plan"]  # type: ignore[attr-defined]
    assert plan is None or FIRST[vid](plan), f"the first section was dropped: {plan}"


REFUSED_IDS = [
    "md-nbsp2:section",
    "md-trail2:section",
    "md-lower2:section",
    "md-tilde:fence",
    "md-unclosed:fence",
    "md-indent3:fence",
    "md-info:fence",
    "md-tab:code",
    "md-bq:quote",
    "md-setext:heading",
    "md-div:html",
    "md-details:html",
    "md-h4:heading",
    "md-fieldzw:bullet",
    "md-depspace:deps",
    "pc-topo:ref",
    "pc-lead0:ref",
    "pc-angle:ref",
    "pc-nest:ref",
    "pc-embed:ref",
    "pc-outputs:ref",
    "pc-self:dep",
    "pc-unknown:dep",
    "pc-when:field",
    "tp-taskdep:ref",
    "tp-taskself:dep",
    "tp-taskunknown:dep",
    "tp-taskother:task",
    "tp-tasklist:task",
    "md-ref:ref",
    "md-refangle:ref",
    "ap-upper:kind",
    "ap-dot:kind",
    "ap-snake:kind",
    "ap-custom:kind",
    "ap-twokeys:kind",
    "ap-wrapextra:wrap",
    "ap-wrap2:wrap",
    "toon-qkey:key",
    "toon-qkey2:key",
    "toon-dupfield:field",
    "toon-dupparam:key",
    "toon-dotkey:key",
    "toon-tabindent:indent",
    # a TAB delimiter converted as written until round 114 (toon-tab-delimiter: a review
    # shows the TAB as white space); a TAB anywhere in TOON is refused since
    "toon-tab:delim",
    "toon-qtimeout:type",
    "toon-qbool:type",
    "toon-lead0:number",
    "toon-extracol:row",
    "reply-tilde:fence",
    "reply-comment:fence",
    "reply-indent:code",
]


@pytest.mark.parametrize("vid", cases(REFUSED_IDS, REFUSED_IDS, BROKEN))
def test_source_is_refused(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got['plan']}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


def _one_step(tag: str, tool: str = "rec") -> Any:
    return lambda p: _tags(p) == [f"{tag}-ok"] and _tools(p) == [tool]


AS_WRITTEN = {
    "md-trailhash:title": lambda p: p["actions"][0]["why"] == "Record: Record ok",
    "md-codespan:tool": _one_step("cs"),
    "md-escape:tool": lambda p: _tools(p) == ["re__c"] and _renamed(p) == {"re__c": "re\\_c"},
    "md-kelvin:tool": lambda p: _tools(p) == ["_ill"] and _renamed(p) == {"_ill": "\u212aill"},
    "md-star:bullet": _one_step("sb"),
    "md-crlf:lines": _one_step("crlf"),
    "md-titlezw:step": lambda p: _tags(p) == ["tzw-ok", "tzw-two"],
    "md-nbsp:heading": lambda p: _tags(p) == ["nbh-ok", "nbh-two"],
    "pc-diamond:ref": lambda p: (
        _tags(p) == ["a", "b", "c", "d"]
        and p["actions"][3]["params"]["body"] == "$<actions[3].result>"
    ),
    "pc-kelvin:tool": lambda p: _tools(p) == ["_ill"] and _renamed(p) == {"_ill": "\u212aill"},
    "tp-xdep:order": lambda p: (
        _tags(p) == ["b", "a"]
        and p["actions"][1]["needs"] == [1]
        and any("reordered" in n for n in p["metadata"]["converted_from"].get("notes") or [])
    ),
    "ap-hyph:kind": lambda p: _tools(p) == ["type_text", "type-text"],
    "ap-zw:kind": lambda p: _tools(p)[1] not in ("type_text",) and _tools(p)[1] in _renamed(p),
    "ap-fullw:kind": lambda p: _tools(p)[1] != "type_text" and _tools(p)[1] in _renamed(p),
    "ap-longs:kind": lambda p: _tools(p)[0] != _tools(p)[1] and _tools(p)[1] in _renamed(p),
    "ap-kelvin:kind": lambda p: _tools(p)[1] in _renamed(p),
    # two source tools: both kept apart, the Kelvin one renamed with its note (r105sources:
    # the KELVIN SIGN is no longer lower-cased into ASCII ``k``), or refused
    "ap-kel2:kind": lambda p: len(set(_tools(p))) == 2 and _tools(p)[1] in _renamed(p),
    "ap-dupid:metadata": lambda p: (
        "first" in json.dumps(p["metadata"]) and "second" in json.dumps(p["metadata"])
    ),
    "toon-pipe:delim": lambda p: (
        _tools(p) == ["rec_evil"] and _renamed(p) == {"rec_evil": "rec,evil"}
    ),
}


@pytest.mark.parametrize("vid", cases(list(AS_WRITTEN), list(AS_WRITTEN), BROKEN))
def test_converted_as_written(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    plan = got["plan"]
    # refused is held too: r105sources refuses a heading holding a hidden character and
    # reads headings as CommonMark does (a no-break space after the #s makes none)
    if plan is None and vid.startswith(("ap-kel", "ap-dupid", "md-titlezw", "md-nbsp:")):
        assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]  # refused: held
        return
    assert plan is not None, got["err"]
    assert AS_WRITTEN[vid](plan), (
        f"converted otherwise than the source says: {json.dumps(plan, ensure_ascii=False)[:1500]}"
    )


# -- part 2: the daemon ------------------------------------------------------------------

DAEMON_IDS = ["d-zw:runs", "d-ok:runs"]


@pytest.mark.parametrize("vid", cases(DAEMON_IDS, DAEMON_IDS, BROKEN))
def test_daemon(lab: Lab, vid: str) -> None:
    slug = vid.split(":")[0]
    frozen = lab.got["frozen"][slug]  # type: ignore[attr-defined]
    if vid == "d-zw:runs":
        ran = [c["argv"][0] for c in lab.calls("dzw-ok") + lab.calls("dzw-two")]
        assert frozen is None or sorted(ran) == ["dzw-ok", "dzw-two"], (
            f"the second ## Steps (U+200B in its heading) never ran: ran {ran}; frozen tags {_tags(frozen)}"
        )
    else:
        assert frozen is not None and _tags(frozen) == ["dok-ok"]
        assert len(lab.calls("dok-ok")) == 1, lab.got["rows2"]  # type: ignore[attr-defined]
