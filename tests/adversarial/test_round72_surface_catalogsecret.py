"""Round 72, agent-facing surfaces: round 71's rule that a secret is never catalog material
(``plan.catalog.refuse_secrets_in_catalog``: every command that loads a config refuses one
whose published catalog, a tool's name, description or ``params_schema``, holds a value the
records' redactor hides, E_CONFIG_INVALID naming the tool and the path, never the value),
attacked with other encodings of the secret, every source of a hidden value, and schemas that
admit the secret alone without any one value holding it.

Lab (one, module scope): ``secrets.file`` holds ``TOK`` (``r72Kq9SecretZp``); the
environment ``PLANGATE_SECRET_ENVTOK`` and ``PLANGATE_SECRET_PIN`` (``483920``), ``UI_TOK``
and ``PLANGATE_WEBHOOK_SECRET`` (the config's credentials when ``ui.token_env``/``webhook``
name them). One config per variant: the lab's with a catalog tool ``pin`` (and for the
credential variants a second tool ``other`` holding the credential where a tool may hold one).
Asked: ``plangate tools --json --config`` per variant; for ``upper``, ``bytes-list``,
``cred-webhook`` and the control ``ok-enum`` also ``validate --json``, ``status --json``,
``show``, ``schema``, ``run --once`` and an MCP session's ``catalog``; for the split variants
MCP ``validate`` of a plan whose literal param is the right guess and a wrong one.

Variants refused at load (E_CONFIG_INVALID, ``tools.pin.`` and "holds a secret's value", no
hidden value anywhere in the answer): ``const``, ``upper``, ``lower-enum``, ``fullwidth``,
``zwsp`` (U+200B inside), ``shy-desc`` (a soft hyphen inside the description), ``wrapped-desc``
(a line break inside), ``mark-desc`` (a combining mark inside), ``b64`` (base64 of the secret as
a ``const``), ``hex-desc``, ``bytes-list``/``bytes-enum`` (its UTF-8 bytes as a list),
``chars-list`` (its characters as a list), ``defs-ref`` (``$defs`` reached by ``$ref``),
``propnames``, ``depschemas-key`` (a ``dependentSchemas`` key), ``if-then``, ``contains``,
``uescape-pattern``/``xescape-pattern`` (``\\uXXXX``/``\\xXX`` escapes spelling it in a
``pattern``), ``comment``, ``anchor``, ``id``; each source: ``env-src``, ``pin-int``,
``pin-hex`` (``0x76250``), ``pin-float`` (``4.8392e5``), ``pin-half`` (bounds ``.5`` either
side), ``pin-string``; other published fields: ``sensitive`` (a param name), ``estimate-s``,
``estimate-c`` (the numeric secret as estimated seconds or cost); the config's credentials:
``cred-header`` (Authorization bearer),
``cred-envkey`` (a tool ``env`` ``API_KEY``), ``cred-urlpass``, ``cred-argv`` (``--token=``),
``cred-query`` (``?api_key=``), ``cred-ui``, ``cred-webhook``.
Loads, printed ``***`` (what a tool runs may hold a secret): ``py-target`` (``mod:<secret>``),
``url-path``, ``argv-lit``, and ``timeout`` (the numeric secret as the tool's ``timeout``, which
``tools`` and MCP ``catalog`` publish: noted below).
Controls that must load: ``ok-enum``, ``ok-ref-argv``, ``ok-name-desc`` (the description
names ``$<secrets.TOK>``), ``ok-cred-argv-shown`` (a ``--token=`` in a tool's argv, allowed,
shown ``***``). Every command (``<cfg>:<cmd>``) refuses the three secret-holding configs alike
and works with the control.
Split variants (the schema admits the secret alone, no value holding it): ``split-items``
(``prefixItems`` of one-character ``const``s), ``split-key`` (``const: {r72Kq9S: ecretZp}``),
``pin-excl`` (``type: integer``, ``exclusiveMinimum: 483919``, ``exclusiveMaximum: 483921``),
``pin-mult`` (``multipleOf: 241960`` between 241961 and 484920). Must hold: refused at load
like the rest, and a right and a wrong guess answered alike.
Reload (``<variant>``): one daemon on a live config rewritten to ``upper``, ``b64``,
``cred-webhook``, ``split-key`` and ``ok-enum`` in turn, SIGHUP each time (the lab's config
back between): ``config.reload_refused`` E_CONFIG_INVALID naming the path for the first three,
``config.reloaded`` for the control, never a value logged. The recorded policy
(``split-key``): no version of ``.plangate/policy.json`` in the branch's history spells the
secret, whole or in halves.
The definition hash (``hash-argv``, ``hash-token``, ``hash-url``, ``hash-env``): the operator's
catalog holds a credential where a tool may hold one (``mysql -uapp -pR72pwQ``, ``--token=``,
a URL's userinfo password, a tool ``env`` ``API_KEY``: docs/configuration.md, "What a tool runs
... may hold a credential: it is shown ``***``"); its controller commits ``.plangate/policy.json``
with each tool's ``definition`` hash. The agent reads the catalog (``maps_to: exec: mysql
-uapp -p*** {q}``) and the committed policy, then, in a scratch repo of its own, records the same
tools with a right and a wrong guess (``plangate run --once``). Must hold: the recorded hash
answers both guesses alike (``hash-env``: env values are left out of the policy, the control).

Seen (round 72): ``split-items``, ``split-key``, ``pin-excl``, ``pin-mult`` (both tests, 8
ids, and ``split-key``'s reload and recorded policy, 10 ids in all, one class): the config
loads (``tools``, MCP ``catalog`` publish the schema as written:
the secret's characters in order, its two halves, its neighbours 483919/483921), and MCP
``validate`` answers the right guess ``valid: true`` and the wrong one ``E_PARAMS_INVALID``
("'p' was expected", "483927 is greater than or equal to the maximum of 483921", "is not a
multiple of 241960"): the schema's verdict is the oracle round 71 closed for ``enum``/``const``.
Should (docs/configuration.md, ``tools.*.params_schema``: "A schema that holds a secret answers
a guess of it valid or not, whatever it prints"; docs/threat-model.md, "The schema's verdict as
the oracle"): refused at load, or documented beside the ``pattern`` limit as the operator's
disclosure (threat-model "Not covered": only "a pattern that matches the secret without
spelling it" is named). The redactor does not hide these spellings either (``tools`` prints
them), so the rule "a value the redactor hides" is kept to the letter; the leak is the
schema's meaning, as with the known ``pattern``.
``split-key`` (reload): the daemon's reload takes the config (``config.reloaded``) and the
next pass commits ``plangate: record policy`` whose ``.plangate/policy.json`` holds
``{"const": {"r72Kq9S": "ecretZp"}}``: the secret is in the branch's history for everyone who
reads it (``split-key``, the policy test). docs/configuration.md, "The controller records the
policy ... Nothing secret goes in".
``hash-argv``, ``hash-token``, ``hash-url`` (3 ids, a second class): the recorded
``definition`` is a hash over the tool's definition WITH the credential in ``argv`` or the URL
(``env`` and ``headers`` are left out, as documented): the agent's scratch record of the right
guess has the very hash committed on the branch, the wrong guess another. An offline oracle for
anyone who reads the branch: a short credential (a 4-6 digit ``-p`` password, a PIN in a
query) falls to enumeration. Should (docs/configuration.md: "Nothing secret goes in (and the
redactor hides the credentials among them in everything the controller writes)"; SPEC's
"secrets never leak"): the definition hashed with the credentials the redactor hides masked
(as ``maps_to`` shows them) or keyed (an HMAC under ``commit.key``), so a guess is answered
alike.
Fixed (2026-11-30, the lead): ``hash-argv``, ``hash-token``, ``hash-url``: the recorded
definition is hashed with each credential the redactor hides written ``***``
(``recorded.tool_record``); a right and a wrong guess reproduce the same hash.
Left as an accepted limit (2026-11-30, the lead; docs/threat-model.md, "Accepted limits"):
``split-items``, ``split-key``, ``pin-excl``, ``pin-mult``: a schema whose MEANING admits the
secret alone, no value of it holding the secret, is the operator writing the secret into the
catalog in another notation; no rule short of solving the schema finds every such notation.
Noted, not counted: ``timeout`` is published by ``tools`` and MCP ``catalog`` (``"timeout":
"***"``) yet not refused where ``sensitive`` and ``estimate`` are; no oracle found through it
(a plan's own ``timeout`` is not checked against the tool's), but the round 71 rule ("a value
the redactor hides" in what the catalog publishes) reads it as refused.
Held: every other encoding, source and command above (39 + 4 + 4 + 24 ids), the reloads of
``upper``, ``b64``, ``cred-webhook``, ``hash-env``; never a value printed or logged.
"""

