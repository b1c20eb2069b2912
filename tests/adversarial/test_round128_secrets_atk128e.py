r"""Round 128, values and secrets (atk128e): "a secret never leaves the controller in any
form" -- here through the command line of the processes the controller starts -- and "a value
reaches the tool exactly as approved" at the edges of argv templating.

docs/execution.md: an exec tool's ``argv`` comes from the catalog with ``{param}`` filled per
element, and "A tool receives a secret only as a param (``$<secrets.NAME>``)". Nothing stops
a plan from giving ``$<secrets.NAME>`` to a param the catalog puts into ``argv``; the
process's argv is ``/proc/<pid>/cmdline``, readable by every process on the host (mode 0444,
no ``hidepid`` by default): every other tool the controller runs (also one running beside it
in a graph), every local user, ``ps``. The brief names "tool argv visible to other tools" as
one place a secret must not reach. The controller's own records all held (``***``).

Labs (two, built once per module in parallel by ``build_all``):

- ``lab`` (local mode, approver ``alice@example.com``; pass 1 freezes, Alice approves every
  plan, pass 2 runs them (a third pass after Alice approves ``a-gate``'s gate) while a
  ``Watcher`` thread of the test, standing in for any other process on the host, reads
  every ``/proc/*/cmdline`` every 20 ms). ``secrets.file`` holds A (17 characters), MAP (a
  mapping ``{user: app, password: PW}``) and NUL (a NUL between two 8-character halves);
  ``PLANGATE_SECRET_ENVS`` holds ENVS. Tools: ``pt`` (round 127's recording tool: params on
  stdin only), ``ax`` (exec, ``argv: [python, ax.py, "{s}"]``: records its argv, its own
  ``/proc/self/cmdline`` and its environment, sleeps 0.3 s), ``ay`` (``--password={s}``),
  ``ak`` (``"{s}", "spy-target"``), ``ac`` (``ax`` as a check tool), ``py`` (a python tool
  ``r128mod:f`` recording the same), ``sp`` (a spy: given no secret, reads the process table
  for up to 5 s and writes what it found to its own file), ``t2`` (``argv: [python, ax.py,
  "{a}|{b}", "{b}{a}", "x{tag}"]``).
  Plans ``ARGV_PLANS``, one per way a secret reaches an argv placeholder: a whole reference,
  inside text, an ``--password=`` element, a list and a mapping (compact JSON in one
  element), the environment's secret whole and inside text, a structured secret, an earlier
  output that holds the secret, a precondition's and a verify's check tool, a gate's action
  (``requires_approval``), a fallback step, a graph (``needs: []``) whose other action is
  the spy, a python tool, a secret holding a NUL. ``CONTROLS``: A to ``pt`` (stdin only), a
  plain literal to ``ax``, ``${secrets.A}`` (text, docs/plan-format.md "Legacy form").
  ``VALUES``: plan literals into ``ax``'s argv (``-0.0``, ``0.1e1``, ``2.50``, NFD text,
  ``'$$<secrets.A>'``, ``1_000``). ``TEMPLATES``: values that read as placeholders for
  ``t2`` (``{b}``, ``{a}``, ``{tag}``, ``{{b}}``, lone braces, ``{b!r:>9}``/``{0}``).
- ``remote``: remote mode, ``remote.url: http://deploy:RPW@127.0.0.1:<port>/plans.git``, a
  loopback server that answers 503 after 0.5 s; one ``run --once`` and ``status`` under the
  watcher.

Ids (103):

- class ``secret-in-exec-argv`` (19 strict xfails, fail open):
  ``test_secret_never_in_a_process_argv[*]`` (16; 14 xfail: whole, in-text, flag, list,
  mapping, env-secret, structured, output, precondition, verify, gate, fallback, parallel,
  env-in-text; held: ``python`` (params never in argv), ``nul`` (``E_PARAMS_INVALID``, the
  tool never started)); ``test_no_other_process_reads_a_secret_in_an_argv[A, MAP.password,
  ENVS]`` (3: the watcher saw each in the tool's command line and in the ``/bin/sh -c``
  cgroup shim's); ``test_another_tool_never_reads_a_secret_from_argv`` (1: the spy ``sp``,
  given nothing, wrote ``.../ax.py Zq8Lm3Xv7Tp2Wd9Hc spy-target`` to its file).

  Fixed (fix129s): the cause was that the exec tool filled ``{param}`` with whatever a
  reference resolved to and started the program (through the ``/bin/sh -c`` cgroup shim, its
  argv the same elements): nothing asked whether an element held a secret. Now
  ``ExecTool._refuse_secrets`` (controller/execution/tools/exec.py) refuses, before anything
  starts, every element that the params as the record shows them (``CallContext.shown``:
  ``refs.recorded``, built by the engine's ``Steps._shown`` for an action, a fallback, a gate
  and a check tool alike; a nested plan's scope now carries its inputs' provenance,
  ``Context.shown_inputs``) fill otherwise than the real params: E_PARAMS_INVALID naming the
  element and the param, remedy: take it on stdin. By provenance, so an author's literal
  equal to a secret is never judged (no oracle for a guess). ``validate --config`` warns of
  a ``$<secrets.*>`` placed into an argv param (``flows.secrets_into_argv``), and the shim
  never carries the environment (an environment dash would not pass on takes the
  ``preexec_fn`` path instead of ``env -i NAME=VALUE...``). With the refusal, a graph's and a
  fallback's plan fails at the refused action (the actions after it have no code of their
  own): ``test_outcome_as_documented`` accepts a code on any action, and
  ``test_another_tool_never_reads_a_secret_from_argv`` accepts the refused call (nothing to
  read; the spy, if it ran, found nothing).
- class ``credential-in-git-argv`` (1 strict xfail, fail open):
  ``test_remote_password_never_in_a_process_argv``: remote mode runs ``git clone --bare -q
  --single-branch --branch main http://deploy:<password>@127.0.0.1:<port>/plans.git
  <state>/.clone-*`` (and git then ``git-remote-http origin <that URL>``): the config
  credential every record hides (docs/execution.md "Redaction": "the userinfo of ...
  ``remote.url``") is in the process table for the whole clone (and each retry).

  Fixed (fix129c): git was given ``remote.url`` as written, userinfo and all, on the
  ``git clone`` command line and in the clone's ``remote.origin.url``, and git hands the URL
  it holds to ``git-remote-http`` (and ``send-pack``/``fetch-pack``) as an argument. Now
  git is given the URL without its userinfo (``controller.git.guard.remote_auth``); the user
  and password reach git through a credential helper scoped to the URL's scheme, host and
  port, pinned in ``GIT_CONFIG_PARAMETERS`` and reading them from the environment of the
  calls that talk to the remote only (clone, fetch, push, ls-remote: ``RemoteAuth``,
  ``run_raw(remote=True)``); a clone whose config still holds the userinfo is rewritten
  when the controller opens it (``GitRepo.forget_remote_userinfo``). ssh and git URLs and
  paths are unchanged.
- held: ``test_secret_never_in_a_process_argv_control[*]`` (3),
  ``test_outcome_as_documented[*]`` (19: froze ``pending_approval``, ended ``completed``,
  or failed with a code, no traceback), ``test_secret_never_readable[*]`` (19: no spelling
  (round 127's ``_forms``) in git history, ``status``, ``show -v``, MCP ``log``, the page,
  the journal, the passes' logs), ``test_secret_never_in_a_tools_environment[*]`` (19: no
  ``PLANGATE_SECRET_*`` nor any secret's value in a tool's environment),
  ``test_secret_never_in_a_file_the_controller_wrote`` (1: repository, ``.git``, state
  directory, home), ``test_nothing_readable_in_check_and_audit``,
  ``..._on_a_fresh_clone`` (1 each), ``test_remote_fetch_failure_is_coded_and_masks_the_
  password`` (1: ``E_GIT: git clone http://***@127.0.0.1:<port>/plans.git: ...``),
  ``test_literal_reaches_argv_as_canonical[*]`` and ``..._stdin_as_canonical[*]`` (6 each:
  ``0``, ``1``, ``2.5``, NFD as written, ``$<secrets.A>`` as text, ``1_000`` as text),
  ``test_placeholder_filled_once_as_text[*]`` (6: filled once, never re-read, no
  ``str.format`` field).

Seen (round 128: 103 ids, 84 passed, 19 xfailed (strict); 58-96 s wall at ``-n 2`` on a
loaded 2-core machine, load average 12-16).

Seen, not asserted: a catalog ``cwd: "{s}"`` is not a placeholder (the literal folder
``{s}``), and a missing ``cwd`` is reported ``E_TOOL_FAILED: cannot start '/bin/true': No
such file or directory`` (names the program, not the folder); a catalog ``env`` value
``"{a}"`` stays the text ``{a}`` (no secret reaches an environment); ``argv: ["{s}"]`` with
a secret as the program is ``cannot start '***'`` (masked; the shim's command line still holds
it); a remote that accepts and never answers held ``run --once`` past 15 s (git has no
timeout of its own; not pursued).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, build_all
from test_round126_secrets_atk126e import _readers
from test_round127_secrets_atk127e import TOOL, _forms

PY = sys.executable

A = "Zq8Lm3Xv7Tp2Wd9Hc"
PW = "Hk4Rw9Tz2Lp6Qx8Vm"
ENVS = "Ev7Nq3Jx9Wb5Ks2Tf"
#: a secret holding a NUL, which no argv element can carry (docs/execution.md: such a value is
#: E_PARAMS_INVALID); the parts either side of it are 8 characters each
NUL = "Qw7Er4Ty\0Ui9Op2As"
MAP_JSON = json.dumps({"password": PW, "user": "app"}, separators=(",", ":"))

#: the argv tool: records its argv and its own cmdline, lingers a moment (so another process
#: can read its cmdline), prints a small JSON result
AX = r"""
import json, os, sys, time
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    cmd = open("/proc/self/cmdline", encoding="utf-8", errors="replace").read()
    env = json.dumps(dict(os.environ), ensure_ascii=False)
    f.write(json.dumps({"argv": sys.argv[1:], "cmdline": cmd, "stdin": data, "env": env}) + "\n")
