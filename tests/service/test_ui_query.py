"""The page's query strings (round 126, ``api-overview-query-not-checked``): the overview's
``?status=S&page=N`` answers the status and page asked for, or a coded 400 naming the
parameter and the values there are; no route takes a parameter it does not read.

A real page server over a real repository's status rows (``ui.max_rows`` 2, so a status of
three plans has two pages)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.plan.shape import STATUSES
from tests.support.daemonkit import free_port
from tests.support.gitenv import commit_all
from tests.support.gitkit import AGENT

PLAN = """\
plan:
  name: "{name}"
  task: "A plan to page through"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "greet"
    params: {{who: world}}
"""


@pytest.fixture
def page(tmp_path: Path, repo: Path) -> Iterator[str]:
    from controller.service.agentapi import AgentApi
    from controller.service.ui.data import UiData
    from controller.service.ui.server import serve
    from controller.settings import load_config

    for slug in ("a", "b", "c"):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(PLAN.format(name=slug))
    commit_all(repo, "agent: three plans", AGENT)
    port = free_port()
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\nui: {{listen: {port}}}\n"
        "tools:\n  greet: {kind: echo}\n"
    )
    cfg = load_config(config)
    api = AgentApi(cfg)
    data = UiData(cfg, lambda: repo, max_rows=2)
    try:
        rows = api.status()["plans"]
        assert {r["status"] for r in rows} == {"pending_approval"}, rows
        data.publish(rows)
        server = serve(cfg, data, lambda: repo)
    finally:
        api.close()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        data.close()


def _get(base: str, path: str) -> httpx.Response:
    return httpx.get(base + path, timeout=10)


@pytest.mark.parametrize(
    ("query", "number", "shown"),
    [
        ("?status=pending_approval", 1, ["plans/a", "plans/b"]),
        ("?status=pending_approval&page=2", 2, ["plans/c"]),
        ("?page=2&status=pending_approval", 2, ["plans/c"]),
        ("?status=completed", 1, []),  # a status no plan has now: a page of none
        ("?status=unknown", 1, []),  # the overview's own section of rows with no status
    ],
)
def test_an_overview_query_answers_the_status_and_page_asked(
    page: str, query: str, number: int, shown: list[str]
) -> None:
    for prefix in ("/api/", "/api"):
        r = _get(page, prefix + query)
        assert r.status_code == 200, r.text[:500]
        (section,) = r.json()["sections"]
        assert section["status"] == query.split("status=")[1].split("&")[0]
        assert (section["page"], [p["plan"] for p in section["plans"]]) == (number, shown)
        assert 1 <= section["page"] <= section["pages"], section
    assert _get(page, "/" + query).status_code == 200


#: (query, the parameter refused, what the message says, what the remedy says)
REFUSED = {
    "typo": ("?status=pending-approval", "status", "'pending-approval'", "pending_approval"),
    "case": ("?status=PENDING_APPROVAL", "status", "'PENDING_APPROVAL'", "pending_approval"),
    "climb": ("?status=..%2F..%2Fx", "status", "'../../x'", "pending_approval"),
    "nul": ("?status=%00", "status", "'\\x00'", "pending_approval"),
    "empty-status": ("?status=", "status", "status is empty", "leave status out"),
    "negative": ("?status=pending_approval&page=-1", "page", "'-1'", "whole number"),
    "zero": ("?status=pending_approval&page=0", "page", "'0'", "whole number"),
    "word": ("?status=pending_approval&page=abc", "page", "'abc'", "whole number"),
    "float": ("?status=pending_approval&page=1e9", "page", "'1e9'", "whole number"),
    "past": ("?status=pending_approval&page=3", "page", "past the last page", "from 1 to 2"),
    "huge": (
        "?status=pending_approval&page=99999999999999999999999",
        "page",
        "99999999999999999999999 is past the last page",
        "from 1 to 2",
    ),
    "page-alone": ("?page=2", "page", "no status is given", "give the status too"),
    "twice": ("?status=completed&status=pending_approval", "status", "given twice", "once"),
    "unknown-param": ("?stauts=pending_approval", "stauts", "'stauts'", "?status= and ?page="),
    "not-utf8": ("?status=%ff", "", "not UTF-8", "?status="),
    "many": ("?" + "&".join(f"x{i}=1" for i in range(50)), "", "more than 8", "?status="),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_an_overview_query_that_does_not_fit_is_a_coded_400(page: str, case: str) -> None:
    """Round 126: each of these answered 200 as if valid (an empty section of a status no
    plan has, page 1 for ``-1`` or ``abc``, ``page: 1000000`` of 1)."""
    query, param, message, remedy = REFUSED[case]
    r = _get(page, "/api/" + query)
    assert r.status_code == 400, (r.status_code, r.text[:500])
    assert r.headers["Content-Type"] == "application/json"
    err = r.json()
    assert (err["ok"], err["code"], err["path"]) == (False, "E_USAGE", f"/api/?{param}"), err
    assert message in err["message"] and remedy in err["remedy"], err
    if param == "status" and case not in ("empty-status", "twice"):
        assert all(s in err["remedy"] for s in STATUSES), err
    html = _get(page, "/" + query)  # the page itself: the same refusal, as a page
    assert html.status_code == 400 and html.headers["Content-Type"].startswith("text/html")
    assert (
        "400 Bad request" in html.text
        and "default-src 'none'" in html.headers["Content-Security-Policy"]
    )
    assert "plans/a" not in html.text, html.text[:500]


@pytest.mark.parametrize("route", ["/api/plan/plans/a", "/plan/plans/a", "/api/audit", "/audit"])
def test_a_route_that_reads_no_parameter_refuses_one(page: str, route: str) -> None:
    assert _get(page, route).status_code == 200
    r = _get(page, route + "?status=pending_approval")
    assert r.status_code == 400, r.text[:300]
    if route.startswith("/api/"):
        err = r.json()
        assert err["code"] == "E_USAGE" and "reads no parameter" in err["remedy"], err
    assert _get(page, "/api/nothing?x=1").status_code == 404  # no route: 404 whatever the query
