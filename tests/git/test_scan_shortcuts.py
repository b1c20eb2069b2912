"""The cold scan's shortcuts give what the code they replace gave: a plan file's id and name
from its path (string cuts where pathlib would keep the path as written; the same answers as
pathlib on every path, odd ones included), and an index row's JSON (``asdict``'s)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.git.indexstore import _encode
from controller.git.planstate import LOG_NAME, PlanState, is_text, path_name, plan_id_of
from controller.plan.plans import PLAN_FILES


def pathlib_plan_id(path: str, plans_dir: str) -> str | None:
    """plan_id_of as it was written with pathlib (the reference)."""
    pure = PurePosixPath(path)
    base = PurePosixPath(plans_dir)
    if pure.name not in (*PLAN_FILES, LOG_NAME) or base not in pure.parents:
        return None
    if not is_text(path):
        return None
    return str(pure.parent)


PARTS = st.sampled_from(
    ["plans", "x", "a b", ".", "..", "", "PLAN.yml", "PLAN.yaml", LOG_NAME, "\udcff", "é", "p"]
)
PATHS = st.lists(PARTS, min_size=1, max_size=6).map("/".join)
DIRS = st.sampled_from([".", "plans", "plans/x", "a/./b", "x//y", "..", "plans/.", "p/"])

ODD = [
    "plans/x/PLAN.yml",
    "PLAN.yml",
    "plans/PLAN.yml",
    "plans//x/PLAN.yml",
    "./plans/x/PLAN.yml",
    "/plans/x/PLAN.yml",
    "plans/x/PLAN.yml/",
    "plans/x/PLAN.yml/.",
    "plans/./x/PLAN.yml",
    "plans/../x/PLAN.yml",
    "plans/x\udcff/PLAN.yml",
    "plansx/y/PLAN.yml",
    "plans/x/" + LOG_NAME,
    "plans/x/draft.yml",
    ".",
    "",
    "/",
]


def test_odd_paths_read_as_pathlib_reads_them() -> None:
    for path in ODD:
        assert path_name(path) == PurePosixPath(path).name, path
        for plans_dir in (".", "plans", "plans/x", "a/./b"):
            assert plan_id_of(path, plans_dir) == pathlib_plan_id(path, plans_dir), path


@settings(max_examples=2000, deadline=None)
@given(PATHS, DIRS)
def test_any_path_reads_as_pathlib_reads_it(path: str, plans_dir: str) -> None:
    assert path_name(path) == PurePosixPath(path).name
    assert plan_id_of(path, plans_dir) == pathlib_plan_id(path, plans_dir)


def test_an_index_row_is_the_json_of_asdict() -> None:
    state = PlanState(
        "plans/x",
        "plans/x/PLAN.yml",
        changers=["a@example.com"],
        request={"commit": "c", "kind": "approve", "pair": (1, 2), "voided_by": None},
        estimate={"minutes": [1.5, {"cost": 2}], "7": True},
        collected={"approvals": [{"by": "a"}]},
        notes=["one", "two"],
    )
    assert _encode(state) == json.dumps(asdict(state))
    assert PlanState(**json.loads(_encode(state))) == PlanState(
        **json.loads(json.dumps(asdict(state)))
    )