# the only calls holding MAP.password and ENVS, and the spy's target, linger longer: another
# process on a loaded host gets a fair chance to read them
tag = json.loads(data).get("tag") if data.strip() else None
time.sleep(2.0 if tag in ("a-structured", "a-env-secret", "a-env-in-text", "a-parallel") else 0.3)
print(json.dumps({"x": "ok"}))
"""

#: the same as a python tool (``r128mod:f``): records the child's argv and cmdline
PYMOD = r"""
import json, os, sys, time
def f(**kw):
    with open(os.environ["REC_LOG"], "a", encoding="utf-8") as fh:
        cmd = open("/proc/self/cmdline", encoding="utf-8", errors="replace").read()
        env = json.dumps(dict(os.environ), ensure_ascii=False)
        fh.write(json.dumps({"argv": sys.argv[1:], "cmdline": cmd, "stdin": json.dumps(kw),
                             "env": env}) + "\n")
    time.sleep(0.3)
    return {"x": "ok"}
"""

#: another tool of the catalog, given no secret: while it runs (beside ``ak`` in a graph,
#: docs/plan-format.md "independent actions run at once") it reads every process's command
#: line as any process may and keeps those of ``ak`` in its own file
SPY = r"""
import json, os, sys, time
sys.stdin.read()
seen, end = [], time.time() + 5
while not seen and time.time() < end:
    for e in os.listdir("/proc"):
        try:
            cmd = open(f"/proc/{e}/cmdline", "rb").read().decode("utf-8", "replace")
        except OSError:
            continue
        if "spy-target" in cmd and "/bin/sh" not in cmd:
            seen.append(cmd.replace("\0", " "))
    time.sleep(0.01)
