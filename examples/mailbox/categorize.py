#!/usr/bin/env python3
"""Classify a text into one of the given categories: a plangate ``exec`` tool.

Protocol of exec tools: the action's params arrive as JSON on stdin; whatever the program
prints to stdout as JSON becomes ``result.json``; a non-zero exit is a failure. Keyword
matching stands in for a real classifier.
"""

from __future__ import annotations

import json
import sys

KEYWORDS = {
    "billing": ("charged", "invoice", "refund", "payment", "billing"),
    "support": ("error", "crash", "help", "broken", "cannot", "password"),
    "feedback": ("love", "great", "suggest", "feature", "thanks"),
    "spam": ("winner", "prize", "crypto", "click here"),
}


def classify(text: str, categories: list[str]) -> str:
    lowered = text.lower()
    scores = {c: sum(word in lowered for word in KEYWORDS.get(c, ())) for c in categories}
    best = max(categories, key=lambda c: scores[c])
    return best if scores[best] else categories[0]


def main() -> int:
    params = json.load(sys.stdin)
    categories = params.get("categories") or list(KEYWORDS)
    category = classify(str(params.get("text", "")), categories)
    print(json.dumps({"category": category, "categories": categories}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
