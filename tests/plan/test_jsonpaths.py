"""A plan's JSONPath queries: the plain ones pass without the library, and only valid ones do."""

from __future__ import annotations

import re

import jsonpath_rfc9535
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.plan.jsonpaths import (
    _PLAIN,
    QueryTooCostly,
    find,
    is_plain_query,
    named_keys,
    query_problem,
    sharing,
    spent,
)
from controller.plan.shape import QUERY_START

PLAIN = [
    "$",
    "$.id",
    "$.items[0].name",
    "$.items[-1]",
    "$.items[*].id",
    "$..name",
    "$..*",
    "$.*",
    "$['a b']",
    '$["quote\'s"]',
    "$['']",
    "$._x9",
    "$[123456789012345]",
]

NOT_PLAIN_BUT_VALID = [
    "$.items[?@.id > 1]",
    "$[0:2]",
    "$['a\\'b']",
    "$.é",
    "$ .a",
    "$[1, 2]",
    "$[9007199254740991]",
]

INVALID = [
    "",
    "id",
    "$.",
    "$.1a",
    "$[01]",
    "$[-0]",
    "$['a]",
    "$.a b",
    "$[9007199254740992]",
    "$['\x01']",
    "$.items[?@.id >]",
]


@pytest.mark.parametrize("query", PLAIN)
def test_plain_queries_need_no_library_and_are_valid(query: str) -> None:
    assert is_plain_query(query)
    assert query_problem(query) is None
    jsonpath_rfc9535.compile(query)  # the library agrees


@pytest.mark.parametrize("query", NOT_PLAIN_BUT_VALID)
def test_other_valid_queries_are_left_to_the_library(query: str) -> None:
    assert not is_plain_query(query)
    assert query_problem(query) is None


@pytest.mark.parametrize("query", INVALID)
def test_an_invalid_query_gets_the_library_message(query: str) -> None:
    assert not is_plain_query(query)
    with pytest.raises(Exception) as raised:
        jsonpath_rfc9535.compile(query)
    assert query_problem(query) == str(raised.value)


@settings(max_examples=400, deadline=None)
@given(st.from_regex(_PLAIN, fullmatch=True))
def test_every_plain_query_is_rfc_9535(query: str) -> None:
    """The subset is a subset: whatever it accepts, the library compiles."""
    jsonpath_rfc9535.compile(query)


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ("$..a", False),
        ("$.a..b", False),
        ("$['a..b']..c", False),  # a quoted name's dots are no segment
        ('$[?@.name == "x..y"]..z', False),
        ("$..*..*..*", True),  # round 13: minutes over a 7 KB result
        ("$..a..b", True),
        ("$.a[?@..b]..c", True),  # a filter's query counts too
    ],
)
def test_at_most_one_descendant_segment(query: str, refused: bool) -> None:
    problem = query_problem(query)
    assert (problem is not None and "descendant" in problem) is refused, problem


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ("$[?@.x == $.y]", False),  # a singular query from the root: one node, no cost
        ('$[?@ == $["a"][0]]', False),
        ("$[?@.a[?@.b]]", False),  # relative queries walk the candidate's own subtree
        ("$[?count($.*) > 1]", True),  # once per candidate over the whole result: quadratic
        ("$[?@.a[?$[*]]]", True),  # nested in another filter too
        ("$[?$..x]", True),
        ("$[?$[?@.a]]", True),
    ],
)
def test_a_query_from_the_root_inside_a_filter_names_one_node(query: str, refused: bool) -> None:
    problem = query_problem(query)
    assert (problem is not None and "from $ inside a filter" in problem) is refused, problem


def test_match_and_search_share_one_time_budget() -> None:
    """A backtracking pattern over a tool's result (round 13: over 15 s for twenty strings)
    stops the query at the budget, all calls together, with E_LIMIT_EXCEEDED; an honest
    pattern over the same result still answers."""
    result = {"s": ["a" * 40 + "!"] * 20, "t": ["ab", "c"]}
    for function in ("match", "search"):
        with pytest.raises(QueryTooCostly) as raised:
            find(f'$.s[?{function}(@, "(a|aa)+$")]', result)
        assert raised.value.code == "E_LIMIT_EXCEEDED"
        assert "backtracks" in raised.value.remedy
    assert find('$.t[?match(@, "a.")]', result) == (["ab"], False)
    assert find('$.t[?search(@, "b")]', result) == (["ab"], False)
    assert find("$.t[1]", result) == (["c"], True)


