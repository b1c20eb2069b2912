"""Round 12, what is recorded and what runs: names that collide once written as a trailer,
the MCP server's ``submit``/``log``/``status`` with hostile slugs and paths, and hostile TOON
sources for ``plangate convert``.

- ``trailer-blank``: ``plans/foo`` (pending, never approved) beside ``plans/foo `` (a folder
  name ending in a blank) that Alice approves: ``git interpret-trailers`` trims values, so a
  ``Plan: plans/foo `` trailer would read as ``plans/foo``. Defence asserted: ``plans/foo ``
  never runs (E_UNSAFE_PATH in ``status``), and no controller commit records a start or an
  outcome of ``plans/foo``.
- ``trailer-escape``: ``plans/bs\\n`` (a literal backslash and ``n``) and ``plans/bs<LF>`` (a
  real line break, which the controller writes escaped as ``\\n``): both approved by Alice.
  Defence asserted: the line-break folder never runs (E_UNSAFE_PATH), and ``status`` keeps
  them apart. Changed (round 76, r76uppins): the literal one ran exactly once; a backslash
  is now E_UNSAFE_PATH too (git for Windows reads ``plans/bs\\n`` as the path ``plans/bs/n``
  and checks no such folder out), so neither runs, each on its own row.
- ``mcp-slug``: ``submit`` with ``../evil``, ``a/../../evil``, ``..``, ``.git/hooks``,
  ``x/../y``, ``.plangate``, an absolute path, ``-x``, ``ok ``, ``a//b``, ``a\\b``, ``.``,
  ``ok/..``: each refused (E_USAGE), nothing written or committed outside ``plans/``.
- ``mcp-path``: ``log`` and ``status`` with ``../secret.txt``, ``plans/../../secret.txt``, an
  absolute path, ``../plangate.yml``, ``README``, ``plans/../README``, ``.git``: none answers
  with the content of a file outside the plans folder.
- ``toon-*``: a PLAN.toon nested 3,000 deep, a declared row count of 10^12, a 6,000-digit
  number: refused ``E_SCHEMA_INVALID`` naming the bound the reader met (the nesting depth,
  the declared count against the rows found, the digit limit) rather than building what was
  declared; 20,000 ``[`` stay one string. No timing assert (the project has none).

All held (round 12).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

SECRET = "SECRETMARK-r12-7f3a"
BAD_SLUGS = [
    "../evil",
    "a/../../evil",
    "..",
    ".git/hooks",
    "x/../y",
    ".plangate",
    "/tmp/r12-abs-evil",
    "-x",
    "ok ",
    "a//b",
    "a\\b",
    ".",
    "ok/..",
]
BAD_PATHS = [
    "../secret.txt",
    "plans/../../secret.txt",
    "plans/ok/../../../secret.txt",
    "../plangate.yml",
    "README",
    "plans/../README",
    ".git",
    "../state",
]


def _mcp(lab: Lab) -> list[tuple[str, str, str]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    out: list[tuple[str, str, str]] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "controller", "mcp", "--config", str(lab.config)],
            env=lab.env(),
            cwd=str(lab.root),
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            for slug in BAD_SLUGS:
                got = await session.call_tool(
                    "submit", {"plan": plan_text("mcp-sub"), "slug": slug}
                )
                out.append(("submit", slug, got.content[0].text if got.content else ""))
            for path in [*BAD_PATHS, str(lab.root / "secret.txt")]:
                for tool in ("log", "status"):
                    got = await session.call_tool(tool, {"path": path})
                    out.append((tool, path, got.content[0].text if got.content else ""))

    asyncio.run(main())
    return out


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent: {identity: {name: Agent, email: agent@example.com}}\n")
    (root / "secret.txt").write_text(SECRET + "\n")
    with open(lab.config, "a") as f:
        f.write(f"# {SECRET}\n")
    lab.write("ok", plan_text("ok"))
    lab.write("foo", plan_text("foo"))
    lab.write("foo ", plan_text("foo-blank"))
    lab.write("bs\\n", plan_text("bs-literal"))
    lab.write("bs\n", plan_text("bs-newline"))
    lab.commit("submit")
    lab.run()
    for slug in ("foo ", "bs\\n", "bs\n"):
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.mcp = _mcp(lab)  # type: ignore[attr-defined]
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r12-runs-names", _build)


def test_trailer_blank_never_runs_nor_records_the_trimmed_name(lab: Lab) -> None:
    assert lab.calls("foo-blank") == [] and lab.calls("foo") == []
    assert "E_UNSAFE_PATH" in json.dumps(lab.status().get("plans/foo ", {}))
    # since round 75 (r75twinfold) ``plans/foo`` beside ``plans/foo `` (one folder on NTFS) is
    # held from birth too, never frozen (it stayed ``pending_approval`` before)
    assert "E_PLAN_AMBIGUOUS" in json.dumps(lab.status()["plans/foo"]), lab.status()["plans/foo"]
    for row in lab.log_rows():
        if row[2] != BOT[1]:
            continue
        trailers = lab.git("interpret-trailers", "--parse", input=row[4])
        for line in trailers.splitlines():
            if line.startswith("Plan:") and line.split(":", 1)[1].strip() == "plans/foo":
                assert "freeze" in row[3] or "Plan-Event: freeze" in row[4], row[3]


def test_trailer_escape_keeps_the_two_folders_apart(lab: Lab) -> None:
    assert lab.calls("bs-newline") == []
    # since round 76 (r76uppins) a backslash holds the literal folder too (E_UNSAFE_PATH: the
    # path ``bs/n`` to git for Windows); it ran once before. Two rows still, kept apart.
    assert lab.calls("bs-literal") == []
    rows = lab.status()
    assert "E_UNSAFE_PATH" in json.dumps(rows["plans/bs\\n"]), rows["plans/bs\\n"]
    assert rows["plans/bs\\n"].get("status") != "completed"
    assert "E_UNSAFE_PATH" in json.dumps(rows.get("plans/bs\n", {}))
    assert rows.get("plans/bs\n", {}).get("status") != "completed"


def test_mcp_submit_refuses_every_hostile_slug(lab: Lab) -> None:
    answers = [a for a in lab.mcp if a[0] == "submit"]  # type: ignore[attr-defined]
    assert len(answers) == len(BAD_SLUGS)
    for _, slug, text in answers:
        assert '"E_USAGE"' in text and '"submitted": true' not in text, (slug, text)
    touched = set(lab.git("log", "-z", "--name-only", "--format=", "HEAD").split("\0")) - {""}
    touched = {t.strip("\n") for t in touched} - {""}
    assert all(
        p.startswith("plans/") or p in {"README", ".plangate/policy.json"} for p in touched
    ), touched
    assert not Path("/tmp/r12-abs-evil").exists()
    assert not (lab.root / "evil").exists() and not (lab.repo / "evil").exists()
    assert lab.calls("mcp-sub") == []


def test_mcp_log_and_status_never_read_outside_the_plans(lab: Lab) -> None:
    answers = [a for a in lab.mcp if a[0] in ("log", "status")]  # type: ignore[attr-defined]
    assert answers
    for tool, path, text in answers:
        assert SECRET not in text, (tool, path)
        assert "plans:" not in text or tool == "status", (tool, path)
        assert "[core]" not in text, (tool, path)


def _toon(kind: str) -> str:
    head = "metadata:\n  title: t\n  objective: o\n"
    row = "  step_1,task_1,run,AGENT_EXECUTION,{t}\n"
    if kind == "deep":
        s = (
            head
            + "steps[1]{id,task_id,action,step_type,timeout}:\n"
            + row.format(t=30)
            + "shared_inputs:\n"
        )
        s += "".join("  " * (i + 1) + f"k{i}:\n" for i in range(3000)) + "  " * 3001 + "v: 1\n"
        return s
    if kind == "biglen":
        return (
            head + "steps[999999999999]{id,task_id,action,step_type,timeout}:\n" + row.format(t=30)
        )
    if kind == "bignum":
        return head + "steps[1]{id,task_id,action,step_type,timeout}:\n" + row.format(t="9" * 6000)
    return (
        head
        + "steps[1]{id,task_id,action,step_type,timeout}:\n"
        + row.format(t=30)
        + "shared_inputs:\n  x[1]: "
        + "[" * 20000
        + "\n"
    )


#: what each refusal names: the bound the TOON reader met (no timing assert)
TOON_BOUND = {
    "deep": "nested too deeply",
    "biglen": "Declared length 999999999999 but found 1",
    "bignum": "4300 digits",
}


@pytest.mark.parametrize("kind", ["deep", "biglen", "bignum", "brackets"])
def test_toon_hostile_sources_convert_or_refuse_quickly(tmp_path: Path, kind: str) -> None:
    src = tmp_path / f"{kind}.toon"
    src.write_text(_toon(kind))
    result = subprocess.run(
        [sys.executable, "-m", "controller", "convert", str(src)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in result.stderr
    if kind == "brackets":
        assert result.returncode == 0
        assert '"' + "[" * 100 in result.stdout
    else:
        assert result.returncode == 1 and "E_SCHEMA_INVALID" in result.stderr, result.stderr[-500:]
        assert TOON_BOUND[kind] in result.stderr, result.stderr[-500:]
