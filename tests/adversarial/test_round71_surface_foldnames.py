"""Round 71, agent-facing surfaces: round 70's plan id rule (docs/plan-format.md,
``plans.plan_named_folder``/``plans.unsafe_name``: a folder named as a plan file, a source or
``EXECUTION_LOG.md``, compared case-insensitively, is no plan folder; any other name, capital
letters included, is a plan id to every reader, MCP ``log``/``status``/``wait`` too) attacked
with Unicode case folding and look-alikes, names that differ only in case or normalization,
and path spellings through MCP, the page and ``/api/plan/``.

Lab (one, module scope; local mode, fake dates, ``ui.listen: 0``, one daemon at the end for
the page and the API):
- ``plans/Deploy`` and ``plans/deploy`` (both Alice's, approved and run: different tags);
- ``plans/café`` in NFC (Alice's, ran) and ``plans/café`` in NFD (the agent's, pending);
- Alice's completed ``plans/h1`` .. ``plans/h6``, then the agent commits beside each a FOLDER
  holding a plan and a forged "completed, approved by alice" EXECUTION_LOG.md, named
  ``EXECUTıON_LOG.md`` (dotless i), ``EXECUTİON_LOG.md`` (dotted capital I),
  ``ＰＬＡＮ.yml`` (full-width), ``PLAN.yml.`` (trailing dot), ``PLAN.jſon`` (long s: casefolds
  to ``PLAN.json``) and ``ExEcUtIoN_lOg.Md``; then sets each inner plan ``approved`` and
  Alice approves the inner ``PLAN.jſon``/``ExEcUtIoN_lOg.Md`` ones too (refused folders
  must never run).

Changed in round 75 (r75twinfold): the case and NFC/NFD twins are one folder on a
case-insensitive or HFS+ checkout, so each pair is held E_PLAN_AMBIGUOUS on every reader and
none runs (docs/plan-format.md); the assertions below on them say so.
Changed in round 76 (r76uppins): a backslash in a name is E_UNSAFE_PATH by the one name rule
(git for Windows takes it for a separator), so MCP refuses ``plans\\deploy`` with that code
rather than E_USAGE: still a refusal, never another plan.

Asserted (round 71): each case/normalization twin is one plan to every reader (row, MCP ``status``/
``log``/``wait``, ``/api/plan/``, the page's title, the audit) and ran once on its own
approval, never answered with its twin's record; MCP path spellings (``plans/deploy/``,
``plans//deploy``, ``plans/x/../deploy``, ``plans\\deploy``, ``DEPLOY``, the file path of
``plans/Deploy``) answer that plan or refuse, never another plan; ``/api/plan/`` spellings
(``%2F``, a trailing slash, ``..``, ``%2E%2E``, ``//``, a backslash) the same; the folders
that casefold to a refused name (``ſ``, mixed case) are ``E_UNSAFE_PATH`` on the row and MCP
and never run; the look-alike folders that do not casefold to one (``ı``, ``İ``, full-width)
are plans of their own on every reader, agreeing, never run on the agent's word (a trailing
dot was one of them until round 74: NTFS drops it, so ``PLAN.yml.`` is refused as
``PLAN.yml`` is and its host held E_PLAN_AMBIGUOUS, r74heldread, 2026-11-30); Alice's plan
beside each keeps her record (completed, approver alice, the forged text never shown).

Broke: none. Held: every id (see FINDINGS.md, round 71).
"""

from __future__ import annotations

import json
import unicodedata
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from mcpkit import session
from oraclekit import ui_daemon
from test_round2_execution_kit import shared

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
FORGED_LOG = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r71)\n"
)
# host folder -> the agent's inner folder name, and whether the rule refuses it
INNER = {
    "h1": ("EXECUTıON_LOG.md", False),
    "h2": ("EXECUTİON_LOG.md", False),
    "h3": ("ＰＬＡＮ.yml", False),
    "h4": ("PLAN.yml.", True),  # NTFS drops the dot: PLAN.yml's place (round 74, r74heldread)
    "h5": ("PLAN.jſon", True),
    "h6": ("ExEcUtIoN_lOg.Md", True),
}
TWINS = {"Up": "Deploy", "low": "deploy", "nfc": NFC, "nfd": NFD}