with open(os.environ["SPY_OUT"], "w", encoding="utf-8") as f:
    f.write("\n".join(seen))
print(json.dumps({"seen": len(seen)}))
"""


def _plan(slug: str, actions: str, tools: str) -> str:
    avail = ", ".join(f"{{name: {t.strip()}}}" for t in tools.split(","))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{avail}]\nactions:\n{actions}"
    )


def _ax(slug: str, s: str, tool: str = "ax", more: str = "", n: int = 1) -> str:
    return f"  - id: {n}\n    tool: {tool}\n    why: w\n    params: {{tag: {slug}, s: {s}}}\n{more}"


#: id -> (plan text, the secret values that must reach no argv, expected final status)
ARGV_PLANS: dict[str, tuple[str, list[str], str]] = {
    "whole": (_plan("a-whole", _ax("a-whole", '"$<secrets.A>"'), "ax"), [A], "completed"),
    "in-text": (
        _plan("a-in-text", _ax("a-in-text", '"token=$<secrets.A>;"'), "ax"),
        [A],
        "completed",
    ),
    "flag": (
        _plan("a-flag", _ax("a-flag", '"$<secrets.A>"', tool="ay"), "ay"),
        [A],
        "completed",
    ),
    "list": (_plan("a-list", _ax("a-list", '[x, "$<secrets.A>"]'), "ax"), [A], "completed"),
    "mapping": (
        _plan("a-mapping", _ax("a-mapping", '{k: "$<secrets.A>"}'), "ax"),
        [A],
        "completed",
    ),
    "env-secret": (
        _plan("a-env-secret", _ax("a-env-secret", '"$<secrets.ENVS>"'), "ax"),
        [ENVS],
        "completed",
    ),
    "structured": (
        _plan("a-structured", _ax("a-structured", '"$<secrets.MAP>"'), "ax"),
        [PW],
        "completed",
    ),
    "output": (
        _plan(
            "a-output",
            "  - id: 1\n    tool: pt\n    why: w\n"
            '    params: {tag: a-output-1, s: "$<secrets.A>", mode: raw}\n'
            "    outputs: [{name: o, path: $.json.x}]\n"
            + _ax("a-output", '"$<actions[1].outputs.o>"', n=2),
            "pt, ax",
        ),
        [A],
        "completed",
    ),
    "precondition": (
        _plan(
            "a-precondition",
            _ax(
                "a-precondition",
                "plain",
                tool="pt",
                more='    preconditions: [{tool: ac, params: {tag: a-pre-ck, s: "$<secrets.A>"}, '
                "expect: {path: $.json.x, equals: ok}}]\n",
            ),
            "pt, ac",
        ),
        [A],
        "completed",
    ),
    "verify": (
        _plan(
            "a-verify",
            _ax(
                "a-verify",
                "plain",
                tool="pt",
                more='    verify: {tool: ac, params: {tag: a-ver-ck, s: "$<secrets.A>"}, '
                "expect: {path: $.json.x, equals: ok}, timeout: 10, interval: 1}\n",
            ),
            "pt, ac",
        ),
        [A],
        "completed",
    ),
    "gate": (
        _plan(
            "a-gate",
            _ax("a-gate-1", "plain", tool="pt")
            + _ax("a-gate", '"$<secrets.A>"', n=2, more="    requires_approval: true\n"),
            "pt, ax",
        ),
        [A],
        "completed",
    ),
    "python": (
        _plan("a-python", _ax("a-python", '"$<secrets.A>"', tool="py"), "py"),
        [A],
        "completed",
    ),
    "nul": (
        _plan("a-nul", _ax("a-nul", '"$<secrets.NUL>"'), "ax"),
        [NUL],
        "failed",
    ),
    "parallel": (
        _plan(
            "a-parallel",
            _ax("a-parallel", '"$<secrets.A>"', tool="ak", more="    needs: []\n")
            + "  - id: 2\n    tool: sp\n    why: w\n    params: {tag: a-parallel-spy}\n"
            "    needs: []\n",
            "ak, sp",
        ),
        [A],
        "completed",
    ),
    "fallback": (
        _plan(
            "a-fallback",
            "  - id: 1\n    tool: pt\n    why: w\n"
            "    params: {tag: a-fallback-1, s: a, mode: exit}\n"
            "    on_failure: fallback\n    fallback:\n"
            '      - {id: "1.1", tool: ax, why: w, params: {tag: a-fallback, s: "$<secrets.A>"}}\n'
            + _ax("a-fallback-2", "plain", tool="pt", n=2),
            "pt, ax",
        ),
        [A],
        "completed",
    ),
    "env-in-text": (
        _plan("a-env-in-text", _ax("a-env-in-text", '"u:$<secrets.ENVS>@h"'), "ax"),
        [ENVS],
        "completed",
    ),
}
#: controls: the secret on stdin only (``pt``), and a plain literal into ``ax``'s argv
CONTROLS: dict[str, tuple[str, list[str], str]] = {
    "stdin-only": (
        _plan("c-stdin-only", _ax("c-stdin-only", '"$<secrets.A>"', tool="pt"), "pt"),
        [A],
        "completed",
    ),
    "literal": (_plan("c-literal", _ax("c-literal", "harmless"), "ax"), [A], "completed"),
    # docs/plan-format.md "Legacy form": ``${secrets.X}`` is text everywhere
    "legacy": (_plan("c-legacy", _ax("c-legacy", '"${secrets.A}"'), "ax"), [A], "completed"),
}
PLANS = {**ARGV_PLANS, **CONTROLS}
#: the values the watcher looks for in every process's command line
WATCHED = {"A": A, "MAP.password": PW, "ENVS": ENVS}

#: plan literals into ``ax``'s argv element: id -> (YAML, the argv element, the stdin value)
VALUES: dict[str, tuple[str, str, Any]] = {
    "negzero": ("-0.0", "0", 0),
    "exp-one": ("0.1e1", "1", 1),
    "trailing-zero": ("2.50", "2.5", 2.5),
    "nfd": ('"Ame\u0301lie"', "Ame\u0301lie", "Ame\u0301lie"),
    "refish": ("'$$<secrets.A>'", "$<secrets.A>", "$<secrets.A>"),
    "underscore": ("1_000", "1_000", "1_000"),
}

#: templating edges: ``t2``'s argv is ``["{a}|{b}", "{b}{a}", "x{tag}"]``; a value that reads
#: as a placeholder (or braces) must reach the element as text, filled once, never again
TEMPLATES: dict[str, dict[str, str]] = {
    "value-names-other": {"a": "{b}", "b": "X"},
    "value-names-itself": {"a": "{a}", "b": "{b}{b}"},
    "value-names-tag": {"a": "{tag}", "b": "{a}"},
    "double-braces": {"a": "{{b}}", "b": "{}"},
    "lone-braces": {"a": "{", "b": "}"},
    "format-spec": {"a": "{b!r:>9}", "b": "{0}"},
}
T2_ARGV = ["{a}|{b}", "{b}{a}", "x{tag}"]


def _fill(element: str, params: dict[str, str]) -> str:
    """docs/execution.md: ``{param}`` fills one argv element with that param's text, once."""
    return re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), m.group(0)), element)