from __future__ import annotations

import base64
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import BenchError, Lab, cases
from mcpkit import session
from test_round2_execution_kit import shared

SECRET = "r72Kq9SecretZp"  # the secrets file's TOK
ENVSEC = "r72EnvSecretQq"  # PLANGATE_SECRET_ENVTOK
PIN = "483920"  # PLANGATE_SECRET_PIN, a number
CREDS = {  # the config's credentials the redactor hides (docs/execution.md, Redaction)
    "UI_TOK": "r72UiTokValueX",
    "PLANGATE_WEBHOOK_SECRET": "r72HookSecretY",
}
S = SECRET


def _schema(frag: str) -> str:
    return f"params_schema: {{type: object, properties: {{c: {frag}}}}}"


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def _escaped(kind: str, width: int) -> str:
    """A ``pattern`` spelling the secret by ``\\uXXXX`` or ``\\xXX`` escapes, as JSON."""
    return _js("^" + "".join(f"{chr(92)}{kind}{ord(c):0{width}x}" for c in S) + "$")


FULLWIDTH = "".join(chr(ord(c) + 0xFEE0) for c in S)
# variant -> (the ``pin`` tool's body, extra tools, extra config): each must be refused at load
REFUSED = {
    "const": (_schema(f"{{const: {S}}}"), "", ""),
    "upper": (_schema(f"{{const: {S.upper()}}}"), "", ""),
    "lower-enum": (_schema(f"{{enum: [x, {S.lower()}]}}"), "", ""),
    "fullwidth": (_schema(f"{{const: {_js(FULLWIDTH)}}}"), "", ""),
    "zwsp": (_schema(f"{{const: {_js(S[:6] + chr(0x200B) + S[6:])}}}"), "", ""),
    "shy-desc": (f"description: {_js(S[:6] + chr(0xAD) + S[6:])}", "", ""),
    "wrapped-desc": (f"description: {_js(S[:7] + chr(10) + S[7:])}", "", ""),
    "mark-desc": (f"description: {_js(S[:3] + chr(0x301) + S[3:])}", "", ""),
    "b64": (_schema(f"{{const: {base64.b64encode(S.encode()).decode()}}}"), "", ""),
    "hex-desc": (f"description: {S.encode().hex()}", "", ""),
    "bytes-list": (_schema(f"{{const: {_js(list(S.encode()))}}}"), "", ""),
    "bytes-enum": (_schema(f"{{enum: [{_js(list(S.encode()))}]}}"), "", ""),
    "chars-list": (_schema(f"{{const: {_js(list(S))}}}"), "", ""),
    "defs-ref": (
        f"params_schema: {{type: object, $defs: {{k: {{const: {S}}}}}, "
        "properties: {c: {$ref: '#/$defs/k'}}}",
        "",
        "",
    ),
    "propnames": (f"params_schema: {{type: object, propertyNames: {{enum: [a, {S}]}}}}", "", ""),
    "depschemas-key": (f"params_schema: {{type: object, dependentSchemas: {{{S}: {{}}}}}}", "", ""),
    "if-then": (_schema(f"{{if: {{const: {S}}}, then: {{}}, else: {{not: {{}}}}}}"), "", ""),
    "contains": (_schema(f"{{type: array, contains: {{const: {S}}}}}"), "", ""),
    "uescape-pattern": (
        _schema(f"{{pattern: {_escaped('u', 4)}}}"),
        "",
        "",
    ),
    "xescape-pattern": (
        _schema(f"{{pattern: {_escaped('x', 2)}}}"),
        "",
        "",
    ),
    "comment": (f"params_schema: {{type: object, $comment: {S}}}", "", ""),
    "anchor": (f"params_schema: {{type: object, $defs: {{k: {{$anchor: {S}}}}}}}", "", ""),
    "id": (f"params_schema: {{type: object, $id: 'urn:{S}'}}", "", ""),
    "sensitive": (f"sensitive: [{S}]", "", ""),
    "estimate-s": (f"estimate: {{seconds: {PIN}}}", "", ""),
    "estimate-c": (f"estimate: {{seconds: 1, cost_usd: {PIN}}}", "", ""),
    "env-src": (_schema(f"{{const: {ENVSEC}}}"), "", ""),
    "pin-int": (_schema(f"{{enum: [{PIN}]}}"), "", ""),
    "pin-hex": (_schema("{const: 0x76250}"), "", ""),
    "pin-float": (_schema("{const: 4.8392e5}"), "", ""),
    "pin-half": (
        _schema(f"{{type: number, minimum: {int(PIN) - 0.5}, maximum: {int(PIN) + 0.5}}}"),
        "",
        "",
    ),
    "pin-string": (_schema(f"{{const: '{PIN}'}}"), "", ""),
    "cred-header": (
        _schema("{const: r72BearerTokVal}"),
        "other: {kind: http, url: 'https://api.example.com/x', "
        "headers: {Authorization: 'Bearer r72BearerTokVal'}}",
        "",
    ),
    "cred-envkey": (
        _schema("{const: r72ApiKeyLiteral}"),
        "other: {kind: exec, argv: ['true'], env: {API_KEY: r72ApiKeyLiteral}}",
        "",
    ),
    "cred-urlpass": (
        _schema("{const: r72UrlPassWord}"),
        "other: {kind: http, url: 'https://user:r72UrlPassWord@api.example.com/x'}",
        "",
    ),
    "cred-argv": (
        _schema("{const: r72ArgvTokenVal}"),
        "other: {kind: exec, argv: ['true', '--token=r72ArgvTokenVal']}",
        "",
    ),
    "cred-query": (
        _schema("{const: r72QueryKeyVal}"),
        "other: {kind: http, url: 'https://api.example.com/x?api_key=r72QueryKeyVal'}",
        "",
    ),
    "cred-ui": (_schema("{const: r72UiTokValueX}"), "", "ui: {listen: null, token_env: UI_TOK}\n"),
    "cred-webhook": (
        _schema("{const: r72HookSecretY}"),
        "",
        "webhook: {listen: '127.0.0.1:0', secret_env: PLANGATE_WEBHOOK_SECRET}\n",
    ),
}
# the secret spelled so that no one value holds it: the schema admits the secret alone
SPLIT = {
    "split-items": _schema(f"{{type: array, prefixItems: {_js([{'const': c} for c in S])}}}"),
    "split-key": _schema(f"{{const: {_js({S[:7]: S[7:]})}}}"),
    "pin-excl": _schema(
        f"{{type: integer, exclusiveMinimum: {int(PIN) - 1}, exclusiveMaximum: {int(PIN) + 1}}}"
    ),
    "pin-mult": _schema(
        f"{{type: integer, multipleOf: {int(PIN) // 2}, minimum: {int(PIN) // 2 + 1}, "
        f"maximum: {int(PIN) + 1000}}}"
    ),
}
# the right guess of each SPLIT variant (the plan's literal param) and a wrong one
SPLIT_GUESS = {
    "split-items": (list(S), list(S[:-1] + "w")),
    "split-key": ({S[:7]: S[7:]}, {S[:7]: S[7:-1] + "w"}),
    "pin-excl": (int(PIN), int(PIN) + 7),
    "pin-mult": (int(PIN), int(PIN) + 7),
}
# honest catalogs that must load
HONEST = {
    "ok-enum": (_schema("{enum: [blue, green]}"), "", ""),
    "ok-ref-argv": (
        _schema("{type: string}"),
        "other: {kind: exec, argv: ['true', '{k}'], params_schema: {type: object, "
        "properties: {k: {type: string}}}}",
        "",
    ),
    "ok-name-desc": ("description: 'pass $<secrets.TOK> as the param k'", "", ""),
    "ok-cred-argv-shown": (
        _schema("{type: string}"),
        "other: {kind: exec, argv: ['true', '--token=r72ArgvTokenVal']}",
        "",
    ),
}
# what a tool runs may hold a secret (shown ``***``); ``timeout`` is published too (noted)
MASKED = {
    "timeout": (f"timeout: {PIN}", "", ""),
    "py-target": (f"target: 'mod:{S}'", "", ""),
    "url-path": (f"url: 'https://h.example.com/{S}/x'", "", ""),
    "argv-lit": (f"argv: [tool, '{S}']", "", ""),
}
MASKED_KIND = {"timeout": "echo", "py-target": "python", "url-path": "http", "argv-lit": "exec"}
ALL = {**REFUSED, **{k: (v, "", "") for k, v in SPLIT.items()}, **HONEST, **MASKED}
VALUES = [SECRET, ENVSEC, PIN, *CREDS.values(), "r72BearerTokVal", "r72ApiKeyLiteral",
          "r72UrlPassWord", "r72ArgvTokenVal", "r72QueryKeyVal"]  # fmt: skip


