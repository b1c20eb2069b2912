"""Round 88, agent surfaces (atk88b): the inherited command scope (round 86's fix,
``guard.inherited_config``) at its edges: settings the pins do not name, and spellings of the
two variables that git accepts or refuses. Does every reader still give the controller's
answer, no hook, fsmonitor, filter or external diff run, and git's refusals stay ``E_GIT``?

Lab (one, local mode, built once). The agent's ``plans/ok`` (Alice's approval, completed),
``plans/pa`` (frozen, ``pending_approval``), ``plans/mm`` (``approved`` by Mallory, no
approver: refused), one frozen ``plans/a<combo>`` per writer combo, and at the tip a commit
of the owner carrying a PGP ``gpgsig`` header (what a signature reader hands to gpg).
Settings (``<s>par``: exported ``GIT_CONFIG_PARAMETERS`` in git's ``'k'='v'`` form):
``col`` ``color.{ui,diff,status}=always``; ``sig`` ``log.showSignature=true`` +
``gpg.program=<marker>``; ``gpg`` ``gpg.{program,ssh.program,x509.program}=<marker>``;
``inc`` ``include.path=<file>`` (the file: ``core.hooksPath``, ``core.fsmonitor``,
``gpg.program``, ``log.showSignature``, ``color.ui=always``, ``diff.external``); ``ifc`` the
same file through ``includeIf.gitdir:/.path``; ``case`` ``CORE.FSMONITOR`` and
``Core.HooksPath`` spelled in capitals; ``ext`` ``diff.external`` / ``diff.textconv``;
``attr`` ``core.attributesFile`` (``* filter=zz diff=zz``) + ``filter.zz.{clean,smudge,
process}=<marker>``; ``mmap`` ``log.mailmap=true`` + ``mailmap.file`` mapping Mallory to
Alice; ``fmt`` eleven output settings (``log.decorate=full``, ``log.showRoot=false``,
``log.abbrevCommit``, ``diff.noprefix``, ``diff.mnemonicPrefix``, ``core.abbrev=4``,
``diff.relative``, ``log.follow``, ``core.quotePath=false``, ``diff.renames=false``,
``core.commentChar=X``); ``eol`` ``core.autocrlf=input``, ``core.eol=crlf``; ``user``
(control). Other forms: ``incgitc``, ``attrgitc``, ``siggitc`` (a real parent ``git -c ...
-c alias.pg=!plangate pg``), ``parold`` (git's old form, the whole ``'key=value'`` quoted
once, of ``case``). Malformed (git refuses each): ``badkey`` (``KEY_0=nodot``), ``badval``
(``VALUE_0`` unset), ``badneg`` (``COUNT=-1``), ``badus`` (``COUNT=0_1``: Python's ``int``
reads 1), ``badfw`` (``COUNT=`` a fullwidth one: Python's ``int`` reads 1), ``badval2``
(``'core.hooksPath'='x``, unterminated value), ``badbare`` (``core.hooksPath=x`` unquoted);
``none`` (control).
Ids ``<combo>:<op>``: readers ``status`` (``status --json`` rows of ``ok``/``pa``/``mm`` as
with no setting), ``show`` (``show --json --config plans/pa``: ``pending_approval``, the
frozen hash), ``audit`` (``audit --json`` as with no setting), ``hash`` (``hash`` of the
working-tree ``pa``: the frozen hash), ``mcp`` (MCP ``status`` of ``mm``, ``log`` of ``ok``:
the answers with no setting, ``mm`` never ``completed``); writers for ``none``, ``sig*``,
``inc``/``ifc``, ``attr``, ``user``: ``approve`` (Alice's ``plangate approve``: one commit
changing that file) and ``run`` (``run --once``: exit 0, the plan ``completed``). Every id:
no program but gpg's ``--verify`` ran, no traceback; a malformed setting is refused
``E_GIT`` naming ``GIT_CONFIG_*``.

Second lab (``test_round88_folder_links``, built once): a symlink FOLDER on the way to a
plan file in a git working tree, its target a ``PLAN.yml`` whose task is ``SECRETTARGET``:
``fl`` ``plans/fl`` -> a folder outside the repository (in the working tree only); ``fc`` the
same link COMMITTED by the agent (mode 120000); ``fp`` ``fplans`` -> an outside folder, the
file ``fplans/x/PLAN.yml``; ``fr`` ``plans/fr`` -> ``../drafts/fr`` (relative, inside the
tree); ``ok`` the honest regular file (control). Readers ``showj`` (``show --json
--config``), ``showt`` (``show --config``), ``hash``, ``validate`` of the file, ``vfolder``
(``validate`` of its folder), ``freeze`` (``freeze --check``): each must be ``E_UNSAFE_PATH``
with the target never shown.

Seen (round 88): 24 ids broke, 1 class (``followed``), all in the second lab.
**A plan file reached through a symlinked folder in a git working tree is read and shown**
(``fl``, ``fc``, ``fp``, ``fr`` x ``showj``, ``showt``, ``hash``, ``validate``, ``vfolder``,
``freeze``): ``show --config`` printed "Plan: lk Task: SECRETTARGET Status:
pending_approval - waiting to be frozen Hash: sha256:ea8de259..." (exit 0; the JSON form the
same); ``hash`` printed ``sha256:ea8de259...``; ``validate`` (file and folder) "valid
(sha256:ea8de259...)" with "warning: not inside a git repository" (for ``fl``); ``freeze
--check`` "not frozen; run `plangate freeze ...`" (exit 1, no code). The link in place of
the FILE is refused (hand probe: ``show --config plans/ok/PLAN.yml`` with ``PLAN.yml ->
real.yml``: "E_UNSAFE_PATH: the plan file is a symbolic link; plangate never follows one").
The ``ok`` control read as before.
Fixed (2026-12-01, the lead): a reader refuses a plan file reached through a symbolic link
ANYWHERE below the git work tree's root (the file or any folder on its way), as ``approve``
already did: ``E_UNSAFE_PATH``, nothing read through it (``plans.link_problem``).
Held (first lab, 134 ids and the checkout check, nothing broke): every reader of every
setting gave the unset answer (``color.ui=always``, ``core.abbrev=4``, the mail map,
autocrlf: the same rows, hash, audit, MCP texts), no hook,
fsmonitor, filter or external diff ran, whatever the spelling (capitals, old form, include,
includeIf, a real parent git); ``approve`` made its one commit, ``run --once`` completed the
plan. Every malformed form was ``E_GIT`` before any git ran, naming the variable:
"GIT_CONFIG_COUNT is not a count git reads: '0_1'" (also ``'-1'``, ``'１'``), "GIT_CONFIG_COUNT
is '1' but GIT_CONFIG_VALUE_0 is not set", "GIT_CONFIG_PARAMETERS is not as git writes it",
remedy "unset GIT_CONFIG_COUNT ... or set it as git -c does"; ``badkey`` reached git: "git
config: error: key does not contain a section: nodot", remedy "... or unset GIT_CONFIG_COUNT
if git names the command line" (named, so held).
Noted within the promise: with an inherited ``log.showSignature=true`` (``sig*``, and from
the file ``inc*``/``ifc*`` include) and a ``gpg.program``, the daemon's ``run --once``
(only it: no reader) ran ``<program> --keyid-format=long --status-fd=1 --verify <tmp> -``
over the signed tip commit; the run completed. docs/threat-model.md takes ``gpg.program``
from "the **trusted** config only: the system and global config of the controller's user
and its environment (``GIT_CONFIG_*``, ``git -c``)", so the program is the environment's
own; ``log.showSignature`` is not among the pins, though ("no pager, editor, external diff
or alternate-refs command"), and changes what the daemon's ``git log`` does.
The same docs' "Not covered" still says "A ``GIT_CONFIG_PARAMETERS`` in the controller's
environment ... is read after the pins and wins", which round 86's fix made untrue.

Should (docs/plan-format.md): "a FIFO, device or symlink in the working tree, in place of
the file or of any folder on its way, is never opened or followed ... The readers say the
same of a plan file that is a symlink in a git working tree (``validate``, ``hash``,
``show``, ``freeze``, ...): ``E_UNSAFE_PATH``, the target never read or shown".
And (docs/threat-model.md, the guard): "configuration pinned at the command scope ... what
the environment already gives git there ... comes first, parsed as git parses it ...; one git
would refuse is ``E_GIT`` naming the variable, remedy 'unset it'".
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
MALLORY = ("Mallory", "mallory@example.com")
KEEP = ("plans/ok", "plans/pa", "plans/mm")
MARK = '#!/bin/sh\necho "$0 $*" >> {marker}\n'
SIG = (
    "gpgsig -----BEGIN PGP SIGNATURE-----\n \n"
    " iQEzBAABCAAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAFAmAAAAAACgkQ\n"
    " =AAAA\n -----END PGP SIGNATURE-----\n"
)
# settings: name -> list of (key, value); {p} is the marker program, {f} a file
SETTINGS: dict[str, list[tuple[str, str]]] = {
    "col": [("color.ui", "always"), ("color.diff", "always"), ("color.status", "always")],
    "sig": [("log.showSignature", "true"), ("gpg.program", "{p}")],
    "gpg": [("gpg.program", "{p}"), ("gpg.ssh.program", "{p}"), ("gpg.x509.program", "{p}")],
    "inc": [("include.path", "{f}")],
    "ifc": [("includeIf.gitdir:/.path", "{f}")],
    "case": [("CORE.FSMONITOR", "{p}"), ("Core.HooksPath", "{h}")],
    "ext": [("diff.external", "{p}"), ("diff.textconv", "{p}")],
    "attr": [
        ("core.attributesFile", "{a}"),
        ("filter.zz.clean", "{p}"),
        ("filter.zz.smudge", "{p}"),
        ("filter.zz.process", "{p}"),
    ],
    "mmap": [("log.mailmap", "true"), ("mailmap.file", "{m}")],
    "fmt": [
        ("log.decorate", "full"),
        ("log.showRoot", "false"),
        ("log.abbrevCommit", "true"),
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("core.abbrev", "4"),
        ("diff.relative", "true"),
        ("log.follow", "true"),
        ("core.quotePath", "false"),
        ("diff.renames", "false"),
        ("core.commentChar", "X"),
    ],
    "eol": [("core.autocrlf", "input"), ("core.eol", "crlf"), ("core.safecrlf", "false")],
    "user": [("user.name", "Harness")],  # control
}
GOOD = [*(f"{s}par" for s in SETTINGS), "incgitc", "attrgitc", "siggitc", "parold"]
BAD = {
    "badkey": {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "nodot", "GIT_CONFIG_VALUE_0": "x"},
    "badval": {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name"},
    "badneg": {"GIT_CONFIG_COUNT": "-1"},
    "badus": {
        "GIT_CONFIG_COUNT": "0_1",
        "GIT_CONFIG_KEY_0": "user.name",
        "GIT_CONFIG_VALUE_0": "Harness",
    },
    "badfw": {
        "GIT_CONFIG_COUNT": "\uff11",
        "GIT_CONFIG_KEY_0": "user.name",
        "GIT_CONFIG_VALUE_0": "Harness",
    },
    "badval2": {"GIT_CONFIG_PARAMETERS": "'core.hooksPath'='x"},
    "badbare": {"GIT_CONFIG_PARAMETERS": "core.hooksPath=x"},
}
COMBOS = ["none", *GOOD, *BAD]
READERS = ("status", "show", "audit", "mcp", "hash")
WRITTEN = [
    "none",
    "sigpar",
    "siggitc",
    "incpar",
    "ifcpar",
    "attrpar",
    "userpar",
]
WRITERS = ("approve", "run")
#: combos whose inherited settings give git both log.showSignature and a gpg.program
GPG_OK = ("sigpar", "siggitc", "incpar", "ifcpar", "incgitc")


def _paths(root: Path, combo: str) -> dict[str, str]:
    return {
        "p": str(root / f"prog-{combo}"), "f": str(root / f"inc-{combo}"),
        "h": str(root / f"hooks-{combo}"), "a": str(root / f"attrs-{combo}"),
        "m": str(root / f"mailmap-{combo}"),
    }  # fmt: skip


def _prepare(root: Path, combo: str) -> None:
    """The programs and files a combo names, each writing the combo's marker."""
    marker = root / f"ran-{combo}"
    p = _paths(root, combo)
    Path(p["p"]).write_text(MARK.format(marker=marker) + "exit 1\n")
    Path(p["p"]).chmod(0o755)
    hooks = Path(p["h"])
    hooks.mkdir(exist_ok=True)
    for name in ("post-commit", "pre-commit", "reference-transaction", "commit-msg",
                 "post-index-change", "pre-auto-gc", "post-checkout"):  # fmt: skip
        (hooks / name).write_text(MARK.format(marker=marker))
        (hooks / name).chmod(0o755)
    Path(p["f"]).write_text(
        f"[core]\n\thooksPath = {p['h']}\n\tfsmonitor = {p['p']}\n"
        f"[gpg]\n\tprogram = {p['p']}\n[log]\n\tshowSignature = true\n"
        f"[color]\n\tui = always\n[diff]\n\texternal = {p['p']}\n"
    )
    Path(p["a"]).write_text("* filter=zz diff=zz\n")
    Path(p["m"]).write_text("Alice <alice@example.com> Mallory <mallory@example.com>\n")


