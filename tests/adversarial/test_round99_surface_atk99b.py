"""Round 99, the page and its API under hostile text (atk99b), read in a real headless chromium.

Lab (one, local mode): the agent commits one plan ``h-<k>`` per payload ``k`` whose
``plan.name``, ``task``, ``why`` and ``params`` all carry the payload (the tool ``rec``
prints its params back, so the payload is also the action's OUTPUT); Alice approves each
with ``plangate approve -m <payload>`` under an author NAME holding the payload; a pass runs
them. ``fail`` calls a tool that writes every payload to stderr and exits 3
(E_TOOL_FAILED quoting it); ``wait`` (all payloads, never approved) waits on the overview;
folders whose NAME is hostile (``d-<k>``: ``<img ...>``, ``{{7*7}}``, ``%2e%2e``, a bidi
override, ``"><svg>``) are committed too. ``ctl`` is an honest plan that must run. Then a
daemon with ``ui.listen`` and ``metrics.listen`` serves the snapshot, and ONE chromium (the
page's CSP bypassed on purpose, so escaping alone is tested) loads ``/``, ``/audit``, every
``/plan/`` and every approval ``/commit/``.

Ids:
* ``dom:<page>``: in chromium no payload script ran (each payload sets ``document.title`` /
  ``window.PWN``; no dialog), no element of a dangerous kind (script, img, svg, iframe,
  object, embed, style, form, base, meta-refresh) and no ``on*``/``style`` attribute came
  from text, no ``href``/``src`` with a scheme other than http(s) (relative links are the
  page's own); the response carries ``Content-Security-Policy: default-src 'none'``.
* ``text:<k>``: the plan page SHOWS the payload as text (bidi/zero-width as escapes, per
  docs/operations.md); ``api:<k>``: ``/api/plan/`` is valid JSON whose name/task/why/params
  equal the committed file's (text intact); ``row:<k>``: what the page says (status, hash)
  equals ``plangate status --json``; ``commit:<k>``: the approval commit page shows the
  note and author as text.
* ``dir:<k>``: a hostile folder name on ``/`` and ``/api/``: escaped, and its row equals
  ``status --json``'s (or the folder was never committed by git).
* ``metrics:*``, ``healthz``: Prometheus text that parses, no plan text in it.
* ``link:<k>``: the overview's link for a folder named ``k%41``, ``k?x=1``, ``k#x``,
  ``k+x``, ``k;x`` (decoys ``kA``, ``k``, ``k x`` beside them) opens that plan.
* ``bad-status``/``bad-tool``: a hostile ``plan.status`` / tool name: coded, page = status.
* ``secret_masked``: ``sec`` passes ``$<secrets.TOK>`` to the tool, which prints it back.
* ``forged_log_rows``: ``forge``'s newlines/table row/heading stay inside the log's text.
* ``ctl:*``: the honest plan ran once; every approved payload plan ran once; the page was up.

Seen (round 99, pytest, 168 ids, 56-100 s, 1 or 2 workers; chromium part ~40 s): nothing
broke (0 of 168). Every page loaded in chromium WITH its CSP bypassed (escaping alone)
showed each payload as text: no title change, no ``window.PWN``, no dialog, no element from
text (the only <style> is the page's own in <head>), no ``on*`` attribute, no non-http(s)
href; CSP ``default-src 'none'`` on ``/``, ``/audit``, ``/plan/``, ``/api/``. Bidi and
zero-width shown as ``\u202e``-style escapes; a TAB is shown as ``\t`` too (so
``java<TAB>script`` reads ``java\tscript``). EXECUTION_LOG.md escaped the markdown
(``\\[j\\]\\[r\\]``, ``&lt;img``) and folded the newlines of a name/why into one line; the
tool's stderr sits in a fenced JSON block. ``/api/plan/`` kept every string intact (name,
task, why, params = the committed YAML, the 60,000-char task included), its row's status and
hash = ``status --json``; the overview says ``plans/wait`` needs "one approval by an allowed
approver" from ``alice@example.com, *@ops.example.com``. Approval commits under
``plangate approve -m <payload>`` by an author NAME holding the payload all committed
(rc 0), each plan ran once; their ``/commit/`` pages show note and name as text. Folder names
``d<img ...>``, ``d{{7*7}}${1}``, ``d%2e%2e``, ``d"><svg ...>`` were read as plans
(pending_approval) and shown escaped; ``d\u202egpj.exe`` held ``E_UNSAFE_PATH`` (listed
under recent failures, status ``unknown``). Overview links percent-encode (``k%2541``,
``k%3Fx%3D1``, ``k%23x``, ``k%2Bx``, ``k%3Bx``) and open that plan, never a decoy. A hostile
``plan.status`` or tool name: ``invalid`` with ``E_SCHEMA_INVALID``, page = status. The
secret never appeared in any page, ``/api/``, ``/metrics`` or ``git log -p``; ``/metrics``
parses as Prometheus text with no plan text; ``/healthz`` 200 ``ok``. Not covered: the
webhook (remote mode only; no payload text of it reaches the page), branch names (local
mode shows none).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, page_settled
from test_round2_execution_kit import shared
from test_round97_surface_atk97b import _get, _spawn_daemon, _stop
from writerkit import free_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the lab reads every page in a real browser (as tests/service/test_ui.py does)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (apt install chromium)"
)

P = {
    "script": "<script>document.title='PWN-script';window.PWN=1</script>",
    "img": "<img src=x onerror=\"document.title='PWN-img'\">",
    "svg": '"><svg onload="document.title=\'PWN-svg\'"></svg>',
    "attr": "' onmouseover='document.title=`PWN-attr`' x='",
    "jsmd": "[clickme](javascript:document.title='PWN-jsmd')",
    "jsmd2": "[c](JaVaScRiPt:alert(1)) [d](java\tscript:alert(1)) [e](&#106;avascript:x)",
    "jsauto": "<javascript:alert(1)> <vbscript:msgbox(1)> [f](vbscript:x) [g](file:///etc/passwd)",
    "dataurl": "[h](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) ![i](javascript:x)",
    "refdef": "[j][r]\n\n[r]: javascript:document.title='PWN-ref'\n",
    "ahref": "<a href=\"javascript:document.title='PWN-a'\">x</a>",
    "endscript": "</script><script>document.title='PWN-end'</script><!--",
    "css": "<style>*{background:url(https://evil.example/x)}</style>"
    '<div style="x:expression(alert(1))">',
    "tmpl": "{{constructor.constructor('document.title=1')()}} ${7*7} {% debug %} #{1}",
    "bidi": "ok\u202etxet-nedih\u202c\u200b\u2066x\u2069\ufeff",
    "ansi": "\x1b[31mRED\x1b[0m\x1b]8;;http://evil.example\x07L\x1b]8;;\x07",
    "long": "W" * 60000,
    "dotdot": "%2e%2e/%2e%2e/etc/passwd ../../../etc/passwd",
    "forge": "x |\n\n| Approved by | mallory@example.com |\n\n## FORGED Status ✅ completed\n```\n",
    "jsonbreak": '"}]}</script><script>window.PWN=2</script>{"a":"',
}
KEYS = list(P)
DIRS = {
    "img": "d<img src=x onerror=alert(1)>",
    "tmpl": "d{{7*7}}${1}",
    "dotdot": "d%2e%2e",
    "bidi": "d\u202egpj.exe",
    "svg": 'd"><svg onload=alert(1)>',
}
LINKDIRS = {"pct": "k%41", "query": "k?x=1", "frag": "k#x", "plus": "k+x", "semi": "k;x"}
BAD_TAGS = {"SCRIPT", "IMG", "SVG", "IFRAME", "OBJECT", "EMBED", "STYLE", "FORM", "BASE", "LINK"}
SECRET = "s3cr3t-atk99b-value"


def hostile_plan(k: str, tool: str = "rec", v: str | None = None) -> str:
    q = json.dumps
    v = P[k] if v is None else v
    return (
        f"plan:\n  name: {q('N ' + v)}\n  task: {q('T ' + v)}\n  status: pending_approval\n"
        f"available_tools:\n  - name: {tool}\nactions:\n  - id: 1\n    tool: {tool}\n"
        f"    why: {q('W ' + v)}\n    params: {{tag: {q(k)}, v: {q(v)}}}\n"
    )


FAIL = (
    "import sys; sys.stderr.write("
    + json.dumps("\n".join(P[k] for k in KEYS if k != "long"))
    + "); sys.exit(3)"
)


def _cli(lab: Lab, who: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [mcpkit.PLANGATE, *args, "--config", str(lab.config)], cwd=lab.repo,
        env=lab.env(who), capture_output=True, text=True, timeout=180,
    )  # fmt: skip


DOM_JS = """() => [...document.querySelectorAll('*')].map(e => [
  (e.closest('head') ? 'H:' : '') + e.tagName,
  [...e.attributes].map(a => [a.name, a.value]),
  /^(TD|TH|H[1-6]|A|LI)$/.test(e.tagName) ? e.textContent.slice(0, 300) : null])"""


def _browse(urls: dict[str, str]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        ctx = b.new_context(bypass_csp=True, java_script_enabled=True)
        for key, url in urls.items():
            page = ctx.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d, dl=dialogs: (dl.append(d.message), d.dismiss()))
            try:
                page.goto(url, timeout=30000)
                page.wait_for_timeout(150)
                page.mouse.move(10, 10)
                out[key] = {
                    "title": page.title(),
                    "pwn": page.evaluate("() => window.PWN || null"),
                    "dialogs": dialogs,
                    "els": page.evaluate(DOM_JS),
                    "text": page.inner_text("body"),
                }
            except Exception as e:
                out[key] = {"error": repr(e)}
            page.close()
        b.close()
    return out


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(
        root,
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"boom: {{kind: exec, argv: {json.dumps(['python3', '-c', FAIL])}}}\n",
    )
    got: dict[str, Any] = {}
    for k in KEYS:
        lab.write(f"h-{k}", hostile_plan(k))
    lab.write("wait", hostile_plan("wait", v="".join(P[k] for k in KEYS if k != "long")))
    lab.write("fail", hostile_plan("img", tool="boom"))
    lab.write(
        "ctl", hostile_plan("tmpl").replace(P["tmpl"], "honest").replace('"tmpl"', '"honest"')
    )
    got["dirs"] = {}
    for k, d in DIRS.items():
        try:
            lab.write(d, hostile_plan(k).replace(f'tag: "{k}"', f'tag: "dir-{k}"'))
            got["dirs"][k] = True
        except OSError as e:
            got["dirs"][k] = repr(e)
    for k, dname in LINKDIRS.items():
        lab.write(dname, hostile_plan("tmpl", v="link " + k).replace('"tmpl"', f'"link-{k}"'))
    lab.write(
        "bad-status",
        hostile_plan("img").replace("status: pending_approval", "status: " + json.dumps(P["img"])),
    )
    lab.write(
        "bad-tool",
        hostile_plan("svg", tool=P["svg"])
        .replace(f"- name: {P['svg']}", f"- name: {json.dumps(P['svg'])}")
        .replace(f"tool: {P['svg']}", f"tool: {json.dumps(P['svg'])}"),
    )
    for decoy in ("kA", "k", "k x"):
        lab.write(decoy, hostile_plan("tmpl", v="DECOY").replace('"tmpl"', '"decoy"'))
    lab.commit("agent: plans " + P["img"] + P["bidi"], AGENT)
    lab.run(check=False)
    got["approve"] = {}
    for k in KEYS:
        who = (f"Alice {P[k][:200]}", ALICE[1])
        r = _cli(lab, who, "approve", f"plans/h-{k}", "-m", "note " + P[k][:2000])
        got["approve"][k] = [r.returncode, r.stderr[-600:], lab.head()]
    lab.write("sec", hostile_plan("sec", v="<b>$<secrets.TOK></b>" + P["img"]))
    lab.commit("agent: a plan with a secret", AGENT)
    lab.run(check=False)
    for slug in ("fail", "ctl", "sec"):
        lab.approve(slug)
    lab.run(check=False)
    lab.run(check=False)
    got["ran"] = {k: len(lab.calls(k)) for k in KEYS}
    got["ranctl"] = len(lab.calls("honest"))
    got["status"] = lab.rows()
    ui, met = free_port(), free_port()
    lab.config.write_text(
        lab.config.read_text() + f'ui: {{listen: {ui}}}\nmetrics: {{listen: "127.0.0.1:{met}"}}\n'
    )
    d = _spawn_daemon(lab, root, "1")
    try:
        got["settled"] = page_settled(ui, lab.head, timeout=90)
        assert d.poll() is None, (root / "daemon-1.err").read_text()
        base = f"http://127.0.0.1:{ui}"
        got["api"] = {}
        for k in KEYS:
            got["api"][k] = _get(ui, f"/api/plan/plans/h-{k}")
        got["api"]["sec"] = _get(ui, "/api/plan/plans/sec")
        got["api_over"] = _get(ui, "/api/")
        got["metrics"] = _get(met, "/metrics")
        got["healthz"] = _get(met, "/healthz")
        import http.client

        hdr: dict[str, str] = {}
        for path in ("/", "/audit", "/plan/plans/h-script", "/api/"):
            c = http.client.HTTPConnection("127.0.0.1", ui, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            hdr[path] = r.getheader("Content-Security-Policy") or ""
            c.close()
        got["csp"] = hdr
        for b in ("bad-status", "bad-tool"):
            got["api"][b] = _get(ui, f"/api/plan/plans/{b}")
        urls = {"over": base + "/", "audit": base + "/audit"}
        for slug in ("bad-status", "bad-tool", "sec", "wait", "fail"):
            urls[f"plan:{slug}"] = base + f"/plan/plans/{slug}"
        for k in KEYS:
            urls[f"plan:{k}"] = base + f"/plan/plans/h-{k}"
            sha = got["approve"][k][2]
            urls[f"commit:{k}"] = base + f"/commit/{sha}"
        for k, dname in DIRS.items():
            urls[f"dir:{k}"] = base + "/plan/" + urllib.parse.quote(f"plans/{dname}", safe="/")
            got["api"][f"dir:{k}"] = _get(
                ui, "/api/plan/" + urllib.parse.quote(f"plans/{dname}", safe="/")
            )
        t0 = time.time()
        got["dom"] = _browse(urls)
        got["browse_s"] = time.time() - t0
        got["links"] = {}
        for k, dname in LINKDIRS.items():
            hrefs = [dict(a).get("href") for t, a, txt in got["dom"]["over"].get("els", [])
                     if t == "A" and (txt or "").strip() == f"plans/{dname}"]  # fmt: skip
            got["links"][k] = [(h, _get(ui, urllib.parse.urlsplit(
                urllib.parse.urljoin(base + "/", h))._replace(scheme="", netloc="").geturl()
                .replace("/plan/", "/api/plan/", 1).split("#")[0]))
                for h in hrefs if h]  # fmt: skip
    finally:
        _stop(d)
    (root / "got.json").write_text(json.dumps(got, default=str, indent=1))
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r99-surface-atk99b", _build)


def _dom_bad(view: dict[str, Any]) -> list[Any]:
    bad: list[Any] = []
    if "error" in view:
        return [view["error"]]
    if "PWN" in view["title"] or view["pwn"] or view["dialogs"]:
        bad.append(("ran", view["title"], view["pwn"], view["dialogs"]))
    for tag, attrs, _text in view["els"]:
        if tag in BAD_TAGS:  # the page's own <style> sits in <head> ("H:STYLE")
            bad.append(("tag", tag, attrs))
        for name, value in attrs:
            if name.lower().startswith("on"):
                bad.append(("attr", tag, name, value))
            if name.lower() in ("href", "src", "action", "formaction", "xlink:href"):
                v = re.sub(r"[\x00-\x20]", "", value).lower()
                m = re.match(r"([a-z][a-z0-9+.-]*):", v)
                if m and m.group(1) not in ("http", "https"):
                    bad.append(("href", tag, value))
    return bad


PAGES = [
    "plan:bad-status",
    "plan:bad-tool",
    "plan:sec",
    "over",
    "audit",
    "plan:wait",
    "plan:fail",
] + [f"plan:{k}" for k in KEYS]
PAGES += [f"commit:{k}" for k in KEYS] + [f"dir:{k}" for k in DIRS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("page", cases([f"dom:{p}" for p in PAGES], PAGES, BROKEN))
def test_dom_runs_nothing(lab: Lab, page: str) -> None:
    view = lab.got["dom"][page]  # type: ignore[attr-defined]
    if page == "plan:wait":
        assert "Plan plans/wait pending_approval" in view["text"], view["text"][:500]
    if page == "over":  # who may approve the waiting plan, as the config says
        assert (
            "plans/wait\tpending_approval\tone approval by an allowed approver\talice@example"
            ".com, *@ops.example.com" in view["text"]
        ), view["text"][:3000]
    assert not _dom_bad(view), _dom_bad(view)[:5]
    assert "Traceback" not in view["text"]


def _shown(k: str) -> str:
    v = P[k]
    if k == "bidi":
        return "ok\\u202etxet-nedih"
    if k == "ansi":
        return "RED"
    if k == "jsmd2":
        return "[c](JaVaScRiPt:alert(1)) [d](java\\tscript"  # a tab is shown as its escape
    return v.strip().split("\n")[0][:80]


@pytest.mark.parametrize("k", cases([f"text:{k}" for k in KEYS], KEYS, BROKEN))
def test_plan_page_shows_text(lab: Lab, k: str) -> None:
    view = lab.got["dom"][f"plan:{k}"]  # type: ignore[attr-defined]
    text = view.get("text", "")
    assert _shown(k) in text, (k, text[:1500])
    if k == "bidi":
        assert not set("\u202e\u202c\u200b\u2066\u2069\ufeff") & set(text), "hidden chars raw"


@pytest.mark.parametrize("k", cases([f"api:{k}" for k in KEYS], KEYS, BROKEN))
def test_api_text_intact(lab: Lab, k: str) -> None:
    code, body = lab.got["api"][k]  # type: ignore[attr-defined]
    assert code == 200, body[:500]
    data = json.loads(body)
    doc = data["document"]
    want = lab.plan(f"h-{k}")
    assert doc["plan"]["name"] == want["plan"]["name"] == "N " + P[k]
    assert doc["plan"]["task"] == want["plan"]["task"]
    assert doc["actions"][0]["why"] == want["actions"][0]["why"]
    assert doc["actions"][0]["params"] == want["actions"][0]["params"]
    assert SECRET not in body and "Traceback" not in body


@pytest.mark.parametrize("k", cases([f"row:{k}" for k in KEYS], KEYS, BROKEN))
def test_page_row_equals_status(lab: Lab, k: str) -> None:
    _code, body = lab.got["api"][k]  # type: ignore[attr-defined]
    row = json.loads(body)["row"]
    want = lab.got["status"][f"plans/h-{k}"]  # type: ignore[attr-defined]
    assert (row["status"], row.get("hash")) == (want["status"], want.get("hash")), (row, want)


@pytest.mark.parametrize("k", cases([f"commit:{k}" for k in KEYS], KEYS, BROKEN))
def test_commit_page_shows_note(lab: Lab, k: str) -> None:
    rc, err, _sha = lab.got["approve"][k]  # type: ignore[attr-defined]
    assert rc == 0 or re.search(r"E_[A-Z_]+", err), err
    assert "Traceback" not in err
    if rc == 0 and k not in ("ansi", "bidi", "long"):
        text = lab.got["dom"][f"commit:{k}"]["text"]  # type: ignore[attr-defined]
        assert _shown(k)[:40] in text, text[:1500]


@pytest.mark.parametrize("k", cases([f"dir:{k}" for k in DIRS], list(DIRS), BROKEN))
def test_hostile_folder(lab: Lab, k: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    over = got["api_over"][1]
    json.loads(over)
    rel = f"plans/{DIRS[k]}"
    st = got["status"].get(rel)
    code, body = got["api"][f"dir:{k}"]
    assert code in (200, 404), body[:300]
    data = json.loads(body)
    assert "Traceback" not in body
    if st is None:
        assert code == 404 or data["row"].get("status") is None, (code, body[:400])
    else:
        assert code == 200, (rel, st, body[:400])
        assert (data["row"]["status"], data["row"].get("hash")) == (st["status"], st.get("hash"))
        assert data["row"]["plan"] == rel, data["row"]
    assert len(lab.calls(f"dir-{k}")) == 0  # never approved: never ran


def test_metrics_parse_and_carry_no_plan_text(lab: Lab) -> None:
    code, body = lab.got["metrics"]  # type: ignore[attr-defined]
    assert code == 200
    line = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_]+="[^"\\\n]*",?)*\})? \S+$')
    for ln in body.splitlines():
        if ln and not ln.startswith("#"):
            assert line.match(ln), ln
    for frag in ("PWN", "<script", "onerror", "\u202e", "javascript:"):
        assert frag not in body


def test_healthz(lab: Lab) -> None:
    code, body = lab.got["healthz"]  # type: ignore[attr-defined]
    assert code == 200 and json.loads(body)["status"] == "ok", body


@pytest.mark.parametrize("path", ["/", "/audit", "/plan/plans/h-script", "/api/"])
def test_csp(lab: Lab, path: str) -> None:
    csp = lab.got["csp"][path]  # type: ignore[attr-defined]
    assert csp.startswith("default-src 'none'") and "script-src" not in csp, csp


def test_ctl_honest_ran(lab: Lab) -> None:
    assert lab.got["ranctl"] == 1  # type: ignore[attr-defined]
    assert lab.got["settled"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("k", cases([f"ctl:ran:{k}" for k in KEYS], KEYS, BROKEN))
def test_approved_ran_once(lab: Lab, k: str) -> None:
    rc = lab.got["approve"][k][0]  # type: ignore[attr-defined]
    assert lab.got["ran"][k] == (1 if rc == 0 else 0), (k, lab.got["approve"][k])  # type: ignore[attr-defined]


def test_ctl_failure_shown(lab: Lab) -> None:
    text = lab.got["dom"]["plan:fail"]["text"]  # type: ignore[attr-defined]
    assert "E_TOOL_FAILED" in text, text[:1500]


def test_forged_log_rows_stay_text(lab: Lab) -> None:
    """A name/why with newlines, a table row and a heading must not become the rendered
    log's own rows: no cell says Mallory, no heading says FORGED."""
    view = lab.got["dom"]["plan:forge"]  # type: ignore[attr-defined]
    for tag, _a, text in view["els"]:
        if tag in ("TD", "TH"):
            assert (text or "").strip() != "mallory@example.com", (tag, text)
        if re.match(r"H[1-6]$", tag):
            assert not (text or "").strip().startswith("FORGED"), (tag, text)


