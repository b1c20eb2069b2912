"""Round 128, the agent's surfaces (atk128b): one plan written in odd bytes and odd YAML,
read by every surface an agent or reviewer asks (``plangate validate --json``, ``hash``,
``show --json``, MCP ``validate``); plan sources in odd encodings through ``convert``,
``hash`` and MCP; hostile MCP arguments; ``hash --config`` of a plan the controller will
never freeze. An outsider's attack: the CLI, git and a raw JSON-RPC MCP session only.

Lab E (local mode, ``agent.identity`` Planner bot; the catalog ``rec`` and ``echo``):

1. ``BASE`` (a one-action ``rec`` plan) written 55 ways outside the repository
   (``loose/<variant>/PLAN.yml``): BOMs (one, two, mid-file), UTF-16/32, Latin-1, CR LF, lone
   CR, NUL raw and escaped, a lone surrogate escape, U+10FFFF, empty, blank, two documents,
   ``...``, ``%YAML 1.1``/``1.2``, ``%TAG``, ``!!binary``/``!!python``/``!!set``/``!!omap`` tags,
   anchors, ``<<`` merge, a duplicate key, a 1.1 MB line, 5,000-deep lists and 3,000-deep maps,
   a 5,000-digit integer, ``.nan``/``.inf``/``1e400``, a date and a timestamp, ``0o17``,
   ``yes``, non-string/null/complex keys, a TAB, an action id ``"1"``/``1.0``/``true``/2**76,
   a number as name, ``Pending_Approval``, U+2028 and NEL.
2. ``validate --json`` of all of them in one call, ``hash`` and ``show --json`` of each; MCP
   ``validate`` of each that is UTF-8 text (one session); ``show --format toon`` and
   ``--format markdown`` of a plan of hostile author text and values.
3. Plan sources (ActionPlan JSON, a Plan Contract, the markdown ``toon-plan``) with a BOM,
   CR LF, UTF-16 and a NUL: ``convert --json``, ``hash``, ``validate --json`` and MCP
   ``validate`` of the same text.
4. One MCP session of hostile arguments: non-string ``plan``/``slug``/``format``/``path``,
   unknown formats, slugs with unicode, capitals, spaces, NUL, ``..``, 300 characters,
   ``pull_request`` as ``1``/``null``/``"true"``, a ``note`` forging trailers or holding a NUL;
   each refused coded with its ``path``, or committed with nothing forged.
5. ``hash --config`` of a PLAN.yml the controller would not freeze (a schema error, a tool
   not in the catalog, a tool not declared) beside the same plan as a ``PLAN.json`` source.

Lab W (eleven small labs, one MCP ``submit`` of ``plans/newp`` each) with the working tree
in an odd state: Alice's staged edit of another plan, a staged note, her untracked file in
the slug's folder, her unstaged edit, a failing ``pre-commit`` hook, her uncommitted (or
staged) draft at the slug, a detached HEAD, a held ``index.lock``, the slug a file, the
slug's folder a symlink. Lab R: four MCP sessions at once, six submits each over three slugs.

Ids (234):

- ``test_enc_validate_refused`` (43), ``test_enc_cli_refused`` (43),
  ``test_enc_mcp_agrees_refused`` (43): each refused variant is ``valid: false`` with coded
  errors (remedy each) in ``validate --json``, ``show --json`` (``ok: false``, code, remedy),
  ``hash`` (``PLAN.yml:N: E_...``, no hash) and MCP ``validate`` (the same codes when MCP
  reads it as PLAN.yml).
- ``test_enc_accepted_agree`` (12), ``test_enc_spelling_is_the_same_plan`` (7),
  ``test_enc_shown_value_is_the_value`` (4): an accepted spelling has one hash in
  ``validate``, ``hash``, ``show --json`` and MCP; BOM, CR LF, ``...``, TAB, ``%YAML 1.2``,
  ``%TAG`` are the base plan; ``show`` gives the value the tool gets.
- ``test_src_surfaces_agree`` (15): a source with a BOM or CR LF is the plain source's plan
  to ``validate``, ``hash``, ``convert`` and MCP; UTF-16 and a NUL are refused coded by each.
- ``test_mcp_hostile_refused`` (35), ``test_mcp_hostile_left_nothing``: coded ``E_...`` with
  the argument named in ``path`` and a remedy; no ref moved, nothing left in the tree.
- ``test_mcp_note_forges_no_trailer`` (5), ``test_mcp_huge_note_bounded``: a note is one
  line of the message (newlines, CR, U+2028 flattened, NUL escaped, bounded), no trailer.
- ``test_hash_config_refuses_unfreezable`` (4): see below.
- ``test_wt_submit_leaves_others_work`` (11): the agent's commit holds only its own
  ``PLAN.yml``; nobody's staged, unstaged or untracked work is swept in, changed or lost; no
  hook runs; a draft at the slug is ``E_USAGE``, detached HEAD and a held lock ``E_GIT`` (the
  lock left), a file or symlink at the slug ``E_UNSAFE_PATH``; refused: nothing moved.
- ``test_race_every_answer_is_its_commit``, ``test_race_history_is_one_line``: 24 racing
  submits, each answer's commit holds exactly its plan, its hash is ``plangate hash`` of
  that blob; one line of history, no commit lost.
- ``test_toon_decodes_to_json`` (7), ``test_markdown_author_text_is_text``: ``toon_format``
  decodes ``show --format toon`` to ``show --json`` exactly (strings reading as numbers,
  booleans, null, ``-``, keys ``a: b``/``a,b``/``[0]``/empty, tabular object arrays); the
  markdown comment escapes author tags, comments, entities, links, pipes and headings.

Seen (round 128: 234 ids, 230 passed, 4 xfailed (strict); about 80 s at -n 2 under load).
2 classes:

- **hash-config-ignores-plan-yml-validity** (3 ids, ``test_hash_config_refuses_unfreezable``
  ``yml-schema``, ``yml-unknown-tool``, ``yml-undeclared-tool``), fails open (an agent or a
  reviewer is handed a hash, exit 0, for a plan the controller will never freeze):
  ``plangate hash --config plangate.yml plans/a`` of a PLAN.yml whose action id is ``"1"``
  (``E_SCHEMA_INVALID``), whose tool is not in the catalog (``E_TOOL_UNKNOWN``) or not in
  ``available_tools`` (``E_TOOL_NOT_DECLARED``) prints ``sha256:...`` and exits 0, while
  ``validate --config`` refuses each, and ``hash --config`` of a ``PLAN.json`` Plan Contract
  calling the unknown tool is refused ``E_TOOL_UNKNOWN`` with no hash (``src-unknown-tool``
  holds). docs/plan-format.md: "With a config ... it reads the file under that config's
  limits ..., as ``validate`` does: a file the controller would not read or freeze gets its
  code, not a hash (round 125)". Expected: the code ``validate`` gives, no hash (as for a
  source). (Without a config ``hash`` hashing the file as written is documented: the pin.)
- **mcp-double-bom-plan-yml-read-as-pte** (1 id, ``test_enc_mcp_agrees_refused[bom2]``),
  fails closed (a misleading answer; what is committed is the converted plan shown):
  PLAN.yml text starting with two U+FEFF sent to MCP ``validate`` is answered ``valid:
  true``, ``format: "pte"`` (comments dropped, ``converted_from: pte``), the base plan's hash;
  the same bytes as a file are ``E_YAML_PARSE`` "did not find expected <document start>" to
  ``validate``, ``hash``, ``show`` (and ``plangate convert`` of that file answers ``pte``,
  valid). docs/agents.md: ``plan`` may be PLAN.yml "sent as is ... unless it holds a block
  only the controller writes ... or a legacy ``${...}`` reference: it is then read as the
  ``pte`` format". Expected: the PLAN.yml reader's ``E_YAML_PARSE`` (format ``plan.yml``),
  as ``validate`` of the file says. Three or more BOMs are ``E_PARSE_NONJSON``.

Held: everything else above.

Seen but not asserted: ``plangate hash``/``validate``/``show`` in text mode list a plan's
problems as ``file:line: CODE at path: message`` with no remedy line (``show --json``,
``validate --json`` and ``convert`` give one; docs/errors.md says the command line prints
``remedy: ...`` after ``plangate: E_...``); MCP ``submit`` during an unresolved merge
(``UU README``) commits the plan on top and leaves the merge in progress; a slug
``plans/x`` is the folder ``plans/plans/x`` and ``con`` is accepted (a name Windows cannot
check out); ``pte`` (forced, or the two-BOM text) turns any ``plan.status`` (``approved``,
``executing``, ``Approved``, ``42``) into ``pending_approval`` with a note, never an error;
``show --format markdown`` leaves ``@user`` and bare ``http://`` text unescaped (a forge
mentions and may autolink them; not checked against a GFM renderer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import advkit
import mcpkit
import pytest
from advkit import Lab, build_all, plan_text

AGENT_CFG = (
    "agent:\n  identity: {name: Planner bot, email: planner@example.com}\n"
    "  branch_prefix: plangate/\n"
)
BASE = plan_text("enc")
DEEP_L = "[" * 5000 + "]" * 5000
DEEP_M = "{a: " * 3000 + "1" + "}" * 3000


def _sub(old: str, new: str) -> bytes:
    assert old in BASE
    if old == VAL:  # the value of the param ``tag`` (not the plan's name)
        old, new = KEY, "tag: " + new
    return BASE.replace(old, new, 1).encode()


VAL = '"enc"'
KEY = 'tag: "enc"'
#: variant -> the file's bytes. Every one is refused by the controller (a coded error).
REFUSED: dict[str, bytes] = {
    "bom2": b"\xef\xbb\xbf\xef\xbb\xbf" + BASE.encode(),
    "utf16": BASE.encode("utf-16"),
    "utf16le": BASE.encode("utf-16-le"),
    "utf32": BASE.encode("utf-32"),
    "latin1": BASE.replace(VAL, '"caf\xe9"').encode("latin-1"),
    "cr": BASE.replace("\n", "\r").encode(),
    "nul-end": BASE.encode() + b"\0",
    "nul-val": _sub(VAL, '"x\0y"'),
    "esc-surrogate": _sub(VAL, '"\\ud800"'),
    "empty": b"",
    "blank": b"   \n\n",
    "two-docs": ("---\n" + BASE + "---\n" + BASE).encode(),
    "tag-binary": _sub(VAL, "!!binary aGVsbG8="),
    "tag-python": _sub(VAL, "!!python/object:os.system x"),
    "tag-set": _sub(VAL, "!!set {a, b}"),
    "tag-omap": _sub(VAL, "!!omap [a: 1]"),
    "anchor": _sub(VAL, "&a [*a]"),
    "merge-key": _sub(KEY, '<<: {tag: "y"}\n      tag2: "enc"'),
    "dup-key": _sub(KEY, 'tag: "enc"\n      tag: "y"'),
    "long-line": _sub(VAL, '"' + "a" * 1_100_000 + '"'),
    "deep-list": _sub(VAL, DEEP_L),
    "deep-map": _sub(VAL, DEEP_M),
    "huge-int": _sub(VAL, "9" * 5000),
    "nan": _sub(VAL, ".nan"),
    "inf": _sub(VAL, ".inf"),
    "1e400": _sub(VAL, "1e400"),
    "date": _sub(VAL, "2026-01-01"),
    "timestamp": _sub(VAL, "2026-01-01T00:00:00Z"),
    "int-key": _sub(KEY, '1: "enc"'),
    "null-key": _sub(KEY, '~: "enc"'),
    "complex-key": _sub(KEY, '? [a, b]\n      : "enc"'),
    "id-str": _sub("id: 1", 'id: "1"'),
    "id-bool": _sub("id: 1", "id: true"),
    "id-big": _sub("id: 1", "id: 99999999999999999999999"),
    "name-num": _sub('name: "enc"', "name: 12"),
    "status-case": _sub("status: pending_approval", "status: Pending_Approval"),
    "status-space": _sub("status: pending_approval", 'status: "pending_approval "'),
    "yaml11": ("%YAML 1.1\n---\n" + BASE).encode(),
    "bom-mid": _sub(KEY, '\ufefftag: "enc"'),
    "lsep-key": _sub(KEY, 'tag: "enc"\u2028      other: 1'),
    "nel-quoted": _sub(VAL, '"a\u0085b"'),
    "top-list": b"- 1\n- 2\n",
    "top-scalar": b"hello\n",
}
#: variant -> the file's bytes. Every one is a valid plan; every surface must agree on it.
ACCEPTED: dict[str, bytes] = {
    "base": BASE.encode(),
    "bom": b"\xef\xbb\xbf" + BASE.encode(),
    "crlf": BASE.replace("\n", "\r\n").encode(),
    "esc-nul": _sub(VAL, '"x\\0y"'),
    "esc-max": _sub(VAL, '"\\U0010FFFF"'),
    "doc-end": (BASE + "...\n").encode(),
    "octal": _sub(VAL, "0o17"),
    "yes": _sub(VAL, "yes"),
    "tab": _sub(KEY, 'tag:\t"enc"'),
    "id-float": _sub("id: 1", "id: 1.0"),
    "yaml12": ("%YAML 1.2\n---\n" + BASE).encode(),
    "tag-directive": ("%TAG ! tag:x,2000:\n---\n" + BASE).encode(),
}

#: values a TOON encoder must quote or escape: ``show --format toon`` decodes to ``--json``
TOON_PLAN = """\
plan:
  name: "toon"
  task: "t"
  status: pending_approval