def _setting(root: Path, combo: str) -> list[tuple[str, str]]:
    p = _paths(root, combo)
    name = combo[:-4] if combo.endswith(("gitc",)) else combo[:-3]
    if combo == "parold":
        name = "case"
    return [(k, v.format(**p)) for k, v in SETTINGS[name]]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _env(root: Path, combo: str) -> tuple[dict[str, str], list[str]]:
    if combo == "none":
        return {}, [mcpkit.PLANGATE]
    if combo in BAD:
        return dict(BAD[combo]), [mcpkit.PLANGATE]
    pairs = _setting(root, combo)
    if combo.endswith("gitc"):
        cs = [x for k, v in pairs for x in ("-c", f"{k}={v}")]
        return {}, ["git", *cs, "-c", f"alias.pg=!{mcpkit.PLANGATE}", "pg"]
    if combo == "parold":  # git's old form: the whole 'key=value' quoted once
        return {"GIT_CONFIG_PARAMETERS": " ".join(_quote(f"{k}={v}") for k, v in pairs)}, [
            mcpkit.PLANGATE
        ]
    if combo.endswith("cnt"):
        env = {"GIT_CONFIG_COUNT": str(len(pairs))}
        for i, (k, v) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = k, v
        return env, [mcpkit.PLANGATE]
    return {"GIT_CONFIG_PARAMETERS": " ".join(f"{_quote(k)}={_quote(v)}" for k, v in pairs)}, [
        mcpkit.PLANGATE
    ]


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
            try:
                reply = json.loads(line)
            except ValueError:
                continue
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
    rc, so, se = _run(lab, combo, "hash", str(pa), cwd=lab.repo)
    out["hash"] = {"rc": rc, "out": so, "err": se, "fired": _fired(root, combo)}
    texts, se = _mcp(lab, combo, [("status", {"path": "plans/mm"}), ("log", {"path": "plans/ok"})])
    out["mcp"] = {"texts": texts, "err": se, "fired": _fired(root, combo)}
    return out