def _template_plan(tid: str) -> str:
    params = {"tag": f"t-{tid}", **TEMPLATES[tid]}
    return _plan(
        f"t-{tid}",
        f"  - id: 1\n    tool: t2\n    why: w\n    params: {json.dumps(params)}\n",
        "t2",
    )


def _value_plan(vid: str) -> str:
    return _plan(f"v-{vid}", _ax(f"v-{vid}", VALUES[vid][0]), "ax")


class Watcher:
    """Any other process on the host: reads every ``/proc/*/cmdline`` it may (all of them,
    by default) every 20 ms and keeps those that hold a watched value. Only this lab's
    processes count (their working folder or their command line inside ``root``): other
    modules run beside it and some put the same values into an argv on purpose (a literal
    equal to a secret, never judged), which is no leak of this lab's (a CI flake, 2026-12-08)."""

    def __init__(self, values: list[str], root: Path) -> None:
        self.values = values
        self.root = str(root.resolve())
        self.seen: dict[str, set[str]] = {v: set() for v in values}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        me = os.getpid()
        while not self.stop.is_set():
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == me:
                    continue
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as fh:
                        cmd = fh.read().decode("utf-8", "replace")
                except OSError:
                    continue
                hits = [v for v in self.values if v in cmd]
                if hits and not self._ours(entry, cmd):
                    continue
                for v in hits:
                    self.seen[v].add(cmd.replace("\0", " ").strip())
            time.sleep(0.02)

    def _ours(self, pid: str, cmd: str) -> bool:
        if self.root in cmd:
            return True
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return True  # unknown: counted, the safe side
        return cwd == self.root or cwd.startswith(self.root + "/")

    def __enter__(self) -> Watcher:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)