available_tools:
  - name: echo
actions:
  - id: 1
    tool: echo
    why: "w"
    params:
      s_true: "true"
      s_null: "null"
      s_num: "123"
      s_float: "1.5e3"
      s_dash: "-"
      s_dash2: "- x"
      s_lead: "  lead"
      s_trail: "trail  "
      s_nl: "a\\nb"
      s_tab: "a\\tb"
      s_empty: ""
      s_colon: "a: b"
      s_comma: "a,b"
      s_pipe: "a|b"
      s_quote: 'say "hi"'
      s_bs: "a\\\\b"
      s_hash: "# x"
      s_brack: "[3]: x"
      s_brace: "{a}"
      s_u: "café ☃"
      "key: colon": 1
      "key,comma": 2
      "[0]": 3
      "": 4
      "a.b": 5
      "-lead": 6
      " sp": 7
      "123": 8
      "true": 9
      empty_list: []
      empty_obj: {}
      list_of_lists: [[1, 2], [], ["a", [true]]]
      list_of_objs: [{a: 1, b: "x"}, {a: 2, b: "y"}]
      mixed_objs: [{a: 1}, {b: 2}, {a: 1, b: [1]}]
      uniform_nested: [{a: {c: 1}}, {a: {c: 2}}]
      objs_with_comma: [{a: "x,y", b: 1}, {a: "z", b: 2}]
      list_mixed: [1, "1", null, true, 1.5, {a: []}]
      big: 9007199254740991
      neg0: -0.0
      small: 1.0e-7
      nested_empty: {a: {b: {}}}
      objs_empty_vals: [{a: "", b: null}, {a: "-", b: "null"}]