def _get(port: int, path: str) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=15) as resp:
            return f"200 {resp.read().decode('utf-8', 'replace')}"
    except urllib.error.HTTPError as err:
        return f"{err.code} " + err.read().decode("utf-8", "replace")


API = {
    "api-Up": "plans/Deploy", "api-low": "plans/deploy", "api-nfc": f"plans/{quote(NFC)}",
    "api-nfd": f"plans/{quote(NFD)}", "api-enc-slash": "plans%2Fdeploy",
    "api-trail": "plans/deploy/", "api-dotdot": "plans/Deploy/../deploy",
    "api-encdot": "plans/Deploy/%2E%2E/deploy", "api-dslash": "plans//deploy",
    "api-bslash": "plans%5Cdeploy", "api-upper": "plans/DEPLOY",
}  # fmt: skip


def _pages(lab: Lab) -> dict[str, str]:
    out: dict[str, str] = {}
    with ui_daemon(lab, lab.config, "plans/h6") as port:
        for key, path in API.items():
            out[key] = _get(port, f"/api/plan/{path}")
            out["page" + key[3:]] = _get(port, f"/plan/{path}")
    return out


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\nui: {listen: 0}\n",
    )
    lab.git_date = "@1796100000 +0000"
    for key, slug in TWINS.items():
        lab.write(slug, plan_text(f"tw-{key}"))
    for host in INNER:
        lab.write(host, plan_text(host))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for key, slug in TWINS.items():
        if key != "nfd":
            lab.set_status(slug, "approved")
    for host in INNER:
        lab.set_status(host, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    for host, (inner, refused) in INNER.items():
        status = "pending_approval" if refused else "approved"
        lab.write(f"{host}/{inner}", plan_text(f"{host}-EVIL", status=status))
        lab.write(f"{host}/{inner}", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: look-alike folders", AGENT)
    lab.run()
    for host in ("h5", "h6"):
        lab.set_status(f"{host}/{INNER[host][0]}", "approved")
    lab.commit("alice: approve the inner ones", ALICE)
    lab.run()
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["status-text"] = lab.cli("status", "--config", cfg).stdout
    mcp: dict[str, str] = {f"tw-{k}": f"plans/{s}" for k, s in TWINS.items()}
    mcp.update({f"in-{h}": f"plans/{h}/{n}" for h, (n, _) in INNER.items()})
    mcp.update({f"host-{h}": f"plans/{h}" for h in INNER})
    spell = {
        "sp-trail": "plans/deploy/", "sp-dslash": "plans//deploy",
        "sp-dotdot": "plans/Deploy/../deploy", "sp-bslash": "plans\\deploy", "sp-upper": "DEPLOY",
        "sp-file": "plans/Deploy/PLAN.yml",
        "sp-bare": "Deploy", "sp-lowfile": "plans/Deploy/plan.yml",
    }  # fmt: skip
    calls: list[tuple[str, dict[str, Any]]] = []
    for path in mcp.values():
        calls += [("status", {"path": path}), ("log", {"path": path})]
    for path in spell.values():
        calls.append(("log", {"path": path}))
    waits = {"wait-nfd": NFD, "wait-nfc": NFC, "wait-low": "deploy"}
    for path in waits.values():
        calls.append(("wait", {"path": f"plans/{path}", "status": "executing", "timeout": 1}))
    replies = session(lab, calls)[0]
    for i, key in enumerate(mcp):
        got[f"{key}:mcp-status"] = replies[2 * i]
        got[f"{key}:mcp-log"] = replies[2 * i + 1]
    base = 2 * len(mcp)
    for j, key in enumerate(spell):
        got[key] = replies[base + j]
    for j, key in enumerate(waits):
        got[key] = replies[base + len(spell) + j]
    got["calls"] = {
        t: len(lab.calls(t))
        for t in [f"tw-{k}" for k in TWINS] + list(INNER) + [f"{h}-EVIL" for h in INNER]
    }
    code, report = lab.audit("--config", cfg)
    got["audit"] = (code, report)
    got.update(_pages(lab))
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-surface-foldnames", _build)


def _payload(reply: dict[str, Any] | None) -> tuple[bool, Any]:
    assert reply is not None, "no reply"
    result = reply["result"]
    text = result["content"][0]["text"]
    if result.get("isError"):
        return True, json.loads(text.split(": ", 1)[1])
    return False, json.loads(text)


BROKEN: dict[str, Any] = {}

# -- the twins: one plan per id, each reader names the plan the controller ran ----------------
TWIN_IDS = list(TWINS)


@pytest.mark.parametrize("key", cases(TWIN_IDS, TWIN_IDS, BROKEN))
def test_a_case_or_normalization_twin_is_held_on_every_reader(lab: Lab, key: str) -> None:
    """Changed in round 75 (r75twinfold): ``plans/Deploy``/``plans/deploy`` and the NFC/NFD
    ``plans/café`` are one folder on a case-insensitive or HFS+ checkout, so each pair is
    E_PLAN_AMBIGUOUS (round 71 ran each as its own plan): none runs, every reader says why,
    none answers with its twin's record."""
    got = lab.got  # type: ignore[attr-defined]
    plan = f"plans/{TWINS[key]}"
    assert got["calls"][f"tw-{key}"] == 0, got["calls"]
    row = got["rows"][plan]
    assert row["status"] is None and row.get("held") == "E_PLAN_AMBIGUOUS", row
    err, st = _payload(got[f"tw-{key}:mcp-status"])
    assert "E_PLAN_AMBIGUOUS" in json.dumps(st), st
    err, log = _payload(got[f"tw-{key}:mcp-log"])
    assert err and log["code"] == "E_PLAN_AMBIGUOUS", log
    api = got[f"api-{key}"]
    assert api.startswith("200 "), api[:300]
    data = json.loads(api[4:])
    assert data["row"]["plan"] == plan and data["row"]["status"] is None, api[:500]
    assert "E_PLAN_AMBIGUOUS" in api, api[:500]
    assert got[f"page-{key}"].startswith("200 "), got[f"page-{key}"][:300]


def test_twins_are_told_apart_in_status_text_and_the_audit(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    text = got["status-text"]
    nfd_lines = [ln for ln in text.splitlines() if "cafe" in ln]
    assert nfd_lines and all(NFD not in ln for ln in nfd_lines), nfd_lines  # marked, not bare
    _code, report = got["audit"]
    valid = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
    # round 75: the twins are held, none ran
    assert not {f"plans/{t}" for t in TWINS.values()} & set(valid), valid
    assert not any("EVIL" in json.dumps(e) or "/h" in e["plan"][7:] for e in report["executions"]
                   if e["plan"].count("/") > 1), report["executions"]  # fmt: skip


# -- MCP spellings: that plan or a refusal, never another plan --------------------------------
SPELL = {
    # round 75: ``plans/deploy`` and ``plans/Deploy`` are twins, held (never another plan);
    # ``DEPLOY`` is that one folder on a case-insensitive checkout: held too
    "sp-trail": ("E_PLAN_AMBIGUOUS", None), "sp-dslash": ("E_USAGE", None),
    "sp-dotdot": ("E_USAGE", None), "sp-bslash": ("E_UNSAFE_PATH", None),
    "sp-upper": ("E_PLAN_AMBIGUOUS", None),
    "sp-file": ("E_PLAN_AMBIGUOUS", None), "sp-bare": ("E_PLAN_AMBIGUOUS", None),
    "sp-lowfile": ("E_UNSAFE_PATH", None),
}  # fmt: skip


@pytest.mark.parametrize("key", cases(list(SPELL), list(SPELL), BROKEN))
def test_an_mcp_path_spelling_names_that_plan_or_is_refused(lab: Lab, key: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    code, plan = SPELL[key]
    err, body = _payload(got[key])
    if code == "ok":
        assert not err and body["path"] == plan, body
        tag = "tw-Up" if plan == "plans/Deploy" else "tw-low"
        assert tag in (body["execution_log"] or ""), body
    else:
        assert err and body["code"] == code, body


@pytest.mark.parametrize("key", cases(list(["wait-nfd", "wait-nfc", "wait-low"]),
                                      ["wait-nfd", "wait-nfc", "wait-low"], BROKEN))  # fmt: skip
def test_mcp_wait_answers_its_own_plans_status(lab: Lab, key: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    err, body = _payload(got[key])
    # round 75: the twins are held: an answer naming why, never "completed"
    assert err and body["code"] == "E_PLAN_AMBIGUOUS", body


# -- /api/plan/ spellings ------------------------------------------------------------------------
APISP = {
    "api-enc-slash": "plans/deploy", "api-trail": "plans/deploy", "api-dotdot": None,
    "api-encdot": None, "api-dslash": None, "api-bslash": None, "api-upper": None,
}  # fmt: skip


@pytest.mark.parametrize("key", cases(list(APISP), list(APISP), BROKEN))
def test_an_api_path_spelling_names_that_plan_or_is_not_found(lab: Lab, key: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    want = APISP[key]
    api, page = got[key], got["page" + key[3:]]
    if want is None:
        assert api.startswith("404 ") and "E_NOT_FOUND" in api, api[:400]
        assert page.startswith("404 "), page[:300]
        assert "tw-low" not in api + page and "tw-Up" not in api + page, api[:400]
    else:  # round 75: held beside its twin ``plans/Deploy``
        data = json.loads(api[4:])
        assert data["row"]["plan"] == want and data["row"]["status"] is None, api[:400]
        assert "E_PLAN_AMBIGUOUS" in api, api[:400]
        assert "tw-Up" not in api, api[:2000]  # never its twin's record
        assert f"<title>{want} " in page, page[:400]


# -- folders that casefold to a refused name, and look-alikes that do not ----------------------
IN_IDS = list(INNER)


@pytest.mark.parametrize("host", cases(IN_IDS, IN_IDS, BROKEN))
def test_a_lookalike_inner_folder_never_runs_and_readers_agree(lab: Lab, host: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    name, refused = INNER[host]
    inner = f"plans/{host}/{name}"
    assert got["calls"][f"{host}-EVIL"] == 0, got["calls"]
    assert got["calls"][host] == 1, got["calls"]
    row = got["rows"].get(inner)
    err_s, st = _payload(got[f"in-{host}:mcp-status"])
    err_l, log = _payload(got[f"in-{host}:mcp-log"])
    if refused:
        assert row is not None and row["status"] is None, row
        assert "E_UNSAFE_PATH" in json.dumps(row), row
        assert err_s and st["code"] == "E_UNSAFE_PATH", st
        assert err_l and log["code"] == "E_UNSAFE_PATH", log
    else:
        # a plan of its own, the agent's, never approved by anyone: every reader says so
        assert row is not None and row["status"] == "pending_approval", row
        assert row["approver"] is None, row
        assert not err_s and st["plans"][0]["status"] == "pending_approval", st
        assert not err_l and log["execution"] is None and log["execution_log"] is None, log
    # the plan beside it keeps Alice's record, the forged log never shown
    err_h, hst = _payload(got[f"host-{host}:mcp-status"])
    err_hl, hlog = _payload(got[f"host-{host}:mcp-log"])
    if name == "PLAN.yml.":  # NTFS: a claim of the host's PLAN.yml place, held (round 74)
        assert "E_PLAN_AMBIGUOUS" in json.dumps(hst) and err_hl, (hst, hlog)
        assert "forged-r71" not in json.dumps(hlog, ensure_ascii=False), hlog
        assert got["rows"][f"plans/{host}"].get("held") == "E_PLAN_AMBIGUOUS", got["rows"]
        return
    assert not err_h and hst["plans"][0]["status"] == "completed", hst
    assert hst["plans"][0]["approver"] == ALICE[1], hst
    assert not err_hl and "forged-r71" not in json.dumps(hlog, ensure_ascii=False), hlog
    assert got["rows"][f"plans/{host}"]["status"] == "completed", got["rows"][f"plans/{host}"]