def build(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "ax.py").write_text(AX)
    (root / "spy.py").write_text(SPY)
    spy_out = root / "lab" / "home" / "spy.out"
    (root / "pymod").mkdir()
    (root / "pymod" / "r128mod.py").write_text(PYMOD)
    sec = root / "sec.yml"
    sec.write_text(f"A: {A}\nMAP: {{user: app, password: {PW}}}\nNUL: {json.dumps(NUL)}\n")
    log = json.dumps({"REC_LOG": str(root / "lab" / "ran.log")})
    ax = json.dumps([PY, str(root / "ax.py"), "{s}"])
    ak = json.dumps([PY, str(root / "ax.py"), "{s}", "spy-target"])
    ay = json.dumps([PY, str(root / "ax.py"), "--password={s}"])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\npython_path: [{root / 'pymod'}]\n",
        tools=f"pt: {{kind: exec, argv: {json.dumps([PY, str(root / 't.py')])}}}\n"
        f"py: {{kind: python, target: 'r128mod:f', env: {log}}}\n"
        f"ax: {{kind: exec, argv: {ax}, env: {log}}}\n"
        f"ay: {{kind: exec, argv: {ay}, env: {log}}}\n"
        f"t2: {{kind: exec, argv: {json.dumps([PY, str(root / 'ax.py'), *T2_ARGV])}, "
        f"env: {log}}}\n"
        f"ak: {{kind: exec, argv: {ak}, env: {log}}}\n"
        f"sp: {{kind: exec, argv: {json.dumps([PY, str(root / 'spy.py')])}, "
        f"env: {json.dumps({'SPY_OUT': str(spy_out)})}}}\n"
        f"ac: {{kind: exec, argv: {ax}, env: {log}, idempotent: true, risk: low}}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_ENVS": ENVS}  # type: ignore[attr-defined]
    slugs = {
        vid: text.split("name: ", 1)[1].split("\n", 1)[0] for vid, (text, _v, _f) in PLANS.items()
    }
    for vid, (text, _v, _f) in PLANS.items():
        lab.write(slugs[vid], text)
    for vid in VALUES:
        lab.write(f"v-{vid}", _value_plan(vid))
    for tid in TEMPLATES:
        lab.write(f"t-{tid}", _template_plan(tid))
    lab.commit("plans")
    every = [*slugs.values(), *(f"v-{v}" for v in VALUES), *(f"t-{t}" for t in TEMPLATES)]
    passes = [lab.run().stderr]
    frozen = {s: lab.plan(s)["plan"]["status"] for s in every}
    for slug in every:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    with Watcher(list(WATCHED.values()), root) as watcher:
        passes.append(lab.run().stderr)
        # the gate: Alice approves the gated action as ``status`` asks, the next pass runs it
        if lab.plan("a-gate")["plan"]["status"] == "awaiting_approval":
            lab.set_status("a-gate", "approved")
            lab.commit("approve the gate", ALICE)
            passes.append(lab.run().stderr)
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    check = lab.cli("check", "--config", str(lab.config), cwd=lab.repo)
    audit = lab.cli("audit", cwd=lab.repo)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    fresh = [lab.cli("audit", "--json", cwd=clone), lab.cli("status", "--json", cwd=clone)]
    fresh += [lab.cli("show", "-v", f"plans/{s}", cwd=clone) for s in slugs.values()]
    return {
        "slugs": slugs,
        "frozen": frozen,
        "final": {s: lab.plan(s)["plan"]["status"] for s in every},
        "errors": {
            s: [
                (a.get("error") or {}).get("code")
                for a in (lab.plan(s).get("execution") or {}).get("actions") or []
            ]
            for s in every
        },
        "calls": calls,
        "seen": {v: sorted(c) for v, c in watcher.seen.items()},
        "read": _readers(lab, list(slugs.values()), passes),
        "extra": check.stdout + check.stderr + audit.stdout + audit.stderr,
        "fresh": "".join(r.stdout + r.stderr for r in fresh),
        "tracebacks": [p for p in passes if "Traceback" in p],
        "spy": spy_out.read_text() if spy_out.exists() else None,
        "files": _files_holding(lab, [A, PW, ENVS, *NUL.split("\0")]),
    }