"""
#: author text a pull-request comment must show as text (``show --format markdown``)
MD_PLAN = """\
plan:
  name: "n <b>x</b> | y"
  task: "t &amp; [l](http://e) ![i](http://e/i.png) <!-- c -->"
  status: pending_approval
available_tools:
  - name: echo
actions:
  - id: 1
    tool: echo
    why: "a | b </details> <details><summary>x</summary> &lt;script&gt; \\
      *em* _u_ ~~s~~ \\\\| `c` ``` \\n## H\\n| x | y |"
    params:
      p: "```````` </details>\\n```\\n~~~~~ & &#x41; <!--"
      q: "&#x2028; \\u202e rtl"
  - id: 2
    tool: echo
    why: "http://auto.link www.x.com @user #12 :smile:"
    params: {}
"""
TOON_IDS = ["toon-hostile", "base", "esc-nul", "esc-max", "yes", "octal", "crlf"]

# -- plan sources ----------------------------------------------------------------------
AP = json.dumps(
    {
        "plan_version": 1,
        "title": "ap",
        "steps": [
            {"step_number": 1, "description": "record ap", "action": {"type": "rec", "tag": "ap"}}
        ],
    },
    indent=1,
)
PC = json.dumps(
    {
        "plan_version": 1,
        "goal": "record pc",
        "steps": [{"step_id": "s1", "tool": "rec", "args": {"tag": "pc"}}],
    },
    indent=1,
)
MD = (
    "# md\n\n## Objective\n\nrecord md\n\n## Steps\n\n### Step 1: Record md\n\n"
    '- **Action**: rec\n- **Parameters**: {"tag": "md"}\n'
)
SOURCES: dict[str, tuple[str, str]] = {
    "ap": ("PLAN.json", AP),
    "pc": ("PLAN.json", PC),
    "md": ("PLAN.md", MD),
}
#: source spelling -> (bytes of text, refused?). A BOM or CR LF source still converts to the
#: plain source's plan (the same hash); UTF-16 and a NUL are refused coded.
SPELLINGS: dict[str, tuple[Any, bool]] = {
    "plain": (lambda t: t.encode(), False),
    "bom": (lambda t: b"\xef\xbb\xbf" + t.encode(), False),
    "crlf": (lambda t: t.replace("\n", "\r\n").encode(), False),
    "utf16": (lambda t: t.encode("utf-16"), True),
    "nul": (lambda t: t.encode() + b"\0", True),
}
SRC_IDS = [f"{s}-{sp}" for s in SOURCES for sp in SPELLINGS]

# -- hostile MCP arguments -------------------------------------------------------------
P = plan_text("mh")
#: id -> (tool, arguments, the argument the refusal must name or None)
HOSTILE: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "v-plan-int": ("validate", {"plan": 5}, "plan"),
    "v-plan-list": ("validate", {"plan": ["a"]}, "plan"),
    "v-plan-obj": ("validate", {"plan": {"plan": {"name": "x"}}}, "plan"),
    "v-plan-null": ("validate", {"plan": None}, "plan"),
    "v-no-plan": ("validate", {}, "plan"),
    "v-slug-int": ("validate", {"plan": P, "slug": 7}, "slug"),
    "v-format-int": ("validate", {"plan": P, "format": 7}, "format"),
    "s-slug-unicode": ("submit", {"plan": P, "slug": "caf\u00e9"}, "slug"),
    "s-slug-nfd": ("submit", {"plan": P, "slug": "cafe\u0301"}, "slug"),
    "s-slug-upper": ("submit", {"plan": P, "slug": "Rotate"}, "slug"),
    "s-slug-space": ("submit", {"plan": P, "slug": "a b"}, "slug"),
    "s-slug-trail-space": ("submit", {"plan": P, "slug": "ab "}, "slug"),
    "s-slug-nul": ("submit", {"plan": P, "slug": "a\0b"}, "slug"),
    "s-slug-empty": ("submit", {"plan": P, "slug": ""}, "slug"),
    "s-slug-long": ("submit", {"plan": P, "slug": "x" * 300}, "slug"),
    "s-slug-dotdot": ("submit", {"plan": P, "slug": "a/../b"}, "slug"),
    "s-slug-abs": ("submit", {"plan": P, "slug": "/tmp/x"}, "slug"),
    "s-slug-backslash": ("submit", {"plan": P, "slug": "a\\b"}, "slug"),
    "s-slug-newline": ("submit", {"plan": P, "slug": "a\nb"}, "slug"),
    "s-slug-zwsp": ("submit", {"plan": P, "slug": "a\u200bb"}, "slug"),
    "s-slug-fullwidth": ("submit", {"plan": P, "slug": "\uff41b"}, "slug"),
    "s-slug-int": ("submit", {"plan": P, "slug": 5}, "slug"),
    "s-no-slug": ("submit", {"plan": P}, "slug"),
    "s-pr-int": ("submit", {"plan": P, "slug": "prx", "pull_request": 1}, "pull_request"),
    "s-pr-null": ("submit", {"plan": P, "slug": "prx", "pull_request": None}, "pull_request"),
    "s-pr-str": ("submit", {"plan": P, "slug": "prx", "pull_request": "true"}, "pull_request"),
    "s-note-int": ("submit", {"plan": P, "slug": "prx", "note": 5}, "note"),
    "st-path-int": ("status", {"path": 5}, "path"),
    "st-path-dotdot": ("status", {"path": "../../etc"}, None),
    "st-path-abs": ("status", {"path": "/etc/passwd"}, None),
    "l-path-nul": ("log", {"path": "plans/x\0"}, None),
    "l-path-list": ("log", {"path": ["plans/x"]}, "path"),
    "w-bad-status": ("wait", {"path": "plans/nope", "timeout": 0.1, "status": "bogus"}, "status"),
    "w-timeout-str": ("wait", {"path": "plans/nope", "timeout": "soon"}, "timeout"),
    "w-timeout-bool": ("wait", {"path": "plans/nope", "timeout": True}, "timeout"),
}
#: submits that commit (the note is text of the commit message, never a trailer of it)
NOTES: dict[str, str] = {
    "note-trailer": "fine\n\nSigned-off-by: Alice <alice@example.com>\nPlan-Approved: yes",
    "note-nul": "x\0y",
    "note-cr": "x\rApproved-By: Alice <alice@example.com>",
    "note-lsep": "x\u2028Approved-By: Alice <alice@example.com>",
    "note-huge": "n" * 200_000,
}

# -- hash --config of a plan the controller will not freeze -----------------------------
UNFREEZABLE: dict[str, tuple[str, str, str]] = {
    "yml-schema": ("PLAN.yml", plan_text("hs").replace("id: 1", 'id: "1"'), "E_SCHEMA_INVALID"),
    "yml-unknown-tool": (
        "PLAN.yml",
        plan_text("hu").replace("tool: rec", "tool: nope").replace("- name: rec", "- name: nope"),
        "E_TOOL_UNKNOWN",
    ),
    "yml-undeclared-tool": (
        "PLAN.yml",
        plan_text("hd").replace("tool: rec", "tool: echo"),
        "E_TOOL_NOT_DECLARED",
    ),
    "src-unknown-tool": (
        "PLAN.json",
        json.dumps(
            {
                "plan_version": 1,
                "goal": "g",
                "steps": [{"step_id": "s1", "tool": "nope", "args": {}}],
            }
        ),
        "E_TOOL_UNKNOWN",
    ),
}


def _mcp_text(reply: dict[str, Any]) -> tuple[bool, Any, str]:
    """(isError, the JSON of the answer or of a refusal, the raw text)."""
    res = reply.get("result") or {}
    text = "".join(c.get("text", "") for c in res.get("content") or [])
    body = text.split(": ", 1)[1] if text.startswith("Error executing tool") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if "error" in reply:
        return True, None, json.dumps(reply["error"])
    return bool(res.get("isError")), data, text


def _build(root: Path) -> dict[str, Any]:
    lab = Lab(root, extra=AGENT_CFG)
    got: dict[str, Any] = {"root": str(root)}
    loose = root / "loose"
    files: dict[str, Path] = {}
    for name, data in {**REFUSED, **ACCEPTED}.items():
        path = loose / name / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        files[name] = path
    for name, text in (("toon-hostile", TOON_PLAN), ("md-hostile", MD_PLAN)):
        path = loose / name / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        files[name] = path
    for sid in SRC_IDS:
        src, spelling = sid.rsplit("-", 1)
        filename, text = SOURCES[src]
        path = loose / f"src-{sid}" / filename
        path.parent.mkdir(parents=True)
        path.write_bytes(SPELLINGS[spelling][0](text))
        files[f"src-{sid}"] = path
    for name, (filename, text, _code) in UNFREEZABLE.items():
        lab.write(f"u-{name}", text, filename)
    lab.commit("unfreezable plans")

    def cli(*args: str) -> dict[str, Any]:
        r = lab.cli(*args)
        return {"rc": r.returncode, "out": r.stdout, "err": r.stderr}

    # every loose file: validate --json (all in one call), hash, show --json, convert --json
    vals = cli("validate", "--json", *[str(files[n]) for n in files])
    got["validate"] = vals
    jobs: dict[tuple[str, str], Any] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        for name, path in files.items():
            jobs[(name, "hash")] = pool.submit(cli, "hash", str(path))
            jobs[(name, "show")] = pool.submit(cli, "show", "--json", str(path))
            if name in TOON_IDS:
                jobs[(name, "toon")] = pool.submit(cli, "show", "--format", "toon", str(path))
            if name == "md-hostile":
                jobs[(name, "md")] = pool.submit(cli, "show", "--format", "markdown", str(path))
            if name.startswith("src-"):
                jobs[(name, "convert")] = pool.submit(cli, "convert", "--json", str(path))
        for name in UNFREEZABLE:
            jobs[(f"u-{name}", "hashcfg")] = pool.submit(
                cli, "hash", "--config", str(lab.config), str(lab.repo / "plans" / f"u-{name}")
            )
            jobs[(f"u-{name}", "valcfg")] = pool.submit(
                cli, "validate", "--config", str(lab.config), str(lab.repo / "plans" / f"u-{name}")
            )
        got["cli"] = {f"{k[0]}|{k[1]}": j.result() for k, j in jobs.items()}

    # one MCP session: validate of each UTF-8 text, then the hostile arguments, then notes
    texts: dict[str, str] = {}
    for name, path in files.items():
        try:
            texts[name] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
    before = lab.git("for-each-ref", "--format=%(refname) %(objectname)") + lab.head()
    calls: list[tuple[str, dict[str, Any]]] = [("validate", {"plan": t}) for t in texts.values()]
    calls += [(tool, args) for tool, args, _ in HOSTILE.values()]
    mcp_replies = mcpkit.answers(lab, calls)
    got["mcp_validate"] = {
        n: _mcp_text(r) for n, r in zip(texts, mcp_replies[: len(texts)], strict=True)
    }
    got["mcp_hostile"] = {
        n: _mcp_text(r) for n, r in zip(HOSTILE, mcp_replies[len(texts) :], strict=True)
    }
    got["after_hostile"] = lab.git("for-each-ref", "--format=%(refname) %(objectname)") + lab.head()
    got["before_hostile"] = before
    got["status_porcelain"] = lab.git(
        "status", "--porcelain", "--untracked-files=all", "--", "plans"
    )
    note_calls = [
        ("submit", {"plan": plan_text(f"n{i}"), "slug": f"n-{name}", "note": note})
        for i, (name, note) in enumerate(NOTES.items())
    ]
    replies = mcpkit.answers(lab, note_calls)
    got["notes"] = {}
    for name, reply in zip(NOTES, replies, strict=True):
        err, data, text = _mcp_text(reply)
        commit = (data or {}).get("commit") if not err else None
        message = lab.git("cat-file", "commit", commit) if commit else ""
        trailers = (
            lab.git("interpret-trailers", "--parse", input=message.split("\n\n", 1)[-1])
            if commit
            else ""
        )
        got["notes"][name] = {
            "err": err,
            "text": text[:500],
            "message": message,
            "trailers": trailers,
        }
    return got


@pytest.fixture(scope="module")
def every_lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Labs E, W and R built at once (one worker holds the module: they overlap)."""
    root = tmp_path_factory.mktemp("r128b")
    builders: dict[str, Callable[[Path], Any]] = {"e": _build, "w": _build_wt, "r": _build_race}
    return build_all(root, builders, workers=3).got


