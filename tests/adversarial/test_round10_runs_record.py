# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 10, what is recorded: tool output meets the controller's record and checks.

- ``dup-keys``: a tool prints JSON with duplicate names (``{"ok": false, "v": "safe", "v":
  "evil", "ok": true}``; I-JSON forbids them). The defence asserted: what the next action
  received is exactly what the committed log records as captured, and the verify verdict
  matches the recorded parse (held: last name wins everywhere, the raw stdout is kept too).
- ``md-error``: a failing tool's stderr reaches the ``**Error:**`` line of the committed
  EXECUTION_LOG.md. That line escapes HTML (``&lt;``) and table pipes (``\\|``), but not
  markdown: a tool's ``[link](http://evil)``, ``![img](http://evil/pixel.png)`` (loaded by
  whoever views the log) and ``**Status:** ✅ succeeded`` render as the controller's own text
  (docs/formats.md promises for ``show --format markdown`` that author text "cannot add
  columns, headings, HTML or links"). Defence asserted: the stderr's link and image markup
  do not reach the log as live markdown (escaped, or inside a code span).
- ``md-output``: the same text as a captured output value: held (a code span with a longer
  fence).
- ``flow-lattice``: 60 ``output_trust: inherit`` actions, each reading the two before it (a
  lattice with ~10^12 paths from the untrusted source to a sensitive param): ``validate``
  answers with E_UNGUARDED_FLOW (held: linear). No timing assert: a walk of the paths one by
  one never ends, so an answer at all (within the 30 s the lab waits) shows the bound.
- ``nest-ambiguous``: ``plans/amb`` holds PLAN.yml (``amb-good``) and PLAN.yaml
  (``amb-evil``). As a plan, ``status`` says "E_PLAN_AMBIGUOUS: the folder holds both
  PLAN.yml and PLAN.yaml; neither is read or run until one is deleted" (docs: "a reviewer
  could read one while the other ran"). But a parent pinning ``plans/amb`` with PLAN.yml's
  hash validates, is approved and runs ``amb-good``: the nested reader takes PLAN.yml from
  the ambiguous folder, and a reviewer browsing ``plans/amb/`` may read PLAN.yaml. (A pin
  of PLAN.yaml's hash is refused E_PLAN_HASH_MISMATCH.) Defence asserted: the parent is
  refused with E_PLAN_AMBIGUOUS and nothing from ``plans/amb`` runs. **Broke.**
- ``nest-symlink``: ``plans/lnk/PLAN.yml`` is a committed symlink to another draft plan's
  file (a top-level symlinked PLAN.yml is E_UNSAFE_PATH, never read); a parent pins
  ``plans/lnk`` with the target's hash and is approved. Held: the parent is ``invalid``
  (E_SCHEMA_INVALID "is a symlink; plangate never follows one"), nothing of ``lnk-good`` runs.
- ``nest-big``: the pinned nested plan is 1.2 MB (a big unhashed ``metadata`` block; as a
  plan of its own it is over ``limits.max_plan_bytes`` and never parsed). Defence asserted:
  the parent is refused (E_PLAN_TOO_LARGE), ``big-good`` never runs.
- ``nest-bidi``: the pinned nested folder's name holds U+202E (a plan folder so named is
  E_UNSAFE_PATH, never read or run). Defence asserted: the parent is refused, nothing runs.
- ``nest-cycle``: A pins B, B pins A (bogus hashes), and a plan pinning itself: held, the
  pin's hash is checked before the walk goes deeper (E_SCHEMA_INVALID, no hang: a walk that
  followed the cycle would never answer, and ``validate`` answers, exit 1, naming the pin).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, Lab, plan_text

TOOL = r"""import json, sys
sys.stdin.read()
mode = sys.argv[1]
if mode == "dup":
    print('{"ok": false, "v": "safe", "v": "evil", "ok": true}')
elif mode == "fail":
    sys.stderr.write("boom **Status:** ✅ succeeded [link](http://evil.example/x) ![img](http://evil.example/pixel.png)\n")
    sys.exit(1)
else:
    print(json.dumps({"v": "x`` `[link](http://evil.example/x) ![img](http://evil.example/pixel.png)"}))
"""


def _text_hash(path: Path) -> str:
    """The hash ``plangate hash`` prints for a plan file, from its text."""
    from controller.plan.plans import parse_text

    return str(parse_text(path.read_text(encoding="utf-8"), Path("PLAN.yml")).hash)


