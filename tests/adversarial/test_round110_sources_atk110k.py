# ruff: noqa: E501
"""Round 110, sources (atk110k): what a reviewer reads in a plan SOURCE (markdown ``PLAN.md``
raw and as a forge renders it, a model's reply in a ``PLAN.md``, Plan Contract, TOON) is
exactly the params that run, or the source is refused with a coded error
(docs/formats.md, "A source is read as git shows it").

Lab (one, module scope; the bench's config, the recorder ``rec``). Part 1, ``plangate convert
SRC`` (no config: the converter alone) of sources the test writes. Part 2, the daemon: the
agent commits ``plans/d-link/PLAN.md`` (a markdown plan whose ``Parameters`` hold an inline
link ``[ls](x '; rm -rf ~')``), ``plans/d-fence/PLAN.md`` (a model's reply: one Plan Contract
in a fence opened by a TAB then ```` ```json ````, its args holding ``<!-- ; rm -rf ~ -->``)
and ``plans/d-ok/PLAN.md`` (control); one pass; Alice approves the three; two passes.

Variants (``<variant>:<what>``):

- ``mdv-*``: markdown inline constructs in a ``Parameters`` value or a shared input that a
  forge renders as other text than the tool gets: an inline link (its destination and title
  hidden), an image, a reference link whose definition sits in ``## Objective`` or
  ``## Notes`` (the definition line hidden), a character reference (``&#x3B;`` shown ``;``,
  ``&shy;`` shown as nothing), emphasis (``ls *.txt *.log`` shown ``ls .txt .log``); must be
  refused as raw HTML is (round 109), or converted to the text the rendered view shows;
- ``fence-*``: a model's reply ``PLAN.md`` whose fence no CommonMark reader takes for one
  (opened after a TAB or four spaces: an indented code block holding only the opener line,
  the JSON below it a paragraph, where ``<!-- -->`` is hidden): must be refused; controls
  (three spaces, a ``~~~`` fence with a backtick in its info string) convert;
- ``dup-*``: a JSON member said twice under two spellings a JSON reader decodes as one
  (``"t\\u0061g"`` beside ``"tag"``, ``"requires_appr\\u006fval"``), TOON ``tag`` beside
  ``"tag"``: must be refused (docs: every field said once);
- held controls: lazy continuation of a ``Parameters`` bullet, YAML front matter, a fenced
  shared-inputs block opened by a TAB, four spaces, a backtick info string or left unclosed,
  a step heading indented four spaces, a link reference definition or footnote among
  bullets, an autolink (converts as written), a link as ``Action`` (renamed ``_rec__x_``
  with its note), a lone CR as JSON white space.

Seen (round 110, 49 ids, ~6 s wall): 2 classes broke (16 ids), 33 held.

1. **Markdown inline constructs in values** (``md-rendered-value``): ``mdv-link-title:param``,
   ``mdv-link-dest:param``, ``mdv-link-url:param``, ``mdv-image:param``, ``mdv-link:input``,
   ``mdv-image:input``, ``mdv-reflink-notes:param``, ``mdv-reflink-objective:param``,
   ``mdv-entity:param``, ``mdv-entity-shy:param``, ``mdv-emph:param``, ``mdv-strong:param``,
   ``d-link:runs``. ``plangate convert x.md`` of the template with
   ``- **Parameters**: {"tag": "A-ok", "cmd": "[ls](x '; rm -rf ~')"}`` converts with the
   cmd as written and no note; a forge renders the value as the link text ``ls`` (the title
   is a tooltip). The daemon froze it and Alice's approval ran ``rec`` with the hidden text.
   ``- to: [ok@example.com](mailto:evil@example.net)`` converts to that input (rendered:
   ``ok@example.com``); ``[ls][r]`` with ``[r]: http://x '; rm -rf ~'`` in ``## Notes`` or
   ``## Objective`` the same (the definition is not rendered at all). Entities and emphasis
   change the text shown (``&#x3B;`` -> ``;``, ``*.txt *.log`` -> ``.txt .log``; fix110s:
   not so, CommonMark renders ``ls *.txt *.log`` as written, ``mdv-emph:param`` is now a
   control; ``/srv/__init__/x`` does render as strong ``init``). Should:
   refuse a link, image, reference, character reference and emphasis delimiter outside a
   code span in a markdown value, as round 109 refuses raw HTML (a value that needs the
   text goes in a code span or a JSON escape).
2. **A model's reply whose fence is no fence** (``reply-fence-indent``): ``fence-tab:hidden``,
   ``fence-sp4:hidden``, ``d-fence:runs``. A ``PLAN.md`` holding ``\\t```json``, a Plan
   Contract whose args hold ``"cmd": "ls <!-- ; rm -rf ~ -->"``, and ``\\t```: converts with the
   comment in the cmd. CommonMark reads a TAB or four spaces before ```` ``` ```` as an
   indented code block (the opener line alone: an indented code block cannot interrupt a
   paragraph), the JSON as a paragraph, and the forge hides the comment: it shows
   ``"cmd": "ls "``. The daemon froze it and ran it on Alice's approval. Should: read a
   fence only where CommonMark opens one (at most three spaces, no TAB before it), or refuse
   the reply ``E_PARSE_NONJSON``.

Held: every other id.

Suspected, not asserted: a step heading's title holding a link (``### Step 1: [Record](x
'; delete all')``) converts into ``why`` with the link text alone shown; a BOM before a
``PLAN.md`` converts (the forge strips it too).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases
from sourcekit import approve_file, convert_source, md
from test_round2_execution_kit import shared

BASE = md("A")


def _param(extra: str, base: str = BASE) -> str:
    found = re.search(r'\{"tag": "([^"]+)"\}', base)
    assert found, base
    return base.replace(found.group(0), '{"tag": "' + found.group(1) + '", ' + extra + "}")


def _input(new: str) -> str:
    assert "- to: ok@example.com" in BASE
    return BASE.replace("- to: ok@example.com", new)


def _before(marker: str, text: str, base: str) -> str:
    assert marker in base, marker
    return base.replace(marker, text + marker, 1)


def _pc(args: dict[str, Any], extra: str = "") -> str:
    body = json.dumps(
        {
            "plan_version": 1,
            "skill_id": "s",
            "goal": "g",
            "steps": [{"step_id": "1", "tool": "rec", "args": args}],
        },
        indent=1,
    )
    return body if not extra else body.replace('"tool": "rec",', '"tool": "rec", ' + extra)


HIDDEN = {"tag": "A", "cmd": "ls <!-- ; rm -rf ~ -->"}


def _reply(opener: str, closer: str, args: dict[str, Any] = HIDDEN) -> str:
    return opener + "\n" + _pc(args) + "\n" + closer + "\n"


REF = '"cmd": "[ls][r]"'
TOON_DUP = (
    "metadata:\n  title: T\n  objective: O\ntasks[1]{id,name}:\n  task_1,N\nsteps[1]:\n"
    '  - id: s1\n    task_id: task_1\n    action: rec\n    parameters:\n      tag: A\n      "tag": B\n'
    "shared_inputs: {}\nworkflow_config:\n  parallel_execution: false\n  error_recovery: false\n"
)

#: id -> (file name, source, --from): each must be refused with an E_ code
REFUSED: dict[str, tuple[str, str, str]] = {
    # md-rendered-value (break)
    "mdv-link-title:param": ("v.md", _param('"cmd": "[ls](x \'; rm -rf ~\')"'), ""),
    "mdv-link-dest:param": ("v.md", _param('"cmd": "ls [.](;rm${IFS}-rf${IFS}~)"'), ""),
    "mdv-link-url:param": (
        "v.md",
        _param('"url": "[https://ok.example/](https://evil.example/)"'),
        "",
    ),
    "mdv-image:param": ("v.md", _param('"cmd": "ls ![](;rm${IFS}-rf${IFS}~)"'), ""),
    "mdv-link:input": ("v.md", _input("- to: [ok@example.com](mailto:evil@example.net)"), ""),
    "mdv-image:input": ("v.md", _input("- to: ok@example.com![](evil@example.net)"), ""),
    "mdv-reflink-notes:param": (
        "v.md",
        _before("## Shared Inputs", "## Notes\n[r]: http://x '; rm -rf ~'\n\n", _param(REF)),
        "",
    ),
    "mdv-reflink-objective:param": (
        "v.md",
        _before("\n## Tasks", "\n[r]: http://x '; rm -rf ~'\n", _param(REF)),
        "",
    ),
    "mdv-entity:param": ("v.md", _param('"cmd": "ls &#x3B; rm"'), ""),
    "mdv-entity-shy:param": ("v.md", _param('"path": "/srv/app&shy;/data"'), ""),
    "mdv-strong:param": ("v.md", _param('"path": "/srv/__init__/x"'), ""),
    # reply-fence-indent (break)
    "fence-tab:hidden": ("r.md", _reply("\t```json", "\t```"), ""),
    "fence-sp4:hidden": ("r.md", _reply("    ```json", "    ```"), ""),
    # dup: one member under two spellings
    "dup-esc-arg:param": (
        "d.json",
        _pc({"tag": "A"}).replace('"tag": "A"', '"tag": "A", "t\\u0061g": "B"'),
        "",
    ),
    "dup-esc-gate:gate": (
        "d.json",
        _pc({"tag": "A"}, '"requires_approval": true, "requires_appr\\u006fval": false,'),
        "",
    ),
    "dup-toon-quoted:param": ("d.toon", TOON_DUP, ""),
    # held: markdown block structure
    "md-lazy:param": ("m.md", _param('"x": 1,\n"cmd": "rm -rf ~"'), ""),
    "md-frontmatter:structure": ("m.md", "---\nsteps: []\n---\n" + BASE, ""),
    "md-si-tab:fence": (
        "m.md",
        _input('\t```json\n{"to": "ok@example.com<!-- , evil@example.net -->"}\n\t```'),
        "",
    ),
    "md-si-sp4:fence": (
        "m.md",
        _input('    ```json\n{"to": "ok@example.com<!-- , evil@example.net -->"}\n    ```'),
        "",
    ),
    "md-si-infotick:fence": (
        "m.md",
        _input('```json`x\n{"to": "ok@example.com<!-- , evil@example.net -->"}\n```'),
        "",
    ),
    "md-si-unclosed:fence": (
        "m.md",
        _input('```json\n{"to": "ok@example.com<!-- , evil@example.net -->"}'),
        "",
    ),
    "md-step-indent4:structure": (
        "m.md",
        BASE.replace("### Step 1: Record ok", "\n    ### Step 1: Record ok"),
        "",
    ),
    "md-refdef-bullets:structure": (
        "m.md",
        BASE.replace("- **Timeout**: 30s", "[t]: http://x '; rm -rf ~'\n- **Timeout**: 30s"),
        "",
    ),
    "md-footnote:structure": ("m.md", BASE + "\n[^1]: ; rm -rf ~\n", ""),
    "md-link-dep:needs": (
        "m.md",
        BASE.replace("- **Dependencies**: []", "- **Dependencies**: [[step_1](x)]"),
        "",
    ),
    "md-html-block:structure": ("m.md", _before("## Shared Inputs", "<details>\n\n", BASE), ""),
    "md-hidden-bidi-id:id": (
        "m.md",
        BASE.replace("- **ID**: step_1", "- **ID**: step\u202e_1"),
        "",
    ),
    "pc-dup-plain:param": (
        "d.json",
        _pc({"tag": "A"}).replace('"tag": "A"', '"tag": "A", "tag": "B"'),
        "",
    ),
    "pc-nul:param": ("d.json", _pc({"tag": "A\x00B"}).replace("\\u0000", "\x00"), ""),
    "pc-u2028:param": ("d.json", _pc({"tag": "A"}).replace('"tag": "A"', '"tag":\u2028"A"'), ""),
    "reply-two:fence": ("r.md", _reply("```json", "```") + "\n" + _reply("```json", "```"), ""),
    "reply-prose:fence": ("r.md", "Here is the plan:\n" + _reply("```json", "```"), ""),
}

#: id -> (file name, source, check of the converted plan): converts, as read and as rendered
CONVERTS: dict[str, tuple[str, str, Any]] = {
    "fence-sp3:control": (
        "c.md",
        _reply("   ```json", "   ```"),
        lambda p: p["actions"][0]["params"] == HIDDEN,
    ),
    "fence-tilde-tick:control": (
        "c.md",
        _reply("~~~json`", "~~~"),
        lambda p: p["actions"][0]["params"] == HIDDEN,
    ),
    "fence-plain:control": (
        "c.md",
        _reply("```json", "```"),
        lambda p: p["actions"][0]["params"] == HIDDEN,
    ),
    "md-autolink:input": (
        "c.md",
        _input("- to: <ok@example.com>"),
        lambda p: p["inputs"]["to"] in ("<ok@example.com>", "ok@example.com"),
    ),
    "md-plain:control": (
        "c.md",
        _param('"cmd": "ls -l"'),
        lambda p: p["actions"][0]["params"] == {"tag": "A-ok", "cmd": "ls -l"},
    ),
    "md-bom:control": (
        "c.md",
        "\ufeff" + BASE,
        lambda p: p["actions"][0]["params"] == {"tag": "A-ok"},
    ),
    "pc-bom:control": (
        "c.json",
        "\ufeff" + _pc({"tag": "A"}),
        lambda p: p["actions"][0]["params"] == {"tag": "A"},
    ),
    "pc-crlf:control": (
        "c.json",
        _pc({"tag": "A"}).replace("\n", "\r\n"),
        lambda p: p["actions"][0]["params"] == {"tag": "A"},
    ),
    "md-crlf:control": (
        "c.md",
        BASE.replace("\n", "\r\n"),
        lambda p: p["actions"][0]["params"] == {"tag": "A-ok"},
    ),
    "md-link-action:tool": (
        "c.md",
        BASE.replace("- **Action**: rec", "- **Action**: [rec](x)"),
        lambda p: (
            p["actions"][0]["tool"] == "_rec__x_"
            and "[rec](x)" in str(p["metadata"]["converted_from"]["notes"])
        ),
    ),
    "pc-lonecr:control": (
        "c.json",
        _pc({"tag": "A"}).replace('"tag": "A"', '"tag":\r"A"'),
        lambda p: p["actions"][0]["params"] == {"tag": "A"},
    ),
    # fix110s: no emphasis here (each `*` follows a space: none can close), so CommonMark and
    # GFM render the value as written; it converts as written
    "mdv-emph:param": (
        "c.md",
        _param('"cmd": "ls *.txt *.log"'),
        lambda p: p["actions"][0]["params"] == {"tag": "A-ok", "cmd": "ls *.txt *.log"},
    ),
    "md-star-bullet:control": (
        "c.md",
        BASE.replace("- **Parameters**", "* **Parameters**"),
        lambda p: p["actions"][0]["params"] == {"tag": "A-ok"},
    ),
}

DAEMON = {
    "d-link": _param('"cmd": "[ls](x \'; rm -rf ~\')"', md("lk")),
    "d-fence": _reply("\t```json", "\t```", {"tag": "fn", "cmd": "ls <!-- ; rm -rf ~ -->"}),
    "d-ok": _param('"cmd": "ls -l"', md("okk")),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    jobs = [*REFUSED.items(), *((k, (v[0], v[1], "")) for k, v in CONVERTS.items())]

    def one(i: int) -> None:
        vid, (name, content, fmt) = jobs[i]
        folder = root / "src" / f"v{i}"
        folder.mkdir(parents=True)
        got[vid] = convert_source(lab, folder, name, content, fmt)

    with ThreadPoolExecutor(max_workers=6) as pool:
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
    got["stdin"] = {
        t: [json.loads(c["stdin"]) for c in lab.calls(t)] for t in ("lk-ok", "fn", "okk-ok")
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r110-sources-atk110k", _build)


#: Fixed the same day (fix110s): the two classes of the docstring (``mdv-emph:param``, which
#: CommonMark renders as written, moved to the controls).
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(REFUSED), list(REFUSED), BROKEN))
def test_source_refused(lab: Lab, vid: str) -> None:
    """The source reads two ways (raw and rendered, or one member twice): refused with a code."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["rc"] != 0 and got["plan"] is None, f"converted: {got['plan']}"
    assert re.search(r"\bE_[A-Z_]+\b", got["err"]), got["err"]


