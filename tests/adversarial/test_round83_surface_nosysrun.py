"""Round 83 (surface, atk83b): ``GIT_CONFIG_NOSYSTEM=0`` past the readers: approvals,
adoption and runs.

The sister module ``test_round83_surface_attrplaces.py`` found that the CLI's readers miss a
``core.attributesFile`` the system config names when ``GIT_CONFIG_NOSYSTEM`` is spelled
false (``0``), which git reads. This module asks what the same environment does to the
writers and the pass, which decide "uncommitted edits?" and adoption on the file "as
`git add` would store it" (docs/operations.md, "Line ends and attributes": "A plan file
`git status` calls clean is clean to the controller, to a run ..., to `plangate
approve`/`reject` and to local mode's adoption (compared as git would store it)").

Lab (one, built once): two small repositories, ``n0`` (``GIT_CONFIG_NOSYSTEM=0``) and
``un`` (the variable absent; the control), each with ``GIT_CONFIG_SYSTEM`` naming a file that
sets ``core.attributesFile`` to ``plans/** working-tree-encoding=ISO-8859-1``; every
command of the lab (git, the CLI, the passes) sees that environment. Plans (the task holds
the bytes ``C3 A9``, stored by ``git add`` as ``Ã©``): ``ga`` committed by the agent and
approved by Alice with git (her one line, ``git add`` of the file); ``ca`` approved by
Alice's ``plangate approve``; ``ad`` never committed (local mode adopts it). Passes: one
(freeze, adoption), Alice's approvals, two more.
Variants per repository ``<r>``:
- ``<r>:ga:ran``, ``<r>:ca:ran``: the approved plan ran exactly once, row ``completed``;
- ``<r>:ca:approve``: ``plangate approve`` exited 0;
- ``<r>:ad:stored``: the adopted blob is the text ``git add`` would store (``Ã©``);
- ``<r>:ad:frozen``: the adopted plan is frozen pending (row ``pending_approval``);
- ``<r>:clean``: ``git status`` lists no plan file at the end.

Seen (round 83): nothing broke here. Under ``GIT_CONFIG_NOSYSTEM=0`` the pass, local
mode's adoption and ``plangate approve`` all read the system config as git does: the adopted
``ad`` was committed as ``Ã©`` and frozen, ``ga`` and ``ca`` ran once, ``git status`` stayed
clean, exactly as in the control ``un``. The sister module's class (**a false
``GIT_CONFIG_NOSYSTEM`` read as set**) is therefore the CLI's readers' alone (``validate``,
``hash``, ``show``, ``freeze``): the reader disagrees with the controller, which is right.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round83_surface_attrplaces import ENC, OWNER, EnvLab, _out

REPOS = {"n0": "0", "un": None}


def _text(slug: str) -> bytes:
    return plan_text(slug).replace(f"variant {slug}", f"variant {slug} é").encode("utf-8")


def _one(root: Path, name: str) -> dict[str, Any]:
    lab = EnvLab(root / name)
    sub = lab.root
    (sub / "attrs").write_text(f"plans/** {ENC}\n")
    (sub / "sysconfig").write_text(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
    lab.extra_env = {"GIT_CONFIG_SYSTEM": str(sub / "sysconfig")}  # type: ignore[attr-defined]
    if REPOS[name] is None:
        lab.drop_env = {"GIT_CONFIG_NOSYSTEM": None}  # type: ignore[attr-defined]
    else:
        lab.extra_env["GIT_CONFIG_NOSYSTEM"] = REPOS[name]  # type: ignore[attr-defined]
    lab.commit("owner: readme", OWNER)
    cfg = str(lab.config)
    for slug in ("ga", "ca"):
        lab.write(slug, _text(slug))
    lab.commit("agent: plans", AGENT)
    lab.write("ad", _text("ad"))  # never committed: local mode adopts it
    got: dict[str, Any] = {}
    got["run1"] = _out(lab.run(check=False), 600)
    lab.set_status("ga", "approved")
    lab.git("add", "plans/ga/PLAN.yml")
    lab.git("commit", "-q", "-m", "alice: approve ga", who=ALICE)
    got["approve"] = _out(_approve(lab, cfg), 800)
    lab.run(check=False)
    lab.run(check=False)
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {s: len(lab.calls(s)) for s in ("ga", "ca", "ad")}
    got["ad-blob"] = lab.git("show", "HEAD:plans/ad/PLAN.yml", check=False)
    got["dirty"] = lab.git("status", "--porcelain").strip()
    return got


def _approve(lab: Lab, cfg: str) -> Any:
    """Alice's ``plangate approve`` (her identity in the environment, as git's)."""
    from advkit import identity

    from tests.support import clifork

    env = lab.env(ALICE)
    env.update(identity(ALICE))
    args = ["approve", "--config", cfg, str(lab.repo / "plans/ca/PLAN.yml")]
    return clifork.run(args, cwd=lab.repo, env=env, timeout=180)


def _lab(root: Path) -> Lab:
    lab = Lab.__new__(Lab)
    lab.root = root
    lab.got = {r: _one(root, r) for r in REPOS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-surface-nosysrun", _lab)


WHATS = ["ga:ran", "ca:ran", "ca:approve", "ad:stored", "ad:frozen", "clean"]
IDS = [f"{r}:{w}" for r in REPOS for w in WHATS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_false_nosystem_is_read_as_git_reads_it(lab: Lab, vid: str) -> None:
    """Whatever ``GIT_CONFIG_NOSYSTEM`` says, approvals, adoption and runs follow git's
    reading of the system config: each approved plan runs once, the adopted blob is what
    ``git add`` stores, ``git status`` stays clean."""
    name, what = vid.split(":", 1)
    got = lab.got[name]  # type: ignore[attr-defined]
    rows = got["rows"]
    if what in ("ga:ran", "ca:ran"):
        slug = what.split(":")[0]
        row = rows.get(f"plans/{slug}") or {}
        assert got["calls"][slug] == 1 and row.get("status") == "completed", (row, got["approve"])
    elif what == "ca:approve":
        assert got["approve"].startswith("0 "), got["approve"]
    elif what == "ad:stored":
        assert "variant ad Ã©" in got["ad-blob"], got["ad-blob"][:400]
    elif what == "ad:frozen":
        row = rows.get("plans/ad") or {}
        assert row.get("status") == "pending_approval", (row, got["run1"])
    else:
        assert got["dirty"] == "", got["dirty"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r83ns-", dir="/tmp/atk83b"))
    got = {r: _one(out, r) for r in REPOS}
    for g in got.values():
        g["rows"] = {
            k: (v["status"], v.get("problem"), v.get("waiting")) for k, v in g["rows"].items()
        }
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
