"""Round 86, agent surfaces: plangate run under ``git -c ...`` (a hook, an alias, a harness):
git exports the settings to its children as ``GIT_CONFIG_PARAMETERS``, which git reads after
``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` (where the guard put its pins). Do the pins still
decide how plangate's git reads the repository, whatever environment invokes plangate?

Lab (one, local mode, built once). The agent's ``plans/ok`` (approved by Alice, completed
once; her approval commit ``A`` is replaced by ``refs/replace/A``, the same tree and parent
under Mallory's name), ``plans/pa`` (frozen, ``pending_approval``) and one frozen
``plans/a<s><f>`` per setting and form. Settings ``<s>``:
- ``enc``: ``i18n.logOutputEncoding=UTF-16``; ``rep``: ``core.useReplaceRefs=true``;
  ``hook``: ``core.hooksPath=<a folder of hooks writing a marker>``; ``fsm``:
  ``core.fsmonitor=<a program writing a marker>``; ``user``: ``user.name=Harness``
  (control: a harmless setting, still applied).
Forms ``<f>``: ``gitc`` (a real parent git: ``git -c <s> -c alias.pg='!plangate' pg ...``),
``par`` (``GIT_CONFIG_PARAMETERS="'key'='value'"`` exported), ``cnt``
(``GIT_CONFIG_COUNT=1``/``KEY_0``/``VALUE_0``). Malformed inherited settings ``bad<m>``:
``badpar`` (``GIT_CONFIG_PARAMETERS="'core.hooksPath"``, an unterminated quote), ``badcnt``
(``GIT_CONFIG_COUNT=2`` with only ``KEY_0``/``VALUE_0``), ``badnum``
(``GIT_CONFIG_COUNT=x``); ``none`` (control).
Ids ``<s><f>:<op>`` (and ``bad<m>:<op>``, ``none:<op>``): readers first, on one unchanged
repository: ``status`` (``status --json`` rows of ``plans/ok``, ``plans/pa`` as with no
setting), ``show`` (``show --json --config plans/pa``: ``pending_approval``, the frozen
hash), ``audit`` (the fresh ``audit --json``, the same report as with no setting), ``mcp``
(MCP ``status``/``log`` of ``plans/pa``: the controller's ``pending_approval``); then the
writers: ``submit`` (MCP ``submit`` of ``plans/s<s><f>``: one commit adding that file),
``approve`` (Alice's ``plangate approve plans/a<s><f>``: one commit changing that file) and
``run`` (the daemon's ``run --once``: exit 0, the plan approved before it completed). Every
id: no hook and no fsmonitor program ran, no traceback. A malformed setting may instead be
refused ``E_GIT`` naming the variable, with a remedy, nothing committed.

Seen (round 86): 49 ids broke, 2 classes.
**The inherited command-scope settings win over the guard's pins** (28 ids, forms ``gitc``
and ``par`` only): git reads ``GIT_CONFIG_PARAMETERS`` after the guard's ``GIT_CONFIG_COUNT``
pins. ``enc{gitc,par}:{show,audit,mcp,approve,run}``: ``E_INTERNAL`` "internal error:
ValueError: not enough values to unpack (expected 14, got 1)" (``show``), "embedded null
byte" (``run --once``), MCP answers carrying a traceback through ``ownrecord.file_log``;
``rep{gitc,par}:audit``: the audit's report ``"ok": false`` for ``plans/ok``'s execution
(Alice's approval read through the replace ref, as Mallory's commit); ``hook{gitc,par}:
{submit,approve,run}`` and ``fsm{gitc,par}:{show,audit,submit,approve,run}``: the hook /
the fsmonitor program named in the environment ran (the marker written).
**A malformed inherited setting named the wrong remedy** (21 ids, ``bad{par,cnt,num}:*``):
``E_GIT`` "git config: error: bogus format in GIT_CONFIG_PARAMETERS" (``missing config key
GIT_CONFIG_KEY_1``, ``bogus count``) with the remedy "fix the git config file git names":
no file is at fault, the environment is.
Held: every ``cnt`` form (the pins came after ``KEY_0``), every ``user`` control, ``none``;
``hook`` for the readers (they commit nothing), ``enc`` for ``status`` and MCP ``submit``;
no id left a file in the checkout.

Should (docs/threat-model.md, the guard: "hooks and fsmonitor off" at "the highest
precedence"; docs/agents.md: a refusal is the JSON error shape with an ``E_`` code): the
pins decide every git read plangate makes; a setting plangate cannot read is ``E_GIT``.
Fixed (2026-12-01, r86gitparams): every git child gets ONE command scope,
``GIT_CONFIG_PARAMETERS`` = the inherited ``GIT_CONFIG_COUNT`` entries, then the inherited
``GIT_CONFIG_PARAMETERS`` entries (git's reading order, parsed as ``config.c`` parses them),
then the pins, with ``GIT_CONFIG_COUNT=0`` (``controller.git.guard._config_env``,
``inherited_config``); a malformed inherited variable is ``E_GIT`` naming it, remedy "unset
it", before any git runs (``GitGuard.read``).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
SETTINGS = ("enc", "rep", "hook", "fsm", "user")
FORMS = ("gitc", "par", "cnt")
BAD = ("badpar", "badcnt", "badnum")
COMBOS = ["none", *(f"{s}{f}" for s in SETTINGS for f in FORMS), *BAD]
KEEP = ("plans/ok", "plans/pa")
HOOK = '#!/bin/sh\necho "$0" >> {marker}\n'
READERS = ("status", "show", "audit", "mcp")
WRITERS = ("submit", "approve", "run")


def _setting(root: Path, combo: str) -> tuple[str, str]:
    marker = root / f"ran-{combo}"
    if combo.startswith("enc"):
        return "i18n.logOutputEncoding", "UTF-16"
    if combo.startswith("rep"):
        return "core.useReplaceRefs", "true"
    if combo.startswith("hook"):
        hooks = root / f"hooks-{combo}"
        hooks.mkdir(exist_ok=True)
        for name in (
            "post-commit", "pre-commit", "post-checkout", "reference-transaction",
            "post-index-change", "pre-auto-gc", "post-merge", "commit-msg",
        ):  # fmt: skip
            (hooks / name).write_text(HOOK.format(marker=marker))
            (hooks / name).chmod(0o755)
        return "core.hooksPath", str(hooks)
    if combo.startswith("fsm"):
        program = root / f"fsmonitor-{combo}"
        program.write_text(HOOK.format(marker=marker) + "exit 1\n")
        program.chmod(0o755)
        return "core.fsmonitor", str(program)
    return "user.name", "Harness"


def _env(root: Path, combo: str) -> tuple[dict[str, str], list[str]]:
    """The variables and the command prefix a combo runs plangate with."""
    if combo == "none":
        return {}, [mcpkit.PLANGATE]
    if combo == "badpar":
        return {"GIT_CONFIG_PARAMETERS": "'core.hooksPath"}, [mcpkit.PLANGATE]
    if combo == "badcnt":
        bad = {"GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Harness"}
        return {"GIT_CONFIG_COUNT": "2", **bad}, [mcpkit.PLANGATE]
    if combo == "badnum":
        return {"GIT_CONFIG_COUNT": "x"}, [mcpkit.PLANGATE]
    key, value = _setting(root, combo)
    if combo.endswith("gitc"):
        return {}, ["git", "-c", f"{key}={value}", "-c", f"alias.pg=!{mcpkit.PLANGATE}", "pg"]
    if combo.endswith("par"):
        return {"GIT_CONFIG_PARAMETERS": f"'{key}'='{value}'"}, [mcpkit.PLANGATE]
    return {
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": key, "GIT_CONFIG_VALUE_0": value,
    }, [mcpkit.PLANGATE]  # fmt: skip


def _run(
    lab: Lab, combo: str, *args: str, cwd: Path | None = None, who: Any = None, stdin: str = ""
) -> tuple[int, str, str]:
    extra, prefix = _env(lab.root, combo)
    env = lab.env(who)
    env.update(extra)
    env["REC_LOG"] = str(lab.log)
    r = subprocess.run(
        [*prefix, *args], env=env, cwd=cwd or lab.root, capture_output=True, text=True,
        timeout=180, check=False, input=stdin,
    )  # fmt: skip
    return r.returncode, r.stdout, r.stderr[-3000:]


def _mcp(lab: Lab, combo: str, calls: list[mcpkit.Call]) -> tuple[list[Any], str]:
    _rc, out, err = _run(
        lab, combo, "mcp", "--config", str(lab.config), stdin=mcpkit._requests(calls)
    )
    replies: dict[Any, Any] = {}
    for line in out.splitlines():
        if line.strip():
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    texts = []
    for i in range(1, len(calls) + 1):
        res = (replies.get(i) or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        texts.append((1 if res.get("isError") or i not in replies else 0, text))
    return texts, err


def _rows(text: str) -> Any:
    try:
        rows = json.loads(text)
    except ValueError:
        return None
    return sorted((r["plan"], r["status"], r["hash"]) for r in rows if r["plan"] in KEEP)


def _fired(root: Path, combo: str) -> str:
    marker = root / f"ran-{combo}"
    if not marker.exists():
        return ""
    text = marker.read_text()
    marker.unlink()
    return text


def _read(lab: Lab, combo: str) -> dict[str, Any]:
    c, root = str(lab.config), lab.root
    pa = lab.repo / "plans" / "pa" / "PLAN.yml"
    out: dict[str, Any] = {}
    rc, so, se = _run(lab, combo, "status", "--json", "--config", c)
    out["status"] = {"rc": rc, "out": so, "err": se, "fired": _fired(root, combo)}
    rc, so, se = _run(lab, combo, "show", "--json", "--config", c, str(pa))
    out["show"] = {"rc": rc, "out": so, "err": se, "fired": _fired(root, combo)}
    rc, so, se = _run(lab, combo, "audit", "--json", "--config", c, cwd=lab.repo)
    out["audit"] = {"rc": rc, "out": so, "err": se, "fired": _fired(root, combo)}
    texts, se = _mcp(lab, combo, [("status", {"path": "plans/pa"}), ("log", {"path": "plans/pa"})])
    out["mcp"] = {"texts": texts, "err": se, "fired": _fired(root, combo)}
    return out


def _write(lab: Lab, combo: str) -> dict[str, Any]:
    root, out = lab.root, {}
    before = lab.head()
    texts, se = _mcp(
        lab, combo, [("submit", {"plan": plan_text(f"s{combo}"), "slug": f"s{combo}"})]
    )
    after = lab.head()
    out["submit"] = {
        "rc": texts[0][0], "out": texts[0][1], "err": se, "fired": _fired(root, combo),
        "names": lab.git("diff", "--name-status", before, after).split(),
    }  # fmt: skip
    before = lab.head()
    rc, so, se = _run(
        lab, combo, "approve", "--config", str(lab.config), f"plans/a{combo}",
        cwd=lab.repo, who=ALICE,
    )  # fmt: skip
    after = lab.head()
    out["approve"] = {
        "rc": rc, "out": so, "err": se, "fired": _fired(root, combo),
        "names": lab.git("diff", "--name-status", before, after).split(),
    }  # fmt: skip
    rc, so, se = _run(lab, combo, "run", "--once", "--config", str(lab.config))
    out["run"] = {
        "rc": rc, "out": so, "err": se, "fired": _fired(root, combo),
        "status": lab.plan(f"a{combo}")["plan"]["status"] if rc == 0 else None,
    }  # fmt: skip
    return out


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    for slug in ["ok", "pa", *(f"a{c}" for c in COMBOS)]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    approval = lab.approve("ok")
    lab.run()
    for combo in COMBOS:  # make the hooks and programs before any read
        if combo not in BAD and combo != "none":
            _setting(root, combo)
    forged = lab.git(
        "commit-tree", f"{approval}^{{tree}}", "-p", f"{approval}^", "-m", "approve ok",
        who=("Mallory", "mallory@example.com"),
    ).strip()  # fmt: skip
    lab.git("replace", approval, forged)
    got: dict[str, Any] = {"frozen": lab.plan("pa")["frozen"]["hash"]}
    with ThreadPoolExecutor(2) as pool:
        got["read"] = dict(zip(COMBOS, pool.map(lambda c: _read(lab, c), COMBOS), strict=True))
    got["write"] = {combo: _write(lab, combo) for combo in COMBOS}
    got["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r86-surface-gitparams", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 86 surface: {cls}: {what}"
    )


IDS = [f"{c}:{op}" for c in COMBOS for op in (*READERS, *WRITERS)]
BROKEN: dict[str, Any] = {}


def _refused(combo: str, seen: dict[str, Any]) -> bool:
    """A malformed inherited setting may be refused: E_GIT naming the variable, a remedy."""
    text = json.dumps(seen)
    if combo not in BAD:
        return False
    assert "E_GIT" in text and "GIT_CONFIG_" in text and "unset" in text, text[-2000:]
    return True


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round86_gitparams(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    base = got["read"]["none"]
    combo, op = vid.split(":")
    seen = got["read"][combo][op] if op in READERS else got["write"][combo][op]
    assert not seen["fired"], seen  # no hook, no fsmonitor program the environment names
    assert "Traceback" not in json.dumps(seen), seen["err"]
    if op == "mcp":
        for (err, text), (_e, want) in zip(seen["texts"], base["mcp"]["texts"], strict=True):
            if err and _refused(combo, seen):
                continue
            body = json.loads(text)
            row = body["plans"][0] if "plans" in body else body
            assert row["status"] == "pending_approval", text[:1500]
            assert want and not _e
        return
    if seen["rc"] and _refused(combo, seen):
        if op in ("submit", "approve"):
            assert seen["names"] == [], seen
        return
    assert seen["rc"] == 0, seen
    if op == "status":
        assert _rows(seen["out"]) == _rows(base["status"]["out"]) is not None, seen
    elif op == "show":
        shown = json.loads(seen["out"])
        assert shown["plan"]["status"] == "pending_approval", seen
        assert shown["hash"] == got["frozen"], seen
    elif op == "audit":
        assert json.loads(seen["out"]) == json.loads(base["audit"]["out"]), seen
    elif op == "submit":
        assert seen["names"] == ["A", f"plans/s{combo}/PLAN.yml"], seen
    elif op == "approve":
        assert seen["names"] == ["M", f"plans/a{combo}/PLAN.yml"], seen
    else:
        assert seen["status"] == "completed", seen


def test_round86_gitparams_checkout_clean(lab: Lab) -> None:
    assert lab.got["tree"] == ""  # type: ignore[attr-defined]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/r86gitparams", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r86gp-", dir="/tmp/r86gitparams"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