@pytest.mark.parametrize("vid", cases(list(CONVERTS), list(CONVERTS), BROKEN))
def test_source_converts_as_read(lab: Lab, vid: str) -> None:
    """Written as a reader and a forge both read it, the source converts to exactly that."""
    got = lab.got[vid]  # type: ignore[attr-defined]
    assert got["plan"] is not None, got["err"]
    assert CONVERTS[vid][2](got["plan"]), got["plan"]


@pytest.mark.parametrize("vid", cases(["d-link:runs"], ["d-link:runs"], BROKEN))
def test_daemon_link_hidden(lab: Lab, vid: str) -> None:
    """The tool never gets the text a forge's rendered link hides."""
    calls = lab.got["stdin"]["lk-ok"]  # type: ignore[attr-defined]
    assert not any("rm -rf" in str(c) for c in calls), (calls, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-fence:runs"], ["d-fence:runs"], BROKEN))
def test_daemon_fence_hidden(lab: Lab, vid: str) -> None:
    """The tool never gets the comment a forge hides in a reply whose fence is no fence."""
    calls = lab.got["stdin"]["fn"]  # type: ignore[attr-defined]
    assert not any("rm -rf" in str(c) for c in calls), (calls, lab.got["rows2"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["d-ok:runs"], ["d-ok:runs"], BROKEN))
def test_daemon_control(lab: Lab, vid: str) -> None:
    """Control: Alice's approval runs the plain plan with its params."""
    calls = lab.got["stdin"]["okk-ok"]  # type: ignore[attr-defined]
    assert calls == [{"tag": "okk-ok", "cmd": "ls -l"}], (calls, lab.got["rows2"])  # type: ignore[attr-defined]
