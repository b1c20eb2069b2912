"""Parsing a text once (the parse cache), edits from one parse, and the block emitter.

Issue 17: one plan's text is read by several steps of a decision, a start and an outcome;
each must get exactly what a fresh parse gives, and no caller may change what another reads.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.plan import plans, yamlio

PLAN = """\
# a plan
plan:
  name: demo   # keep me
  status: "approved"  # and me
actions:
- id: 1
  tool: echo
  params: {x: 1}
frozen:
  hash: sha256:abc
  at: '2026-11-25T12:00:00Z'
"""


def test_a_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    yamlio._PARSED.clear()
    calls = []
    real = yamlio._build
    monkeypatch.setattr(yamlio, "_build", lambda *a: calls.append(1) or real(*a))
    first = yamlio.read_yaml(PLAN + "# once\n")
    second = yamlio.read_yaml(PLAN + "# once\n")
    assert len(calls) == 1
    assert second.data == first.data and second.spans == first.spans
    yamlio.read_yaml(PLAN + "# once \n")  # one character more: another text, parsed
    assert len(calls) == 2


def test_a_cached_parse_cannot_be_changed_by_a_caller() -> None:
    text = PLAN + "# mutate\n"
    first = yamlio.read_yaml(text)
    first.data["plan"]["status"] = "executing"
    first.data["actions"].append("forged")
    second = yamlio.read_yaml(text)
    assert second.data["plan"]["status"] == "approved"
    assert second.data["actions"] == [{"id": 1, "tool": "echo", "params": {"x": 1}}]
    assert second.data is not first.data


def test_a_failed_read_is_never_kept() -> None:
    bad = PLAN + "a: &anchor 1\n"
    for _ in range(2):
        with pytest.raises(yamlio.YamlParseError):
            yamlio.read_yaml(bad)
    assert bad not in yamlio._PARSED._docs


def test_the_cache_stays_within_its_size() -> None:
    cache = yamlio._ParseCache(max_chars=1000)
    texts = [f"a: {i}\nb: {'x' * 300}\n" for i in range(10)]
    for text in texts:
        cache.put(yamlio._read_uncached(text, "t"))
    assert cache.chars <= 1000
    assert cache.get(texts[0]) is None and cache.get(texts[-1]) is not None
    cache.put(yamlio._read_uncached("c: " + "y" * 2000 + "\n", "t"))  # over the whole budget
    assert cache.get("c: " + "y" * 2000 + "\n") is None


def test_threads_read_one_text_alike() -> None:
    text = PLAN + "# threads\n"
    found: list[Any] = []

    def read() -> None:
        for _ in range(50):
            found.append(pickle.dumps(yamlio.read_yaml(text).data))

    workers = [threading.Thread(target=read) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(set(found)) == 1 and len(found) == 200


def test_text_hash_is_the_hash_of_a_fresh_read() -> None:
    text = PLAN + "# hash\n"
    loaded = plans.parse_text(text, plans.Path("p/PLAN.yml"))
    expected = plans.hashing.plan_hash(yamlio._read_uncached(text, "t").data)
    assert loaded.hash == expected
    loaded.data["actions"][0]["params"]["x"] = 2  # a caller's own copy: the file is unchanged
    assert plans.text_hash(text) == expected
    assert plans.parse_text(text, plans.Path("p/PLAN.yml")).hash == expected
    assert plans.text_hash("a: [1\n") is None  # not YAML


# --- edits from one parse ------------------------------------------------------------------


def test_edit_equals_the_edits_in_turn() -> None:
    doc = yamlio.read_yaml(PLAN)
    record = {"status": "approved", "by": "alice@example.com"}
    at_once = yamlio.edit(doc, {"approval": record}, {("plan", "status"): "executing"})
    in_turn = yamlio.set_scalar(
        yamlio.read_yaml(yamlio.set_block(doc, "approval", record)), ("plan", "status"), "executing"
    )
    assert at_once == in_turn
    data = yamlio.read_yaml(at_once).data
    assert data == {**yamlio.read_yaml(PLAN).data, "approval": record} | {
        "plan": {"name": "demo", "status": "executing"}
    }
    assert '  status: "executing"  # and me' in at_once and "# keep me" in at_once


def test_edit_replaces_and_appends_blocks_and_keeps_crlf() -> None:
    text = PLAN.replace("\n", "\r\n").rstrip("\r\n")  # CRLF, no final line break
    doc = yamlio.read_yaml(text)
    out = yamlio.edit(
        doc,
        {"frozen": {"hash": "sha256:def"}, "execution": {"status": "completed"}},
        {("plan", "status"): "completed"},
    )
    assert "\n" not in out.replace("\r\n", "")
    data = yamlio.read_yaml(out).data
    assert data["frozen"] == {"hash": "sha256:def"}
    assert data["execution"] == {"status": "completed"}
    assert data["plan"]["status"] == "completed"
    assert list(data) == ["plan", "actions", "frozen", "execution"]


def test_edit_inserts_a_missing_status() -> None:
    doc = yamlio.read_yaml("plan:\n  name: x\nactions: []\n")
    out = yamlio.edit(doc, {"execution": {"status": "aborted"}}, {("plan", "status"): "aborted"})
    assert yamlio.read_yaml(out).data == {
        "plan": {"status": "aborted", "name": "x"},
        "actions": [],
        "execution": {"status": "aborted"},
    }


# --- the block emitter ------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(
        [
            "-x",
            "- x",
            "a: b",
            "a #b",
            "null",
            "1.5",
            "~",
            "2026-11-25T12:00:00Z",
            "it's",
            "${plan.name}",
            "a\u2028b",
            "x\x85",
            " lead",
            "trail ",
            "",
        ]
    )
)
json_data = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(st.text(max_size=12), json_data, min_size=1, max_size=4))
def test_dump_floor_never_exceeds_what_dump_writes(value: dict[str, Any]) -> None:
    """A checkpoint skips dumping a block whose floor is over the limit (round 83): the
    floor must never be more than the bytes the dump writes, whatever the strings hold."""
    data = {"execution": value}
    floor = yamlio.dump_floor(data)
    if floor is not None:
        assert floor <= len(yamlio.dump(data).encode("utf-8"))


def test_dump_floor_is_none_for_what_ruamel_writes() -> None:
    assert yamlio.dump_floor({"execution": {"x": 1.5}}) is None
    assert yamlio.dump_floor({"execution": {1: "a"}}) is None
    assert yamlio.dump_floor({"k" * 200: 1}) is None
    assert yamlio.dump_floor({}) is None
    steps = {"execution": {"actions": [{"id": i, "status": "pending"} for i in range(3)]}}
    assert yamlio.dump_floor(steps) == len(yamlio.dump(steps))


def _canonical(value: Any) -> Any:
    """What the reader yields for ``value``: integral floats within 2^53 as integers."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return yamlio.canonical_number(value)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), json_data, min_size=1, max_size=4))
