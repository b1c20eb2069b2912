"""Round 84 (surface, atk84b): the agent's own text shaped as the log's reversible escapes
(round 83, r83logenc) in folders whose ``.gitattributes`` set a ``working-tree-encoding``.

CHANGELOG (round 83): "every character the folder's encoding cannot hold is written in a
reversible ASCII form: in EXECUTION_LOG.md its HTML numeric character reference (`&#x2014;`
...; an `&` before a `#` is `&#x26;` then), in PLAN.yml's `execution:` block a double-quoted
YAML escape (`\\u2014`, the very value read back)". docs/agents.md (``log``): "`execution`,
`outputs` and `execution_log` passed on exactly as the controller committed them".

Lab (one, two passes): plans whose name, ``why`` and parameter (echoed back by the recording
tool, captured as output ``v``) mix a real ``—`` with the agent's literal escape text
(``&#x2014;``, ``&#x26;``, ``&amp;``, ``\\u0041``, ``\\x41``, a ``"``, a backslash):
- ``lg``: ``EXECUTION_LOG.md working-tree-encoding=ISO-8859-1``;
- ``bo``: that and ``PLAN.yml working-tree-encoding=ISO-8859-1`` (the ``execution:`` block);
- ``pl`` (control): no attribute (the record is unchanged: the literal text stays literal).
Variants ``<plan>:<check>``:
- ``md``: MCP ``log``'s ``execution_log`` is the committed EXECUTION_LOG.md, byte for byte;
- ``name``, ``why``, ``param``: the log's heading and ``**Why:**`` line (Markdown text, HTML
  references decoded once) and resolved param (its JSON string; references decoded once where
  the folder's encoding forced them, as is in ``pl``) are the text as written: no escape the
  agent wrote decodes to another character;
- ``out``: the ``execution:`` block's output ``v`` read as YAML, and MCP ``log``'s
  ``outputs``, are the value the tool returned;
- ``clean``: ``git status --porcelain`` empty, and a fresh clone's checkout of the log gives
  back the committed bytes (``git status`` clean there).

Seen (round 84): nothing broke. The heading and ``**Why:**`` line are HTML-escaped in every
log (``pl`` too: the agent's ``&#x2014;`` is ``&amp;#x2014;``); in the JSON block of an encoded
folder the agent's ``&#x2014;`` was written ``&#x26;#x2014;`` and a real ``—`` ``&#x2014;``, and
each decoded once to the text as written; the ``execution:`` block wrote ``"\\u2014 a
\\\\u0041 ..."`` and read back the value; MCP ``log`` passed the record on unchanged.
Noted (the bench's, not plangate's): a value holding U+2028 or U+0085 reaches the MCP
client raw inside one JSON-RPC line, which Python's ``str.splitlines`` (used by
``mcpkit.session``) splits; the SDK splits on ``\\n`` only. The values here hold neither.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, load_yaml, plan_text
from mcpkit import call
from test_round2_execution_kit import shared

ISO = "EXECUTION_LOG.md working-tree-encoding=ISO-8859-1\n"
ATTRS = {"lg": ISO, "bo": ISO + "PLAN.yml working-tree-encoding=ISO-8859-1\n", "pl": None}
# as YAML double-quoted text (ASCII, so an ISO-8859-1 PLAN.yml holds it) and as read
NAME_Y = r"n \u2014 lit &#x2014; amp &#x26; ent &amp; end"
WHY_Y = r"w \u2014 x &#x2014; y &#x26;#x41; z"
TAG_Y = r"\u2014 a \\u0041 b &#x2014; c \\x41 \" d &#x26; e \\"
NAME, WHY, TAG = (load_yaml(f'k: "{v}"')["k"] for v in (NAME_Y, WHY_Y, TAG_Y))
CHECKS = ("md", "name", "why", "param", "out", "clean")


def _plan(slug: str) -> str:
    text = plan_text(slug).replace(f'name: "{slug}"', f'name: "{NAME_Y}"')
    text = text.replace(f'why: "record that variant {slug} ran"', f'why: "{WHY_Y}"')
    text = text.replace(f'tag: "{slug}"', f'tag: "{TAG_Y}"')
    return text + '    outputs:\n      - {name: v, path: "$.json.echo.tag"}\n'


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    for slug, attrs in ATTRS.items():
        lab.write(slug, _plan(slug))
        if attrs:
            (lab.repo / "plans" / slug / ".gitattributes").write_text(attrs)
    lab.commit("agent: plans")
    lab.run()
    for slug in ATTRS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    got: dict[str, Any] = {}
    for slug in ATTRS:
        reply = call(lab, "log", {"path": f"plans/{slug}"})
        answer = json.loads(reply["result"]["content"][0]["text"])
        log = lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md")
        plan = load_yaml(lab.git("show", f"HEAD:plans/{slug}/PLAN.yml"))
        got[slug] = {
            "log": log,
            "mcp_log": answer.get("execution_log"),
            "mcp_out": answer.get("outputs"),
            "exec": plan.get("execution"),
            "clone_log": (clone / "plans" / slug / "EXECUTION_LOG.md").read_bytes(),
        }
    got["porcelain"] = lab.git("status", "--porcelain").strip()
    got["clone_porcelain"] = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, env=lab.env(), capture_output=True,
        text=True, check=True,
    ).stdout.strip()  # fmt: skip
    got["committed_bytes"] = {
        s: subprocess.run(
            ["git", "cat-file", "blob", f"HEAD:plans/{s}/EXECUTION_LOG.md"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        ).stdout
        for s in ATTRS
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-surface-escapes", _build)


IDS = [f"{s}:{c}" for s in ATTRS for c in CHECKS]


@pytest.mark.parametrize("vid", IDS)
def test_the_record_reads_back_as_written(lab: Lab, vid: str) -> None:
    """What the agent wrote reads back as written in every reader; nothing it shaped as an
    escape decodes to another character."""
    slug, check = vid.split(":")
    row = lab.got[slug]  # type: ignore[attr-defined]
    log = row["log"]
    # Markdown text (heading, Why) is HTML-escaped in every log; the JSON code block holds the
    # text as written where the record comes back, its escapes elsewhere (decoded once)
    dec = html.unescape if slug != "pl" else (lambda text: text)
    if slug != "pl":  # the lab is live: the folder's encoding forced the escapes
        assert "&#x2014;" in log and "—" not in log, log[:800]
    else:
        assert "—" in log, log[:800]
    if check == "md":
        assert row["mcp_log"] == log
    elif check == "name":
        head = log.splitlines()[0]
        assert head.startswith("# Execution log: "), head
        assert html.unescape(head.removeprefix("# Execution log: ")) == NAME, head
    elif check == "why":
        line = next(x for x in log.splitlines() if x.startswith("**Why:** "))
        assert html.unescape(line.removeprefix("**Why:** ")) == WHY, line
    elif check == "param":
        found = re.search(r'^  "tag": (".*")$', log, re.M)
        assert found, log[:2000]
        assert json.loads(dec(found.group(1))) == TAG, found.group(1)
    elif check == "out":
        actions = (row["exec"] or {}).get("actions") or [{}]
        assert actions[0].get("outputs", {}).get("v") == TAG, row["exec"]
        assert row["mcp_out"] == {"1": {"v": TAG}}, row["mcp_out"]
    else:
        assert lab.got["porcelain"] == "", lab.got["porcelain"]  # type: ignore[attr-defined]
        assert lab.got["clone_porcelain"] == ""  # type: ignore[attr-defined]
        committed = lab.got["committed_bytes"][slug]  # type: ignore[attr-defined]
        if slug == "pl":
            assert row["clone_log"] == committed
        else:  # the checkout's bytes come back as the committed text through the encoding
            assert row["clone_log"].decode("iso-8859-1") == committed.decode("utf-8")
