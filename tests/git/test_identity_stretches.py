"""The controller's identity changes read stretch by stretch
(:func:`controller.git.identities.followed_back`, :func:`~controller.git.identities.onward`):
an identity that comes back is followed at each of its links (round 127: a list of
identities could not hold one twice and started the walk at the wrong end of the loop)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from controller.git.identities import Links, followed_back, onward, stretches

A, B, C, X = "a@x", "b@x", "c@x", "agent@x"


def test_a_return_is_followed_back_to_the_first_stretch() -> None:
    links: Links = {"l1": (A, B), "l2": (B, A)}
    assert followed_back(links, A) == (A, links)
    assert stretches(*followed_back(links, A)) == [(None, A), ("l1", B), ("l2", A)]


def test_a_longer_loop_is_followed_from_any_of_its_identities() -> None:
    links: Links = {"l1": (A, B), "l2": (B, C), "l3": (C, A)}
    for wanted in (A, B, C):
        assert followed_back(links, onward(links, wanted)) == (A, links)


def test_a_link_that_takes_no_identity_in_force_is_someones_claim() -> None:
    """The agent's record naming itself and the controller's identity before, after the
    controller's own link: today's identity walks past it."""
    links: Links = {"l1": (A, B), "forged": (A, X)}
    assert followed_back(links, B) == (A, {"l1": (A, B)})


def test_a_config_identity_not_linked_reads_no_link() -> None:
    links: Links = {"l1": (A, B)}
    assert followed_back(links, C) == (C, {})


@given(st.lists(st.sampled_from([A, B, C]), min_size=1, max_size=8))
def test_any_chain_of_changes_is_read_back_whole(chain: list[str]) -> None:
    """Every change of a chain (each to another identity) is followed back from its last."""
    hops = [(was, new) for was, new in pairwise(chain) if was != new]
    links: Links = {f"l{at}": hop for at, hop in enumerate(hops)}
    today = hops[-1][1] if hops else chain[0]
    start, followed = followed_back(links, today)
    assert followed == links and start == (hops[0][0] if hops else today)
    assert onward(links, start) == today