def test_dump_reads_back_as_exactly_the_data(value: dict[str, Any]) -> None:
    text = yamlio.dump({"execution": value})
    back = yamlio.read_yaml(text).data
    assert back == {"execution": _canonical(value)}
    assert [type(x) for x in _leaves(back)] == [type(x) for x in _leaves(_canonical(value))]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_dump_writes_an_execution_block_as_ruamel_does() -> None:
    block = {
        "execution": {
            "status": "executing",
            "controller": "plangate@host-1",
            "started_at": "2026-11-25T12:35:57Z",
            "finished_at": None,
            "actions": [
                {
                    "id": 1,
                    "key": "step:0123456789abcdef",
                    "status": "succeeded",
                    "attempts": 1,
                    "duration_ms": 3,
                    "outputs": {"value": 2, "path": "/tmp/a b", "ok": True, "ratio": 0.5},
                    "error": {"code": "E_TOOL_FAILED", "message": "exit 1: it's gone"},
                },
                {"id": "1/2", "key": "step:x", "status": "pending", "outputs": {}, "l": []},
                {"id": 2, "nested": [[1, "a: b"], {"a": [], "b": {"c": "-x"}}]},
            ],
        }
    }
    assert yamlio.dump(block) == yamlio._ruamel_dump(block)


def test_dump_leaves_what_it_does_not_write_to_ruamel() -> None:
    value = {"execution": {"k" * 200: 1, "n": {1: "int key"}, "big": 1e20}}
    assert yamlio.dump(value) == yamlio._ruamel_dump(value)
    assert yamlio.read_yaml(yamlio.dump(value)).data == value