def _probe(vid: str, literal: Any) -> str:
    return (
        "plan:\n  name: probe\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: pin}]\nactions:\n"
        f"  - id: 1\n    tool: pin\n    why: w\n    params: {{c: {_js(literal)}}}\n"
    )


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(root / "lab", extra=f"secrets: {{file: {root / 'sec.yml'}}}\n")
    lab.extra_env = {  # type: ignore[attr-defined]
        "PLANGATE_SECRET_ENVTOK": ENVSEC,
        "PLANGATE_SECRET_PIN": PIN,
        **CREDS,
    }
    base = lab.config.read_text()
    got: dict[str, Any] = {"tools": {}, "cmds": {}, "oracle": {}}
    for vid, (body, other, extra) in ALL.items():
        kind = MASKED_KIND.get(vid, "echo")
        tools = f"tools:\n  pin:\n    kind: {kind}\n    {body}\n"
        tools += f"  {other}\n" if other else ""
        cfg = root / f"{vid}.yml"
        cfg.write_text(base.replace("tools:\n", tools, 1) + extra)
        done = lab.cli("tools", "--json", "--config", str(cfg))
        got["tools"][vid] = (done.returncode, done.stdout + done.stderr)
    # every command that loads a config, for two encodings and a control
    probe = root / "probe" / "PLAN.yml"
    probe.parent.mkdir()
    probe.write_text(_probe("x", "x"))
    for vid in ("upper", "bytes-list", "cred-webhook", "ok-enum"):
        cfg = str(root / f"{vid}.yml")
        out = {}
        for name, args in {
            "validate": ["validate", "--json", "--config", cfg, str(probe)],
            "status": ["status", "--json", "--config", cfg],
            "show": ["show", "--config", cfg, str(probe)],
            "schema": ["schema", "--config", cfg],
            "run": ["run", "--once", "--config", cfg],
        }.items():
            done = lab.cli(*args)
            out[name] = (done.returncode, done.stdout + done.stderr)
        replies, stderr = session(lab, [("catalog", {})], config=cfg)
        out["mcp"] = (0 if replies[0] else 1, stderr + json.dumps(replies, ensure_ascii=False))
        got["cmds"][vid] = out
    # the oracle behind each split variant: MCP validate of a right and a wrong guess
    for vid, (right, wrong) in SPLIT_GUESS.items():
        cfg = root / f"{vid}.yml"
        calls = [("validate", {"plan": _probe(vid, g)}) for g in (right, wrong)]
        replies, stderr = session(lab, calls, config=cfg)
        got["oracle"][vid] = [stderr + json.dumps(r, ensure_ascii=False) for r in replies]
    got["reload"] = _reloads(lab, root, base)
    got["policy"] = lab.git("log", "-p", "--format=%H %s", "--", ".plangate/policy.json")
    got["hashes"] = _definition_oracle(root)
    lab.got = got  # type: ignore[attr-defined]
    return lab


