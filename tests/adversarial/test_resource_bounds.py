"""Property: a small plan cannot make the controller build, pass or write huge data
(SPEC §2 size limit, §11 caps E_LIMIT_EXCEEDED, §15 one bad entry never stalls others).

Attacks: a 65 KB plan whose references multiply: one param holding 100 copies of a 60 KB
input, 100 params each a whole reference to it, 100 references to a 60 KB list, and at run
time 100 references to a 60 KB tool output; 501 actions; a 1.1 MB plan. Defence: refused
with a code (E_LIMIT_EXCEEDED, E_PARAMS_INVALID, E_PLAN_TOO_LARGE) before the amplified
value reaches a tool or the disk: nothing over 1 MiB lands in git; an honest plan beside them
still runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

BIG = "A" * 60_000
COPIES = 100
CODES = ("E_LIMIT_EXCEEDED", "E_PARAMS_INVALID", "E_PLAN_TOO_LARGE")


def _plan(vid: str, inputs: str, params: str, extra: str = "") -> str:
    return (
        "plan:\n"
        f'  name: "{vid}"\n'
        '  task: "a small plan that grows"\n'
        "  status: pending_approval\n"
        f"inputs:\n{inputs}"
        "available_tools:\n  - name: echo\n"
        "actions:\n" + extra + f"  - id: {2 if extra else 1}\n"
        "    tool: echo\n"
        '    why: "gets the amplified value"\n'
        f"    params:\n{params}"
    )


FIRST = (
    '  - id: 1\n    tool: echo\n    why: "returns 60 KB"\n'
    '    params: {v: "$<inputs.big>"}\n'
    '    outputs: [{name: v, path: "$.v"}]\n'
)
PLANS = {
    "one-string": _plan(
        "one-string", f'  big: "{BIG}"\n', f'      p: "{"$<inputs.big>" * COPIES}"\n'
    ),
    "many-params": _plan(
        "many-params",
        f'  big: "{BIG}"\n',
        "".join(f'      p{i}: "$<inputs.big>"\n' for i in range(COPIES)),
    ),
    "list-refs": _plan(
        "list-refs",
        "  big: [" + ", ".join(f'"{"B" * 600}"' for _ in range(100)) + "]\n",
        "".join(f'      p{i}: "$<inputs.big>"\n' for i in range(COPIES)),
    ),
    "output-refs": _plan(
        "output-refs",
        f'  big: "{BIG}"\n',
        "".join(f'      p{i}: "$<actions[1].outputs.v>"\n' for i in range(COPIES)),
        FIRST,
    ),
    "too-many-actions": plan_text("too-many-actions")
    + "".join(
        f'  - id: {i}\n    tool: rec\n    why: "again"\n    params: {{tag: "too-many-actions"}}\n'
        for i in range(2, 502)
    ),
    "too-large-file": plan_text("too-large-file") + "# " + "x" * 1_100_000 + "\n",
}
# Capped since issue 11: limits.max_params_bytes (E_LIMIT_EXCEEDED).
BROKEN: dict[str, Any] = {}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    for vid, text in PLANS.items():
        lab.write(vid, text)
    lab.write("bystander", plan_text("bystander"))
    lab.commit("plans", AGENT)
    lab.run()
    for vid in [*PLANS, "bystander"]:
        if "frozen:" in lab.read(vid):
            lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-bounds", _build_lab)


def test_the_honest_plan_beside_them_ran(lab: Lab) -> None:
    assert len(lab.calls("bystander")) == 1


def _largest_blob(lab: Lab) -> int:
    out = lab.git("rev-list", "--objects", "--all")
    ids = [line.split()[0] for line in out.splitlines()]
    sizes = lab.git("cat-file", "--batch-check=%(objecttype) %(objectsize)", input="\n".join(ids))
    return max(int(s.split()[1]) for s in sizes.splitlines() if s.startswith("blob"))


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), BROKEN))
def test_an_amplifying_plan_is_refused_before_it_grows(lab: Lab, vid: str) -> None:
    assert (lab.calls(vid) == [] and not lab.started(vid)) or vid == "output-refs", "it ran"
    if vid == "output-refs":  # action 1 may run; action 2 must not get 6 MB
        log = lab.plan(vid).get("execution") or {}
        second = [a for a in log.get("actions", []) if a.get("id") == 2]
        assert not second or second[0].get("status") != "succeeded", "action 2 got 6 MB"
    assert any(code in lab.codes(vid) for code in CODES) or (
        vid == "too-large-file"
        and (
            "E_PLAN_TOO_LARGE"
            in lab.cli("validate", "--json", str(lab.repo / "plans" / vid / "PLAN.yml")).stdout
        )
    ), lab.codes(vid)[:600]


def test_nothing_over_a_mebibyte_lands_in_git(lab: Lab) -> None:
    """The plans themselves are 65 KB; only the too-large one (1.1 MB, committed by the
    agent) may exceed a MiB, and nothing the controller wrote may."""
    written = lab.git("log", "--format=%H", "--author=plangate@localhost").split()
    for commit in written:
        for line in lab.git("diff-tree", "-r", "--no-commit-id", "-l0", commit).splitlines():
            blob = line.split()[3]
            if set(blob) != {"0"}:
                size = int(lab.git("cat-file", "-s", blob).strip())
                assert size < 1 << 20, (
                    f"the controller committed {size} bytes in {line.split()[-1]}"
                )
    assert _largest_blob(lab) < 2 << 20, "a blob over 2 MiB is in the repo"


# -- big blobs in history: a pass must not balloon --------------------------------------------

MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "sys.stderr.write('MAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def _measured(lab: Lab) -> int:
    import subprocess
    import sys

    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    result = subprocess.run(
        [
            *(sys.executable, "-c", MEASURE, sys.executable, "-m", "controller"),
            "run",
            "--once",
            "--config",
            str(lab.config),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-800:]
    return int(result.stderr.rsplit("MAXRSS ", 1)[1].split()[0])


def _history_lab(root: Path, blobs: list[bytes]) -> Lab:
    lab = Lab(root)
    for i, blob in enumerate(blobs):
        lab.write("heavy", blob)
        lab.commit(f"heavy version {i}", AGENT)
    lab.write("heavy", plan_text("heavy"))
    lab.write("bystander", plan_text("bystander"))
    lab.commit("small again", AGENT)
    return lab


# Kept to one cheap variant: a 2 MB blob of keys and twenty 1 MB versions were tried too
# (held, see FINDINGS.md) but cost ~20 s of the suite's budget.
HISTORIES = {
    "one-2mb-comment": [plan_text("big").encode() + b"# " + b"x" * 2_000_000 + b"\n"],
}


@pytest.fixture(scope="module")
def baseline_kib(tmp_path_factory: pytest.TempPathFactory) -> int:
    return _measured(_history_lab(tmp_path_factory.mktemp("rss-base"), []))


@pytest.mark.parametrize("vid", list(HISTORIES))
def test_a_big_blob_in_history_does_not_balloon_a_pass(
    tmp_path: Path, baseline_kib: int, vid: str
) -> None:
    lab = _history_lab(tmp_path, HISTORIES[vid])
    peak = _measured(lab)
    assert peak < baseline_kib + 150 * 1024, (
        f"peak {peak // 1024} MiB vs {baseline_kib // 1024} MiB"
    )
    lab.approve("bystander", ALICE)
    lab.run()
    assert len(lab.calls("bystander")) == 1