def test_a_refused_query_is_refused_at_run_time_too() -> None:
    """A plan frozen before a rule came still cannot run the costly query."""
    with pytest.raises(QueryTooCostly):
        find("$[?count($.*) > 1]", [[1], [2]])


def test_a_query_that_doubles_its_nodes_is_stopped() -> None:
    """``[*,*]`` keeps every duplicate (RFC 9535): each step doubles the nodes. Past
    MAX_NODES the evaluation stops with E_LIMIT_EXCEEDED, whatever the result's size."""
    nested: object = "x" * 10
    for _ in range(20):
        nested = [nested]
    with pytest.raises(QueryTooCostly) as caught:
        find("$" + "[*,*]" * 20, nested)
    assert caught.value.code == "E_LIMIT_EXCEEDED"
    assert "nodes" in caught.value.message


def test_a_wide_honest_query_is_not_stopped() -> None:
    values, singular = find("$[*].id", [{"id": i} for i in range(100_000)])
    assert values == list(range(100_000)) and not singular


def test_the_node_budget_is_per_evaluation() -> None:
    """Each evaluation starts with the whole budget (one spent does not starve the next)."""
    wide = list(range(200_000))
    for _ in range(3):
        assert len(find("$[*]", wide)[0]) == 200_000


def test_queries_over_one_result_share_one_budget() -> None:
    """Round 38: inside ``sharing()`` every query spends one budget, so a plan cannot buy
    more work over one result by declaring more outputs or clauses."""
    wide = list(range(200_000))
    with sharing():
        assert len(find("$[*]", wide)[0]) == 200_000
        with pytest.raises(QueryTooCostly) as caught:
            find("$[*]", wide)
        assert spent()
    assert "together" in caught.value.message and caught.value.code == "E_LIMIT_EXCEEDED"
    assert not spent()  # outside, find() gets a budget of its own again
    assert len(find("$[*]", wide)[0]) == 200_000


def test_a_filter_counts_the_candidates_it_tests() -> None:
    """A filter that selects nothing still tests every candidate: each counts (round 38)."""
    zeros = [0] * 30_000
    query = "$[" + ",".join(["*"] * 6) + "][?@ == 1]"
    assert find(query, [zeros])[0] == []  # six copies: 180,000 candidates, within
    with pytest.raises(QueryTooCostly):
        find(query, {"a": zeros, "b": zeros})  # 360,000 candidates, none selected


def test_outputs_of_one_result_share_the_budget() -> None:
    from controller.errors import LimitExceeded
    from controller.execution.results import extract_outputs
    from controller.plan.schema import Output

    result = {"json": [0] * 20_000}
    one = Output(name="o0", path="$[*,*,*,*,*,*][?@ == 5]", optional=True)
    assert extract_outputs([one], result) == {}
    many = [
        Output(name=f"o{i}", path=f"$[*,*,*,*,*,*][?@ == {i}]", optional=True) for i in range(4)
    ]
    with pytest.raises(LimitExceeded, match="together"):
        extract_outputs(many, result)


def test_expect_clauses_of_one_check_share_the_budget() -> None:
    from controller.execution.checks import evaluate
    from controller.plan.schema import Expect

    result = {"json": [0] * 19_999 + [7]}
    clauses = [
        Expect.model_validate({"path": "$[*,*,*,*,*,*][?@ == 7]", "not_equals": i})
        for i in range(6)
    ]
    assert evaluate(clauses[:1], result) == []
    failures = evaluate(clauses, result)  # the first two hold, the third spends the budget
    assert len(failures) == 2, failures
    assert "query budget of one result is spent" in failures[0]
    assert failures[1].startswith(f"{len(clauses) - 3} more clauses not checked")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="$.[]*'\" \t\n\r?@a0-", max_size=12))
def test_the_schema_pattern_refuses_no_valid_query(path: str) -> None:
    """``QUERY_START`` (the schema's ``pattern`` for output and ``expect`` paths) is a
    necessary condition: any path it refuses, validate refuses too (round 62)."""
    if not re.match(QUERY_START, path):
        assert query_problem(path) is not None, path


@pytest.mark.parametrize("query", [*PLAIN, *NOT_PLAIN_BUT_VALID, "$\t[0]", "$\n.a"])
def test_every_valid_query_has_the_start_the_schema_asks(query: str) -> None:
    assert query_problem(query) is None
    assert re.match(QUERY_START, query)


@pytest.mark.parametrize("path", ["id", " $.a", "$a", "\ufeff$.a", "$\u00a0.a", "@.a"])
def test_the_schema_pattern_refuses_a_path_without_the_root_start(path: str) -> None:
    assert not re.match(QUERY_START, path)
    assert query_problem(path) is not None