def _files_holding(lab: Lab, values: list[str]) -> list[str]:
    """Every file under the lab (the work tree, ``.git``, the state directory, the home)
    holding a value raw, but the bench's own (the recording log, the secrets file)."""
    found = []
    for path in lab.root.rglob("*"):
        if (
            not path.is_file()
            or path in (lab.log, lab.home / "spy.out")
            or path.stat().st_size > 4_000_000
        ):
            continue
        data = path.read_bytes()
        found += [f"{path.relative_to(lab.root)}: {v}" for v in values if v.encode() in data]
    return found


#: the password of ``remote.url`` (a config credential: docs/execution.md "Redaction")
RPW = "Rp5Tx8Kw2Nz6Qb4Hj"


def build_remote(root: Path) -> dict[str, Any]:
    """Remote mode, ``remote.url: http://deploy:RPW@127.0.0.1:<port>/plans.git``; the server
    on that port answers every request with a 503 after 0.5 s. One ``run --once`` pass while
    the watcher reads every ``/proc/*/cmdline``."""
    root.mkdir(parents=True, exist_ok=True)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    port = srv.getsockname()[1]
    done = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                time.sleep(0.5)
                with contextlib.suppress(OSError):
                    conn.sendall(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    lab = Lab(root / "lab")
    url = f"http://deploy:{RPW}@127.0.0.1:{port}/plans.git"
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n", f"remote: {{url: '{url}', branch: main}}\n"
        )
    )
    try:
        with Watcher([RPW], root) as watcher:
            got = lab.cli("run", "--once", "--config", str(lab.config), timeout=120)
            status = lab.cli("status", "--config", str(lab.config), timeout=120)
    finally:
        done.set()
        server.join(5)
        srv.close()
    return {
        "rc": got.returncode,
        "out": got.stdout + got.stderr + status.stdout + status.stderr,
        "seen": sorted(watcher.seen[RPW]),
    }


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    got = build_all(tmp_path_factory.mktemp("r128e"), {"lab": build, "remote": build_remote}).got
    return {**got["lab"], "remote": got["remote"]}


