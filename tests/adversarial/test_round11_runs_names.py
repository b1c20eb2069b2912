# ruff: noqa: E501
"""Round 11, stall every plan with one hostile entry: names git stores but the file system
cannot hold (the agent commits them with plumbing: ``hash-object`` + ``update-index
--cacheinfo``, no checkout needed). docs/threat-model.md: "One bad entry stalls every plan
... Each costs only its plan a code in ``status``".

- ``long300``: ``plans/<300 x>/PLAN.yml``: a folder name over NAME_MAX (255 bytes).
- ``deep-hist``: ``plans/d/d/.../d/PLAN.yml``, 1,000 folders deep, deleted again in the
  next commit (it lives on in history). By hand, the same still in the tree (and with only
  a ``notes.txt`` at the bottom, no plan at all) breaks the same way (dropped for suite time);
- ``long-md``: a ``PLAN.md`` source (converted by the daemon) in a folder named over 255 bytes;
- tried by hand and held (dropped for suite time): a 250-byte folder name, 500 folders deep, 1,000 deep outside the plans folder, a 300-byte file name inside a plan
  folder, the 300-byte folder deleted again in the next commit.

Each in its own repo beside an honest plan that Alice approves. Defence asserted: every pass
exits 0, the honest plan runs once, ``plangate status`` answers. **Broke** (3 here, 2 more by hand):
``long300`` and ``long-md`` (``internal error: OSError: [Errno 36] File name too long``),
``deep-hist`` (``internal error: RecursionError``) kill every ``run --once`` pass (and
``status``): no plan in the repository runs again; for ``deep-hist`` not even after the
entry is deleted, only after a history rewrite.
"""

from __future__ import annotations

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = {
    "long300": "plans/" + "x" * 300 + "/PLAN.yml",
    "deep-hist": "plans/" + "/".join(["d"] * 1000) + "/PLAN.yml",  # deleted in the next commit
    "long-md": "plans/" + "y" * 300 + "/PLAN.md",
}
DELETED = {"deep-hist", "long-hist"}
#: What broke when found (round 11); fixed since: such paths are E_UNSAFE_PATH (plans.unsafe_name)
FOUND = {
    "long300": "a committed folder name over 255 bytes kills every pass (OSError ENAMETOOLONG) and status: no plan runs",
    "deep-hist": "the same deep folder, deleted in the next commit: it stays in history and every pass still dies (RecursionError); only a rewrite (which holds plans) gets out",
    "long-md": "a PLAN.md source in a folder named over 255 bytes kills every pass (OSError ENAMETOOLONG)",
}
BROKE: dict[str, str] = {}


def _build(vid: str):  # type: ignore[no-untyped-def]
    def build(root):  # type: ignore[no-untyped-def]
        lab = Lab(root)
        lab.write("honest", plan_text("honest"))
        lab.commit("honest", AGENT)
        blob = lab.git("hash-object", "-w", "--stdin", input=plan_text(f"bad-{vid}")).strip()
        lab.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{VARIANTS[vid]}")
        lab.git("commit", "-q", "-m", f"hostile {vid}", who=AGENT)
        if vid in DELETED:
            lab.git("rm", "-q", "-r", "--cached", "/".join(VARIANTS[vid].split("/")[:2]))
            lab.git("commit", "-q", "-m", f"delete {vid}", who=AGENT)
        lab.git("reset", "-q")
        first = lab.run(check=False)
        lab.approve("honest")
        second = lab.run(check=False)
        status = lab.cli("status", "--json", "--config", str(lab.config))
        lab.outcome = {  # type: ignore[attr-defined]
            "rc": [first.returncode, second.returncode],
            "err": (first.stderr + second.stderr)[-600:],
            "status_rc": status.returncode,
            "status_err": status.stderr[-300:],
        }
        return lab

    return build


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            marks=pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 11: {BROKE[v]}"
            ),
        )
        if v in BROKE
        else v
        for v in VARIANTS
    ],
)
def test_one_hostile_name_stalls_nothing(
    tmp_path_factory: pytest.TempPathFactory, vid: str
) -> None:
    lab = shared(tmp_path_factory, f"r11-names-{vid}", _build(vid))
    out = lab.outcome  # type: ignore[attr-defined]
    assert "internal error" not in out["err"], out["err"]
    assert out["rc"] == [0, 0], out
    assert len(lab.calls("honest")) == 1
    assert lab.calls(f"bad-{vid}") == []
    assert out["status_rc"] in (0, 1), out["status_err"]
