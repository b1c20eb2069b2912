"""The smallest useful PLAN.yml: one ``greet`` action, as an agent would write it.

Tests and benchmarks vary its name, task, status and greeting; the approval and controller
tests add comments that every controller write must keep.
"""

from __future__ import annotations


def greet_plan(name: str, task: str, who: str, status: str = "pending_approval") -> str:
    """A plan calling the catalog tool ``greet`` once with ``who`` (written as given: quote
    it, or add a comment after it)."""
    return f"""\
plan:
  name: "{name}"
  task: "{task}"
  status: {status}
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "say hello"
    params:
      who: {who}
"""