def _tagged(calls: list[dict[str, Any]], tags: set[str]) -> list[dict[str, Any]]:
    return [c for c in calls if json.loads(c["stdin"] or "{}").get("tag") in tags]


#: the tags the plan's argv-tool calls carry
TAGS = {
    "precondition": {"a-pre-ck"},
    "verify": {"a-ver-ck"},
}


def _argv_leaks(labs: dict[str, Any], vid: str) -> list[str]:
    slug = labs["slugs"][vid]
    tags = TAGS.get(vid, {slug})
    out = []
    for c in _tagged(labs["calls"], tags):
        for v in PLANS[vid][1]:
            if v in json.dumps(c["argv"], ensure_ascii=False) or v in c.get("cmdline", ""):
                out.append(f"argv of {sorted(tags)}: {c['argv']}")
    return out


ARGV = "secret-in-exec-argv"
WHY = (
    "a secret given to a param the catalog puts into an exec argv element runs: the value is "
    "the process's argv, /proc/<pid>/cmdline, readable by every other process and user"
)
#: ways in that held: a python tool gets its params otherwise; a NUL is E_PARAMS_INVALID
HELD = {"python", "nul"}


@pytest.mark.parametrize(
    "vid",
    list(ARGV_PLANS),
)
def test_secret_never_in_a_process_argv(labs: dict[str, Any], vid: str) -> None:
    """The secret is in no argv: the tool's own (``sys.argv``, ``/proc/self/cmdline``). The
    defence: a plan that would put a secret into an argv element is refused with a code (the
    tool never runs), or the tool gets the value otherwise (stdin, as a python tool)."""
    slug = labs["slugs"][vid]
    ran = _tagged(labs["calls"], TAGS.get(vid, {slug}))
    assert ran or labs["final"][slug] == "failed", f"{slug} never ran nor failed"
    leaks = _argv_leaks(labs, vid)
    assert not leaks, leaks


@pytest.mark.parametrize(
    "value",
    [pytest.param(v, id=k) for k, v in WATCHED.items()],
)
def test_no_other_process_reads_a_secret_in_an_argv(labs: dict[str, Any], value: str) -> None:
    """A process of the host (the test's watcher thread, reading ``/proc/*/cmdline`` every
    20 ms while the pass ran) never saw the secret in another process's command line (the
    tool's, or the ``/bin/sh -c`` shim's that enters the cgroup and execs it)."""
    seen = labs["seen"][value]
    assert not seen, seen[:3]


@pytest.mark.parametrize("vid", list(PLANS))
def test_secret_never_in_a_tools_environment(labs: dict[str, Any], vid: str) -> None:
    """docs/execution.md "Environment": tools get the controller's environment minus every
    ``PLANGATE_SECRET_*`` variable; a secret reaches a tool only as a param."""
    slug = labs["slugs"][vid]
    calls = _tagged(labs["calls"], TAGS.get(vid, {slug}) | {slug})
    assert calls or labs["final"][slug] == "failed"
    leaks = [c["env"] for c in calls if any(v in c.get("env", "") for v in WATCHED.values())]
    assert not leaks, leaks[:1]


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_secret_never_in_a_process_argv_control(labs: dict[str, Any], vid: str) -> None:
    slug = labs["slugs"][vid]
    assert _tagged(labs["calls"], {slug}), f"{slug} never ran"
    assert not _argv_leaks(labs, vid)


@pytest.mark.parametrize("vid", list(PLANS))
def test_outcome_as_documented(labs: dict[str, Any], vid: str) -> None:
    slug = labs["slugs"][vid]
    assert labs["frozen"][slug] == "pending_approval", labs["frozen"][slug]
    final = labs["final"][slug]
    codes = labs["errors"][slug]
    # the failing action's code: a refused call ends the plan, the actions after it (a
    # fallback's next action, a graph's other branch) have no error of their own (fix129s)
    assert final == PLANS[vid][2] or (
        final == "failed" and any(str(c).startswith("E_") for c in codes)
    ), (final, codes)
    assert not labs["tracebacks"], labs["tracebacks"][0][-800:]


@pytest.mark.parametrize("vid", list(PLANS))
def test_secret_never_readable(labs: dict[str, Any], vid: str) -> None:
    slug = labs["slugs"][vid]
    leaks = [
        f"{reader}: {form!r}"
        for reader, text in labs["read"][slug].items()
        for value in PLANS[vid][1]
        for form in _forms(value)
        if form in text
    ]
    assert not leaks, leaks


