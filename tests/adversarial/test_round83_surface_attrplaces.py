"""Round 83 (surface, atk83b): where the CLI's readers look for attributes without git.

docs/operations.md ("Line ends and attributes"): "The CLI's readers do the same (round 80):
`plangate validate`, `hash`, `show` and `freeze` read a plan file in a working tree whose
attributes may convert it as `git add` would store it, so the hash they print is the one the
controller freezes ... Where no attribute can apply they run no git at all
(`controller/git/attrfiles.py` looks for the files git reads attributes from ...)"; the same
section names "the repository's, the global and the system git config".

Lab (one, built once): one small repository per place (``EnvLab``: the lab's git, CLI and
passes all see the place's environment). Each place sets ``working-tree-encoding=ISO-8859-1``
for ``plans/<place>*`` (working-tree bytes ``C3 A9`` are ``é`` as UTF-8 and stored by
``git add`` as ``Ã©``: a reader missing the attribute prints ``é`` and another hash). The
agent writes ``plans/<place>`` and ``plans/<place>f``, runs the CLI's ``freeze`` on the
second, commits both; one ``run --once`` freezes. Places:
- ``root`` (control): the repository's ``.gitattributes``; ``macro`` an ``[attr]`` macro;
  ``quoted`` a C-quoted pattern; ``icase`` an upper-case pattern under
  ``core.ignoreCase=true``;
- ``xdg``: ``~/.config/git/attributes`` (git's default, no ``core.attributesFile``);
  ``xdgenv``: ``$XDG_CONFIG_HOME/git/attributes``;
- ``core.attributesFile`` set in: ``envcfg`` ``GIT_CONFIG_COUNT``/``KEY_0``/``VALUE_0``,
  ``envcase`` the same with the key ``CORE.AttributesFILE``, ``params``
  ``GIT_CONFIG_PARAMETERS`` (``git -c``), ``global`` the ``GIT_CONFIG_GLOBAL`` file,
  ``homecfg`` ``~/.gitconfig`` and ``xdgcfg`` ``~/.config/git/config`` (no
  ``GIT_CONFIG_GLOBAL``), ``tilde`` ``.git/config`` as ``~/attrs``, ``iifdir``/``iifbr`` a
  file included by ``includeIf "gitdir:..."``/``"onbranch:main"``;
- ``gitfile``: ``info/attributes`` of a git dir a ``.git`` FILE names;
- the system config (``GIT_CONFIG_SYSTEM`` naming a file that sets
  ``core.attributesFile``): ``sysunset`` (``GIT_CONFIG_NOSYSTEM`` absent), ``sysempty``
  (``GIT_CONFIG_NOSYSTEM=`` empty), ``sys0``/``sysfalse``/``sysno``
  (``GIT_CONFIG_NOSYSTEM=0``/``false``/``no``: git reads a boolean, and reads the system
  config, as the stored ``Ã©`` shows).
Variants per place: ``<p>:hash`` (``plangate hash`` of the checkout prints the hash the
controller froze), ``<p>:show`` (``show`` prints the stored task ``Ã©``), ``<p>:validate``
(``validate`` says valid with the frozen hash), ``<p>:freeze`` (the CLI's ``freeze`` printed
the hash the controller then holds for ``plans/<p>f``), ``<p>:clean`` (``git status`` clean).
Plus ``test_stored_text_is_the_attribute_s`` (the premise: ``git add`` applied each place).

Seen (round 83), fixed (2026-12-01, lead): ``controller/git/attrfiles.py`` reads
``GIT_CONFIG_NOSYSTEM`` and ``GIT_ATTR_NOSYSTEM`` as git reads a boolean variable
(``env_bool``: unset, empty, ``0``, ``false``, ``no``, ``off`` are false). Was:
**a false ``GIT_CONFIG_NOSYSTEM`` read as set** (``sys0``, ``sysfalse``,
``sysno`` x ``hash``/``show``/``validate``/``freeze``, 12 ids): with ``GIT_CONFIG_NOSYSTEM=0``
(or ``false``, ``no``) git reads the system config, and so ``git add`` stored ``Ã©`` and the
controller froze that blob (``sha256:...913e92c3`` for ``sys0``), but the CLI's readers
skip the system config's ``core.attributesFile``: ``plangate hash plans/sys0/PLAN.yml`` printed
``sha256:a71e4934...bd94464``, ``plangate show`` printed ``Task: attack variant sys0 é`` and
``Hash: sha256:a71e... (STALE: changed since ...)`` for an unchanged frozen plan, ``validate``
said ``valid (sha256:a71e...)``, and ``plangate freeze plans/sys0f/PLAN.yml`` wrote
``frozen sha256:c598bdcd...`` which the controller replaced in its own ``plangate: freeze
plans/sys0f`` commit (``sha256:...913e92c3``). Reproduce: ``GIT_CONFIG_NOSYSTEM=0
GIT_CONFIG_SYSTEM=/tmp/sys.cfg`` (``[core] attributesFile = /tmp/a``, ``/tmp/a``:
``plans/** working-tree-encoding=ISO-8859-1``), commit a plan whose task holds bytes
``C3 A9``, ``plangate run --once``, then ``plangate hash``/``show`` of the file. With the
variable unset or empty (``sysunset``, ``sysempty``) every reader agreed. Should
(docs/operations.md above): "the hash they print is the one the controller freezes".
Held: every other place (``hash``, ``show``, ``validate``, ``freeze``, ``clean``), incl.
``GIT_CONFIG_COUNT`` with an upper-case key, ``GIT_CONFIG_PARAMETERS``, ``includeIf``
``gitdir``/``onbranch``, ``~`` in ``core.attributesFile``, a ``.git`` file, macros, quoted and
``core.ignoreCase`` patterns. (``GIT_DIR``/``GIT_WORK_TREE`` in the environment: the pass
refuses ``E_GIT`` "not a git repository", so not a lab place.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab, load_yaml, plan_text
from test_round2_execution_kit import shared

ENC = "working-tree-encoding=ISO-8859-1"
OWNER = ("Owner", "owner@example.com")


def _text(slug: str) -> bytes:
    return plan_text(slug).replace(f"variant {slug}", f"variant {slug} é").encode("utf-8")


def _frozen(lab: Lab, slug: str) -> str:
    data = load_yaml(lab.git("show", f"HEAD:plans/{slug}/PLAN.yml"))
    for where in (data, data.get("plan") or {}):
        if isinstance(where, dict) and isinstance(where.get("frozen"), dict):
            return str(where["frozen"].get("hash"))
    return "no frozen hash"


def _out(done: Any, n: int = 800) -> str:
    return f"{done.returncode} {done.stdout}{done.stderr}"[-n:]


class EnvLab(Lab):
    """A lab whose git, CLI and passes see ``extra_env``; a value None drops the variable."""

    def env(self, who: tuple[str, str] | None = None) -> dict[str, str]:
        env = super().env(who)
        for key, value in getattr(self, "drop_env", {}).items():
            if value is None:
                env.pop(key, None)
        return env


def _place(lab: Lab, place: str, root: Path) -> list[str]:
    """Set the attribute for ``plans/<slug>*`` in one place; the slugs it covers."""
    repo, sub = lab.repo, lab.root
    line = f"plans/{place}*/** {ENC}\n"
    if place == "xdg":  # git's default global attributes file, no core.attributesFile
        (lab.home / ".config" / "git").mkdir(parents=True)
        (lab.home / ".config" / "git" / "attributes").write_text(line)
    elif place == "xdgenv":
        (sub / "xdg" / "git").mkdir(parents=True)
        (sub / "xdg" / "git" / "attributes").write_text(line)
        lab.extra_env = {"XDG_CONFIG_HOME": str(sub / "xdg")}  # type: ignore[attr-defined]
    elif place == "envcfg":
        (sub / "attrs").write_text(line)
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.attributesFile",
            "GIT_CONFIG_VALUE_0": str(sub / "attrs"),
        }
    elif place == "global":
        (sub / "attrs").write_text(line)
        lab.env()  # writes the global gitconfig
        with open(sub / "gitconfig", "a") as fh:
            fh.write(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
    elif place == "system":
        (sub / "attrs").write_text(line)
        (sub / "sysconfig").write_text(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_CONFIG_NOSYSTEM": "0",
            "GIT_CONFIG_SYSTEM": str(sub / "sysconfig"),
        }
    elif place.startswith("sys"):  # GIT_CONFIG_NOSYSTEM spelled false, or absent
        (sub / "attrs").write_text(line)
        (sub / "sysconfig").write_text(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
        spell = {"sys0": "0", "sysfalse": "false", "sysempty": "", "sysno": "no"}
        lab.extra_env = {"GIT_CONFIG_SYSTEM": str(sub / "sysconfig")}  # type: ignore[attr-defined]
        if place in spell:
            lab.extra_env["GIT_CONFIG_NOSYSTEM"] = spell[place]  # type: ignore[attr-defined]
        else:
            lab.drop_env = {"GIT_CONFIG_NOSYSTEM": None}  # type: ignore[attr-defined]
    elif place in ("homecfg", "xdgcfg"):  # the global config where git looks without
        (sub / "attrs").write_text(line)  # GIT_CONFIG_GLOBAL
        cfgfile = lab.home / (".gitconfig" if place == "homecfg" else ".config/git/config")
        cfgfile.parent.mkdir(parents=True, exist_ok=True)
        cfgfile.write_text(
            "[user]\n\tname = T\n\temail = t@example.com\n"
            f"[core]\n\tattributesFile = {sub / 'attrs'}\n"
        )
        lab.drop_env = {"GIT_CONFIG_GLOBAL": None}  # type: ignore[attr-defined]
    elif place == "params":  # git -c, as its children see it
        (sub / "attrs").write_text(line)
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_CONFIG_PARAMETERS": f"'core.attributesfile'='{sub / 'attrs'}'"
        }
    elif place == "envcase":
        (sub / "attrs").write_text(line)
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "CORE.AttributesFILE",
            "GIT_CONFIG_VALUE_0": str(sub / "attrs"),
        }
    elif place == "tilde":
        (lab.home / "attrs").write_text(line)
        lab.git("config", "core.attributesFile", "~/attrs")
    elif place == "iifdir":
        (sub / "attrs").write_text(line)
        (sub / "inc.cfg").write_text(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
        lab.git("config", f"includeIf.gitdir:{repo}/.path", str(sub / "inc.cfg"))
    elif place == "iifbr":
        (sub / "attrs").write_text(line)
        (sub / "inc.cfg").write_text(f"[core]\n\tattributesFile = {sub / 'attrs'}\n")
        lab.git("config", "includeIf.onbranch:main.path", str(sub / "inc.cfg"))
    elif place == "gitfile":  # .git is a file naming the git dir elsewhere
        shutil.move(str(repo / ".git"), str(sub / "gitdir"))
        (repo / ".git").write_text(f"gitdir: {sub / 'gitdir'}\n")
        (sub / "gitdir" / "info").mkdir(exist_ok=True)
        (sub / "gitdir" / "info" / "attributes").write_text(line)
    elif place == "root":
        (repo / ".gitattributes").write_text(line)
    elif place == "macro":
        (repo / ".gitattributes").write_text(f"[attr]lat {ENC}\nplans/macro*/** lat\n")
    elif place == "quoted":
        (repo / ".gitattributes").write_text(f'"plans/quoted*/**" {ENC}\n')
    elif place == "icase":
        lab.git("config", "core.ignoreCase", "true")
        (repo / ".gitattributes").write_text(f"PLANS/ICASE*/** {ENC}\n")
    elif place == "gitdir":  # GIT_DIR/GIT_WORK_TREE in the environment
        shutil.move(str(repo / ".git"), str(sub / "gitdir"))
        (sub / "gitdir" / "info").mkdir(exist_ok=True)
        (sub / "gitdir" / "info" / "attributes").write_text(line)
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_DIR": str(sub / "gitdir"),
            "GIT_WORK_TREE": str(repo),
        }
    return [place, f"{place}f"]


def _one(root: Path, place: str, setup: Any = None) -> dict[str, Any]:
    lab = EnvLab(root / place)
    repo = lab.repo
    slugs = (setup or _place)(lab, place, root)
    lab.commit("owner: attributes", OWNER)
    cfg = str(lab.config)
    got: dict[str, Any] = {"cli-freeze": {}, "hash": {}, "show": {}, "validate": {}}
    for slug in slugs:
        lab.write(slug, _text(slug))
    slug = slugs[1]
    got["cli-freeze"] = _out(
        lab.cli("freeze", "--config", cfg, str(repo / f"plans/{slug}/PLAN.yml"))
    )
    lab.commit("agent: plans", AGENT)
    got["stored"] = {s: "Ã©" in lab.git("show", f"HEAD:plans/{s}/PLAN.yml") for s in slugs}
    done = lab.run(check=False)  # GitPython's noise under includeIf "hasconfig:"
    got["run"] = done.returncode
    got["traceback"] = "Traceback" in done.stderr
    got["frozen"] = {s: _frozen(lab, s) for s in slugs}
    for slug in slugs:
        where = str(repo / "plans" / slug / "PLAN.yml")
        got["hash"][slug] = _out(lab.cli("hash", "--config", cfg, where))
        got["show"][slug] = _out(lab.cli("show", "--config", cfg, where), 3000)
        got["validate"][slug] = _out(lab.cli("validate", "--config", cfg, where))
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["dirty"] = lab.git("status", "--porcelain").strip()
    return got


def _build(root: Path, places: list[str]) -> dict[str, Any]:
    return {p: _one(root, p) for p in places}


PLACES = [
    "root", "macro", "quoted", "icase", "xdg", "xdgenv", "envcfg", "envcase", "params",
    "global", "homecfg", "xdgcfg", "tilde", "iifdir", "iifbr", "gitfile",
    "sysunset", "sysempty", "sys0", "sysfalse", "sysno",
]  # fmt: skip


def _lab(root: Path) -> Lab:
    lab = Lab.__new__(Lab)
    lab.root = root
    lab.got = _build(root, PLACES)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-surface-attrplaces", _lab)


WHATS = ("hash", "show", "validate", "freeze", "clean")
IDS = [f"{p}:{w}" for p in PLACES for w in WHATS]


def _hash_in(text: str) -> str:
    for word in text.replace("(", " ").replace(")", " ").split():
        if word.startswith("sha256:"):
            return word
    return ""


@pytest.mark.parametrize("vid", IDS)
def test_the_cli_finds_the_attribute_where_git_does(lab: Lab, vid: str) -> None:
    """Wherever git reads the attribute from, the CLI's hash, text and freeze are the
    controller's, and ``git status`` stays clean."""
    place, what = vid.split(":")
    got = lab.got[place]  # type: ignore[attr-defined]
    frozen = got["frozen"][place]
    assert frozen.startswith("sha256:"), got["frozen"]
    if what == "hash":
        text = got["hash"][place]
        assert text.startswith("0 ") and _hash_in(text) == frozen, (frozen, text)
    elif what == "show":
        text = got["show"][place]
        assert text.startswith("0 ") and f"variant {place} Ã©" in text, text[-1500:]
        assert frozen in text and "STALE" not in text, text[-1500:]
    elif what == "validate":
        text = got["validate"][place]
        assert text.startswith("0 ") and _hash_in(text) == frozen, (frozen, text)
    elif what == "freeze":
        text, held = got["cli-freeze"], got["frozen"][f"{place}f"]
        assert text.startswith("0 ") and _hash_in(text) == held, (held, text)
        row = got["rows"].get(f"plans/{place}f") or {}
        assert row.get("status") == "pending_approval" and row.get("hash") == held, row
    else:
        assert got["dirty"] == "", got["dirty"]


def test_stored_text_is_the_attribute_s(lab: Lab) -> None:
    """The premise: ``git add`` applied the attribute at every place (``Ã©`` stored)."""
    got = lab.got  # type: ignore[attr-defined]
    stored = {p: got[p]["stored"] for p in PLACES}
    assert all(all(v.values()) for v in stored.values()), stored


if __name__ == "__main__":
    import sys
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r83ap-", dir="/tmp/atk83b"))
    print(json.dumps(_build(out, sys.argv[1:]), indent=1, ensure_ascii=False, default=str))