# the definition-hash oracle: tools that hold a credential where a tool may (shown ``***``)
HASHED = {
    "hash-argv": "{{kind: exec, argv: [mysql, -uapp, '-p{g}', '{{q}}']}}",
    "hash-token": "{{kind: exec, argv: [deploy, '--token={g}', '{{q}}']}}",
    "hash-url": "{{kind: http, url: 'https://svc:{g}@h.example.com/{{x}}'}}",
    "hash-env": "{{kind: exec, argv: [deploy, '{{q}}'], env: {{API_KEY: '{g}'}}}}",
}
CRED_RIGHT, CRED_WRONG = "R72pwQ", "R72pwX"


def _recorded(lab: Lab, guess: str) -> dict[str, Any]:
    tools = "".join(f"  {vid}: {t.format(g=guess)}\n" for vid, t in HASHED.items())
    lab.config.write_text(lab.config.read_text().replace("tools:\n", "tools:\n" + tools, 1))
    lab.run()
    policy = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    return {vid: policy["tools"][vid] for vid in HASHED}


def _definition_oracle(root: Path) -> dict[str, Any]:
    """The operator's controller records its policy with the credential; the agent reads the
    catalog (``maps_to``, the credential ``***``) and the committed ``policy.json``, and in a
    scratch repo of its own records the same tools with a right and a wrong guess."""
    real = Lab(root / "hash-real")
    out: dict[str, Any] = {"real": _recorded(real, CRED_RIGHT)}
    shown = real.cli("tools", "--json", "--config", str(real.config))
    out["catalog"] = shown.stdout + shown.stderr
    for k, g in (("right", CRED_RIGHT), ("wrong", CRED_WRONG)):
        out[k] = _recorded(Lab(root / f"hash-{k}"), g)
    return out