def test_overview_rows_equal_status(lab: Lab) -> None:
    """Every plan row ``/api/`` shows (its sections) has the status ``status --json`` has,
    and the waiting plan names who may approve it (the config's approvers)."""
    over = json.loads(lab.got["api_over"][1])  # type: ignore[attr-defined]
    st = lab.got["status"]  # type: ignore[attr-defined]
    seen = 0
    for sec in over["sections"]:
        for row in sec["plans"]:
            want = st.get(row["plan"])
            assert want is not None, row["plan"]
            assert row.get("status") in (None, want["status"]), (row, want["status"])
            seen += 1
            if row["plan"] == "plans/wait":
                assert row["needs"]["who"] == ["alice@example.com", "*@ops.example.com"], row
    assert seen >= 1


def test_secret_masked_everywhere(lab: Lab) -> None:
    """The tool got the secret and printed it back: it ran, and no page, API answer, metric
    or committed log shows the value."""
    got = lab.got  # type: ignore[attr-defined]
    assert len(lab.calls("sec")) == 1
    assert SECRET in json.dumps(lab.calls("sec"))  # the tool did get it (control)
    code, body = got["api"]["sec"]
    assert code == 200 and SECRET not in body
    for key, view in got["dom"].items():
        assert SECRET not in view.get("text", ""), key
    assert SECRET not in got["metrics"][1]
    assert SECRET not in lab.git("log", "-p", "main")


