"""Round 92, agent surfaces (atk92b): past round 91's ``.gitmodules`` fix: other git config an
agent plants in files git reads (``.git/config`` with ``diff.<d>.textconv``/``command``,
``filter.<f>.clean``/``smudge``, ``merge.<m>.driver``, ``include.path`` of a file setting
``core.fsmonitor`` and ``core.attributesFile``, ``mailmap.file``; ``.git/info/attributes``
with an ``[attr]`` macro; a committed ``.gitattributes`` (root and a plan's folder) naming
them; a committed ``.mailmap`` mapping the agent to Alice and Alice to the agent; a
``.gitmodules`` whose entries sit on NON-gitlink plan folders, with an ``ext::`` url,
``update = !cmd``, ``fetchRecurseSubmodules = bogus``, ``ignore = bogus``), git's odd objects
(a 20,000-entry tree, a zero-padded ``040000`` tree mode holding a ``100664`` PLAN.yml, a
commit with ``encoding UTF-7``, an unknown header and a bogus ``gpgsig``, one with invalid
UTF-8 bytes and a 20-digit date with ``+9999``, one with an empty committer ``<>``), hostile
plan names and values (``<script>``/``<img onerror>`` name, param and FOLDER name, U+202E, a
60,000-character line) against the readers, the page and ``/api/``, and MCP ``submit`` with
``pull_request: true``.

Lab (one, local mode, built once, a secrets file ``TOK``). The agent's ``ok`` (Alice's
approval, completed), ``cx`` (a ``$<secrets.TOK>`` param), ``hx``, ``rtl``, ``lng``, ``mm``,
``ga`` and ``plans/<img src=x onerror=alert(2)>`` (frozen); the agent plants the config above,
commits the attribute files, ``.mailmap`` and ``.gitmodules``, approves ``mm`` itself, commits
the huge tree and the three odd commits (``zp`` arrives in the first), a gitlink ``plans/sl``,
branches ``plangate/pre`` (a gitlink ``plans/pre``), ``plangate/pre2`` (``pre2`` completed) and
``ckb`` (a plan ``ckp``, an unclosed ``.gitmodules`` section with ``update = !cmd``, a gitlink);
Alice approves ``cx``; one pass. Then the readers (``show``, ``show --json``, ``hash``,
``validate``, ``freeze --check`` of six plans; ``status``, ``audit``, a fresh clone's
``audit``, ``check --head ckb``), MCP ``status``/``log``, MCP ``submit`` with ``pull_request:
true`` (one session each), Alice's ``plangate approve`` of ``hx`` and ``ga``, and the daemon
with the page (``/``, ``/api/``, ``/plan/...``, ``/audit``, ``/commit/<sha>`` of each odd
commit). Every marker a planted program would touch is cleared before each plangate step (the
bench's own git runs them) and looked for after it.
Ids: ``<plan>:<reader>``, ``txt:*``, ``row:*``, ``pass:*``, ``check:*``, ``m<status|log>:*``,
``submit:*``, ``<plan|page|audit|badname|c<commit>>:<html|api>``, ``c<commit>:author`` (the
commit page's Author and Commit lines), ``<hx|ga>:<approve|ran>``, ``appr:fired``,
``daemon:*``.

Seen (round 92): 6 ids broke, 1 class.
``page-mailmap-author`` (``cattrs:author``, ``chuge:author``, ``codd1:author``,
``codd2:author``, ``codd3:author``, ``cmmappr:author``): the daemon's ``/commit/<sha>`` page of
every commit the agent made after planting its mailmap says "Author:     Alice
&lt;alice@example.com&gt;" and "Commit:     Alice &lt;alice@example.com&gt;" (the raw commits:
``Agent <agent@example.com>`` both); ``cmmappr`` is the agent's own ``approve mm`` commit,
which the controller refused ("E_APPROVER_NOT_ALLOWED: agent@example.com (author of ...) is not
an approver") while the page a reviewer follows from the plan shows it as Alice's. The lab
plants both a committed ``.mailmap`` and ``mailmap.file`` in ``.git/config`` (which of them the
page reads was not separated, time).
Held: no planted program ever ran (textconv, diff command, clean/smudge filter, merge
driver, fsmonitor and ``attributesFile`` through ``include.path``, ``.gitmodules`` url and
update) in the pass, the readers, ``check``, MCP, ``submit``, ``approve`` or the daemon; the
pass exit 0, ``cx`` ran once, ``mm`` refused as above (every other surface: row, MCP
``status`` ``approver: null``, the audit), ``zp`` frozen (``sha256:41e1...``, the CLI's
``hash`` the same) and not run; ``audit --json`` (and a fresh clone's) valid runs exactly
``ok``, ``cx``; every reader exit 0 with the frozen hash, text outputs free of raw ESC and
U+202E; ``show`` of ``lng`` prints the 60,000-character value; ``check`` of ``ckb`` exit 0
"plans/ckp: merging submits it; the controller freezes it"; ``submit`` with ``pull_request``:
``prok``/``prhx`` committed on ``plangate/<slug>``, main unmoved; ``ok``, ``cx``, ``pre2``
"E_ILLEGAL_TRANSITION: plans/.../PLAN.yml is completed"; ``sl``, ``sl/child`` and ``pre``
(the gitlink only on the agent's pre-made branch) "E_UNSAFE_PATH: plans/pre is a submodule
(gitlink) in the plans folder; it is not followed"; Alice's ``approve`` of ``hx`` and ``ga``
committed and the daemon ran each once; the page escapes every hostile value
(``plans/&lt;img src=x onerror=alert(2)&gt;``, ``\\x1b[31mheaders&lt;/script&gt;``, U+202E as an
escape), the 20,000-file ``--stat`` served (66,945 bytes), the invalid bytes as U+FFFD, the
odd dates as 1970, ``/commit/`` of ``ckb`` (not on the branch) 404 "no such commit",
``/api/plan/plans/\\u202e<b>`` 404 ``E_NOT_FOUND``; no secret anywhere.

Should: docs/operations.md, the page: ``/commit/<sha>`` shows "a commit's message, author,
committer and files"; docs/threat-model.md: the agent writes ``.git`` and commits in local
mode ("``.git/config`` and what it includes ... a committed ``.gitattributes``. One mechanism
answers the ...") and identities are judged from the commit's own author (the controller and
the audit do: ``agent@example.com``); a reviewer's page naming Alice as the author of the
agent's approval commit is what the surfaces promise not to show ("what an agent or reviewer
reads ... is exactly what the controller would run and has recorded").

Fixed (2026-12-02, the lead, the same hour): every git child plangate starts runs with
``log.mailmap=false`` pinned (``guard.FIXED``), so no ``.mailmap`` or ``mailmap.file`` renames
a commit's people in what git prints (the page's ``git show``); the controller and the audit
already read ``%an``/``%ae``, which no mailmap touches. Was: 6 broke.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

SECRET = "r92SecretTok7Q"
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
HTMLX = '<script>alert(92)</script>"><img src=x onerror=alert(1)>'
RTL = "abc\u202eexe.gpj"
LONG = "L" * 60000
HN = "<img src=x onerror=alert(2)>"


def _run(lab: Lab, *args: str, who: Any = None) -> dict[str, Any]:
    e = lab.env(who)
    e["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [mcpkit.PLANGATE, *args], env=e, cwd=lab.repo, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip
    return {"rc": r.returncode, "out": r.stdout[-200000:], "err": r.stderr[-4000:]}


def _texts(lab: Lab, calls: list[mcpkit.Call]) -> list[tuple[int, str]]:
    replies, err = mcpkit.session(lab, calls)
    out = []
    for reply in replies:
        res = (reply or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if reply is None:
            text = "NO REPLY " + err[-1500:]
        out.append((1 if reply is None or res.get("isError") else 0, text))
    return out


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _secret_plan(tag: str) -> str:
    return plan_text(tag, params='key: "$<secrets.TOK>"\n')


def _fired(m: dict[str, Path]) -> list[str]:
    seen = sorted(k for k, p in m.items() if p.exists())
    for p in m.values():
        p.unlink(missing_ok=True)
    return seen


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(root, extra=AGENT_CFG + f"secrets: {{file: {root / 'sec.yml'}}}\n")
    m = {k: root / f"fired-{k}" for k in ("tc", "fl", "inc", "info", "mods", "pr")}
    lab.write("ok", plan_text("ok"))
    lab.write("cx", _secret_plan("cx"))
    lab.write("hx", plan_text("hx", name=HTMLX.replace('"', "'"),
                              params=f"note: {json.dumps(HTMLX)}\n"))  # fmt: skip
    lab.write("rtl", plan_text("rtl", name=RTL, params=f"note: {json.dumps(RTL)}\n"))
    lab.write("lng", plan_text("lng", params=f"note: {LONG}\n"))
    lab.write("mm", plan_text("mm"))
    lab.write("ga", plan_text("ga"))
    lab.write(HN, plan_text("hn"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.run()
    got: dict[str, Any] = {"frozen": {s: lab.plan(s)["frozen"]["hash"] for s in
                                      ("ok", "cx", "hx", "rtl", "lng", "mm", "ga")}}  # fmt: skip
    c = str(lab.config)
    dotgit = lab.repo / ".git"
    # -- the agent plants git config in files git reads: .git/config (with include.path),
    # .git/info/attributes, a committed .gitattributes, .mailmap, .gitmodules beside folders
    (root / "evil.cfg").write_text(
        f"[core]\n\tfsmonitor = touch {m['inc']}\n\tattributesFile = {root / 'evil.attr'}\n"
        f'[diff "inc"]\n\ttextconv = touch {m["inc"]}; cat\n'
    )
    (root / "evil.attr").write_text("* diff=inc\n")
    with open(dotgit / "config", "a") as f:
        f.write(
            f'[diff "evil"]\n\ttextconv = sh -c \'touch {m["tc"]}; cat "$1"\' -\n'
            f"\tcommand = touch {m['tc']}\n"
            f"[filter \"evil\"]\n\tclean = sh -c 'touch {m['fl']}; cat'\n"
            f"\tsmudge = sh -c 'touch {m['fl']}; cat'\n"
            f'[merge "evil"]\n\tdriver = touch {m["fl"]}\n'
            f"[include]\n\tpath = {root / 'evil.cfg'}\n[log]\n\tmailmap = true\n"
            f"[mailmap]\n\tfile = {root / 'evil.mailmap'}\n"
        )
    (root / "evil.mailmap").write_text("Alice <alice@example.com> <agent@example.com>\n")
    (dotgit / "info").mkdir(exist_ok=True)
    (dotgit / "info" / "attributes").write_text(
        "* diff=evil filter=evil\n[attr]ev diff=evil\n*.yml ev\n"
    )
    (lab.repo / ".gitattributes").write_text(
        "* diff=evil filter=evil merge=evil\nplans/** diff=evil\n"
    )
    (lab.repo / "plans" / "ga" / ".gitattributes").write_text("PLAN.yml diff=evil filter=evil\n")
    (lab.repo / ".mailmap").write_text(
        "Alice <alice@example.com> <agent@example.com>\n"
        "Agent <agent@example.com> <alice@example.com>\n"
    )
    (lab.repo / ".gitmodules").write_text(
        '[submodule "c"]\n\tpath = plans/cx\n\turl = ext::sh -c touch% ' + str(m["mods"]) + "\n"
        f"\tupdate = !touch {m['mods']}\n\tfetchRecurseSubmodules = bogus\n\tignore = bogus\n"
        '[submodule "d"]\n\tpath = plans/hx\n\turl = ./x\n'
    )
    lab.git("add", "-A")
    lab.git("commit", "-qm", "agent: attributes, mailmap, modules", who=AGENT)
    shas = {"attrs": lab.head()}
    # the agent approves mm itself (the mailmap maps it to Alice)
    lab.set_status("mm", "approved")
    lab.git("add", "plans/mm")
    lab.git("commit", "-qm", "approve mm", who=AGENT)
    shas["mmappr"] = lab.head()
    # -- odd objects: a huge tree, a zero-padded tree mode, a commit with odd headers
    blob = lab.git("hash-object", "-w", "--stdin", input="x\n").strip()
    rows = "".join(f"100644 blob {blob}\tdata/f{i:05d}\n" for i in range(20000))
    lab.git("update-index", "--index-info", input=rows)
    lab.git("commit", "-qm", "agent: a huge tree", who=AGENT)
    shas["huge"] = lab.head()
    head = lab.head()
    tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    zp_blob = lab.git("hash-object", "-w", "--stdin", input=plan_text("zp")).strip()
    inner = b"100664 PLAN.yml\0" + bytes.fromhex(zp_blob)
    inner_t = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
                             cwd=lab.repo, input=inner, capture_output=True, env=lab.env(),
                             check=True).stdout.decode().strip()  # fmt: skip
    plans_t = lab.git("rev-parse", "HEAD:plans").strip()
    listing = subprocess.run(["git", "cat-file", "tree", plans_t], cwd=lab.repo,
                             capture_output=True, env=lab.env(), check=True).stdout  # fmt: skip
    # append "040000 zp" (zero-padded) in sorted place: "zp" sorts last among the plans
    plans_new = listing + b"040000 zp\0" + bytes.fromhex(inner_t)
    plans_nt = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
                              cwd=lab.repo, input=plans_new, capture_output=True, env=lab.env(),
                              check=True).stdout.decode().strip()  # fmt: skip
    top = subprocess.run(["git", "cat-file", "tree", tree], cwd=lab.repo, capture_output=True,
                         env=lab.env(), check=True).stdout  # fmt: skip
    top = top.replace(bytes.fromhex(plans_t), bytes.fromhex(plans_nt))
    top_t = subprocess.run(["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
                           cwd=lab.repo, input=top, capture_output=True, env=lab.env(),
                           check=True).stdout.decode().strip()  # fmt: skip
    now = int(time.time())
    body = (
        f"tree {top_t}\nparent {head}\n"
        f"author Agent <agent@example.com> {now} +0000\n"
        f"committer Agent <agent@example.com> {now} +0000\n"
        "encoding UTF-7\nx-evil <script>alert(3)</script>\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n bogus\n -----END PGP SIGNATURE-----\n"
        "\nagent: odd \x1b[31mheaders</script> +ACI-\n\nPlan-Approved-By: alice@example.com\n"
    ).encode()
    odd = subprocess.run(["git", "hash-object", "-w", "-t", "commit", "--literally", "--stdin"],
                         cwd=lab.repo, input=body, capture_output=True, env=lab.env(),
                         check=True).stdout.decode().strip()  # fmt: skip
    lab.git("update-ref", "refs/heads/main", odd)
    shas["odd1"] = odd
    lab.git("reset", "-q", "--hard", "HEAD")
    got["oddfsck"] = lab.git("fsck", "--no-dangling", check=False)
    for n, raw in enumerate(
        (
            b"author Agent \xff\xfe <agent@example.com> 99999999999999999999 +9999\n"
            b"committer Agent <agent@example.com> 1 -0000\n\nagent: \xff\xfe bad \xe9 bytes\n",
            b"author Agent <agent@example.com>\ncommitter <> 0 +0000\n\n\n",
        ),
        2,
    ):
        body = f"tree {top_t}\nparent {lab.head()}\n".encode() + raw
        odd = subprocess.run(["git", "hash-object", "-w", "-t", "commit", "--literally",
                              "--stdin"], cwd=lab.repo, input=body, capture_output=True,
                             env=lab.env(), check=True).stdout.decode().strip()  # fmt: skip
        lab.git("update-ref", "refs/heads/main", odd)
        shas[f"odd{n}"] = odd
    # the agent's own branches: plangate/pre holds a gitlink where submit would write,
    # plangate/pre2 a completed plan; ckb a pull request with a broken .gitmodules
    base = lab.head()
    lab.git("checkout", "-q", "-b", "plangate/pre")
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{head},plans/pre")
    lab.git("commit", "-qm", "agent: pre", who=AGENT)
    lab.git("checkout", "-q", "-B", "plangate/pre2", base)
    lab.write("pre2", plan_text("pre2", status="completed"))
    lab.commit("agent: pre2", AGENT)
    lab.git("checkout", "-q", "-B", "ckb", base)
    lab.write("ckp", plan_text("ckp"))
    (lab.repo / ".gitmodules").write_text('[submodule "x"\n\tupdate = !touch ' + str(m["mods"]))
    lab.git("add", "-A")
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{head},plans/ckl")
    lab.git("commit", "-qm", "agent: ckb", who=AGENT)
    shas["ckb"] = lab.head()
    lab.git("checkout", "-q", "main")
    # -- a gitlink for submit(pull_request) to meet; Alice approves cx; one pass
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{head},plans/sl")
    lab.git("commit", "-qm", "agent: a gitlink", who=AGENT)
    lab.set_status("cx", "approved")
    lab.git("add", "plans/cx")
    lab.git("commit", "-qm", "approve cx", who=ALICE)
    _fired(m)  # the bench's own git read them too: only plangate's reads count below
    done = lab.run(check=False)
    got["pass"] = {"rc": done.returncode, "err": done.stderr[-3000:]}
    got["ran"] = {s: len(lab.calls(s)) for s in ("ok", "cx", "mm", "zp", "hx", "ga")}
    got["fired1"] = _fired(m)
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
    rd["auditplain"] = _run(lab, "audit", "--config", c)
    for s in ("hx", "rtl", "lng", "ga", "zp", "cx"):
        p = str(lab.repo / "plans" / s / "PLAN.yml")
        rd[f"{s}:show"] = _run(lab, "show", "--config", c, p)
        rd[f"{s}:showjson"] = _run(lab, "show", "--json", "--config", c, p)
        rd[f"{s}:hash"] = _run(lab, "hash", p)
        rd[f"{s}:validate"] = _run(lab, "validate", "--config", c, p)
        rd[f"{s}:freeze"] = _run(lab, "freeze", "--check", p)
    _fired(m)
    rd["check"] = _run(lab, "check", "--config", c, "--base", "main", "--head", "ckb",
                       "--as", "alice@example.com", "--format", "json")  # fmt: skip
    rd["checktext"] = _run(lab, "check", "--config", c, "--base", "main", "--head", "ckb",
                           "--as", "alice@example.com")  # fmt: skip
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    e = lab.env()
    r = subprocess.run([mcpkit.PLANGATE, "audit", "--json"], cwd=clone, env=e,
                       capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    rd["cloneaudit"] = {"rc": r.returncode, "out": r.stdout, "err": r.stderr[-3000:]}
    got["rd"] = rd
    got["fired2"] = _fired(m)
    # -- MCP: status/log of hostile plans; submit with pull_request
    calls: list[mcpkit.Call] = []
    for s in ("hx", "rtl", "lng", "cx", "zp", "mm"):
        calls += [("status", {"path": f"plans/{s}"}), ("log", {"path": f"plans/{s}"})]
    keys = [f"{s}:{t}" for s in ("hx", "rtl", "lng", "cx", "zp", "mm") for t in ("status", "log")]
    got["mcp"] = dict(zip(keys, _texts(lab, calls), strict=True))
    before = lab.head()
    sub = {"prok": "prok", "ok": "ok", "cx": "cx", "sl": "sl", "slchild": "sl/child",
           "prhx": "prhx", "pre": "pre", "pre2": "pre2"}  # fmt: skip
    res = {}
    for k, slug in sub.items():  # one session each: parallel submits race (round 81)
        text = plan_text(f"pr{k}", name=HTMLX.replace('"', "'") if k == "prhx" else None)
        res[k] = _texts(lab, [("submit", {"plan": text, "slug": slug, "pull_request": True})])[0]
    got["submit"] = res
    got["mainmoved"] = lab.head() != before
    got["branches"] = lab.git("for-each-ref", "--format=%(refname:short)", "refs/heads/")
    got["prtree"] = {k: lab.git("ls-tree", "-r", f"plangate/{slug}", "plans/", check=False)
                     for k, slug in sub.items()}  # fmt: skip
    got["fired3"] = _fired(m)
    # -- Alice approves hx and ga with plangate approve (filters, attributes in the tree)
    for s in ("hx", "ga"):
        before = lab.head()
        r = _run(lab, "approve", "--config", c, f"plans/{s}", who=ALICE)
        r["moved"] = lab.head() != before
        rd[f"{s}:approve"] = r
    got["fired5"] = _fired(m)
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
        end = time.time() + 40
        while time.time() < end and not (lab.calls("hx") and lab.calls("ga")):
            time.sleep(0.3)
        time.sleep(2.0)
        page["api"] = _get(ui, "/api/")
        page["audit:html"] = _get(ui, "/audit")
        page["audit:api"] = _get(ui, "/api/audit")
        for k, sha in shas.items():
            page[f"c{k}:html"] = _get(ui, f"/commit/{sha}")
        page["html"] = _get(ui, "/")
        for s in ("hx", "rtl", "lng", "cx", "zp", "mm"):
            page[f"{s}:api"] = _get(ui, f"/api/plan/plans/{s}")
            page[f"{s}:html"] = _get(ui, f"/plan/plans/{s}")
        page["badname:html"] = _get(ui, "/plan/plans/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        page["badname:api"] = _get(ui, "/api/plan/plans/%E2%80%AE%3Cb%3E")
        page["hn:html"] = _get(ui, "/plan/plans/%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E")
        page["hn:api"] = _get(ui, "/api/plan/plans/%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E")
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["page"] = page
    got["daemonerr"] = (root / "daemon.err").read_text()[-3000:]
    got["fired4"] = _fired(m)
    got["ran2"] = {s: len(lab.calls(s)) for s in ("ok", "cx", "mm", "zp", "hx", "ga")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r92-surface-atk92b", _build)


PLANS = ["hx", "rtl", "lng", "ga", "zp", "cx"]
READERS = ["show", "showjson", "hash", "validate", "freeze"]
RD = [f"{s}:{r}" for s in PLANS for r in READERS]
TXT = ["txt:status", "txt:audit"]
ROW = [f"row:{s}" for s in ("hx", "rtl", "lng", "ga", "zp", "mm", "cx", "hn")]
PASS = [
    "pass:rc",
    "pass:cx",
    "pass:mm",
    "pass:zp",
    "pass:fired",
    "pass:audit",
    "pass:fsck",
    "pass:cloneaudit",
]
CHECK = ["check:json", "check:text", "check:fired"]
MCPS = ["hx", "rtl", "lng", "cx", "zp", "mm"]
MCP = [f"m{t}:{s}" for s in MCPS for t in ("status", "log")]
SUB = [f"submit:{k}" for k in ("prok", "prhx", "ok", "cx", "sl", "slchild", "pre", "pre2")] + [
    "submit:main"
]
PAGE = ["page:api", "page:html"] + [f"{s}:{w}" for s in MCPS for w in ("api", "html")]
PAGE += ["badname:html", "badname:api", "hn:html", "hn:api", "audit:html", "audit:api"]
COMMITS = ["attrs", "huge", "odd1", "odd2", "odd3", "ckb"]
PAGE += [f"c{k}:html" for k in COMMITS]
AUTH = [f"c{k}:author" for k in ("attrs", "huge", "odd1", "odd2", "odd3", "mmappr")]
PAGE += ["cmmappr:html"]
APPR = ["hx:approve", "ga:approve", "hx:ran", "ga:ran", "appr:fired"]
DAEMON = ["daemon:noerr", "daemon:once", "daemon:fired"]
IDS = RD + TXT + ROW + PASS + CHECK + MCP + SUB + PAGE + AUTH + APPR + DAEMON
BROKEN: dict[str, Any] = {}
HIDDEN = ("\x1b", "\u202e")


def _clean(text: str) -> None:
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]
    assert SECRET not in text, "the secret leaked"


def _shown(text: str) -> None:
    """A text output (not JSON): no raw control or bidi character (docs/approvals.md)."""
    _clean(text)
    for ch in HIDDEN:
        assert ch not in text, f"raw {ch!r} in: {text[:600]!r}"


def _html(text: str) -> None:
    _shown(text)
    low = text.lower()
    assert "<script" not in low and "<img" not in low, text[:1500]
    assert "onerror=alert" not in low or "&lt;img" in low, text[:1500]


def _check(got: dict[str, Any], vid: str) -> None:
    part, key = vid.split(":", 1)
    if vid in RD:
        seen = got["rd"][vid]
        text = seen["out"] + seen["err"]
        if key == "showjson":
            _clean(text)
        else:
            _shown(text)
        assert seen["rc"] == 0, text[-1500:]
        frozen = got["frozen"].get(part) or (got["rows"].get(f"plans/{part}") or {}).get("hash")
        if key in ("hash", "showjson", "validate"):
            assert frozen and frozen in seen["out"] + seen["err"], (frozen, text[-1500:])
        if part == "lng" and key == "show":
            assert "L" * 1000 in seen["out"], "the long value was not shown"
        return
    if part == "txt":
        seen = got["rd"]["statusplain" if key == "status" else "auditplain"]
        _shown(seen["out"] + seen["err"])
        assert seen["rc"] in (0, 1), seen["err"][-1500:]
        return
    if part == "row":
        row = got["rows"].get(f"plans/{HN if key == 'hn' else key}")
        assert row is not None, sorted(got["rows"])
        _clean(json.dumps(row))
        if key == "cx":
            assert row["status"] == "completed" and row["approver"] == "alice@example.com", row
        elif key == "mm":  # the agent's own approval, mapped to Alice by its .mailmap
            assert row["status"] != "completed" and row.get("approver") in (None, ""), row
            assert "E_APPROVER_NOT_ALLOWED" in json.dumps(row), row
        else:
            assert row["status"] == "pending_approval" and not row.get("problem"), row
            if key in got["frozen"]:
                assert row["hash"] == got["frozen"][key], row
        return
    if part == "pass":
        if key == "rc":
            assert got["pass"]["rc"] == 0, got["pass"]["err"][-1500:]
        elif key in ("cx", "mm", "zp"):
            want = 1 if key == "cx" else 0
            assert got["ran"][key] == want and got["ran2"][key] == want, (got["ran"], got["ran2"])
        elif key == "fired":
            assert not (got["fired1"] or got["fired2"] or got["fired3"]), got
        elif key == "fsck":  # the odd objects are what git itself lets through
            assert "error" not in got["oddfsck"], got["oddfsck"]
        else:
            seen = got["rd"]["audit" if key == "audit" else "cloneaudit"]
            _clean(seen["out"] + seen["err"])
            assert seen["rc"] in (0, 1) and '"executions"' in seen["out"], seen["err"][-1500:]
            ex = json.loads(seen["out"])["executions"]
            assert [e["plan"] for e in ex if e.get("approval_valid")] == ["plans/ok", "plans/cx"]
        return
    if part == "check":  # CI's prediction of ckb (a broken .gitmodules and a gitlink)
        if key == "fired":
            assert not got["fired2"], got["fired2"]
            return
        seen = got["rd"]["check" if key == "json" else "checktext"]
        text = seen["out"] + seen["err"]
        _shown(text) if key == "text" else _clean(text)
        assert seen["rc"] in (0, 1) and "E_GIT" not in text, text[-1500:]
        assert "plans/ckp" in seen["out"], text[-1500:]
        return
    if part.startswith("m") and vid in MCP:
        err, text = got["mcp"][f"{key}:{part[1:]}"]
        _clean(text)
        assert not err, text[:1500]
        if vid == "mstatus:mm":
            row = json.loads(text)["plans"][0]
            assert row["status"] == "pending_approval" and not row["approver"], row
        return
    if part == "submit":
        if key == "main":  # pull_request: true never commits on the watched branch
            assert not got["mainmoved"], "main moved"
            return
        err, text = got["submit"][key]
        _clean(text)
        tree = got["prtree"][key]
        if key in ("prok", "prhx"):
            assert not err and f"plans/{key}/PLAN.yml" in tree, (text[:800], tree[-500:])
            return
        if key in ("pre", "pre2") and not err:  # the branch made afresh from main, or refused
            assert "blob" in tree and f"\tplans/{key}/PLAN.yml" in tree, tree[-800:]
            assert not re.search(rf"^160000 .*\tplans/{key}$", tree, re.M), tree[-800:]
            return
        if key in ("pre", "pre2"):
            assert "E_" in text, text[:1500]
            return
        assert err and "E_" in text, text[:1500]
        if key in ("sl", "slchild"):
            assert "E_UNSAFE_PATH" in text, text[:1500]
            assert "plans/sl/" not in tree, tree[-800:]
        return
    if vid in PAGE:
        code, text = got["page"][vid if part != "page" else key]
        if key == "html":
            _html(text)
        else:
            _clean(text)
            json.loads(text)
        if part == "badname":
            assert code == 404, (code, text[:800])
        elif part == "cckb":  # not on the watched branch: refused or shown, never a 500
            assert code in (200, 404), (code, text[:800])
        else:
            assert code == 200, (code, text[:800])
        if part == "lng" and key == "html":
            assert "L" * 1000 in text, "the long value was not shown"
        return
    if vid in AUTH:  # the commit page names the commit's real author and committer
        code, text = got["page"][f"{part}:html"]
        assert code == 200, (code, text[:500])
        heads = re.findall(r"(Author|Commit): +([^\n]*)", text)
        assert len(heads) >= 2 and "agent@example.com" in heads[0][1], heads
        assert "alice@" not in heads[1][1], heads
        return
    if vid in APPR:
        if key == "fired":
            assert not got["fired5"] and not got["fired4"], (got["fired5"], got["fired4"])
        elif key == "ran":  # Alice's plangate approve: the daemon ran the plan once
            assert got["ran2"][part] == 1, (got["ran2"], got["daemonerr"][-800:])
        else:
            seen = got["rd"][vid]
            _shown(seen["out"] + seen["err"])
            assert seen["rc"] == 0 and seen["moved"], seen
        return
    if key == "noerr":
        assert "reconcile.failed" not in got["daemonerr"], got["daemonerr"][-1500:]
        _clean(got["daemonerr"])
    elif key == "once":
        assert got["ran2"]["cx"] == 1 and got["ran2"]["mm"] == 0, got["ran2"]
    else:
        assert not got["fired4"], got["fired4"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round92_surface(lab: Lab, vid: str) -> None:
    _check(lab.got, vid)  # type: ignore[attr-defined]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r92-", dir="/tmp/atk92b"))
    g = _build(out).got  # type: ignore[attr-defined]
    Path("/tmp/atk92b/got.json").write_text(json.dumps(g, default=str))