def test_a_chain_knows_its_ancestors_without_sets() -> None:
    from controller.plan import graph

    chain, problems = graph.build([(i, None) for i in (3, 1, 2)])
    assert chain is not None and not problems
    assert 3 in chain.ancestors[1] and 1 in chain.ancestors[2] and 2 not in chain.ancestors[1]
    assert set(chain.ancestors[2]) == {3, 1} and len(chain.ancestors[3]) == 0
    assert not isinstance(chain.ancestors, dict)  # no set per action: O(N^2) for a chain
    explicit, _ = graph.build([(1, None), (2, [1]), (3, [2])])
    assert explicit is not None and explicit.ancestors[3] == frozenset({1, 2})


def test_freezing_parses_its_new_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.plantext import greet_plan

    text = greet_plan("Greet", "Say hello", "world") + "# once more\n"
    loaded = plans.validate_text(text, plans.Path("plans/x/PLAN.yml"))
    assert loaded.valid, loaded.problems
    parsed: list[str] = []
    build = yamlio._build
    monkeypatch.setattr(yamlio, "_build", lambda t, *a: parsed.append(t) or build(t, *a))
    # round 74: an edit is read back before it is handed on, the blocker's too (a layout the
    # writer would break is reported before anything is written): one parse each
    assert plans.status_blocker(loaded) is None
    assert len(parsed) == 1
    outcome = plans.freeze_text(loaded)
    assert outcome.changed and len(parsed) == 2  # the edit's check: the hash check reuses it
    assert plans.parse_text(outcome.text, plans.Path("plans/x/PLAN.yml")).hash == outcome.hash
    assert len(parsed) == 2


def test_the_controllers_writer_never_writes_a_lone_surrogate() -> None:
    """Round 25: a commit's byte that is not UTF-8 (read with surrogateescape) reached the
    approval block as ``\\udcff``, which no YAML reader takes back: the plan was unreadable
    for good. The writer keeps such a character as text (``\\xff``), and reads back."""
    from controller.git.records import _as_text

    text = yamlio.dump({"approval": {"by": "b\udcffob@ops.example.com", "note": "x\ud800"}})
    assert yamlio.read_yaml(text).data == {
        "approval": {"by": "b\\xffob@ops.example.com", "note": "x\\ud800"}
    }
    assert _as_text("b\udcffob@ops.example.com") == "b\\xffob@ops.example.com"
    assert _as_text("alice@example.com") == "alice@example.com"


def test_an_edit_given_its_block_text_writes_what_it_would_have_dumped() -> None:
    """A checkpoint hands the edit the ``execution:`` text it dumped to measure the block
    (round 83: dumped three times a checkpoint): the same file as dumping it again."""
    doc = yamlio.read_yaml(PLAN)
    block = {"status": "executing", "actions": [{"id": 1, "status": "succeeded"}]}
    made = yamlio.dump({"execution": block})
    given = yamlio.set_block(doc, "execution", block, checked=False, dumped={"execution": made})
    assert given == yamlio.set_block(doc, "execution", block)
    assert yamlio.read_yaml(given).data["execution"] == block
