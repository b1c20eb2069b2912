"""Round 93, agent surfaces (r93surf): the grid of git's porcelain display settings an agent
plants in local mode's ``.git/config``, one at a time, against every reader that parses or
shows git's output: the page's commit view (``/commit/<sha>``), ``/api/`` and
``/api/plan/``, MCP ``log``, ``status --json``, ``show --json`` and ``audit --json``.

Lab (one, local mode, built once). The agent commits plan ``p`` with a file whose name is
not ASCII (``docs/résumé notes.md``, what ``core.quotePath`` quotes), one pass freezes it,
Alice approves it, one pass runs it, the agent adds a git note to her approval. A daemon
serves the page. Then, with no planted setting, every reader is read (the baseline); then,
for each setting of :data:`SETTINGS`, the setting alone is appended to ``.git/config``
(the file restored after), and every reader is read again.
Ids: ``<setting>:<reader>`` (readers: ``commit``, ``appr``, ``api``, ``plan``, ``log``,
``status``, ``show``, ``audit``), ``base:*`` (the baseline itself: git's own forms).

Should: a reader's answer does not depend on how the agent asked git to display things:
every one equals its baseline (times that move by themselves set aside), and the page's
commit view is git's own form (no escape codes, full commit names, absolute dates, the
``a/``/``b/``-free stat with the quoted name, no note).

Fixed (2026-12-02, r93surf): every diffing git command runs with git's explicit overrides
of the display settings (``controller.git.guard.DISPLAY``), so this grid holds by the
class, not by one pin per key (round 93's ``page-gitconfig-format``: ``color.ui=always``,
``core.abbrev=4``, ``log.date=relative`` on ``/commit/``; ``page-notes-record``: a note
broke every ``git show REV:PATH`` of the page).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, page_settled, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

#: One planted setting each: (id, the lines appended to .git/config).
SETTINGS = {
    "colorui": "[color]\n\tui = always\n",
    "colordiff": "[color]\n\tdiff = always\n",
    "abbrev": "[core]\n\tabbrev = 4\n",
    "logdate": "[log]\n\tdate = relative\n",
    "decorate": "[log]\n\tdecorate = full\n",
    "abbrevcommit": "[log]\n\tabbrevCommit = true\n",
    "showsig": "[log]\n\tshowSignature = true\n",
    "showroot": "[log]\n\tshowRoot = false\n",
    "follow": "[log]\n\tfollow = true\n",
    "pretty": "[format]\n\tpretty = oneline\n",
    "noprefix": "[diff]\n\tnoprefix = true\n",
    "mnemonic": "[diff]\n\tmnemonicPrefix = true\n",
    "relative": "[diff]\n\trelative = true\n",
    "orderfile": "[diff]\n\torderFile = {order}\n",
    "context": "[diff]\n\tcontext = 0\n",
    "renames": "[diff]\n\trenames = copies\n",
    "quotepath": "[core]\n\tquotePath = false\n",
    "encoding": "[i18n]\n\tlogOutputEncoding = ISO-8859-1\n",
    "displayref": "[notes]\n\tdisplayRef = refs/notes/*\n",
    "notesref": "[core]\n\tnotesRef = refs/notes/commits\n",
    "grep": "[grep]\n\tpatternType = fixed\n",
    "stat": "[diff]\n\tstatGraphWidth = 3\n\tdirstat = files\n",
}
READERS = ("commit", "appr", "api", "plan", "log", "status", "show", "audit")
NAME = "docs/r\u00e9sum\u00e9 notes.md"
NOTE = "Plan-Status: rejected (a note)"
#: Keys whose values move by themselves (clocks, ages, durations): set aside.
_VOLATILE = re.compile(r"(^|_)(at|age|ago|time|seconds|published|now|took|ms|elapsed)$")


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _steady(value: Any) -> Any:
    """``value`` (parsed JSON) without the keys that move by themselves."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not _VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _json(text: str) -> Any:
    try:
        return _steady(json.loads(text))
    except ValueError:
        return f"NOT JSON: {text[-1500:]}"