@pytest.fixture(scope="module")
def labs(every_lab: Any) -> Any:
    return every_lab["e"]


def _records(labs: Any) -> dict[str, dict[str, Any]]:
    out = labs["validate"]["out"]
    recs = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {Path(r["path"]).parent.name: r for r in recs}


def _no_trace(r: dict[str, Any]) -> None:
    assert "Traceback" not in r["out"] + r["err"], (r["out"] + r["err"])[-1500:]


def _coded_refusal(r: dict[str, Any], remedy: bool = True) -> None:
    """Refused: exit non-zero, an ``E_`` code, no hash printed, a remedy where the command
    gives one (``hash`` lists a plan's problems as ``validate`` does: file, line, code)."""
    _no_trace(r)
    assert r["rc"] != 0, r
    both = r["out"] + r["err"]
    assert re.search(r"\bE_[A-Z_]+\b", both), both[-800:]
    if remedy:
        assert "remedy" in both or "Remedy" in both, both[-800:]
    else:
        assert re.search(r"PLAN\.(yml|json|md)(:\d+)?: E_[A-Z_]+", both), both[-800:]
    assert not re.search(r"^sha256:[0-9a-f]{64}\s*$", r["out"], re.M), r["out"][:200]


# -- 1. refused variants: every surface refuses, coded, with a place and a remedy --------
@pytest.mark.parametrize("variant", list(REFUSED))
def test_enc_validate_refused(labs: Any, variant: str) -> None:
    rec = _records(labs)[variant]
    assert rec["valid"] is False and rec["hash"] is None, rec
    assert rec["errors"], rec
    for e in rec["errors"]:
        assert re.fullmatch(r"E_[A-Z_]+", e["code"]) and e["remedy"], e
        assert (
            e.get("line") is not None
            or e.get("path") is not None
            or e["code"]
            in (
                "E_PLAN_TOO_LARGE",
                "E_YAML_PARSE",
                "E_SCHEMA_INVALID",
            )
        ), e


