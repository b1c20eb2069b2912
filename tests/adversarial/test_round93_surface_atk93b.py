"""Round 93, agent surfaces (atk93b): past round 92's ``log.mailmap=false``: the other git
settings an agent reaches from files (a committed ``.gitattributes`` with ``ident``,
``eol=crlf``, ``working-tree-encoding=UTF-16LE``, ``export-subst`` on PLAN.yml and on
EXECUTION_LOG.md, before and after the freeze; ``.git/config`` with ``i18n.*Encoding``,
``core.autocrlf``/``safecrlf``/``quotePath``/``abbrev``, ``log.*``, ``format.pretty``,
``color.ui=always``, ``diff.*`` with ``diff.external``, ``trailer.separators``,
``notes.displayRef``; a git note), encodings (a PLAN.yml in UTF-16 with BOM, a NUL byte,
billion-laughs aliases, 20,000-deep nesting, a commit in ``encoding ISO-8859-1``), a
``$<secrets.TOK>`` plan, and MCP ``submit`` with ``pull_request: true`` and odd slugs.

Lab (one, local mode, built once, a secrets file ``TOK``). The agent commits the attributes
with ``ok`` (``$Format:%H$``), ``cx`` (the secret twice), ``idn`` (``$Id$``), ``eol``, ``wte``
(written UTF-16LE), ``lg``/``lg2`` (attributes on their EXECUTION_LOG.md), ``i2``, ``e2``,
``w2``, checks ``idn``/``eol`` out again; one pass freezes them. Then it commits ``ident``,
``eol=crlf`` and UTF-16LE attributes for ``i2``/``e2``/``w2`` (the attributes file alone) and
checks them out again; commits ``u16``, ``nul``, ``bl``, ``deep`` and the ISO-8859-1 commit;
``cf``, frozen by a pass; then plants the ``.git/config`` above. Alice approves the eleven
with ``plangate approve`` under that config; the agent adds a git note ("Plan-Status:
rejected / Approved-By: agent@...") to her last approval; one pass. Readers (``show``,
``hash``; for the bad four also ``show --json``, ``validate``), ``status --json``, ``audit
--json`` (and a fresh clone's), MCP ``status``/``log`` of all fifteen, twelve MCP submits
(one session each), the daemon: ``/api/``, ``/``, ``/api/plan/`` and ``/plan/`` of each,
``/commit/`` of the ISO-8859-1 commit and of the noted one.
Ids: ``<plan>:<reader>``, ``row:*``, ``<plan>:ran``, ``<plan>:approve``,
``m<status|log>:*``, ``<plan>:<api|html>``, ``page:*``, ``enc:*``, ``noted:*``,
``submit:*``, ``pass:*``.

Seen (round 93): 26 ids broke, 3 classes.
``page-notes-record`` (``<ok|cx|idn|eol|wte|i2|e2|w2|lg|lg2|cf>:<api|html>``, 22 ids): after
the agent's one ``git notes add`` (``refs/notes/commits``, on Alice's approval of ``cf``), the
daemon's ``/api/plan/plans/ok`` of every completed plan answers ``"problems": [{"code":
"E_OWNED_BLOCK_CHANGED", "message": "... the execution:/approval: block on the branch is not
the controller's record: edited after (or without) the controller's record by
alice@example.com in 4a349142268b; shown as the controller recorded it"}]``, its
``document`` without the approval and execution blocks, ``"log": null``; the page says
"Approvals: none recorded" and action 1 "pending". The same plans' rows, ``/api/`` (11
completed), MCP ``status``/``log``, ``show`` and both audits say completed, approved by
Alice, no finding. Separated by hand on the built lab (a fresh daemon each time): the
planted config with the note: broken; without each single config key: broken; the config
removed, the note kept: broken; the note ref deleted (config or not): fine.
``page-gitconfig-format`` (``noted:format``, ``enc:format``): ``/commit/<sha>`` prints git's
output under the agent's ``.git/config``: ``\x1b[33mcommit daa5\x1b[m`` (``color.ui=always``
shown as text, ``core.abbrev=4``), "AuthorDate: 53 seconds ago" (``log.date=relative``).
``submit-refname-remedy`` (``submit:lock``, ``submit:trail``): MCP ``submit`` with
``pull_request: true`` and slug ``x.lock`` or ``t.`` (both pass the slug rule) answers
``{"code": "E_GIT", "message": "plangate/x.lock kept moving while committing", "remedy":
"submit again"}``: git refuses the branch name, and submitting again fails the same way.
Held: no program ran (``diff.external``); both passes exit 0, each of the eleven ran once,
the bad four never; ``ident``/``eol``/UTF-16 attributes before and after the freeze: every
reader the frozen hash, ``show`` ``$Id$`` (the working tree held ``$Id: 53c7... $``), the
tool got ``$Id$``, ``export-subst`` left ``$Format:%H$``; the committed EXECUTION_LOG.md of
``lg``/``lg2`` UTF-8 and ``$Id$`` (the working copy UTF-16LE, expanded); Alice's ``approve``
under the whole config committed each; ``audit --json`` and a fresh clone's: ``ok: true``,
the eleven valid, no finding; ``u16`` "E_YAML_PARSE: not UTF-8 text (byte 0)", ``nul``
"unacceptable character #x0000", ``bl`` "anchor &a0 (write values out in full)", ``deep``
"nested deeper than 100 levels", each on every reader, row (with remedy), MCP and the page
(MCP ``log`` and ``/api/`` of ``u16`` word it "unacceptable character #x0000 ... position
7", the same code); the ISO-8859-1 commit's page "agent: café à la crème"; the note never
shown as part of Alice's commit; the other ten slugs "E_USAGE: slug ... is not a plan folder
name", main unmoved; the secret in no form (plain, base64, ``\\u``, percent) anywhere.

Should: docs/operations.md, the page shows a plan's record as the controller committed it
("what an agent or reviewer reads ... is exactly what the controller would run and has
recorded"); a note is no commit and changes no record, so a reviewer's page calling every
completed run "not the controller's record ... by alice" and dropping her approval is what
the surfaces promise not to show. The page's ``git show`` runs with the fixed git settings
(``guard.FIXED``, round 92) yet still follows the agent's colour, date and abbrev settings.
A failed submit is "an error with its E_ code, the location and a remedy": ``x.lock`` is
refused by git for good, so "submit again" is no remedy (E_USAGE naming the slug is).

Fixed (2026-12-02, r93surf): all 26. ``page-notes-record``: every ``git show`` loaded the
notes ref, whose notes commit the controller's own object store never took in, so each
``git show REV:PATH`` of the page's record read failed ("Failed to read notes tree") and the
record read as never written; ``page-gitconfig-format``: ``/commit/`` ran ``git show`` with
the repository's display settings. Every diffing git command now runs with git's explicit
overrides of them (``--no-notes``, ``--no-color``, ``--no-abbrev``, ``--date=default``, ...:
``controller.git.guard.DISPLAY``, put after the command by ``guard.argv``); the grid of
display settings is ``test_round93_surface_display.py``. ``submit-refname-remedy``: one slug
rule (``agentapi.slug_rule``) refuses a part ending in ``.`` or ``.lock`` and a
``<branch_prefix><slug>`` git takes for no branch, ``E_USAGE`` with a valid slug.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

SECRET = "r93SecretTok9Z"
SECRET_FORMS = (
    SECRET,
    base64.b64encode(SECRET.encode()).decode().rstrip("="),
    "".join(f"\\u{ord(c):04x}" for c in SECRET[:8]),
    "".join(f"%{ord(c):02X}" for c in SECRET[:8]),
)
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
GOOD = ("ok", "cx", "idn", "eol", "wte", "i2", "e2", "w2", "lg", "lg2", "cf")
BAD = ("u16", "nul", "bl", "deep")
LAUGHS = (
    "plan:\n  name: bl\n  task: laughs\n  status: pending_approval\n"
    "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n    why: lol\n"
    "    params:\n      tag: bl\n      a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"      a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
)
SLUGS = {
    "lock": "x.lock",
    "dotdot": "a..b",
    "at": "a@{u}",
    "dash": "-x",
    "dot": ".hid",
    "trail": "t.",
    "head": "HEAD",
    "sp": "a b",
    "nfd": "cafe\u0301",
    "colon": "a:b",
    "caret": "a^b",
    "star": "a*b",
}


def _run(
    lab: Lab, *args: str, who: Any = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    e = lab.env(who)
    e["REC_LOG"] = str(lab.log)
    e.update(env or {})
    try:
        r = subprocess.run(
            [mcpkit.PLANGATE, *args], env=e, cwd=lab.repo, capture_output=True,
            text=True, timeout=60, check=False, errors="replace",
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"rc": -9, "out": "", "err": "TIMEOUT"}
    return {"rc": r.returncode, "out": r.stdout[-200000:], "err": r.stderr[-4000:]}


def _texts(lab: Lab, calls: list[mcpkit.Call]) -> list[tuple[int, str]]:
    replies, err = mcpkit.session(lab, calls)
    out = []
    for reply in replies:
        res = (reply or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if reply is None:
            text = "NO REPLY " + err[-1500:]
        elif "error" in (reply or {}):
            text = json.dumps(reply["error"])
        out.append((1 if reply is None or res.get("isError") or "error" in reply else 0, text))
    return out


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(root, extra=AGENT_CFG + f"secrets: {{file: {root / 'sec.yml'}}}\n")
    got: dict[str, Any] = {}
    c = str(lab.config)
    # -- the agent: attributes on its own plan files, then the plans
    (lab.repo / ".gitattributes").write_text(
        "plans/idn/PLAN.yml ident\nplans/eol/PLAN.yml text eol=crlf\n"
        "plans/wte/PLAN.yml text working-tree-encoding=UTF-16LE eol=lf\n"
        "plans/ok/PLAN.yml export-subst\n"
        "plans/lg/EXECUTION_LOG.md text working-tree-encoding=UTF-16LE eol=lf\n"
        "plans/lg2/EXECUTION_LOG.md ident text eol=crlf\nplans/lg2/PLAN.yml ident\n"
    )
    lab.write("lg", plan_text("lg", params='note: "caf\u00e9 \u2705"\n'))
    lab.write("lg2", plan_text("lg2", params='note: "$Id$"\n'))
    lab.write("ok", plan_text("ok", params='note: "$Format:%H$"\n'))
    lab.write(
        "cx", plan_text("cx", params='key: "$<secrets.TOK>"\nk2: "pre-$<secrets.TOK>-post"\n')
    )
    lab.write("idn", plan_text("idn", params='note: "$Id$"\n'))
    lab.write("eol", plan_text("eol", params='note: "crlf"\n'))
    lab.write("wte", plan_text("wte", params='note: "utf16"\n').encode("utf-16-le"))
    lab.write("i2", plan_text("i2", params='note: "$Id$"\n'))
    lab.write("e2", plan_text("e2"))
    lab.write("w2", plan_text("w2"))
    lab.commit("agent: plans", AGENT)
    for s in ("idn", "eol"):  # git writes the attributes' forms on checkout
        (lab.repo / "plans" / s / "PLAN.yml").unlink()
    lab.git("checkout", "--", "plans/idn", "plans/eol")
    got["blob:wte"] = lab.git("show", "HEAD:plans/wte/PLAN.yml", check=False)[:400]
    got["blob:idn"] = lab.git("show", "HEAD:plans/idn/PLAN.yml", check=False)[-200:]
    got["wt:idn"] = (lab.repo / "plans/idn/PLAN.yml").read_bytes()[-200:].decode("utf-8", "replace")
    p1 = lab.run(check=False)
    got["pass1"] = {"rc": p1.returncode, "err": p1.stderr[-3000:]}
    got["frozen"] = {}
    for s in GOOD:
        try:
            got["frozen"][s] = lab.plan(s)["frozen"]["hash"]
        except Exception as why:
            got["frozen"][s] = f"NOT FROZEN {why!r}"[:300]
    got["dirty1"] = lab.git("status", "--porcelain")
    # -- after the freeze: attributes on i2, e2, w2, their files checked out again
    with open(lab.repo / ".gitattributes", "a") as f:
        f.write("plans/i2/PLAN.yml ident\nplans/e2/PLAN.yml text eol=crlf\n"
                "plans/w2/PLAN.yml text working-tree-encoding=UTF-16LE eol=lf\n")  # fmt: skip
    lab.git("add", ".gitattributes")  # only the attributes: the plan files' blobs unchanged
    lab.git("commit", "-qm", "agent: attributes", who=AGENT)
    for s in ("i2", "e2", "w2"):
        (lab.repo / "plans" / s / "PLAN.yml").unlink()
    lab.git("checkout", "--", "plans/i2", "plans/e2", "plans/w2")
    got["wt2"] = {}
    for s in ("idn", "eol", "i2", "e2", "w2"):
        raw = (lab.repo / "plans" / s / "PLAN.yml").read_bytes()
        i = raw.find(b"$\x00I\x00d" if s == "w2" else b"$Id")
        got["wt2"][s] = {"crlf": b"\r\n" in raw, "nul": b"\x00" in raw,
                         "id": raw[i:i + 60].decode("latin-1") if i >= 0 else ""}  # fmt: skip
    got["dirty2"] = lab.git("status", "--porcelain")
    # -- bad entries: UTF-16 with BOM, a NUL byte, billion laughs, very deep nesting
    lab.write("u16", b"\xff\xfe" + plan_text("u16").encode("utf-16-le"))
    lab.write("nul", plan_text("nul", params='note: "a\x00b"\n').replace('"a\x00b"', "a\x00b"))
    lab.write("bl", LAUGHS)
    lab.write("deep", plan_text("deep", params="note: " + "[" * 20000 + "]" * 20000 + "\n"))
    lab.commit("agent: bad entries", AGENT)
    # -- a commit whose message is ISO-8859-1 under an encoding header
    tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    now = int(time.time())
    body = (
        f"tree {tree}\nparent {lab.head()}\n"
        f"author Agent <agent@example.com> {now} +0000\n"
        f"committer Agent <agent@example.com> {now} +0000\nencoding ISO-8859-1\n\n"
    ).encode() + b"agent: caf\xe9 \xe0 la cr\xe8me\n"
    enc = subprocess.run(["git", "hash-object", "-w", "-t", "commit", "--stdin"], cwd=lab.repo,
                         input=body, capture_output=True, env=lab.env(),
                         check=True).stdout.decode().strip()  # fmt: skip
    lab.git("update-ref", "refs/heads/main", enc)
    lab.git("reset", "-q", "--hard", "HEAD")
    got["enc"] = enc
    # -- the agent's .git/config: output encodings, line ends, formats, notes, trailers
    lab.write("cf", plan_text("cf"))
    lab.commit("agent: cf", AGENT)
    lab.run()
    got["frozen"]["cf"] = lab.plan("cf")["frozen"]["hash"]
    mark = root / "fired-ext"
    with open(lab.repo / ".git" / "config", "a") as f:
        f.write(
            "[i18n]\n\tlogOutputEncoding = UTF-16LE\n\tcommitEncoding = ISO-8859-1\n"
            "[core]\n\tautocrlf = true\n\tsafecrlf = true\n\tquotePath = true\n\tabbrev = 4\n"
            "[log]\n\tdecorate = full\n\tabbrevCommit = true\n\tdate = relative\n"
            "\tfollow = true\n\tshowRoot = false\n[format]\n\tpretty = oneline\n"
            "[color]\n\tui = always\n\tdiff = always\n[diff]\n\tnoprefix = true\n"
            f"\trelative = true\n\trenames = copies\n\texternal = touch {mark}\n"
            '[trailer]\n\tseparators = ":#="\n[notes]\n\tdisplayRef = refs/notes/*\n'
        )
    got["cfgtail"] = lab.git("config", "--list", "--local")[-300:]
    # -- Alice approves them with plangate approve (the reviewer's own tool)
    for s in GOOD:
        before = lab.head()
        r = _run(lab, "approve", "--config", c, f"plans/{s}", who=ALICE)
        r["moved"] = lab.head() != before
        got[f"{s}:approve"] = r
    lab.git("-c", "i18n.logOutputEncoding=UTF-8", "notes", "add", "-m",
            "Plan-Status: rejected\nApproved-By: agent@example.com", "HEAD", who=AGENT)  # fmt: skip
    got["noted"] = lab.head()
    p2 = lab.run(check=False)
    got["pass2"] = {"rc": p2.returncode, "err": p2.stderr[-3000:]}
    got["ran"] = {s: lab.calls(s) for s in GOOD + BAD}
    # -- readers
    rd: dict[str, Any] = {}
    st = _run(lab, "status", "--json", "--config", c)
    rd["status"] = st
    try:
        got["rows"] = {r["plan"]: r for r in json.loads(st["out"])}
    except ValueError:
        got["rows"] = {}
    rd["statusplain"] = _run(lab, "status", "--config", c)
    rd["audit"] = _run(lab, "audit", "--json", "--config", c)
    rd["log"] = _run(lab, "log", "--config", c, "plans/cx")
    for s in GOOD + BAD:
        p = str(lab.repo / "plans" / s / "PLAN.yml")
        rd[f"{s}:show"] = _run(lab, "show", "--config", c, p)
        rd[f"{s}:showjson"] = _run(lab, "show", "--json", "--config", c, p)
        rd[f"{s}:hash"] = _run(lab, "hash", p)
        rd[f"{s}:validate"] = _run(lab, "validate", "--config", c, p)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    r = subprocess.run([mcpkit.PLANGATE, "audit", "--json"], cwd=clone, env=lab.env(),
                       capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    rd["cloneaudit"] = {"rc": r.returncode, "out": r.stdout, "err": r.stderr[-3000:]}
    got["rd"] = rd
    # -- MCP: status/log of each plan
    calls: list[mcpkit.Call] = []
    for s in GOOD + BAD:
        calls += [("status", {"path": f"plans/{s}"}), ("log", {"path": f"plans/{s}"})]
    keys = [f"{s}:{t}" for s in GOOD + BAD for t in ("status", "log")]
    got["mcp"] = dict(zip(keys, _texts(lab, calls), strict=True))
    # -- MCP submit with odd slugs and pull_request: true
    before = lab.head()
    res = {}
    for k, slug in SLUGS.items():
        res[k] = _texts(lab, [("submit", {"plan": plan_text(f"s{k}"), "slug": slug,
                                          "pull_request": True})])[0]  # fmt: skip
    got["submit"] = res
    got["mainmoved"] = lab.head() != before
    got["branches"] = lab.git("for-each-ref", "--format=%(refname)", "refs/heads/")
    got["brcheck"] = {}
    for ref in got["branches"].split():
        ok = subprocess.run(["git", "check-ref-format", ref], capture_output=True, check=False)
        got["brcheck"][ref] = ok.returncode
    # -- the daemon: the page and /api/
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", c], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    page: dict[str, Any] = {}
    try:
        end = time.time() + 60
        while time.time() < end and _get(ui, "/api/")[0] != 200:
            time.sleep(0.2)
        time.sleep(1.5)
        page["api"] = _get(ui, "/api/")
        page["html"] = _get(ui, "/")
        page["enc"] = _get(ui, f"/commit/{enc}")
        page["noted"] = _get(ui, f"/commit/{got['noted']}")
        for s in GOOD + BAD:
            page[f"{s}:api"] = _get(ui, f"/api/plan/plans/{s}")
            page[f"{s}:html"] = _get(ui, f"/plan/plans/{s}")
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["page"] = page
    got["daemonerr"] = (root / "daemon.err").read_text()[-3000:]
    got["fired"] = mark.exists()
    got["ran2"] = {s: len(lab.calls(s)) for s in GOOD + BAD}
    got["execlog"] = {s: (lab.repo / "plans" / s / "EXECUTION_LOG.md").read_text("utf-8", "replace")
                      if (lab.repo / "plans" / s / "EXECUTION_LOG.md").exists() else ""
                      for s in GOOD}  # fmt: skip
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r93-surface-atk93b", _build)


IDNS = ("idn", "i2", "lg2")
RD = [f"{s}:{r}" for s in GOOD for r in ("show", "hash")]
RD += [f"{s}:{r}" for s in BAD for r in ("show", "showjson", "hash", "validate")]
ROW = [f"row:{s}" for s in GOOD + BAD]
RAN = [f"{s}:ran" for s in GOOD + BAD]
APPR = [f"{s}:approve" for s in GOOD]
MCP = [f"m{t}:{s}" for s in GOOD + BAD for t in ("status", "log")]
PAGE = [f"{s}:{w}" for s in GOOD + BAD for w in ("api", "html")]
PAGE += ["page:api", "page:html", "enc:html", "noted:notes", "noted:format", "enc:format"]
SUB = [f"submit:{k}" for k in SLUGS] + ["submit:main"]
PASS = ["pass:rc", "pass:audit", "pass:cloneaudit", "pass:fired", "pass:secret"]
IDS = RD + ROW + RAN + APPR + MCP + PAGE + SUB + PASS
#: Fixed (2026-12-02, r93surf): every id holds.
BROKEN: dict[str, Any] = {}


def _clean(text: str) -> None:
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]
    for form in SECRET_FORMS:
        assert form not in text, f"the secret leaked as {form!r}"


def _check(got: dict[str, Any], vid: str) -> None:
    part, key = vid.split(":", 1)
    if vid in RD:
        seen = got["rd"][vid]
        text = seen["out"] + seen["err"]
        _clean(text)
        if part in BAD:  # a failed read: its code, the file, a remedy; never absent
            assert seen["rc"] != 0 and "E_YAML_PARSE" in text, text[-1500:]
            assert f"plans/{part}/PLAN.yml" in text and "no such plan" not in text, text[-800:]
            return
        assert seen["rc"] == 0 and got["frozen"][part] in seen["out"], text[-1500:]
        if key == "show" and part in IDNS:  # what the tool receives, not git's expansion
            assert "$Id$" in seen["out"] and "$Id:" not in seen["out"], seen["out"][-1500:]
        if key == "show" and part == "ok":
            assert "$Format:%H$" in seen["out"], seen["out"][-1500:]
        return
    if part == "row":
        row = got["rows"].get(f"plans/{key}")
        assert row is not None, sorted(got["rows"])
        _clean(json.dumps(row))
        if key in BAD:
            assert row["status"] == "unreadable", row
            assert (row.get("problem") or {}).get("code") == "E_YAML_PARSE", row
            assert row["problem"].get("remedy"), row
        else:
            assert row["status"] == "completed" and row["approver"] == "alice@example.com", row
            assert row["hash"] == got["frozen"][key], row
        return
    if key == "ran":
        want = 0 if part in BAD else 1
        assert len(got["ran"][part]) == want and got["ran2"][part] == want, got["ran2"]
        if part in IDNS:
            assert json.loads(got["ran"][part][0]["stdin"])["note"] == "$Id$", got["ran"][part]
        return
    if key == "approve":
        seen = got[vid]
        _clean(seen["out"] + seen["err"])
        assert seen["rc"] == 0 and seen["moved"], seen
        return
    if vid in MCP:
        err, text = got["mcp"][f"{key}:{part[1:]}"]
        _clean(text)
        if key in BAD:
            if part == "mlog":
                # round 127 (fix128g): `log` answers an unreadable plan from its status row,
                # the code in `problems`, `file_status: null` (docs/agents.md, `log`), where
                # it was refused with the YAML reader's error
                assert "E_YAML_PARSE" in text, text[:1500]
                if not err:
                    answer = json.loads(text)
                    assert answer["status"] == "unreadable", answer
                    assert answer["file_status"] is None, answer
                    assert any(p.startswith("E_YAML_PARSE") for p in answer["problems"]), answer
            else:
                assert not err and '"E_YAML_PARSE"' in text, text[:1500]
            return
        assert not err and '"completed"' in text, text[:1500]
        assert "E_OWNED_BLOCK_CHANGED" not in text and "$Id:" not in text, text[:3000]
        return
    if vid in PAGE:
        if part == "page":
            code, text = got["page"][key]
            _clean(text)
            assert code == 200, (code, text[:800])
            if key == "api":
                counts = json.loads(text)["counts"]
                assert counts == {"completed": len(GOOD), "unreadable": len(BAD)}, counts
            return
        if part in ("enc", "noted"):
            code, text = got["page"][part]
            _clean(text)
            assert code == 200, (code, text[:800])
            body = text[text.find("<pre") :]
            if key == "html":
                assert "agent: café à la crème" in text, body[:1500]
            elif key == "notes":  # the agent's git note is no part of Alice's commit
                assert "Plan-Status: rejected" not in text, body[:1500]
            else:  # git's own form: no colour codes, absolute dates, the full name
                assert "\x1b" not in body and "\\x1b" not in body, body[:1500]
                assert " ago" not in body, body[:1500]
                assert re.search(r"commit [0-9a-f]{40}", body), body[:1500]
            return
        code, text = got["page"][vid]
        _clean(text)
        assert code == 200, (code, text[:800])
        if key == "api":
            json.loads(text)
        if part in BAD:
            assert "E_YAML_PARSE" in text, text[:1500]
            return
        assert "E_OWNED_BLOCK_CHANGED" not in text, text[:3000]
        assert "$Id:" not in text, text[:3000]
        if key == "html":
            assert "none recorded" not in text, text[:3000]
        return
    if part == "submit":
        if key == "main":
            assert not got["mainmoved"], "main moved"
            assert all(v == 0 for v in got["brcheck"].values()), got["brcheck"]
            return
        err, text = got["submit"][key]
        _clean(text)
        if not err:  # committed: on a branch git takes for a name
            assert got["brcheck"] and all(v == 0 for v in got["brcheck"].values()), got
            return
        assert "E_USAGE" in text and "submit again" not in text, text[:1500]
        return
    if key == "rc":
        assert got["pass1"]["rc"] == 0 and got["pass2"]["rc"] == 0, got["pass2"]["err"][-1500:]
    elif key == "fired":
        assert not got["fired"], "diff.external ran"
    elif key == "secret":
        _clean(json.dumps([got["rd"], got["mcp"], got["page"], got["execlog"]]))
        _clean(got["daemonerr"] + got["pass2"]["err"])
    else:
        seen = got["rd"]["audit" if key == "audit" else "cloneaudit"]
        _clean(seen["out"] + seen["err"])
        assert seen["rc"] == 0 and '"executions"' in seen["out"], seen["err"][-1500:]
        report = json.loads(seen["out"])
        runs = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
        assert runs == sorted(f"plans/{s}" for s in GOOD), runs
        assert report["ok"] and not report.get("findings"), report.get("findings")


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round93_surface(lab: Lab, vid: str) -> None:
    _check(lab.got, vid)  # type: ignore[attr-defined]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r93-", dir="/tmp/atk93b"))
    g = _build(out).got  # type: ignore[attr-defined]
    Path("/tmp/atk93b/got.json").write_text(json.dumps(g, default=str, indent=1))