@pytest.mark.parametrize("k", cases([f"link:{k}" for k in LINKDIRS], list(LINKDIRS), BROKEN))
def test_overview_link_opens_that_plan(lab: Lab, k: str) -> None:
    """The overview's link for a folder whose name holds a URL metacharacter (``%41``,
    ``?``, ``#``, ``+``, ``;``) opens THAT plan, never a decoy (``kA``, ``k``, ``k x``)."""
    links = lab.got["links"][k]  # type: ignore[attr-defined]
    rel = f"plans/{LINKDIRS[k]}"
    if rel not in lab.got["status"]:  # type: ignore[attr-defined]
        pytest.skip("git or the controller never listed it")
    assert links, f"no link for {rel} on the overview"
    for href, (code, body) in links:
        assert code == 200, (href, code, body[:300])
        assert json.loads(body)["row"]["plan"] == rel, (href, json.loads(body)["row"]["plan"])


@pytest.mark.parametrize("b", ["bad-status", "bad-tool"])
def test_coded_refusal_quoting_plan_text(lab: Lab, b: str) -> None:
    """A hostile status / tool name: the row is refused with an E_ code (never run), ``/api/``
    says what ``status --json`` says, and the page shows the code (its DOM is checked by
    ``dom:plan:<b>``)."""
    st = lab.got["status"][f"plans/{b}"]  # type: ignore[attr-defined]
    code, body = lab.got["api"][b]  # type: ignore[attr-defined]
    assert code in (200, 404) and "Traceback" not in body, body[:300]
    row = json.loads(body).get("row") or {}
    assert (row.get("status"), row.get("hash")) == (st["status"], st.get("hash")), (row, st)
    assert st["status"] == "invalid" and re.match(r"E_[A-Z_]+$", row.get("code") or ""), row
    text = lab.got["dom"][f"plan:{b}"]["text"]  # type: ignore[attr-defined]
    assert re.search(r"E_[A-Z_]+", text), text[:800]