@pytest.mark.parametrize("variant", list(REFUSED))
def test_enc_cli_refused(labs: Any, variant: str) -> None:
    """``show --json`` refuses coded with a remedy; ``hash`` lists the problem coded at its
    file and line (or, without a config, hashes the file as written: documented)."""
    shown = labs["cli"][f"{variant}|show"]
    _coded_refusal(shown)
    data = json.loads(shown["out"])
    assert data["ok"] is False and data["code"].startswith("E_") and data["remedy"], data
    r = labs["cli"][f"{variant}|hash"]
    if variant in ("id-str", "id-bool", "name-num", "status-case", "status-space"):
        # without a config `hash` prints the file's own hash (the pin a parent names):
        # documented; it must never print the hash of another plan (the base's) for it
        _no_trace(r)
        base = labs["cli"]["base|hash"]["out"].strip()
        if variant.startswith("status"):
            return  # status is not hashed: the same hash as the base is right
        assert r["out"].strip() != base, r
        return
    _coded_refusal(r, remedy=False)


_BOM2 = advkit.xfail(
    "mcp-double-bom-plan-yml-read-as-pte",
    "MCP validate answers a PLAN.yml with two BOMs valid (format pte); validate: E_YAML_PARSE",
)


@pytest.mark.parametrize(
    "variant", [pytest.param(v, marks=[_BOM2] if v == "bom2" else []) for v in REFUSED]
)
def test_enc_mcp_agrees_refused(labs: Any, variant: str) -> None:
    got = labs["mcp_validate"].get(variant)
    if got is None:  # not UTF-8 text: no MCP string can hold those bytes
        assert variant in ("utf16", "utf16le", "utf32", "latin1"), variant
        return
    err, data, text = got
    assert not err and data is not None, text[:500]
    assert data["valid"] is False and data["hash"] is None, text[:500]
    cli_codes = {e["code"] for e in _records(labs)[variant]["errors"]}
    mcp_codes = {e["code"] for e in data["errors"]}
    assert mcp_codes and all(e["remedy"] for e in data["errors"]), data
    if data.get("format") == "plan.yml":  # read as the file is: the same problems
        assert mcp_codes & cli_codes, (mcp_codes, cli_codes)