def _plans(lab: Lab) -> None:
    lab.write(
        "dup-keys",
        """\
plan:
  name: "dup-keys"
  task: "duplicate names in a tool's JSON"
  status: pending_approval
available_tools: [{name: out}, {name: rec}]
actions:
  - {id: 1, tool: out, why: "source", params: {mode: dup}, outputs: [{name: v, path: "$.json.v"}], verify: {expect: {path: "$.json.ok", equals: true}}}
  - {id: 2, tool: rec, why: "use it", params: {tag: "dup-keys", got: "$<actions[1].outputs.v>"}}
""",
    )
    lab.write(
        "md",
        """\
plan:
  name: "md"
  task: "markdown in tool output and stderr"
  status: pending_approval
available_tools: [{name: out}, {name: rec}]
actions:
  - {id: 1, tool: out, why: "source", params: {mode: ok}, outputs: [{name: v, path: "$.json.v"}]}
  - {id: 2, tool: out, why: "fails", params: {mode: fail}, on_failure: skip}
  - {id: 3, tool: rec, why: "after", params: {tag: "md"}}
""",
    )
    acts = '  - {id: 1, tool: rec, why: "src", params: {tag: "lat"}, outputs: [{name: o, path: "$.json.echo.tag"}]}\n'
    for i in range(2, 61):
        p = {"tag": "lat", "a": f"$<actions[{i - 1}].outputs.o>"}
        if i > 2:
            p["b"] = f"$<actions[{i - 2}].outputs.o>"
        acts += f'  - {{id: {i}, tool: inh, why: "w{i}", params: {json.dumps(p)}, outputs: [{{name: o, path: "$.json.echo.a"}}]}}\n'
    acts += '  - {id: 61, tool: sink, why: "sink", params: {tag: "lat", to: "$<actions[60].outputs.o>"}}\n'
    zero = "sha256:" + "0" * 64
    lab.write("amb", plan_text("amb-good", status="draft"))
    lab.write("lnk-target", plan_text("lnk-good", status="draft"))
    (lab.repo / "plans/lnk").mkdir()
    (lab.repo / "plans/lnk/PLAN.yml").symlink_to("../lnk-target/PLAN.yml")
    lnk = lab.cli("hash", str(lab.repo / "plans/lnk-target/PLAN.yml")).stdout.split()[-1]
    lab.write("big-small", plan_text("big-good", status="draft"))
    big = lab.cli("hash", str(lab.repo / "plans/big-small/PLAN.yml")).stdout.split()[-1]
    lab.write(
        "big-small",
        plan_text("big-good", status="draft") + 'metadata:\n  pad: "' + "x" * 1_200_000 + '"\n',
    )
    (lab.repo / "plans/big-small").rename(lab.repo / "plans/big")
    lab.write("bidi\u202etxt", plan_text("bidi-good", status="draft"))
    # its hash from its text: the CLI refuses a folder held for its name (round 75)
    bidi = _text_hash(lab.repo / "plans/bidi\u202etxt/PLAN.yml")
    good = lab.cli("hash", str(lab.repo / "plans/amb/PLAN.yml")).stdout.split()[-1]
    for slug, target, pin in (
        ("cyc-a", "cyc-b", zero),
        ("cyc-b", "cyc-a", zero),
        ("self", "self", zero),
        ("amb-parent", "amb", good),
        ("lnk-parent", "lnk", lnk),
        ("big-parent", "big", big),
        ("bidi-parent", "bidi\u202etxt", bidi),
    ):
        lab.write(
            slug,
            f'plan:\n  name: "{slug}"\n  task: "t"\n  status: pending_approval\navailable_tools: [{{name: rec}}]\nactions:\n  - {{id: 1, why: "nest", plan: {{path: "plans/{target}", hash: "{pin}"}}}}\n',
        )
    lab.write("amb", plan_text("amb-evil", status="draft"), filename="PLAN.yaml")
    lab.write(
        "lattice",
        'plan:\n  name: "lattice"\n  task: "flow lattice"\n  status: pending_approval\navailable_tools: [{name: rec}, {name: inh}, {name: sink}]\nactions:\n'
        + acts,
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("r10-record")
    lab = Lab(root)
    (root / "out.py").write_text(TOOL)
    out = json.dumps([sys.executable, str(root / "out.py"), "{mode}"])
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.write_config(
        tools=f"out: {{kind: exec, argv: {out}}}\n"
        f"inh: {{kind: exec, output_trust: inherit, argv: {rec}, {env}}}\n"
        f"sink: {{kind: exec, sensitive: [to], argv: {rec}, {env}}}\n"
    )
    _plans(lab)
    lab.commit("plans", AGENT)
    lab.run()
    lab.approve("dup-keys")
    lab.approve("md")
    lab.approve("amb-parent")
    lab.approve("lnk-parent")
    lab.approve("big-parent")
    lab.approve("bidi-parent")
    lab.run()
    result = lab.cli(
        "validate",
        str(lab.repo / "plans/lattice/PLAN.yml"),
        "--config",
        str(lab.config),
        timeout=30,
    )
    lab.lattice = (result.returncode, result.stdout + result.stderr)  # type: ignore[attr-defined]
    lab.nested = {}  # type: ignore[attr-defined]
    for slug in ("cyc-a", "self"):
        result = lab.cli(
            "validate",
            str(lab.repo / f"plans/{slug}/PLAN.yml"),
            "--config",
            str(lab.config),
            timeout=30,
        )
        lab.nested[slug] = (result.returncode, result.stdout + result.stderr)  # type: ignore[attr-defined]
    return lab


def _log(lab: Lab, slug: str) -> str:
    return lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md")


def test_dup_keys_what_ran_is_what_is_recorded(lab: Lab) -> None:
    """Held in round 10 (the last value was handed on and recorded alike); since round 13 a
    tool's JSON naming a member twice is refused outright (I-JSON): nothing is handed on."""
    assert lab.calls("dup-keys") == []
    log = _log(lab, "dup-keys")
    assert "E_TOOL_OUTPUT_INVALID" in log and "twice" in log, log[-1500:]


def test_md_error_line_keeps_tool_markup_inert(lab: Lab) -> None:
    log = _log(lab, "md")
    line = next(x for x in log.splitlines() if x.startswith("**Error:**") and "boom" in x)
    from markdown_it import MarkdownIt  # a real CommonMark renderer: what a viewer shows

    html = MarkdownIt("commonmark").render(line)
    assert "<a " not in html and "<img" not in html, html
    assert html.count("<strong>") == 1, html  # the log's own "Error:", not the tool's "Status:"
    assert "[link](http://evil.example/x)" in html, html  # shown as the text it is


def test_md_output_value_stays_in_a_code_span(lab: Lab) -> None:
    log = _log(lab, "md")
    line = next(x for x in log.splitlines() if x.startswith("- `v`:"))
    assert line.startswith("- `v`: ```") and line.endswith("```"), line
    assert len(lab.calls("md")) == 1  # the skip let action 3 run once


def test_flow_lattice_validates_quickly(lab: Lab) -> None:
    # the validate call answered (within the lab's 30 s wait); no timing assert
    rc, text = lab.lattice  # type: ignore[attr-defined]
    assert rc == 1 and "E_UNGUARDED_FLOW" in text and "Traceback" not in text, (rc, text[-500:])


@pytest.mark.parametrize(
    ("slug", "code"), [("cyc-a", "but sha256:0000"), ("self", "cannot nest itself")]
)
def test_nested_cycles_are_refused_fast(lab: Lab, slug: str, code: str) -> None:
    rc, text = lab.nested[slug]  # type: ignore[attr-defined]
    assert rc == 1 and code in text and "Traceback" not in text, (rc, text[-600:])
    for s in ("cyc-a", "cyc-b", "self"):
        assert lab.status()[f"plans/{s}"]["status"] == "invalid"


def test_an_ambiguous_folder_is_named_in_status(lab: Lab) -> None:
    assert "E_PLAN_AMBIGUOUS" in json.dumps(lab.status()["plans/amb"])


def test_a_pin_into_an_ambiguous_folder_runs_nothing(lab: Lab) -> None:
    assert lab.calls("amb-evil") == []
    assert lab.calls("amb-good") == [], "the parent ran PLAN.yml of the ambiguous folder"
    assert "E_PLAN_AMBIGUOUS" in lab.codes("amb-parent")


def test_a_pin_through_a_symlinked_plan_file_runs_nothing(lab: Lab) -> None:
    assert lab.calls("lnk-good") == []
    codes = lab.codes("lnk-parent")
    assert lab.status()["plans/lnk-parent"]["status"] == "invalid" and "never follows" in codes, (
        codes[-800:]
    )


@pytest.mark.parametrize(
    ("slug", "tag"), [("big-parent", "big-good"), ("bidi-parent", "bidi-good")]
)
def test_a_pin_into_a_folder_no_plan_may_live_in_runs_nothing(
    lab: Lab, slug: str, tag: str
) -> None:
    assert lab.calls(tag) == [], f"{slug} ran the pinned plan"
    assert lab.status()[f"plans/{slug}"]["status"] == "invalid", lab.codes(slug)[-800:]
