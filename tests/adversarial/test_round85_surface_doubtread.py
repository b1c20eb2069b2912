"""Round 85, agent surfaces: what every reader says of a plan that round 84's r84nestkill
now ends ``failed`` with ``E_ACTION_IN_DOUBT`` after crash recovery (a run SIGKILLed while a
tool ran, then the plan made invalid before the next pass).

Lab (one, local mode): round 84's ``killinvalid`` lab built as it is
(``test_round84_runs_killinvalid._build``: ``c0`` control killed with nothing changed,
``ni`` an idempotent tool killed then a ``PLAN.yaml`` beside the nested plan, ``nj`` the
nested plan's YAML broken after a kill inside it, ``nt`` a tool only the nested plan names
dropped from the catalog; two passes), then the readers, each for ``plans/<v>``:
- ``row``: ``plangate status --json`` (``status``, and for ``c0``/``nj``/``nt`` the in-doubt
  named in the row: ``E_ACTION_IN_DOUBT``); ``text``: ``plangate status`` (text);
- ``show``: ``plangate show --json --config`` (the controller's status; ``execution`` as
  committed); ``showtext``: ``plangate show --config`` (its ``Status:`` line);
- ``mcp-status``, ``mcp-log`` (``status``, ``execution.status``, the in-doubt code),
  ``mcp-wait`` (0.5 s, no change from ``failed``);
- ``page``: the daemon's ``/api/plan/plans/<v>``; ``html``: ``/plan/plans/<v>``;
- ``audit``: the fresh clone's ``plangate audit --json`` of the plan's one execution.
Each must say ``failed`` (the status HEAD's ``execution:`` block and the controller's row
hold), never a stale ``executing`` or ``approved``, and name the row's code
(``E_ACTION_IN_DOUBT`` for ``c0``, ``nj``, ``nt``; ``E_PLAN_AMBIGUOUS`` for ``ni``); the
audit calls the one execution's approval valid (the start was on Alice's approval of a valid
plan: the nested plans were changed only after the kill).

Seen (round 85): 6 ids broke, 2 classes.
1. **The audit judges a killed run's start by its nested plan's later state**
   (``ni:audit``, ``nj:audit``): at the start commit ``plans/nin`` held only its PLAN.yml
   (``git ls-tree -r --name-only <start> plans/nin`` -> ``plans/nin/PLAN.yml``) and
   ``plans/njn/PLAN.yml`` parsed; the edit came in the next commit, after the kill. Yet
   ``git clone repo c && cd c && plangate audit --json`` gives for ``plans/ni``
   ``"approval_valid": false, "code": "E_PLAN_NOT_FROZEN", "message": "the plan does not
   validate (E_PLAN_AMBIGUOUS)"`` (``nj``: ``(E_YAML_PARSE)``), while the controller started
   the run on that approval (``plangate: start plans/ni``, the tool ran) and every other
   reader records a valid start that failed; ``c0`` and ``nt`` (the catalog changed, no
   commit) are ``approval_valid: true``. Should (docs/approvals.md: the audit says "whether
   the approval was valid" of each execution; docs/operations.md: "`plangate audit` ... judges
   each run by the policy its start names, through the controller's own decision path"): the
   approval valid, as the controller judged it at the start; a reviewer reading the page's
   audit verdict is told Alice's approval was invalid and the controller ran a plan it should
   not have.
2. **``show --config`` gives the plan's new error, not the controller's verdict**
   (``nj``, ``nt`` ``:{show,showtext}``): ``plangate show --json --config plangate.yml
   plans/nj/PLAN.yml`` exits 1 with ``{"code": "E_YAML_PARSE", ...}`` only (``nt``:
   ``E_TOOL_UNKNOWN``), the text form prints only that error line: no ``failed``, no
   ``E_ACTION_IN_DOUBT``, while ``status --json``, MCP ``status``/``log``, ``/api/plan/`` and
   the HTML page say ``failed`` with ``E_ACTION_IN_DOUBT`` (action 2/1 started, its end never
   recorded). Should (docs/formats.md: "With `--config`, the status shown is the controller's
   (its row of the plan, as `plangate status` reads it)"): the controller's ``failed`` and its
   code, with the plan's own problems beside them; a reviewer deciding whether to resume a
   run whose effect is in doubt is told only that the file does not parse. (``ni``'s
   ``E_PLAN_AMBIGUOUS`` is also its row's code, so it passes.)

fixed (2026-12-01, r85surface): (1) the audit judges a start with the nested plans read
from the start commit's tree (``nested.reading_from(verdicts.fetch_at(repo, start))`` around
its decision in ``approval/audit.py``), never from the checkout it runs in; (2) ``show
--config`` of a file that does not validate adds the controller's row as one more problem at
``status`` ("the controller holds status failed: E_ACTION_IN_DOUBT ...", the row's code),
for every format (``commands/show._row_problems``). Added ids: ``showmd`` (``show --format
markdown --config``) and ``auditcfg`` (``plangate audit --json --config`` in the shared
checkout, whose nested plans changed after the kill), each for the four variants.

Held: the row, ``status`` text, MCP ``status``/``log`` (the ``execution`` block with the
``in_doubt`` action)/``wait`` (``failed``, no change), ``/api/plan/`` and the HTML page all
said ``failed`` with the row's code for every variant; the daemon's pass changed nothing.
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
from advkit import Lab, cases, clone_audit
from test_round2_execution_kit import shared
from test_round84_runs_killinvalid import VIDS
from test_round84_runs_killinvalid import _build as _killed
from writerkit import free_port

DOUBT = ("c0", "nj", "nt")
READERS = (
    "row", "text", "show", "showtext", "mcp-status", "mcp-log", "mcp-wait", "page", "html",
    "audit", "showmd", "auditcfg",
)  # fmt: skip


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _build(root: Path) -> Lab:
    lab = _killed(root)
    got: dict[str, Any] = {"read": {}}
    c = str(lab.config)
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", c).stdout)}
    text = lab.cli("status", "--config", c).stdout
    calls: list[tuple[str, dict[str, Any]]] = []
    for v in VIDS:
        got["read"][f"{v}:row"] = json.dumps(rows.get(f"plans/{v}"))
        got["read"][f"{v}:text"] = "\n".join(
            line for line in text.splitlines() if f"plans/{v} " in line + " "
        )
        sh = lab.cli("show", "--json", "--config", c, str(lab.repo / "plans" / v / "PLAN.yml"))
        got["read"][f"{v}:show"] = sh.stdout or sh.stderr[-1500:]
        st = lab.cli("show", "--config", c, str(lab.repo / "plans" / v / "PLAN.yml"))
        got["read"][f"{v}:showtext"] = st.stdout[:3000] + st.stderr[-800:]
        md = lab.cli(
            "show", "--format", "markdown", "--config", c, str(lab.repo / "plans" / v / "PLAN.yml")
        )
        got["read"][f"{v}:showmd"] = md.stdout[:3000] + md.stderr[-800:]
        calls += [
            ("status", {"path": f"plans/{v}"}),
            ("log", {"path": f"plans/{v}"}),
            ("wait", {"path": f"plans/{v}", "timeout": 0.5}),
        ]
    replies, _err = mcpkit.session(lab, calls)
    for i, v in enumerate(VIDS):
        for j, key in enumerate(("mcp-status", "mcp-log", "mcp-wait")):
            res = (replies[3 * i + j] or {}).get("result", {})
            got["read"][f"{v}:{key}"] = "".join(x.get("text", "") for x in res.get("content", []))
    head = lab.head()
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", c], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    try:
        end = time.time() + 60
        while time.time() < end and _get(ui, "/api/")[0] != 200:
            time.sleep(0.2)
        time.sleep(1.0)
        for v in VIDS:
            got["read"][f"{v}:page"] = _get(ui, f"/api/plan/plans/{v}")[1]
            got["read"][f"{v}:html"] = _get(ui, f"/plan/plans/{v}")[1]
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["moved"] = lab.git("log", "--format=%h %an %s", f"{head}..HEAD")
    # the audit with the config, in the shared checkout whose nested plans changed since
    mine = json.loads(lab.cli("audit", "--json", "--config", c).stdout)
    for v in VIDS:
        got["read"][f"{v}:auditcfg"] = json.dumps(
            [e for e in mine.get("executions", []) if e.get("plan") == f"plans/{v}"]
        )
    report, _valid = clone_audit(lab, root)
    for v in VIDS:
        got["read"][f"{v}:audit"] = json.dumps(
            [e for e in report.get("executions", []) if e.get("plan") == f"plans/{v}"]
        )
    got["calls"] = {v: len(lab.calls(f"kil:{v}")) for v in ("c0", "nt")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-surface-doubtread", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 surface: {cls}: {what}"
    )


IDS = [f"{v}:{r}" for v in VIDS for r in READERS]
_A = "the audit judges a killed run's start by its nested plan's later state"
_S = "show --config gives the plan's new error, not the controller's verdict"
BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r85surface): see the module docstring


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round85_doubt_readers(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    v, reader = vid.split(":")
    seen = got["read"][vid]
    assert got["moved"] == "", got["moved"]  # the daemon's pass changed nothing
    code = "E_ACTION_IN_DOUBT" if v in DOUBT else "E_PLAN_AMBIGUOUS"  # the row's code
    if reader in ("audit", "auditcfg"):  # the start: Alice's valid approval, as judged then
        runs = json.loads(seen)
        assert len(runs) == 1 and runs[0].get("approval_valid"), seen[:1500]
        return
    if reader == "html":  # the page's text: its status chip, the run's in-doubt action
        body = seen[seen.find("<body") :]
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))
        assert f"Plan plans/{v} failed" in text, text[:3000]
        assert code in text, text[:3000]
        return
    if reader == "text":
        assert seen.split()[:2] == ["failed", f"plans/{v}"], seen
        return
    if reader in ("show", "showtext", "showmd"):  # "the status shown is the controller's"
        assert "failed" in seen or code in seen, seen[:1500]
        assert code in seen, seen[:1500]
        return
    body = json.loads(seen)
    if reader == "mcp-status":
        body = body["plans"][0]
    if reader == "page":
        body = body["row"]
    assert body.get("status") == "failed", seen[:2000]
    if reader == "mcp-wait":
        assert body.get("changed") is False, seen
        return
    assert code in seen, seen[:3000]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk85b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r85dr-", dir="/tmp/atk85b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