# -- 2. accepted variants: every surface shows the same plan and hash -------------------
@pytest.mark.parametrize("variant", list(ACCEPTED))
def test_enc_accepted_agree(labs: Any, variant: str) -> None:
    rec = _records(labs)[variant]
    assert rec["valid"] is True, rec
    h = rec["hash"]
    assert labs["cli"][f"{variant}|hash"]["out"].strip() == h, labs["cli"][f"{variant}|hash"]
    show = json.loads(labs["cli"][f"{variant}|show"]["out"])
    assert show["hash"] == h, show.get("hash")
    err, data, text = labs["mcp_validate"][variant]
    assert not err and data["valid"] is True and data["hash"] == h, text[:500]


_SAME_AS_BASE = {"bom", "crlf", "doc-end", "tab", "id-float", "yaml12", "tag-directive"}


@pytest.mark.parametrize("variant", sorted(_SAME_AS_BASE))
def test_enc_spelling_is_the_same_plan(labs: Any, variant: str) -> None:
    """A spelling YAML reads as the base's data is the base's plan (hash, shown params)."""
    recs = _records(labs)
    assert recs[variant]["hash"] == recs["base"]["hash"], (recs[variant], recs["base"])


@pytest.mark.parametrize("variant", ["esc-nul", "esc-max", "octal", "yes"])
def test_enc_shown_value_is_the_value(labs: Any, variant: str) -> None:
    """``show --json`` displays the value a tool gets: ``0o17`` is 15 (YAML 1.2), ``yes`` is
    the string, escapes are decoded (and shown escaped in text)."""
    show = json.loads(labs["cli"][f"{variant}|show"]["out"])
    blob = json.dumps(show)
    want = {
        "esc-nul": '"x\\u0000y"',
        "esc-max": '"\\udbff\\udfff"',
        "octal": ": 15",
        "yes": '"yes"',
    }
    assert want[variant] in blob or (variant == "esc-max" and "\\U0010ffff" in blob), blob[:1500]


# -- 3. sources in odd encodings ----------------------------------------------------------
@pytest.mark.parametrize("sid", SRC_IDS)
def test_src_surfaces_agree(labs: Any, sid: str) -> None:
    src, spelling = sid.rsplit("-", 1)
    refused = SPELLINGS[spelling][1]
    name = f"src-{sid}"
    rec = _records(labs)[name]
    h = labs["cli"][f"{name}|hash"]
    conv = labs["cli"][f"{name}|convert"]
    _no_trace(conv)
    if refused:
        assert rec["valid"] is False and rec["errors"], rec
        _coded_refusal(h, remedy=False)
        assert conv["rc"] != 0 and "E_" in conv["out"] + conv["err"], conv
        got = labs["mcp_validate"].get(name)
        if got is not None:
            assert got[1] and got[1]["valid"] is False and got[1]["errors"], got[2][:500]
        return
    plain = _records(labs)[f"src-{src}-plain"]["hash"]
    assert rec["valid"] is True and rec["hash"] == plain, rec
    assert h["out"].strip() == plain, h
    cj = json.loads(conv["out"].splitlines()[0])
    assert cj.get("hash") in (plain, None) and cj.get("ok", True) is not False, cj
    err, data, text = labs["mcp_validate"][name]
    assert not err and data["valid"] is True and data["hash"] == plain, text[:500]


# -- 4. hostile MCP arguments ----------------------------------------------------------------
@pytest.mark.parametrize("case", list(HOSTILE))
def test_mcp_hostile_refused(labs: Any, case: str) -> None:
    err, data, text = labs["mcp_hostile"][case]
    want_path = HOSTILE[case][2]
    assert err, text[:500]
    assert "Traceback" not in text, text
    assert data and data.get("ok") is False, text[:500]
    assert re.fullmatch(r"E_[A-Z_]+", data["code"]) and data["remedy"], data
    if want_path is not None:
        assert data["path"] == want_path, data