def _value_call(labs: dict[str, Any], vid: str) -> dict[str, Any]:
    mine = _tagged(labs["calls"], {f"v-{vid}"})
    assert labs["final"][f"v-{vid}"] == "completed", labs["errors"][f"v-{vid}"]
    assert len(mine) == 1, mine
    return mine[0]


@pytest.mark.parametrize("vid", list(VALUES))
def test_literal_reaches_argv_as_canonical(labs: dict[str, Any], vid: str) -> None:
    """docs/execution.md: a placeholder's value is the param's text (a string as is, other
    values as compact JSON) of the one canonical value the hash covers."""
    assert _value_call(labs, vid)["argv"] == [VALUES[vid][1]]


@pytest.mark.parametrize("vid", list(VALUES))
def test_literal_reaches_stdin_as_canonical(labs: dict[str, Any], vid: str) -> None:
    got = json.loads(_value_call(labs, vid)["stdin"])["s"]
    want = VALUES[vid][2]
    assert got == want and type(got) is type(want), (got, want)


def test_nothing_readable_in_check_and_audit(labs: dict[str, Any]) -> None:
    leaks = [f for v in (A, PW, ENVS) for f in _forms(v) if f in labs["extra"]]
    assert not leaks, leaks


def test_nothing_readable_on_a_fresh_clone(labs: dict[str, Any]) -> None:
    assert "plans/a-whole" in labs["fresh"], labs["fresh"][:400]
    leaks = [f for v in (A, PW, ENVS) for f in _forms(v) if f in labs["fresh"]]
    assert not leaks, leaks


def test_secret_never_in_a_file_the_controller_wrote(labs: dict[str, Any]) -> None:
    """The repository (work tree and ``.git``), the state directory (journals, records,
    seals) and the lab's home hold no secret's value raw (only the bench's recording log
    and the secrets file do, outside the lab)."""
    assert not labs["files"], labs["files"]


def test_another_tool_never_reads_a_secret_from_argv(labs: dict[str, Any]) -> None:
    """``a-parallel``: action 1 (``ak``) takes ``$<secrets.A>`` into an argv element; action 2
    (``sp``), run at the same time and given nothing, reads the process table. It must find
    no secret there (and write none to its own file, ``spy.out``)."""
    # fix129s: the secret's call is refused before it starts (E_PARAMS_INVALID), so there is
    # nothing to read; the spy, if it ran, found nothing
    refused = labs["errors"]["a-parallel"][0] == "E_PARAMS_INVALID"
    assert refused or labs["final"]["a-parallel"] == "completed", labs["errors"]["a-parallel"]
    assert refused or labs["spy"] is not None, "the spy never ran"
    assert A not in (labs["spy"] or ""), labs["spy"]


def test_remote_fetch_failure_is_coded_and_masks_the_password(labs: dict[str, Any]) -> None:
    """The pass that cannot clone its remote ends with ``E_GIT``, no traceback, the URL's
    password ``***`` (docs/execution.md: "the userinfo of ... ``remote.url``")."""
    got = labs["remote"]
    assert got["rc"] != 0 and "E_GIT" in got["out"], got["out"][-800:]
    assert "Traceback" not in got["out"], got["out"][-800:]
    assert not [f for f in _forms(RPW) if f in got["out"]], got["out"][-800:]


def test_remote_password_never_in_a_process_argv(labs: dict[str, Any]) -> None:
    """No process's command line (``git clone``, ``git-remote-http``) holds the password of
    ``remote.url``, one of the config's credentials every record hides."""
    seen = labs["remote"]["seen"]
    assert not seen, seen[:3]


@pytest.mark.parametrize("tid", list(TEMPLATES))
def test_placeholder_filled_once_as_text(labs: dict[str, Any], tid: str) -> None:
    """A value that holds ``{other}``, ``{itself}``, ``{{x}}``, a lone brace or a format spec
    reaches the argv element as its text, filled once (never re-read as a placeholder, never
    a ``str.format`` field), and stdin carries the params as approved."""
    slug = f"t-{tid}"
    assert labs["final"][slug] == "completed", labs["errors"][slug]
    calls = _tagged(labs["calls"], {slug})
    assert len(calls) == 1, calls
    params = {"tag": slug, **TEMPLATES[tid]}
    assert calls[0]["argv"] == [_fill(e, params) for e in T2_ARGV], calls[0]["argv"]
    assert json.loads(calls[0]["stdin"]) == params
