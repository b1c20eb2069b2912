# ruff: noqa: E501
"""PARKED, not collected (its name has no ``test_`` prefix): round 103's five classes are
open, found at the end of the 2026-12-04 session, after its last fresh-clone CI run
(docs/threat-model.md, "Open from round 103"). To take it up: move it to
``tests/adversarial/test_round103_sources_atk103a.py``, run it (23 strict xfails, 17 pass),
fix the classes and remove their marks. It needs ``tests/adversarial`` on ``sys.path`` (as
the round modules have it through conftest) and the imports below.

Round 103, sources (atk103a): what a reviewer reads in a plan SOURCE (a ``PLAN.md`` in
the markdown plan format, a ``PLAN.toon``, a ``PLAN.json`` Plan Contract, task/step plan or
Agent Plan) is exactly what the conversion freezes and runs (docs/formats.md: "Nothing is
dropped silently", "Every field is said once"; SPEC §15: "What a reviewer sees is what runs
... characters that line-based review tools do not show as line breaks ... are refused").

Lab (one, module scope; the bench's config, the recorder ``rec`` echoing its params). Part 1,
``plangate convert SRC`` (no config: the converter alone) of sources the test writes, each
read back as YAML. Part 2, the daemon: the agent commits ``plans/d-*/PLAN.md``/``PLAN.json``
in one commit; pass 1 converts and freezes; Alice sets ``approved`` on the converted
``d-steps2``, ``d-pos`` and ``d-ok`` in one commit; pass 2 runs them.

Variants (``<variant>:<what>``):

- ``md-{ls,nel,ps,vt,ff,fs,cr}:step``: a markdown step whose last bullet is followed, on
  the SAME git line, by U+2028 / U+0085 / U+2029 / VT / FF / FS / a lone CR and a whole
  ``### Step 2`` record (``rec`` with tag ``evil``): git (and ``git diff``) shows one line
  ``- **Dependencies**: []<sep>### Step 2: ...``; must: refused, or no ``evil`` action;
- ``md-{steps,inputs,config,objective,title,tasks}2:section``: a markdown section said
  twice (``## Steps``, ``## Shared Inputs``, ``## Workflow Config``, ``## Objective``, the
  ``# Title``, ``## Tasks``), the first as the reviewer reads it at the top; must: refused
  ("every field is said once"), or the first one kept (for ``## Steps``: its step kept);
- ``pc-pos:ref``, ``tp-pos:ref``: a Plan Contract / task-step plan (JSON) whose steps
  ``fetch`` (depends on ``auth``), ``auth``, ``send`` (``body: ${actions[1].result}``):
  the converter orders the steps by their dependencies and numbers them, so the reference
  the source wrote against its first step; must: refused, or the reference still names
  ``fetch``'s action;
- ``md-nul:binary``, ``toon-nul:binary``: a raw NUL in a markdown section kept in metadata /
  a TOON string: git shows the source as ``Binary files differ``; must: refused (as a JSON
  source is: ``json-nul:binary`` held);
- ``ap-case:kind``, ``ap-under:kind``: an Agent Plan calling ``{"TypeText": ...}`` and
  ``{"typeText": ...}`` / ``{"Type_Text": ...}``: two source tools; must: refused as two
  ``Custom`` names landing on one identifier are (round 57; ``ap-custom:kind`` held);
- held controls: ``toon-{ls,cr}:row`` (TOON splits on LF only: refused), ``toon-count:row``
  (a declared length of 1 with 2 rows: refused), ``json-u16:encoding``/``md-u16:encoding``
  (UTF-16: refused), ``md-indent:code`` (a step written as an indented code block),
  ``md-fence:code`` (in a fence), ``md-comment:html`` (in ``<!-- -->``): refused, never a
  silent step; ``tp-dupid:id`` (two steps with one id, a third depending on it: refused);
  ``pc-mix:detect`` (a Plan Contract with Agent Plan fields: refused); ``pte-approval:status``
  (a fenced pte reply with an ``approval: approved`` block: refused), ``pte-status:status``
  (``status: approved``: converted ``pending_approval``); ``reply-4fence:fence`` (a
  four-backtick fence around two plans: refused); ``det-seed:determinism`` (a 12-step
  Plan Contract graph converted under four ``PYTHONHASHSEED`` values: the same bytes);
- daemon: ``d-steps2:runs`` (the two-``## Steps`` PLAN.md, approved: the first step, which
  the reviewer read, must run), ``d-ls:frozen`` (the U+2028 PLAN.md: the frozen PLAN.yml
  must have no ``evil`` action), ``d-nul:frozen`` (the NUL PLAN.md: must not be converted),
  ``d-pos:runs`` (the Plan Contract ``PLAN.json``, approved: ``send`` must get ``fetch``'s
  result), ``d-ok:runs`` (control: a plain PLAN.md runs once on Alice's approval).

Seen (round 103): 5 classes broke.

1. **Markdown lines are split where git does not split them** (``md-linebreak``):
   ``md-ls:step``, ``md-nel:step``, ``md-ps:step``, ``md-vt:step``, ``md-ff:step``,
   ``md-fs:step``, ``md-cr:step``, ``d-ls:frozen``. The markdown reader splits its lines as
   ``str.splitlines`` does: a whole hidden ``### Step 2`` (tool, params) on the line of a
   step's ``Dependencies`` bullet converts to a second action; the daemon converts and
   freezes it from a committed PLAN.md whose diff shows 28 lines (the reader saw 33).
   Should: split on LF (and CR LF) only, or refuse these characters outside JSON strings as
   PLAN.yml does (SPEC §15). TOON is read by LF (held).
2. **A markdown section said twice: the last wins, the first is dropped silently**
   (``md-section-twice``): ``md-steps2:section`` (the first ``## Steps``'s step vanishes),
   ``md-inputs2:section``, ``md-config2:section``, ``md-objective2:section``,
   ``md-title2:section``, ``md-tasks2:section``, ``d-steps2:runs`` (the daemon converts it;
   Alice's approval runs only the second section's step; the first never runs, no note).
   Should: refuse a repeated section at its second line, as a repeated bullet is.
3. **Positional references survive the converter's reordering** (``reorder-ref``):
   ``pc-pos:ref``, ``tp-pos:ref``, ``d-pos:runs``. ``${actions[1].result}`` written beside
   the source's first step ``fetch`` becomes ``$<actions[1].result>`` while action 1 is now
   ``auth`` (ordered first, as ``fetch`` depends on it); valid, no note; the daemon runs
   ``send`` with ``auth``'s result. Should: refuse ``actions[N]`` references in a format
   whose steps are reordered/renumbered, or renumber them with the steps.
4. **A NUL makes the source binary to git, and it still converts** (``binary-source``):
   ``md-nul:binary``, ``toon-nul:binary``, ``d-nul:frozen``: ``git diff``/``git show`` say
   ``Binary files ... differ`` for the PLAN.md (none of its steps is shown), the daemon
   converts and freezes it. Should: refuse a NUL (or any C0 control but TAB/LF/CR) in a
   source, as the JSON reader does (``json-nul:binary`` held).
5. **Agent Plan kinds that differ in spelling call one tool** (``kind-one-to-one``):
   ``ap-case:kind``, ``ap-under:kind``: ``TypeText`` and ``typeText``/``Type_Text`` both
   become ``type_text``, no refusal and no ``tool_names`` note (a ``Custom`` name is held to
   the one-to-one rule: ``ap-custom:kind`` refused).

Held: every other id (17 of 40; 23 strict xfails): TOON lines, counts and encodings; UTF-16; steps in code blocks,
fences and HTML comments refused; duplicate ids, mixed formats, carried approvals and
four-backtick fences refused; the conversion is the same bytes under any hash seed; a plain
source runs once on Alice's approval.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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

EVIL_STEP = [
    "### Step 2: Evil",
    "- **ID**: step_2",
    "- **Task**: task_1",
    "- **Action**: rec",
    '- **Parameters**: {"tag": "TAG-evil"}',
]

SEPS = {
    "ls": "\u2028",
    "nel": "\x85",
    "ps": "\u2029",
    "vt": "\x0b",
    "ff": "\x0c",
    "fs": "\x1c",
    "cr": "\r",
}


def md_hidden(tag: str, sep: str) -> str:
    hidden = sep + sep.join(EVIL_STEP).replace("TAG", tag)
    return md(tag).replace("- **Dependencies**: []", "- **Dependencies**: []" + hidden)


def md_twice(tag: str, section: str) -> str:
    text = md(tag)
    if section == "steps":
        extra = "\n## Steps\n\n" + "\n".join(EVIL_STEP).replace("TAG", tag) + "\n"
        return text + extra
    if section == "inputs":
        return text.replace(
            "- to: ok@example.com\n",
            "- to: ok@example.com\n\n## Shared Inputs\n- to: evil@example.com\n",
        )
    if section == "config":
        return text.replace("- Error Recovery: false", "- Error Recovery: true") + (
            "\n## Workflow Config\n- Parallel Execution: false\n- Error Recovery: false\n"
        )
    if section == "objective":
        return text.replace("## Tasks\n", "## Objective\nDelete everything\n\n## Tasks\n")
    if section == "title":
        return text.replace("## Objective\n", "# Evil title\n\n## Objective\n")
    if section == "tasks":
        return text.replace(
            "## Steps\n",
            "## Tasks\n\n### Task 1: Evil\n- **ID**: task_1\n- **Steps**: step_1\n\n## Steps\n",
        )
    raise AssertionError(section)


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

ROW2 = "  step_2,task_1,rec,AGENT_EXECUTION,31"


def contract(steps: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {"plan_version": 1, "skill_id": "s", "goal": "record", "steps": steps, **more}


def pos_contract(tag: str) -> dict[str, Any]:
    return contract(
        [
            {
                "step_id": "fetch",
                "tool": "rec",
                "args": {"tag": f"{tag}-fetch"},
                "depends_on": ["auth"],
            },
            {"step_id": "auth", "tool": "rec", "args": {"tag": f"{tag}-auth"}},
            {
                "step_id": "send",
                "tool": "rec",
                "args": {"tag": f"{tag}-send", "body": "${actions[1].result}"},
                "depends_on": ["fetch"],
            },
        ]
    )


def taskstep(steps: list[dict[str, Any]], parallel: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"title": "T", "objective": "o"},
        "tasks": [{"id": "t1", "name": "N", "steps": [s["id"] for s in steps]}],
        "steps": steps,
        "shared_inputs": {},
        "workflow_config": {"parallel_execution": parallel, "error_recovery": False},
    }


def pos_taskstep(tag: str) -> dict[str, Any]:
    def step(sid: str, deps: list[str], **params: Any) -> dict[str, Any]:
        out = {
            "id": sid,
            "task_id": "t1",
            "action": "rec",
            "parameters": {"tag": f"{tag}-{sid}", **params},
        }
        if deps:
            out["dependencies"] = deps
        return out

    return taskstep(
        [
            step("fetch", ["auth"]),
            step("auth", []),
            step("send", ["fetch"], body="${actions[1].result}"),
        ]
    )


def agent_plan(second: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": "T",
        "steps": [
            {"id": "1", "title": "a", "tool": {"kind": {"TypeText": {"text": "x"}}}},
            {"id": "2", "title": "b", "tool": {"kind": second}},
        ],
    }


def _fenced_pte(extra: str) -> str:
    return (
        '```yaml\nplan:\n  name: "p"\n  task: "t"\n  status: approved\navailable_tools:\n'
        '  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: "w"\n'
        '    params: {tag: "pte"}\n' + extra + "```\n"
    )


ONE = contract([{"step_id": "s1", "tool": "rec", "args": {"tag": "one"}}])

#: id -> (file name, content, --from or "")
SOURCES: dict[str, tuple[str, str | bytes, str]] = {
    **{f"md-{k}:step": (f"{k}.md", md_hidden(k, sep), "") for k, sep in SEPS.items()},
    **{
        f"md-{s}2:section": (f"{s}2.md", md_twice(s, s), "")
        for s in ("steps", "inputs", "config", "objective", "title", "tasks")
    },
    "pc-pos:ref": ("pcpos.json", _j(pos_contract("pcpos")), ""),
    "tp-pos:ref": ("tppos.json", _j(pos_taskstep("tppos")), ""),
    "md-nul:binary": (
        "nul.md",
        md("nul").replace("## Shared Inputs", "## Notes\nx\x00y\n\n## Shared Inputs"),
        "",
    ),
    "toon-nul:binary": (
        "nul.toon",
        TOON.replace("title: Record plan", 'title: "Record\x00plan"'),
        "",
    ),
    "json-nul:binary": ("nul.json", _j(ONE).replace('"record"', '"rec\x00ord"'), ""),
    "ap-case:kind": ("apcase.json", _j(agent_plan({"typeText": {"text": "y"}})), "agent-plan"),
    "ap-under:kind": ("apunder.json", _j(agent_plan({"Type_Text": {"text": "y"}})), "agent-plan"),
    "ap-custom:kind": (
        "apcustom.json",
        _j(
            {
                "title": "T",
                "steps": [
                    {
                        "id": "1",
                        "title": "a",
                        "tool": {"kind": {"Custom": {"name": "deploy_prod", "payload": {}}}},
                    },
                    {
                        "id": "2",
                        "title": "b",
                        "tool": {"kind": {"Custom": {"name": "deploy.prod", "payload": {}}}},
                    },
                ],
            }
        ),
        "agent-plan",
    ),
    "toon-ls:row": (
        "ls.toon",
        TOON.replace("steps[1]", "steps[2]").replace(",30\n", ",30\u2028" + ROW2 + "\n"),
        "",
    ),
    "toon-cr:row": (
        "cr.toon",
        TOON.replace("steps[1]", "steps[2]").replace(",30\n", ",30\r" + ROW2 + "\n"),
        "",
    ),
    "toon-count:row": ("count.toon", TOON.replace(",30\n", ",30\n" + ROW2 + "\n"), ""),
    "json-u16:encoding": ("u16.json", json.dumps(ONE).encode("utf-16"), ""),
    "md-u16:encoding": ("u16.md", md("u16").encode("utf-16"), ""),
    "md-indent:code": (
        "indent.md",
        md("ind").replace(
            "## Shared Inputs",
            "\n"
            + "\n".join("    " + x for x in EVIL_STEP).replace("TAG", "ind")
            + "\n\n## Shared Inputs",
        ),
        "",
    ),
    "md-fence:code": (
        "fence.md",
        md("fen").replace(
            "## Shared Inputs",
            "```\n" + "\n".join(EVIL_STEP).replace("TAG", "fen") + "\n```\n\n## Shared Inputs",
        ),
        "",
    ),
    "md-comment:html": (
        "comment.md",
        md("cmt").replace(
            "## Shared Inputs",
            "<!--\n" + "\n".join(EVIL_STEP).replace("TAG", "cmt") + "\n-->\n\n## Shared Inputs",
        ),
        "",
    ),
    "tp-dupid:id": (
        "dupid.json",
        _j(
            taskstep(
                [
                    {"id": "a", "task_id": "t1", "action": "rec", "parameters": {"tag": "dup-1"}},
                    {"id": "a", "task_id": "t1", "action": "rec", "parameters": {"tag": "dup-2"}},
                    {
                        "id": "c",
                        "task_id": "t1",
                        "action": "rec",
                        "parameters": {"tag": "dup-c"},
                        "dependencies": ["a"],
                    },
                ],
                parallel=True,
            )
        ),
        "",
    ),
    "pc-mix:detect": ("mix.json", _j({**ONE, "title": "T", "description": "d"}), ""),
    "pte-approval:status": (
        "pteap.md",
        _fenced_pte("approval:\n  status: approved\n  approved_by: alice@example.com\n"),
        "",
    ),
    "pte-status:status": ("ptest.md", _fenced_pte(""), ""),
    "reply-4fence:fence": (
        "fence4.md",
        "````json\n"
        + json.dumps(ONE)
        + "\n```\n"
        + json.dumps(ONE).replace('"one"', '"evil"')
        + "\n````\n",
        "",
    ),
}

SEED_SOURCE = contract(
    [
        {
            "step_id": f"s{i}",
            "tool": "rec",
            "args": {"tag": f"seed{i}"},
            **({"depends_on": [f"s{j}" for j in (7, 3, 9, 1, 11, 5)]} if i == 0 else {}),
            **({"depends_on": ["s10", "s2", "s8"]} if i == 4 else {}),
        }
        for i in range(12)
    ]
)

DAEMON = {
    "d-steps2": ("PLAN.md", md_twice("dst", "steps")),
    "d-ls": ("PLAN.md", md_hidden("dls", "\u2028")),
    "d-nul": (
        "PLAN.md",
        md("dnul").replace("## Shared Inputs", "## Notes\nx\x00y\n\n## Shared Inputs"),
    ),
    "d-pos": ("PLAN.json", _j(pos_contract("dpos"))),
    "d-ok": ("PLAN.md", md("dok")),
}
APPROVE = ("d-steps2", "d-pos", "d-ok")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    folder = root / "src"
    folder.mkdir()
    for vid, (name, content, fmt) in SOURCES.items():
        got[vid] = _convert(lab, folder, name, content, fmt)
    seed = folder / "seed.json"
    seed.write_text(_j(SEED_SOURCE))
    plangate = str(Path(sys.executable).parent / "plangate")
    outs = []
    for hs in ("1", "2", "3", "4"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGATE_")}
        env["PYTHONHASHSEED"] = hs
        done = subprocess.run(
            [plangate, "convert", str(seed)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        outs.append((done.returncode, done.stdout))
    got["det-seed:determinism"] = outs
    # part 2: the daemon
    for slug, (name, content) in DAEMON.items():
        lab.write(slug, content, name)
    lab.commit("agent: plan sources", AGENT)
    lab.run()
    frozen: dict[str, Any] = {}
    for slug in DAEMON:
        try:
            frozen[slug] = lab.plan(slug)
        except BenchError:  # not converted: no PLAN.yml at HEAD
            frozen[slug] = None
    got["frozen"] = frozen
    got["rows1"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    for slug in APPROVE:
        if frozen[slug] is not None:
            _approve_file(lab, slug)
    lab.commit("alice: approve", ALICE)
    lab.run()
    got["rows2"] = {k: v for k, v in lab.rows().items() if k.startswith("plans/d-")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r103-sources-atk103a", _build)


def _ref_target(plan: dict[str, Any], tag_suffix: str) -> str | None:
    """The tag of the action that the ``body`` reference of the ``send`` action names."""
    by_id = {a["id"]: a for a in plan["actions"]}
    for a in plan["actions"]:
        params = a.get("params") or {}
        if str(params.get("tag", "")).endswith("-send"):
            m = re.fullmatch(r"\$<actions\[(\d+)\]\.result>", str(params.get("body")))
            assert m, params
            return str(by_id[int(m.group(1))]["params"]["tag"])
    raise AssertionError(f"no send action: {plan}")


# -- part 1: plangate convert ------------------------------------------------------------

HIDDEN_IDS = [f"md-{k}:step" for k in SEPS]
SECTION_IDS = [
    f"md-{s}2:section" for s in ("steps", "inputs", "config", "objective", "title", "tasks")
]
REFUSED_IDS = [
    "md-nul:binary",
    "toon-nul:binary",
    "json-nul:binary",
    "ap-case:kind",
    "ap-under:kind",
    "ap-custom:kind",
    "toon-ls:row",
    "toon-cr:row",
    "toon-count:row",
    "json-u16:encoding",
    "md-u16:encoding",
    "md-indent:code",
    "md-fence:code",
    "md-comment:html",
    "tp-dupid:id",
    "pc-mix:detect",
    "pte-approval:status",
    "reply-4fence:fence",
]
BROKEN: dict[str, Any] = {}  # round 103's five classes, fixed the same day (r103sources)


@pytest.mark.parametrize("vid", cases(HIDDEN_IDS, HIDDEN_IDS, BROKEN))
def test_hidden_step_never_converts(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    tags = _tags(got["plan"])
    assert not any(t.endswith("-evil") for t in tags), (
        f"a step on the line of another bullet (one line to git) converted: {tags}"
    )


FIRST = {
    "md-steps2:section": lambda p: "steps-ok" in _tags(p),
    "md-inputs2:section": lambda p: (p.get("inputs") or {}).get("to") == "ok@example.com",
    "md-config2:section": lambda p: all(a.get("on_failure") == "retry" for a in p["actions"]),
    "md-objective2:section": lambda p: p["plan"]["task"] == "Record a tag",
    "md-title2:section": lambda p: p["plan"]["name"] == "Record plan",
    "md-tasks2:section": lambda p: all(
        str(a.get("why", "")).startswith("Record:") for a in p["actions"]
    ),
}


@pytest.mark.parametrize("vid", cases(SECTION_IDS, SECTION_IDS, BROKEN))
def test_section_said_twice_is_refused(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    plan = got["plan"]
    assert plan is None or FIRST[vid](plan), (
        f"the first section, which the reviewer reads, was dropped: {plan}"
    )


POS_IDS = ["pc-pos:ref", "tp-pos:ref"]


@pytest.mark.parametrize("vid", cases(POS_IDS, POS_IDS, BROKEN))
def test_positional_reference_follows_the_step(lab: Lab, vid: str) -> None:
    plan = lab.got[vid]["plan"]  # type: ignore[attr-defined]
    if plan is None:
        return  # refused: the defence held
    target = _ref_target(plan, "-send")
    assert target is not None and target.endswith("-fetch"), (
        f"the source's actions[1] is its first step (fetch); the converted reference names {target}"
    )


@pytest.mark.parametrize("vid", cases(REFUSED_IDS, REFUSED_IDS, BROKEN))
def test_source_is_refused(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got['plan']}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(["pte-status:status"], ["pte-status:status"], BROKEN))
def test_pte_status_is_not_carried(lab: Lab, vid: str) -> None:
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert got["plan"]["plan"]["status"] == "pending_approval"
    assert "approved" in json.dumps(got["plan"]["metadata"]["converted_from"].get("notes"))


@pytest.mark.parametrize("vid", cases(["det-seed:determinism"], ["det-seed:determinism"], BROKEN))
def test_conversion_is_deterministic(lab: Lab, vid: str) -> None:
    outs = lab.got[vid]  # type: ignore[attr-defined]
    assert all(rc == 0 for rc, _ in outs), outs
    assert len({text for _, text in outs}) == 1, "the conversion differs between hash seeds"


# -- part 2: the daemon ------------------------------------------------------------------

DAEMON_IDS = ["d-steps2:runs", "d-ls:frozen", "d-nul:frozen", "d-pos:runs", "d-ok:runs"]


@pytest.mark.parametrize("vid", cases(DAEMON_IDS, DAEMON_IDS, BROKEN))
def test_daemon(lab: Lab, vid: str) -> None:
    slug = vid.split(":")[0]
    frozen = lab.got["frozen"][slug]  # type: ignore[attr-defined]
    if vid == "d-steps2:runs":
        ran = [c["argv"][0] for c in lab.calls("dst-ok") + lab.calls("dst-evil")]
        assert frozen is None or ran == ["dst-ok"] or sorted(ran) == ["dst-evil", "dst-ok"], (
            f"the first ## Steps (dst-ok) never ran; ran: {ran}; frozen tags {_tags(frozen)}"
        )
    elif vid == "d-ls:frozen":
        assert "dls-evil" not in _tags(frozen), f"the hidden step was frozen: {_tags(frozen)}"
        assert not lab.calls("dls-evil")
    elif vid == "d-nul:frozen":
        assert frozen is None, f"a binary PLAN.md was converted and frozen: {_tags(frozen)}"
    elif vid == "d-pos:runs":
        sends = lab.calls("dpos-send")
        if frozen is None:
            assert not sends
            return
        assert len(sends) == 1, (sends, lab.got["rows2"])  # type: ignore[attr-defined]
        body = json.dumps(json.loads(sends[0]["stdin"])["body"])
        assert "dpos-fetch" in body and "dpos-auth" not in body, f"send got {body}"
    else:
        assert frozen is not None and _tags(frozen) == ["dok-ok"]
        assert len(lab.calls("dok-ok")) == 1, lab.got["rows2"]  # type: ignore[attr-defined]