def _write(lab: Lab, combo: str) -> dict[str, Any]:
    root, out = lab.root, {}
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
    for slug in ["ok", "pa", "mm", *(f"a{c}" for c in WRITTEN)]:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("ok")
    lab.set_status("mm", "approved")
    lab.commit("approve mm", MALLORY)  # no approver: refused, whatever a mail map says
    lab.run()
    # a signed-looking commit at the tip (the owner's README change): what a signature
    # reader would hand to gpg.program
    (lab.repo / "README").write_text("plans, signed\n")
    lab.git("add", "README")
    tree = lab.git("write-tree").strip()
    head = lab.head()
    raw = (
        f"tree {tree}\nparent {head}\n"
        "author Owner <owner@example.com> 1700000000 +0000\n"
        "committer Owner <owner@example.com> 1700000000 +0000\n" + SIG + "\nreadme\n"
    )
    signed = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw).strip()
    lab.git("update-ref", "refs/heads/main", signed, head)
    lab.git("reset", "-q", "--hard", signed)
    lab.run()
    for combo in COMBOS:
        _prepare(root, combo)
    got: dict[str, Any] = {"frozen": lab.plan("pa")["frozen"]["hash"]}
    with ThreadPoolExecutor(2) as pool:
        got["read"] = dict(zip(COMBOS, pool.map(lambda c: _read(lab, c), COMBOS), strict=True))
    got["write"] = {combo: _write(lab, combo) for combo in WRITTEN}
    got["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r88-surface-atk88b", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 88 surface: {cls}: {what}"
    )