def _pre(text: str) -> str:
    """The page's commit view: the text of its ``<pre>``."""
    start = text.find("<pre")
    return text[start : text.find("</pre>", start)] if start >= 0 else f"NO PRE: {text[:800]}"


def _read(lab: Lab, port: int, shas: dict[str, str]) -> dict[str, Any]:
    c = str(lab.config)
    cli = {
        "status": ("status", "--json", "--config", c),
        "show": ("show", "--json", "--config", c, str(lab.repo / "plans/p/PLAN.yml")),
        "audit": ("audit", "--json", "--config", c),
    }

    def run(args: tuple[str, ...]) -> Any:
        r = lab.cli(*args, timeout=120)
        return {"rc": r.returncode, "out": _json(r.stdout), "err": r.stderr[-1500:]}

    def mcp() -> Any:
        replies, _err = mcpkit.session(lab, [("log", {"path": "plans/p"})])
        res = (replies[0] or {}).get("result", {}) if replies else {}
        text = "".join(c.get("text", "") for c in res.get("content", []))
        return {"rc": 1 if not replies or res.get("isError") else 0, "out": _json(text)}

    with ThreadPoolExecutor(2) as pool:
        futures = {k: pool.submit(run, args) for k, args in cli.items()}
        futures["log"] = pool.submit(mcp)
        got: dict[str, Any] = {
            "commit": _pre(_get(port, f"/commit/{shas['agent']}")[1]),
            "appr": _pre(_get(port, f"/commit/{shas['approval']}")[1]),
            "api": _json(_get(port, "/api/")[1]),
            "plan": _json(_get(port, "/api/plan/plans/p")[1]),
        }
        got.update({k: f.result() for k, f in futures.items()})
    return got


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.write("p", plan_text("p"))
    (lab.repo / "docs").mkdir()
    (lab.repo / NAME).write_text("notes\n")
    shas = {"agent": lab.commit("agent: plan p", AGENT)}
    lab.run()
    lab.approve("p", ALICE)
    shas["approval"] = lab.head()
    lab.run()
    lab.git("notes", "add", "-m", NOTE, shas["approval"], who=AGENT)
    order = root / "order.txt"
    order.write_text("plans/*\ndocs/*\n*\n")
    config = lab.repo / ".git" / "config"
    pristine = config.read_text()
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    try:
        assert page_settled(ui, lab.head), "the page never settled"
        got["base"] = _read(lab, ui, shas)
        for key, lines in SETTINGS.items():
            config.write_text(pristine + lines.format(order=order))
            try:
                got[key] = _read(lab, ui, shas)
            finally:
                config.write_text(pristine)
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["shas"] = shas
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r93-surface-display", _build)


IDS = [f"base:{r}" for r in READERS] + [f"{s}:{r}" for s in SETTINGS for r in READERS]


def _base(got: dict[str, Any], reader: str) -> None:
    """The baseline is git's own form and the controller's record."""
    seen = got["base"][reader]
    if reader in ("commit", "appr"):
        assert "\x1b" not in seen and "\\x1b" not in seen and " ago" not in seen, seen
        assert re.search(r"commit [0-9a-f]{40}\n", seen), seen
        assert NOTE not in seen and "Notes" not in seen, seen
        if reader == "commit":
            assert "r\\303\\251sum\\303\\251 notes.md" in seen, seen
    elif reader == "plan":
        text = json.dumps(seen)
        assert "E_OWNED_BLOCK_CHANGED" not in text and "alice@example.com" in text, text
        assert seen.get("log"), text
    elif reader == "api":
        assert "E_" not in json.dumps(seen), seen
    else:
        assert seen["rc"] == 0, seen
        if reader == "audit":
            assert seen["out"]["ok"] and not seen["out"].get("findings"), seen
        if reader == "status":
            assert [r["status"] for r in seen["out"]] == ["completed"], seen
        if reader == "log":
            assert "alice@example.com" in json.dumps(seen), seen


@pytest.mark.parametrize("vid", IDS)
def test_round93_display(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    key, reader = vid.split(":")
    if key == "base":
        _base(got, reader)
        return
    assert got[key][reader] == got["base"][reader], (got[key][reader], got["base"][reader])
