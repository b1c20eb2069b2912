"""Round 71, agent-facing surfaces: round 70's plan id rule reached through a NESTED plan's
pin. A folder named as a plan file, a source or ``EXECUTION_LOG.md`` in any case is no plan
folder (docs/plan-format.md: "the controller never freezes or runs it, ``show``,
``validate`` and MCP refuse it"); the attack pins such a folder as the nested plan of a
parent Alice approves, and spells an ordinary nested path in ways the plan id rule reads
differently (its file, a trailing slash, ``//``, ``.``/``..``, another case, NFD).

Lab (one, module scope): the agent commits the draft library ``plans/lib`` (a ``rec`` call
tagged ``lib``), its case twin ``plans/Lib`` (tag ``Lib``), an NFC ``plans/libé`` (tag
``nfc``), and the same library with its own tag inside refused folders
``plans/n1/EXECUTION_LOG.md/``, ``plans/n2/PLAN.jſon/`` (long s), ``plans/n3/plan.yml/``,
``plans/n4/Execution_Log.MD/``, ``plans/n5/PLAN.YAML/``; then a parent per variant pinning
its nested plan by the hash ``plangate hash`` prints for that library's text. Alice
approves every parent; one pass.

Asserted: a parent pinning a refused folder never runs its nested tool (its tag recorded
zero times) and is refused with a code before anything runs (no ``start``); a parent
pinning a spelling of ``plans/lib`` either runs ``lib``'s call once or is refused, never
another library (``Lib``); ``plans/Lib`` and the NFC path each run their own library once;
the NFD spelling of the NFC library's path (a folder that does not exist) is refused.

Also (same lab): hosts ``plans/n7`` (PLAN.yml beside a FOLDER ``PLAN.YML/``), ``plans/n8``
(PLAN.yaml beside a FOLDER ``plan.yaml/``), the draft library ``plans/n6`` (PLAN.yml beside
a FOLDER ``plan.yml/``), each inner folder holding an "approved" plan, and the control
``plans/n9`` (PLAN.yml beside a FOLDER ``PLAN.yaml/``, round 69's E_PLAN_AMBIGUOUS); Alice
approves n7, n8, n9. Asserted: each is E_PLAN_AMBIGUOUS on the row and MCP ``log`` and never
runs, as n9.

Broke (strict xfails):
- ``refused-log``, ``refused-longs``, ``refused-lc``, ``refused-mixed``, ``refused-upyaml``,
  ``refused-beside``: the parent pinning ``plans/n1/EXECUTION_LOG.md`` (and ``PLAN.jſon``,
  ``plan.yml``, ``Execution_Log.MD``, ``PLAN.YAML``, ``plans/n6/plan.yml``) by its hash is
  ``valid`` and Alice's approval runs it: the nested plan of a folder that ``status``,
  ``show`` and MCP refuse (E_UNSAFE_PATH: "no plan folder") runs (its ``rec`` call made, the
  parent completed; ``show`` of the parent lists the nested actions). docs/plan-format.md:
  "the controller never freezes or runs it". Should: a nested pin naming such a folder is
  refused (the parent invalid, E_UNSAFE_PATH), as a ``..`` in the path is.
- ``n6:row``, ``n6:mcp-log``, ``n7:*``, ``n8:*`` (``n6:ran`` holds: a draft): a plan file
  beside a FOLDER of its own name in another case (``plan.yml/`` or ``PLAN.YML/`` beside
  ``PLAN.yml``, ``plan.yaml/`` beside ``PLAN.yaml``: one path on a case-insensitive checkout,
  where the reviewer finds the agent's "approved" plan at the plan file's place) is read as
  a plain plan: the row ``completed``/``draft``, MCP ``log`` its record, her approval runs it.
  The exact other name (n9) is E_PLAN_AMBIGUOUS everywhere and never runs. Should: compared
  case-insensitively here too (docs/plan-format.md's reason for ``plan.yml/``).
Fixed (2026-11-30): one rule for a plan's names (``controller.plan.names``). A nested pin
names a plan folder by the plan id rule (``pin_problem``, in ``nested.check_path``), so the
six ``refused-*`` parents are invalid with E_UNSAFE_PATH (their assertion now asks for that
refusal, not only "some code"); the entries of a folder that are its plan file or claim to
be one are compared case-insensitively from one listing of the folder (``plan_file_claims``)
by the history index, ``validate``/``show``/``freeze``, nested pins and MCP
(``plan_file_of``): ``n6``, ``n7``, ``n8`` are E_PLAN_AMBIGUOUS on the row and MCP ``log``
and never run, as ``n9``. The xfail markers are gone.

Changed in round 75 (r75twinfold): ``plans/lib`` and ``plans/Lib`` are one folder on a
case-insensitive checkout, so a pin to either (``ctl``, ``case-twin``) is E_PLAN_AMBIGUOUS and
neither library runs; ``nfc`` is the control that runs.

Held: ``ctl``, ``case-twin`` (round 71: ``plans/Lib`` ran its own library), ``nfc``,
``nfd-of-nfc`` and ``upper-of-lib`` (no such folder: invalid), ``lib-hash-at-Lib``
(E_PLAN_HASH_MISMATCH), ``sp-file``/``sp-dotdot`` (invalid), ``sp-trail``/``sp-dslash``/
``sp-dot`` (run ``plans/lib``'s call once each: the pinned library, never another), n9.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases
from mcpkit import session
from test_round2_execution_kit import shared

NFC = unicodedata.normalize("NFC", "libé")
NFD = unicodedata.normalize("NFD", "libé")
LIB = (
    "plan:\n  name: lib {tag}\n  task: a library\n  status: draft\n"
    "available_tools: [{{name: rec}}]\nactions:\n"
    "  - id: 1\n    tool: rec\n    why: record {tag}\n    params: {{tag: {tag}}}\n"
)
PARENT = (
    "plan:\n  name: parent {vid}\n  task: t\n  status: pending_approval\n"
    "available_tools: [{{name: rec}}]\nactions:\n"
    "  - id: 1\n    why: the library\n    plan: {{path: '{path}', hash: '{hash}'}}\n"
)
# folder -> tag of the library committed there
LIBS = {
    "lib": "lib",
    "Lib": "Lib",
    NFC: "nfc",
    "n1/EXECUTION_LOG.md": "in-n1",
    "n2/PLAN.jſon": "in-n2",
    "n3/plan.yml": "in-n3",
    "n4/Execution_Log.MD": "in-n4",
    "n5/PLAN.YAML": "in-n5",
    "n6": "n6-host",
    "n6/plan.yml": "in-n6",
}
# hosts Alice approves, each beside a FOLDER named as its plan file in another case (n9: the
# exact other name, round 69's E_PLAN_AMBIGUOUS control): (its file, the folder)
HOSTS = {"n7": ("PLAN.yml", "PLAN.YML"), "n8": ("PLAN.yaml", "plan.yaml"),
         "n9": ("PLAN.yml", "PLAN.yaml")}  # fmt: skip  # fmt: skip
# variant -> (the pinned path, the library whose hash is pinned, expected: run tag | None)
VARIANTS = {
    # round 75 (r75twinfold): ``plans/lib`` and ``plans/Lib`` are one folder on a
    # case-insensitive checkout: a pin to either is E_PLAN_AMBIGUOUS (round 71 ran each)
    "ctl": ("plans/lib", "lib", None),
    "case-twin": ("plans/Lib", "Lib", None),
    "nfc": (f"plans/{NFC}", NFC, "nfc"),
    "nfd-of-nfc": (f"plans/{NFD}", NFC, None),
    "upper-of-lib": ("plans/LIB", "lib", None),
    "lib-hash-at-Lib": ("plans/Lib", "lib", None),
    "refused-log": ("plans/n1/EXECUTION_LOG.md", "n1/EXECUTION_LOG.md", None),
    "refused-longs": ("plans/n2/PLAN.jſon", "n2/PLAN.jſon", None),
    "refused-lc": ("plans/n3/plan.yml", "n3/plan.yml", None),
    "refused-mixed": ("plans/n4/Execution_Log.MD", "n4/Execution_Log.MD", None),
    "refused-upyaml": ("plans/n5/PLAN.YAML", "n5/PLAN.YAML", None),
    "refused-beside": ("plans/n6/plan.yml", "n6/plan.yml", None),
    "sp-file": ("plans/lib/PLAN.yml", "lib", "lib?"),
    "sp-trail": ("plans/lib/", "lib", "lib?"),
    "sp-dslash": ("plans//lib", "lib", "lib?"),
    "sp-dot": ("plans/./lib", "lib", "lib?"),
    "sp-dotdot": ("plans/Lib/../lib", "lib", "lib?"),
}  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    lab.git_date = "@1796100000 +0000"
    hashes: dict[str, str] = {}
    scratch = root / "scratch"
    for number, (folder, tag) in enumerate(LIBS.items()):
        lab.write(folder, LIB.format(tag=tag))
        # a folder of its own per library: no two of them twins (round 75 holds twins)
        probe = scratch / str(number) / "PLAN.yml"
        probe.parent.mkdir(parents=True)
        probe.write_text(LIB.format(tag=tag))
        done = lab.cli("hash", str(probe))
        assert done.returncode == 0, done.stderr
        hashes[folder] = done.stdout.strip().split()[0]
    shutil.rmtree(scratch)
    for host, (name, folder) in HOSTS.items():
        lab.write(
            host,
            PARENT.format(vid=host, path="x", hash="x").split("actions:")[0]
            + f"actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {{tag: {host}-host}}\n",
            name,
        )
        lab.write(f"{host}/{folder}", LIB.format(tag=f"in-{host}").replace("draft", "approved"))
    for vid, (path, lib, _) in VARIANTS.items():
        lab.write(f"p-{vid}", PARENT.format(vid=vid, path=path, hash=hashes[lib]))
    lab.commit("agent: libraries and parents", AGENT)
    lab.run()
    for vid in VARIANTS:
        lab.set_status(f"p-{vid}", "approved")
    for host, (name, _) in HOSTS.items():
        lab.set_status(host, "approved", name)
    lab.commit("alice: approve the parents", ALICE)
    lab.run()
    rows = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    lab.got = {  # type: ignore[attr-defined]
        "rows": rows,
        "calls": {
            tag: len(lab.calls(tag))
            for tag in [*LIBS.values(), *[f"{h}-host" for h in HOSTS], *[f"in-{h}" for h in HOSTS]]
        },
        "mcp": session(lab, [("log", {"path": f"plans/{h}"}) for h in ["n6", *HOSTS]])[0],
        "started": {vid: lab.started(f"p-{vid}") for vid in VARIANTS},
        "hashes": hashes,
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-surface-nestnames", _build)


IDS = list(VARIANTS)


@pytest.mark.parametrize("vid", cases(IDS, IDS, {}))
def test_a_nested_pin_runs_only_the_library_it_names(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    _path, _lib, want = VARIANTS[vid]
    row = got["rows"][f"plans/p-{vid}"]
    calls = got["calls"]
    assert calls["Lib"] == 0 and calls["nfc"] == 1, calls  # the twin held (round 75); nfc ran
    if want is None:
        # a library in a refused folder never runs, whatever pins it
        assert calls[LIBS.get(_lib, "")] == 0 if vid.startswith("refused-") else True, calls
        assert not got["started"][vid], row
        assert row["status"] in ("invalid", "pending_approval", "failed", None), row
        assert row["status"] != "completed", row
        assert "E_" in json.dumps(row), row
        if vid.startswith("refused-"):  # the refusal itself: a pin to no plan folder
            assert row["status"] == "invalid" and "E_UNSAFE_PATH" in json.dumps(row), row
    elif want == "lib?":
        # that library or a refusal: never another one (calls["lib"] counts ctl's run too)
        if row["status"] == "completed":
            assert got["started"][vid], row
        else:
            assert not got["started"][vid] and "E_" in json.dumps(row), row
    else:
        assert row["status"] == "completed" and got["started"][vid], row


def test_every_run_of_lib_is_a_parent_that_pinned_it(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    ran = [v for v, (_, lib, w) in VARIANTS.items() if lib == "lib" and got["started"][v]]
    assert got["calls"]["lib"] == len(ran), (got["calls"], ran)


BESIDE = {"n6": "draft library", "n7": "host", "n8": "host", "n9": "host"}
BIDS = [f"{h}:{r}" for h in BESIDE for r in ("row", "mcp-log", "ran")]


@pytest.mark.parametrize("vid", cases(BIDS, BIDS, {}))
def test_a_case_variant_folder_beside_a_plan_file_is_ambiguous(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    host, reader = vid.split(":")
    if reader == "row":
        row = got["rows"][f"plans/{host}"]
        assert row["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    elif reader == "mcp-log":
        reply = got["mcp"][["n6", *HOSTS].index(host)]
        result = reply["result"]
        assert result.get("isError") and "E_PLAN_AMBIGUOUS" in result["content"][0]["text"], result
    else:
        # n6 is a draft library (its inner folder is pinned by refused-beside): the host only
        assert got["calls"][f"{host}-host"] == 0, got["calls"]
        assert host == "n6" or got["calls"][f"in-{host}"] == 0, got["calls"]