RELOADS = ("upper", "b64", "cred-webhook", "split-key", "ok-enum")


def _reloads(lab: Lab, root: Path, base: str) -> dict[str, str]:
    """One daemon on the lab's config; the config file rewritten to each variant in turn and
    SIGHUP: what the daemon logged for that reload (``config.reloaded`` or
    ``config.reload_refused``); then the lab's own config back."""
    live = root / "live.yml"
    live.write_text(base)
    env = lab.env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(live)],
        cwd=lab.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")))  # type: ignore[union-attr]
    reader.start()
    out: dict[str, str] = {}

    def wait_for(pattern: str, start: int) -> int:
        for _ in range(200):
            for i in range(start, len(lines)):
                if re.search(pattern, lines[i]):
                    return i + 1
            time.sleep(0.1)
        raise BenchError(f"the daemon never logged {pattern}: " + "".join(lines[-20:]))

    try:
        at = wait_for(r"pass|daemon", 0)
        time.sleep(0.5)
        for vid in RELOADS:
            live.write_text((root / f"{vid}.yml").read_text())
            proc.send_signal(signal.SIGHUP)
            end = wait_for(r"config\.reload(ed|_refused)", at)
            if "config.reloaded" in lines[end - 1]:  # the pass after it records the policy
                end = wait_for(r"policy_in_force", end)
            out[vid] = "".join(lines[at:end])
            at = end
            live.write_text(base)
            proc.send_signal(signal.SIGHUP)
            at = wait_for(r"config\.reload(ed|_refused)", at)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(timeout=10)
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-surface-catalogsecret", _build)