def test_mcp_hostile_left_nothing(labs: Any) -> None:
    assert labs["after_hostile"] == labs["before_hostile"]
    assert labs["status_porcelain"] == "", labs["status_porcelain"]


@pytest.mark.parametrize("name", list(NOTES))
def test_mcp_note_forges_no_trailer(labs: Any, name: str) -> None:
    got = labs["notes"][name]
    assert not got["err"], got["text"]
    assert "\0" not in got["message"]
    trailers = got["trailers"]
    assert "Signed-off-by: Alice" not in trailers and "Approved-By" not in trailers, trailers
    assert "Plan-Approved" not in trailers, trailers
    body = got["message"].split("\n\n", 1)[-1]
    assert not re.search(r"^(Approved-By|Plan-Approved|Signed-off-by):", body, re.M), body[:500]


def test_mcp_huge_note_bounded(labs: Any) -> None:
    assert len(labs["notes"]["note-huge"]["message"]) < 20_000


# -- 5. hash --config of a plan the controller will never freeze -------------------------
_HASH_BROKEN = advkit.xfail(
    "hash-config-ignores-plan-yml-validity",
    "hash --config prints a hash (exit 0) for a PLAN.yml validate refuses; a source is refused",
)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[_HASH_BROKEN] if n.startswith("yml-") else []) for n in UNFREEZABLE],
)
def test_hash_config_refuses_unfreezable(labs: Any, name: str) -> None:
    code = UNFREEZABLE[name][2]
    val = labs["cli"][f"u-{name}|valcfg"]
    assert val["rc"] != 0 and code in val["out"] + val["err"], val
    r = labs["cli"][f"u-{name}|hashcfg"]
    _no_trace(r)
    assert not re.search(r"sha256:[0-9a-f]{64}", r["out"]), r["out"]
    assert r["rc"] != 0 and code in r["out"] + r["err"], r


# -- 6. the working tree in odd states under MCP submit (lab W) --------------------------
def _wt_lab(root: Path, name: str) -> Lab:
    from advkit import ALICE

    lab = Lab(root / name, extra=AGENT_CFG)
    lab.write("other", plan_text("other"))
    lab.commit("other", ALICE)
    return lab


def _wt_setup(lab: Lab, case: str) -> None:
    from advkit import ALICE

    repo = lab.repo
    if case == "staged-other-plan":
        (repo / "plans/other/PLAN.yml").write_text(plan_text("other").replace("record", "RECORD"))
        lab.git("add", "plans/other/PLAN.yml")
    elif case == "staged-note":
        lab.put("notes/a.txt", "alice's staged note\n")
        lab.git("add", "notes/a.txt")
    elif case == "untracked-in-folder":
        lab.put("plans/newp/notes.txt", "alice's notes\n")
    elif case == "draft-at-slug":
        lab.write("newp", plan_text("alicedraft"))
    elif case == "staged-draft-at-slug":
        lab.write("newp", plan_text("alicedraft"))
        lab.git("add", "-A")
    elif case == "detached":
        lab.git("checkout", "-q", "--detach")
    elif case == "index-lock":
        (repo / ".git/index.lock").write_text("")
    elif case == "unstaged-other-plan":
        (repo / "plans/other/PLAN.yml").write_text("alice's unsaved edit\n")
    elif case == "slug-is-file":
        lab.put("plans/newp", "a file\n")
        lab.commit("file", ALICE)
    elif case == "pre-commit-hook":
        hook = repo / ".git/hooks/pre-commit"
        hook.write_text(f"#!/bin/sh\necho ran >> {lab.root / 'hook.ran'}\nexit 1\n")
        hook.chmod(0o755)
    elif case == "plans-symlink-folder":
        (repo / "elsewhere").mkdir()
        (repo / "plans" / "newp").symlink_to(repo / "elsewhere")


#: case -> refused code (None: the submit commits only plans/newp/PLAN.yml)
WT_CASES: dict[str, str | None] = {
    "staged-other-plan": None,
    "staged-note": None,
    "untracked-in-folder": None,
    "unstaged-other-plan": None,
    "pre-commit-hook": None,
    "draft-at-slug": "E_USAGE",
    "staged-draft-at-slug": "E_USAGE",
    "detached": "E_GIT",
    "index-lock": "E_GIT",
    "slug-is-file": "E_UNSAFE_PATH",
    "plans-symlink-folder": "E_UNSAFE_PATH",
}


def _build_wt(root: Path) -> dict[str, Any]:
    got: dict[str, Any] = {}

    def one(case: str) -> dict[str, Any]:
        lab = _wt_lab(root, case)
        _wt_setup(lab, case)
        before_status = lab.git("status", "--porcelain", "--untracked-files=all")
        before_head = lab.head()
        before_bytes = {
            p.relative_to(lab.repo).as_posix(): p.read_bytes()
            for p in lab.repo.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(lab.repo).parts
        }
        reply = mcpkit.answers(lab, [("submit", {"plan": plan_text("newp"), "slug": "newp"})])[0]
        err, data, text = _mcp_text(reply)
        head = lab.head()
        changed = (
            lab.git("show", "--name-only", "--format=%an", head).split()
            if head != before_head
            else []
        )
        after_bytes = {
            p.relative_to(lab.repo).as_posix(): p.read_bytes()
            for p in lab.repo.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(lab.repo).parts
        }
        return {
            "err": err,
            "data": data,
            "text": text[:600],
            "moved": head != before_head,
            "changed": changed,
            "status_before": before_status,
            "status_after": lab.git("status", "--porcelain", "--untracked-files=all"),
            "lost": sorted(
                k
                for k, v in before_bytes.items()
                if after_bytes.get(k) != v and k != "plans/newp/PLAN.yml"
            ),
            "lock": (lab.repo / ".git/index.lock").exists(),
            "hook": (lab.root / "hook.ran").exists(),
        }

    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = {case: pool.submit(one, case) for case in WT_CASES}
        got = {case: job.result() for case, job in jobs.items()}
    return got


