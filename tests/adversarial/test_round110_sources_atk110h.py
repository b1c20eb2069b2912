# ruff: noqa: E501
"""Round 110, sources (atk110h): what a reviewer reads in a plan SOURCE (markdown ``PLAN.md``
raw and as a forge renders it, task/step JSON and TOON, ActionPlan, plan-then-execute YAML) is
exactly the actions, order, params and dependencies that run, or the source is refused with a
coded error at its location (docs/formats.md, "A source is read as git shows it"; rounds
108-109 fixed step numbers, escaped/referenced ids, legacy references and raw HTML).

Lab (one, module scope; the bench's config, the recorder ``rec`` echoing its params). Part 1,
``plangate convert SRC`` (no config: the converter alone) of sources the test writes, each in
its own folder. The rendered view named below is CommonMark's (``markdown-it-py`` in the venv
gives it; GitHub's GFM renders these constructs alike). Part 2, the daemon: the agent commits
``plans/d-link/PLAN.md`` (step 1's ``Parameters``
``{"tag": "lA", "cmd": "[ls](u '; rm -rf ~')"}``, rendered ``{"tag": "lA", "cmd": "ls"}``) and
``plans/d-ok/PLAN.md`` (control); one pass; Alice approves both; two passes.

Variants (``<variant>:<what>``):

- ``val-*``: markdown inline syntax in a ``Parameters`` value or a shared input, outside a
  code span: a backslash escape ``\\"``, a character reference ``&quot;``/``&#44;``, a link
  whose title or destination a forge hides, emphasis ``*...*`` eating its stars; must be
  refused (as round 109 refused them in ids and raw HTML in values) or read as rendered;
- ``twin-*``: two step ids a rendered view shows as one through emphasis or strikethrough
  (``step_1`` and ``*step_1*``, ``_step_1_``, ``**step_1**``, ``~~step_1~~``), a third step
  depending on the marked one: must be refused (round 109's ``md-rendered-id`` for escapes);
- ``fence-*``: a ``## Notes`` section opening a fenced block that CommonMark never closes
  (closing line ```` ``` y ```` with an info string, ```` ``` ```` under a ```` ```` ````
  opener, a closing fence indented four spaces): the forge shows ``## Steps`` and every step
  as code under ``## Notes``; the reader closes the block and reads the steps. It refuses a
  step inside a fence it sees (``fence-open-notes``), so must refuse these too;
- ``hidden-*``: a param KEY holding a zero-width space or a bidi override
  (``dry_run<U+200B>``) in a markdown, JSON or TOON source: every review of the source
  reads ``dry_run``; must be refused as hidden characters in ids and headings are;
- held (refused): link reference definitions among records, a heading inside a list item,
  YAML front matter, ``<pre>`` HTML blocks, tab/4-space "fences", lazy continuation of
  ``Parameters``, ``+`` bullets, a shared-input table, nested bullets repeating a field,
  model replies with two fences or a trailing definition, strict YAML/JSON/TOON readers
  (duplicate keys direct, quoted and escaped, merge keys, dates, a BOM mid-object,
  comments, trailing objects, lone surrogates);
- controls (convert as read): the same escapes inside a code span or a fenced JSON block,
  a ``~~~`` reply, ``<step_1>`` as an id (rendered as written), a nested ``Timeout``,
  ``*`` bullets, YAML ``NO``/``12:30`` as strings, a leading BOM, CRLF TOON, dotted TOON keys;
- daemon: ``d-link:runs`` (the tool never gets text a forge's view hides), ``d-ok:runs``.

Seen (round 110, 62 ids, ~4 s wall): 4 classes broke (20 ids), 42 held.

1. **md-inline-markup-in-value**: ``val-esc-quote:param``, ``val-ent-quote:param``,
   ``val-link-title:param``, ``val-link-dest:param``, ``val-emph:param``,
   ``val-esc-quote:input``, ``val-ent:input``, ``val-link:input``, ``d-link:runs``.
   ``plangate convert x.md`` of ``- **Parameters**: {"tag": "A\\", \\"mode\\": \\"dry-run"}``
   converts to ``params: {tag: 'A", "mode": "dry-run'}``; a forge renders the bullet
   ``{"tag": "A", "mode": "dry-run"}``: the reviewer reads a ``mode`` param the tool never
   gets (``&quot;`` the same). ``{"cmd": "[ls](u '; rm -rf ~')"}`` renders ``"cmd": "ls"``
   and the daemon ran ``rec`` with the hidden text after Alice's approval; a shared input
   ``- to: [ok@example.com](mailto:evil@example.net)`` renders ``ok@example.com``.
   Property: the params a reviewer reads in the rendered source are the params that run.
2. **md-emphasis-id**: ``twin-em:needs``, ``twin-under:needs``, ``twin-strong:needs``,
   ``twin-strike:needs``. Steps ``- **ID**: step_1`` and ``- **ID**: *step_1*``, a third
   ``- **Dependencies**: [*step_1*]``, convert with the third ``needs: [2]``; the forge shows
   both ids and the dependency as ``step_1`` (italic), a dependency on the first step.
3. **md-fence-unclosed-in-commonmark**: ``fence-info-close:structure``,
   ``fence-short-close:structure``, ``fence-indent4-close:structure``. The reader ends a fenced
   block at a line CommonMark does not take for its close; the forge renders the rest of the
   plan (``## Steps`` and its records) as code under ``## Notes``, and both steps convert.
4. **hidden-char-in-param-key**: ``hidden-zw:md``, ``hidden-bidi:md``, ``hidden-zw:json``,
   ``hidden-zw:toon``. ``{"tag": "A", "dry_run<U+200B>": true}`` converts (escaped in the
   PLAN.yml, ``"dry_run\\u200b": true``); the source, raw or rendered, reads ``dry_run: true``
   and a tool that ignores unknown keys runs for real.

Held: every other id.

Suspected, not asserted: plan-then-execute ``mode: 0755`` converts to the integer 755 (YAML
1.2; a reader of a file mode takes it for octal 493); a TOON array header ``args[2<TAB>]``
splits ``a b<TAB>c`` into ``["a b", "c"]``, a tab no review tells from spaces; a model reply
closed by ```` ``` x ```` is refused with the message "1 fenced blocks; a plan is exactly one".
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases, load_yaml
from sourcekit import approve_file, md
from test_round2_execution_kit import shared


def _step(n: int, sid: str, tag: str, deps: str = "[]") -> str:
    return (
        f"\n### Step {n}: S{tag}\n- **ID**: {sid}\n- **Task**: task_1\n- **Action**: rec\n"
        f'- **Parameters**: {{"tag": "{tag}"}}\n- **Timeout**: 30s\n'
        f"- **Dependencies**: {deps}\n"
    )


def mdplan(steps: list[str], ids: list[str], parallel: bool = False) -> str:
    base = md("b")
    head = base.split("## Steps")[0].replace(
        "- **Steps**: step_1", "- **Steps**: " + ", ".join(ids)
    )
    text = (
        head
        + "## Steps\n"
        + "".join(steps)
        + "\n## Shared Inputs"
        + base.split("## Shared Inputs")[1]
    )
    return (
        text.replace("Parallel Execution: false", "Parallel Execution: true") if parallel else text
    )


TWO = mdplan([_step(1, "step_1", "A"), _step(2, "step_2", "B")], ["step_1", "step_2"])


def _two(old: str, new: str, text: str = TWO) -> str:
    assert old in text, old
    return text.replace(old, new)


def _param(params: str) -> str:
    return _two('{"tag": "A"}', params)


def twin(marked: str) -> str:
    return mdplan(
        [_step(1, "step_1", "A"), _step(2, marked, "B"), _step(3, "step_3", "C", f"[{marked}]")],
        ["step_1", marked, "step_3"],
        parallel=True,
    )


def _notes(block: str) -> str:
    return _two("## Steps\n", "## Notes\n" + block + "\n## Steps\n")


AP_STEP = {"step_number": 1, "step_id": "a", "action": {"type": "custom", "action_type": "rec"}}


def ap(payload: dict[str, Any]) -> str:
    step = {**AP_STEP, "action": {**AP_STEP["action"], "payload": payload}, "description": "d"}
    return json.dumps({"plan_version": 1, "title": "t", "steps": [step]})


PTE = (
    'plan:\n  name: "p"\n  task: "t"\n  status: "pending_approval"\navailable_tools:\n'
    '  - name: "rec"\nactions:\n  - id: 1\n    tool: "rec"\n    why: "w"\n    params:\n'
    '      tag: "A"\n      X\n'
)
TOON = (
    "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\nsteps[1]:\n"
    "  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: A\n      X\n"
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)
REPLY = "```json\n" + ap({"tag": "A"}) + "\n```\n"


def _in(value: str) -> str:
    return _two("- to: ok@example.com", value)


#: id -> (file name, source): must be refused with an E_ code
REFUSED: dict[str, tuple[str, str]] = {
    # md-inline-markup-in-value (breaks)
    "val-esc-quote:param": ("v.md", _param(r'{"tag": "A\", \"mode\": \"dry-run"}')),
    "val-ent-quote:param": ("v.md", _param('{"tag": "A&quot;, &quot;mode&quot;: &quot;dry-run"}')),
    "val-link-title:param": ("v.md", _param('{"tag": "A", "cmd": "[ls](u \'; rm -rf ~\')"}')),
    "val-link-dest:param": (
        "v.md",
        _param('{"tag": "A", "to": "[ok@example.com](mailto:evil@example.net)"}'),
    ),
    "val-emph:param": ("v.md", _param('{"tag": "A", "glob": "*.log", "x": "a*"}')),
    "val-esc-quote:input": ("v.md", _in(r'{"to": "ok@example.com\", \"cc\": \"evil@example.net"}')),
    "val-ent:input": ("v.md", _in("- to: ok@example.com&#44; evil@example.net")),
    "val-link:input": ("v.md", _in("- to: [ok@example.com](mailto:evil@example.net)")),
    # md-emphasis-id (breaks)
    "twin-em:needs": ("t.md", twin("*step_1*")),
    "twin-under:needs": ("t.md", twin("_step_1_")),
    "twin-strong:needs": ("t.md", twin("**step_1**")),
    "twin-strike:needs": ("t.md", twin("~~step_1~~")),
    # md-fence-unclosed-in-commonmark (breaks)
    "fence-info-close:structure": ("f.md", _notes("```\nx\n``` y\n")),
    "fence-short-close:structure": ("f.md", _notes("````\nx\n```\n")),
    "fence-indent4-close:structure": ("f.md", _notes("```\nx\n    ```\n")),
    # hidden-char-in-param-key (breaks)
    "hidden-zw:md": ("h.md", _param('{"tag": "A", "dry_run\u200b": true}')),
    "hidden-bidi:md": ("h.md", _param('{"tag": "A", "dry\u202e_run": true}')),
    "hidden-zw:json": ("h.json", ap({"tag": "A", "dry_run\u200b": True})),
    "hidden-zw:toon": ("h.toon", TOON.replace("X", "dry_run\u200b: true")),
    # held: markdown structure
    "lrd-hide:structure": (
        "s.md",
        _two(
            "- **Dependencies**: []\n\n### Step 2",
            '- **Dependencies**: []\n\n[x]: /u \'\n    - **Parameters**: {"tag": "EVIL"}\n\'\n\n### Step 2',
        ),
    ),
    "lrd-line:structure": (
        "s.md",
        _two(
            "- **Dependencies**: []\n\n### Step 2",
            "- **Dependencies**: []\n\n[x]: /u\n\n### Step 2",
        ),
    ),
    "lrd-dep:structure": (
        "s.md",
        twin("step_9").replace("## Shared Inputs", "[step_9]: #step_1\n\n## Shared Inputs"),
    ),
    "head-in-list:structure": ("s.md", _two("\n### Step 2:", "\n- ### Step 2:")),
    "frontmatter:structure": ("s.md", "---\ntitle: x\n---\n" + TWO),
    "pre-block:structure": (
        "s.md",
        _notes("<pre>\n").replace("## Shared Inputs", "</pre>\n\n## Shared Inputs"),
    ),
    "pre-upper:structure": ("s.md", _notes("<PRE>\n")),
    "fence-open:structure": ("s.md", _notes("```\n")),
    "fence-tab:structure": (
        "s.md",
        _notes("\t```\n").replace("## Shared Inputs", "\t```\n\n## Shared Inputs"),
    ),
    "fence-tab-steps:structure": (
        "s.md",
        _two("\n### Step 2:", "\n\t```\n### Step 2:").replace(
            "- **Dependencies**: []\n\n## Shared", "- **Dependencies**: []\n\t```\n\n## Shared"
        ),
    ),
    "fence-4sp-steps:structure": (
        "s.md",
        _two("\n### Step 2:", "\n    ```\n### Step 2:").replace(
            "- **Dependencies**: []\n\n## Shared", "- **Dependencies**: []\n    ```\n\n## Shared"
        ),
    ),
    "lazy-params:structure": ("s.md", _param('{"tag": "A",\n"mode": "x"}')),
    "plus-bullet:structure": ("s.md", _two("- **Action**: rec", "+ **Action**: rec")),
    "table-inputs:structure": ("s.md", _in("| name | value |\n|---|---|\n| to | ok@example.com |")),
    "twin-link:needs": ("s.md", twin("[step_1](x)")),
    "nested-4sp-twice:structure": (
        "s.md",
        _two(
            "- **Dependencies**: []\n\n## Shared",
            "- **Dependencies**: []\n\n    - **Timeout**: 5s\n\n## Shared",
        ),
    ),
    # held: model replies
    "reply-info-close:reply": ("r.md", REPLY.replace("\n```\n", "\n``` x\n")),
    "reply-two-fences:reply": ("r.md", REPLY + "\n~~~json\n{}\n~~~\n"),
    "reply-lrd:reply": ("r.md", REPLY + "\n[x]: /u\n"),
    # held: strict YAML / JSON / TOON readers
    "pte-date:yaml": ("p.yml", PTE.replace("X", "d: 2024-01-01")),
    "pte-dupkey:yaml": ("p.yml", PTE.replace("X", 'tag: "B"')),
    "pte-merge:yaml": ("p.yml", PTE.replace("X", '<<: {tag: "B"}')),
    "json-midbom:json": ("p.json", ap({"tag": "A"}).replace('"tag"', '\ufeff"tag"')),
    "json-lone-sur:json": ("p.json", ap({"tag": "A"}).replace('"A"', '"\\ud800"')),
    "json-trailing:json": ("p.json", ap({"tag": "A"}) + "\n{}"),
    "json-comment:json": ("p.json", ap({"tag": "A"}).replace('{"tag"', '{/* x */"tag"')),
    "json-dup-esc:json": (
        "p.json",
        ap({"tag": "A"}).replace('{"tag": "A"}', '{"tag": "A", "t\\u0061g": "B"}'),
    ),
    "toon-dup:toon": ("p.toon", TOON.replace("X", "tag: B")),
    "toon-dup-quoted:toon": ("p.toon", TOON.replace("X", '"tag": B')),
    "toon-dup-esc:toon": ("p.toon", TOON.replace("X", '"t\\u0061g": B')),
}


def _params(plan: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return dict(plan["actions"][i].get("params") or {})


#: id -> (file name, source, check of the converted plan): converts, as read
CONVERTS: dict[str, tuple[str, str, Any]] = {
    "code-span-param:param": (
        "c.md",
        _param(r'`{"tag": "A\", \"mode\": \"x"}`'),
        lambda p: _params(p) == {"tag": 'A", "mode": "x'},
    ),
    "fenced-input:input": (
        "c.md",
        _in('```json\n{"to": "ok@example.com\\", \\"cc\\": \\"x"}\n```'),
        lambda p: p["inputs"] == {"to": 'ok@example.com", "cc": "x'},
    ),
    "reply-tilde:reply": (
        "c.md",
        REPLY.replace("```", "~~~"),
        lambda p: _params(p) == {"tag": "A"},
    ),
    "angle-id:needs": (
        "c.md",
        twin("<step_1>"),
        lambda p: [a.get("needs") for a in p["actions"]] == [[], [], [2]],
    ),
    "nested-2sp:timeout": (
        "c.md",
        _two(
            "- **Timeout**: 30s\n- **Dependencies**: []\n\n## Shared",
            "- **Dependencies**: []\n  - **Timeout**: 5s\n\n## Shared",
        ),
        lambda p: p["actions"][1]["timeout"] == 5,
    ),
    "star-bullet:structure": (
        "c.md",
        _two("- **Action**: rec", "* **Action**: rec"),
        lambda p: p["actions"][0]["tool"] == "rec",
    ),
    "pte-no:yaml": (
        "c.yml",
        PTE.replace("X", "country: NO"),
        lambda p: _params(p)["country"] == "NO",
    ),
    "pte-sexa:yaml": (
        "c.yml",
        PTE.replace("X", "at: 12:30"),
        lambda p: _params(p)["at"] == "12:30",
    ),
    "json-bom:json": ("c.json", "\ufeff" + ap({"tag": "A"}), lambda p: _params(p) == {"tag": "A"}),
    "toon-crlf:toon": (
        "c.toon",
        TOON.replace("X", "x: 1").replace("\n", "\r\n"),
        lambda p: _params(p) == {"tag": "A", "x": 1},
    ),
    "toon-dotted:toon": (
        "c.toon",
        TOON.replace("X", "a.b: 1"),
        lambda p: _params(p) == {"tag": "A", "a.b": 1},
    ),
}

LINK = '{"tag": "lA", "cmd": "[ls](u \'; rm -rf ~\')"}'
DAEMON = {
    "d-link": _param(LINK).replace('"tag": "B"', '"tag": "lB"'),
    "d-ok": _param('{"tag": "oA"}').replace('"tag": "B"', '"tag": "oB"'),
}


def _convert(lab: Lab, folder: Path, name: str, content: str) -> dict[str, Any]:
    path = folder / name
    path.write_bytes(content.encode("utf-8"))
    done = lab.cli("convert", str(path), cwd=folder)
    got: dict[str, Any] = {"rc": done.returncode, "err": done.stderr[-1500:], "plan": None}
    if done.returncode == 0 and done.stdout.strip():
        got["plan"] = load_yaml(done.stdout)
        got["text"] = done.stdout[-1500:]
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = [*REFUSED.items(), *((k, (v[0], v[1])) for k, v in CONVERTS.items())]

    def one(i: int) -> None:
        vid, (name, content) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = _convert(lab, folder, name, content)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 4)) as pool:
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
    got["stdin"] = {t: [json.loads(c["stdin"]) for c in lab.calls(t)] for t in ("lA", "oA", "oB")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r110-sources-atk110h", _build)


#: Fixed the same day (fix110s): the four classes (20 ids) of the docstring.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """The source reads two ways (raw and rendered, or to two readers): refused with a code."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got.get('text')}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_read(lab: Lab, vid: str) -> None:
    """Written so raw and rendered agree, the source converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert CONVERTS[vid][2](got["plan"]), got["text"]


@pytest.mark.parametrize("vid", cases(["d-link:runs"], ["d-link:runs"], BROKEN))
def test_daemon_hidden_link_text(lab: Lab, vid: str) -> None:
    """The tool never gets text a forge's rendered view of the PLAN.md hides (a link title)."""
    calls = lab.got["stdin"]["lA"]  # type: ignore[attr-defined]
    assert not any("rm -rf" in str(c) for c in calls), (calls, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-ok:runs"], ["d-ok:runs"], BROKEN))
def test_daemon_control(lab: Lab, vid: str) -> None:
    """Control: Alice's approval runs both steps of the plain source, as written."""
    g = lab.got  # type: ignore[attr-defined]
    assert g["stdin"]["oA"] == [{"tag": "oA"}] and g["stdin"]["oB"] == [{"tag": "oB"}], (
        g["stdin"],
        g["rows2"],
    )