BREAK_SPLIT = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 72, an accepted limit (docs/threat-model.md): a schema admitting the secret "
    "alone without one value holding it (per-item consts, a key and its value, exclusive "
    "bounds, multipleOf) loads, and the verdict confirms a guess",
)
TIDS = list(ALL)
BROKEN: dict[str, Any] = {vid: BREAK_SPLIT for vid in SPLIT}


def _no_value(text: str) -> None:
    for value in VALUES:
        if value == PIN:  # a number of 6 digits: only as a whole word
            assert not re.search(rf"(?<!\d){PIN}(?!\d)", text), text[-1500:]
        else:
            assert value not in text, text[-1500:]


@pytest.mark.parametrize("vid", cases(TIDS, TIDS, BROKEN))
def test_a_catalog_publishing_a_secret_is_refused_at_load(lab: Lab, vid: str) -> None:
    rc, text = lab.got["tools"][vid]  # type: ignore[attr-defined]
    assert "Traceback" not in text, text[-1500:]
    if vid in MASKED:  # loads; what the catalog prints of it is ``***``
        assert rc == 0 and "E_CONFIG_INVALID" not in text, text[-1500:]
        pin = next(t for t in json.loads(text) if t["name"] == "pin")
        assert "***" in json.dumps(pin), pin
        _no_value(text)
        return
    if vid in HONEST:
        assert rc == 0, text[-1500:]
        assert "E_CONFIG_INVALID" not in text, text[-1500:]
        tools = {t["name"]: t for t in json.loads(text)}
        assert "pin" in tools, list(tools)
        _no_value(json.dumps(tools, ensure_ascii=False))  # a credential in argv is shown ***
        return
    assert rc != 0 and "E_CONFIG_INVALID" in text, text[-1500:]
    assert "tools.pin." in text and "holds a secret's value" in text, text[-1500:]
    _no_value(text)