@pytest.mark.parametrize(
    ("query", "names", "anywhere"),
    [
        ("$.json.echo.a", {"json", "echo", "a"}, False),
        ('$.json.echo["\\u0061"]', {"json", "echo", "a"}, False),  # round 63: decoded
        ("$.json.echo['k 1']", {"json", "echo", "k 1"}, False),
        ("$..standby", {"standby"}, False),  # selects members named standby
        ("$.json.*.host", {"json", "host"}, False),  # a later name narrows
        ("$.json.echo.*", {"json", "echo"}, True),
        ("$.json.echo[?@ == 'x']", {"json", "echo"}, True),
        ("$.json.*[0]", {"json"}, True),  # an index below a wildcard: any key above it
        ("$.json.a[0]", {"json", "a"}, False),
        ("$..*", set(), True),
    ],
)
def test_named_keys_are_the_parsed_names(query: str, names: set[str], anywhere: bool) -> None:
    """The names a query's selectors name as the engine parses it, and whether its last
    segment may select a member under any key (the stand-in rule, round 63)."""
    assert named_keys(query) == (frozenset(names), anywhere)


#: Round 64: each segment kind (child, descendant) with each selector kind of RFC 9535, after
#: a name (``$.j``) and after a wildcard (``$.*``): the keys it names, and whether what it
#: selects may sit under any key.
SEGMENT_KINDS = [
    # child segments: a name narrows, a wildcard or filter widens, an index or slice keeps
    ("$.j.a", {"j", "a"}, False),
    ("$.j['a','b']", {"j", "a", "b"}, False),
    ("$.j.*", {"j"}, True),
    ("$.j[?@ == 1]", {"j"}, True),
    ("$.j[0]", {"j"}, False),
    ("$.j[-1]", {"j"}, False),
    ("$.j[0:1]", {"j"}, False),
    ("$.j['a',0]", {"j", "a"}, False),
    ("$.*.a", {"a"}, False),
    ("$.*[0]", set(), True),
    ("$.*[0:1]", set(), True),
    # descendant segments: names narrow; a wildcard, filter, index or slice reads through
    # every key ``..`` passes (round 64: ``..[0]``, ``..[0:1]``, ``$..[-1]`` named none)
    ("$.j..a", {"j", "a"}, False),
    ("$.j..['a','b']", {"j", "a", "b"}, False),
    ("$.j..*", {"j"}, True),
    ("$.j..[?@ == 1]", {"j"}, True),
    ("$.j..[0]", {"j"}, True),
    ("$..[-1]", set(), True),
    ("$.j..[0:1]", {"j"}, True),
    ("$.j..['a',0]", {"j", "a"}, True),
    ("$.j..['a',*]", {"j", "a"}, True),
    # what follows a descendant segment: only a name narrows it
    ("$.j..[0].a", {"j", "a"}, False),
    ("$.j..[0][0]", {"j"}, True),
    ("$.j..[0][0:1]", {"j"}, True),
    ("$.j..*[0]", {"j"}, True),
    ("$.j..a[0]", {"j", "a"}, False),  # items of the lists named a
    ("$.j..a.*", {"j", "a"}, True),
]


@pytest.mark.parametrize(("query", "names", "anywhere"), SEGMENT_KINDS)
def test_each_segment_kind_names_what_it_may_select(
    query: str, names: set[str], anywhere: bool
) -> None:
    """A descendant segment names every key it passes through unless a name narrows what it
    selects: an index, slice or filter after it narrows nothing (round 64)."""
    assert named_keys(query) == (frozenset(names), anywhere)


def test_the_table_covers_every_selector_kind_in_both_segment_kinds() -> None:
    """The table above is the rule's whole grammar: a new selector kind must join it."""
    from jsonpath_rfc9535 import JSONPathEnvironment, segments, selectors

    env = JSONPathEnvironment()
    seen = {
        (type(seg).__name__, type(sel).__name__)
        for query, _, _ in SEGMENT_KINDS
        for seg in env.compile(query).segments
        for sel in seg.selectors
    }
    kinds = _concrete(selectors, selectors.JSONPathSelector)
    places = _concrete(segments, segments.JSONPathSegment)
    assert {(p, k) for p in places for k in kinds} <= seen


def _concrete(module: object, base: type) -> set[str]:
    """The names of the subclasses of ``base`` that ``module`` defines."""
    found = [c for c in vars(module).values() if isinstance(c, type) and c is not base]
    return {c.__name__ for c in found if issubclass(c, base)}