# -- 7. four MCP sessions submitting to three slugs at once (lab R) ---------------------
def _build_race(root: Path) -> dict[str, Any]:
    import threading

    lab = Lab(root / "race", extra=AGENT_CFG)
    out: dict[int, list[tuple[bool, Any, str]]] = {}

    def go(i: int) -> None:
        calls = [
            ("submit", {"plan": plan_text(f"race{i}-{j}", name="race"), "slug": f"race{j % 3}"})
            for j in range(6)
        ]
        out[i] = [_mcp_text(r) for r in mcpkit.answers(lab, calls)]

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows: dict[str, Any] = {}
    check = root / "race-check"
    for i, answers in out.items():
        for j, (err, data, text) in enumerate(answers):
            key = f"{i}-{j}"
            row: dict[str, Any] = {"err": err, "data": data, "text": text[:400]}
            if not err and data and data.get("commit"):
                blob = lab.git("show", f"{data['commit']}:{data['file']}")
                path = check / key / "PLAN.yml"
                path.parent.mkdir(parents=True)
                path.write_text(blob)
                row["blob"] = blob
                row["hash_of_blob"] = lab.cli("hash", str(path)).stdout.strip()
                row["author"] = lab.git("log", "-1", "--format=%an", data["commit"]).strip()
                row["files"] = lab.git("show", "--name-only", "--format=", data["commit"]).split()
            rows[key] = row
    return {
        "rows": rows,
        "log": lab.git("log", "--format=%H %P").split("\n"),
        "status": lab.git("status", "--porcelain", "--untracked-files=all"),
    }


@pytest.fixture(scope="module")
def labs2(every_lab: Any) -> Any:
    return every_lab


@pytest.mark.parametrize("case", list(WT_CASES))
def test_wt_submit_leaves_others_work(labs2: Any, case: str) -> None:
    got = labs2["w"][case]
    code = WT_CASES[case]
    assert "Traceback" not in got["text"], got["text"]
    assert got["lost"] == [], got["lost"]  # nobody's bytes in the working tree changed
    assert not got["hook"]  # the agent's commit runs no hook of the checkout
    if code is None:
        assert not got["err"] and got["data"]["ok"] is True, got["text"]
        assert got["changed"] == ["Planner", "bot", "plans/newp/PLAN.yml"], got["changed"]
        # whatever was staged or untracked before is still so (not swept into the commit)
        before = {line for line in got["status_before"].splitlines() if line}
        after = {line for line in got["status_after"].splitlines() if line}
        assert before <= after, (before, after)
        return
    assert got["err"] and got["data"]["code"] == code and got["data"]["remedy"], got["text"]
    assert not got["moved"], got
    assert got["status_after"] == got["status_before"]
    if case == "index-lock":
        assert got["lock"]  # someone else's lock is never removed


def test_race_every_answer_is_its_commit(labs2: Any) -> None:
    rows = labs2["r"]["rows"]
    assert len(rows) == 24
    for key, row in rows.items():
        assert "Traceback" not in row["text"], row["text"]
        if row["err"]:
            assert row["data"] and row["data"]["code"].startswith("E_"), row["text"]
            continue
        i, j = key.split("-")
        assert f'tag: "race{i}-{j}"' in row["blob"], (key, row["blob"][:300])
        assert row["hash_of_blob"] == row["data"]["hash"], (key, row)
        assert row["author"] == "Planner bot" and row["files"] == [row["data"]["file"]], row


def test_race_history_is_one_line(labs2: Any) -> None:
    log = [line.split() for line in labs2["r"]["log"] if line.strip()]
    assert all(len(parts) <= 2 for parts in log), log  # no merge, no lost commit
    assert sum(1 for r in labs2["r"]["rows"].values() if not r["err"]) == len(log) - 1
    assert labs2["r"]["status"] == ""


# -- 8. show --format toon and markdown ----------------------------------------------------
@pytest.mark.parametrize("variant", TOON_IDS)
def test_toon_decodes_to_json(labs: Any, variant: str) -> None:
    """docs/formats.md: ``toon_format.decode`` of ``show --format toon`` gives exactly the
    ``json`` output (here with strings that read as numbers, booleans, null, list markers,
    keys holding ``:``/``,``/``[0]``/nothing, tabular arrays of objects with commas)."""
    import toon_format

    toon = labs["cli"][f"{variant}|toon"]
    shown = labs["cli"][f"{variant}|show"]
    assert toon["rc"] == 0 and shown["rc"] == 0, (toon, shown)
    assert toon_format.decode(toon["out"]) == json.loads(shown["out"])


def test_markdown_author_text_is_text(labs: Any) -> None:
    """docs/formats.md: author text is escaped so it cannot add columns, headings, HTML or
    links; code blocks use a fence longer than any backtick run inside them."""
    md = labs["cli"]["md-hostile|md"]
    assert md["rc"] == 0, md
    out = md["out"]
    head, _, details = out.partition("<details><summary>Params, outputs and checks</summary>")
    assert details, out[:800]
    # no tag, comment or entity of the author's reaches the rendered part raw
    for bad in ("<b>", "</details> <details>", "<summary>x", "<!--", "&lt;script", "](http"):
        assert bad not in head, (bad, head[:1500])
    # each table row has the table's four columns (no author pipe opened another)
    rows = [r for r in head.splitlines() if r.startswith("| 1 |") or r.startswith("| 2 |")]
    assert len(rows) == 2, head
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row)
        assert len(cells) == 6, row
    assert not re.search(r"^#+ H", head, re.M), head
    fences = re.findall(r"^(`{3,})json$", details, re.M)
    assert fences and all(len(f) > 8 for f in fences[:1]), fences
