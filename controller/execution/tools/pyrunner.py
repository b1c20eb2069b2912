"""Child-process side of the ``python`` tool kind: import ``module:function``, call it, report.

Run as a script (``python pyrunner.py``), not as part of the package, so that a tool call does
not pay for importing plangate. Protocol, all JSON:

- stdin: ``{"target": "module:function", "params": {...}, "python_path": [...],
  "idempotency_key": "step:..."}``;
- stdout (one object, written last): ``{"ok": true, "result": ...}``,
  ``{"ok": false, "error": "Type: message", "permanent": bool}``, or for a return value
  that is not JSON data (a non-string key, NaN, an object json cannot write)
  ``{"ok": false, "invalid": true, "error": "why", "permanent": true}``.

Anything the tool itself prints goes to stderr, so it cannot corrupt the report. An exception
whose class has a true ``permanent`` attribute is reported as permanent (not worth a retry);
import failures and results that are not JSON data are permanent too.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from typing import Any


def _report(channel: Any, payload: dict[str, Any]) -> None:
    channel.write(json.dumps(payload, allow_nan=False, ensure_ascii=False))
    channel.flush()


def _failure(exc: BaseException, permanent: bool) -> dict[str, Any]:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return {"ok": False, "error": text, "permanent": permanent}


def _load(target: str, python_path: list[str]) -> Any:
    sys.path[:0] = python_path
    module_name, _, func_name = target.partition(":")
    func = importlib.import_module(module_name)
    for part in func_name.split("."):
        func = getattr(func, part)
    if not callable(func):
        raise TypeError(f"{target} is not callable")
    return func


def _accepts_key(func: Any) -> bool:
    try:
        return "idempotency_key" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def main() -> int:
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the tool's prints go to stderr
    request = json.loads(sys.stdin.buffer.read())
    try:
        func = _load(request["target"], request["python_path"])
    except Exception as exc:
        _report(channel, _failure(exc, True))
        return 0
    kwargs = dict(request["params"])
    if _accepts_key(func):
        kwargs["idempotency_key"] = request["idempotency_key"]
    try:
        inspect.signature(func).bind(**kwargs)
    except TypeError as exc:
        _report(channel, _failure(TypeError(f"params do not fit {request['target']}: {exc}"), True))
        return 0
    except ValueError:
        pass  # no signature to check (a builtin): let the call decide
    try:
        result = func(**kwargs)
    except Exception as exc:
        _report(channel, _failure(exc, bool(getattr(exc, "permanent", False))))
        return 0
    problem = _key_problem(result)
    if problem is None:
        try:
            _report(channel, {"ok": True, "result": result})
            return 0
        except (TypeError, ValueError, RecursionError) as exc:
            problem = str(exc) or type(exc).__name__
    _report(channel, {"ok": False, "invalid": True, "error": problem, "permanent": True})
    return 0


def _key_problem(value: Any) -> str | None:
    """Why ``value`` is not JSON data for its keys: json.dumps would write a key 1, True or
    None as "1", "true" or "null", and drop the member it then collides with (round 24)."""
    stack, seen = [value], 0
    while stack and seen < 10_000_000:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    return f"the key {key!r} ({type(key).__name__}) is not a string"
                stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


if __name__ == "__main__":
    sys.exit(main())