CMDS = ("validate", "status", "show", "schema", "run", "mcp")
CIDS = [f"{v}:{c}" for v in ("upper", "bytes-list", "cred-webhook", "ok-enum") for c in CMDS]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_every_command_that_loads_the_config_refuses_it(lab: Lab, vid: str) -> None:
    cfg, cmd = vid.split(":")
    rc, text = lab.got["cmds"][cfg][cmd]  # type: ignore[attr-defined]
    assert "Traceback" not in text, text[-1500:]
    _no_value(text)
    if cfg == "ok-enum":  # the control: each command works (validate/show: the probe's
        assert "E_CONFIG_INVALID" not in text, text[-1500:]  # 'x' is no colour)
        if cmd in ("validate", "show"):
            assert "E_PARAMS_INVALID" in text, text[-1500:]
        else:
            assert rc == 0, text[-1500:]
        return
    assert rc != 0 and "E_CONFIG_INVALID" in text and "tools.pin." in text, text[-1500:]


OIDS = list(SPLIT)


@pytest.mark.parametrize("vid", cases(OIDS, OIDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    right, wrong = lab.got["oracle"][vid]  # type: ignore[attr-defined]
    r_valid, w_valid = '\\"valid\\": true' in right, '\\"valid\\": true' in wrong
    assert "E_CONFIG_INVALID" in right or r_valid == w_valid, (right[:600], wrong[:600])


RIDS = list(RELOADS)


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, {"split-key": BREAK_SPLIT}))
def test_a_daemons_reload_refuses_a_catalog_publishing_a_secret(lab: Lab, vid: str) -> None:
    text = lab.got["reload"][vid]  # type: ignore[attr-defined]
    assert "Traceback" not in text, text[-1500:]
    _no_value(text)
    if vid == "ok-enum":
        assert "config.reloaded" in text and "config.reload_refused" not in text, text[-1500:]
        return
    assert "config.reload_refused" in text and "config.reloaded" not in text, text[-1500:]
    assert "E_CONFIG_INVALID" in text and "tools.pin." in text, text[-1500:]


@pytest.mark.parametrize("vid", cases(["split-key"], ["split-key"], BROKEN))
def test_the_recorded_policy_never_spells_a_secret(lab: Lab, vid: str) -> None:
    """The daemon's reload (and every ``run``) commits the catalog's schemas to
    ``.plangate/policy.json`` (docs/configuration.md, "Nothing secret goes in"): no version
    of it in the branch's history may spell the secret, whole or in the split's two halves."""
    history = lab.got["policy"]  # type: ignore[attr-defined]
    assert "policy" in history, history[:500]
    _no_value(history)
    assert not (S[:7] in history and S[7:] in history), [
        ln for ln in history.splitlines() if S[:7] in ln or S[7:] in ln
    ][:5]


HIDS = list(HASHED)


@pytest.mark.parametrize("vid", HIDS)
def test_the_recorded_definition_answers_a_guess_of_a_credential_alike(lab: Lab, vid: str) -> None:
    got = lab.got["hashes"]  # type: ignore[attr-defined]
    assert CRED_RIGHT not in got["catalog"] and "***" in got["catalog"], got["catalog"][-800:]
    real = got["real"][vid]
    assert CRED_RIGHT not in json.dumps(real), real
    right = got["right"][vid]["definition"] == real["definition"]
    wrong = got["wrong"][vid]["definition"] == real["definition"]
    assert right == wrong, (vid, real, got["right"][vid], got["wrong"][vid])


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r72cs-", dir="/tmp/atk72b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