IDS = [f"{c}:{op}" for c in COMBOS for op in READERS] + [
    f"{c}:{op}" for c in WRITTEN for op in WRITERS
]
BROKEN: dict[str, Any] = {}


def _refused(combo: str, seen: dict[str, Any]) -> bool:
    """A malformed inherited setting must be refused: E_GIT naming the variable."""
    if combo not in BAD:
        return False
    text = json.dumps(seen)
    assert "E_GIT" in text and "GIT_CONFIG_" in text, text[-2000:]
    return True


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round88_inherited(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    base = got["read"]["none"]
    combo, op = vid.split(":")
    seen = got["read"][combo][op] if op in READERS else got["write"][combo][op]
    # no hook, fsmonitor, filter or external diff the environment names ran; gpg.program is
    # the trusted environment's own (docs/threat-model.md), run by an inherited
    # log.showSignature for the daemon's read of a signed commit (seen, within the promise)
    fired = [line for line in seen["fired"].splitlines() if line.strip()]
    assert all(line.endswith("--status-fd=1 --verify") or "--status-fd=1 --verify " in line
               for line in fired), seen  # fmt: skip
    assert not fired or combo in GPG_OK, seen
    assert "Traceback" not in json.dumps(seen), seen["err"]
    if combo in BAD:  # git itself refuses each of these: so must plangate, naming it
        if op == "mcp":
            assert all(err for err, _t in seen["texts"]) or seen["err"], seen
        else:
            assert seen["rc"] != 0, seen
        assert _refused(combo, seen)
        return
    if op == "mcp":
        assert seen["texts"] == base["mcp"]["texts"], seen
        mm = json.loads(seen["texts"][0][1])
        row = mm["plans"][0] if "plans" in mm else mm
        assert row["status"] != "completed", seen
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
    elif op == "hash":
        assert seen["out"] == base["hash"]["out"] and got["frozen"] in seen["out"], seen
    elif op == "approve":
        assert seen["names"] == ["M", f"plans/a{combo}/PLAN.yml"], seen
    else:
        assert seen["status"] == "completed", seen


def test_round88_checkout_clean(lab: Lab) -> None:
    assert lab.got["tree"] == ""  # type: ignore[attr-defined]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk88b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r88-", dir="/tmp/atk88b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]


# -- folder links on the way to a plan file (plan-format.md: "a FIFO, device or symlink in the
# working tree, in place of the file or of any folder on its way, is never opened or followed")
SECRET = "SECRETTARGET"
LINKS = ("fl", "fc", "fp", "fr", "ok")
LREADERS = ("showj", "showt", "hash", "validate", "vfolder", "freeze")


def _link_build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    lab.write("ok", plan_text("ok"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    secret = plan_text("lk").replace("attack variant lk", SECRET)
    for name in ("fl", "fc", "fp"):
        folder = root / f"outside-{name}"
        (folder / "x").mkdir(parents=True)
        (folder / "PLAN.yml").write_text(secret)
        (folder / "x" / "PLAN.yml").write_text(secret)
    # fc: the agent COMMITS plans/fc as a link to the folder (mode 120000)
    os.symlink(root / "outside-fc", lab.repo / "plans" / "fc")
    lab.commit("agent: a linked folder", AGENT)
    lab.run()
    # fl: a link in the working tree only; fr: a relative link to a folder in the tree
    os.symlink(root / "outside-fl", lab.repo / "plans" / "fl")
    (lab.repo / "drafts" / "fr").mkdir(parents=True)
    (lab.repo / "drafts" / "fr" / "PLAN.yml").write_text(secret)
    os.symlink("../drafts/fr", lab.repo / "plans" / "fr")
    # fp: a second plans folder reached through a link: repo/fplans -> outside-fp
    os.symlink(root / "outside-fp", lab.repo / "fplans")
    paths = {
        "fl": lab.repo / "plans" / "fl" / "PLAN.yml",
        "fc": lab.repo / "plans" / "fc" / "PLAN.yml",
        "fp": lab.repo / "fplans" / "x" / "PLAN.yml",
        "fr": lab.repo / "plans" / "fr" / "PLAN.yml",
        "ok": lab.repo / "plans" / "ok" / "PLAN.yml",
    }
    c = str(lab.config)

    def one(job: tuple[str, str]) -> dict[str, Any]:
        name, op = job
        path = str(paths[name])
        args = {
            "showj": ["show", "--json", "--config", c, path],
            "showt": ["show", "--config", c, path],
            "hash": ["hash", path],
            "validate": ["validate", path],
            "vfolder": ["validate", str(paths[name].parent)],
            "freeze": ["freeze", "--check", path],
        }[op]
        rc, so, se = _run(lab, "none", *args, cwd=lab.repo)
        return {"rc": rc, "out": so, "err": se}

    jobs = [(n, op) for n in LINKS for op in LREADERS]
    with ThreadPoolExecutor(2) as pool:
        lab.got = dict(  # type: ignore[attr-defined]
            zip([f"{n}:{op}" for n, op in jobs], pool.map(one, jobs), strict=True)
        )
    return lab


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r88-surface-atk88b-links", _link_build)


LIDS = [f"{n}:{op}" for n in LINKS for op in LREADERS]
# Was broken (class ``followed``, 24 ids); fixed the same hour by the lead (see the docstring)
LBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, LBROKEN))
def test_round88_folder_links(links: Lab, vid: str) -> None:
    seen = links.got[vid]  # type: ignore[attr-defined]
    name, op = vid.split(":")
    text = seen["out"] + seen["err"]
    assert "Traceback" not in text, text[-2000:]
    if name == "ok":  # control: the honest plan file is read
        assert seen["rc"] == 0 or op == "freeze", text[-2000:]
        assert "E_UNSAFE_PATH" not in text, text[-2000:]
        return
    assert SECRET not in text, text[:2000]  # the target never shown
    assert seen["rc"] != 0 and "E_UNSAFE_PATH" in text, text[:2000]
