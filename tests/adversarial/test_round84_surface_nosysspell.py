"""Round 84 (surface, atk84b): ``GIT_CONFIG_NOSYSTEM`` in every spelling git reads (and a
few it refuses), against the CLI's readers.

Round 83 (lead) made ``controller/git/attrfiles.py`` read ``GIT_CONFIG_NOSYSTEM`` "as git reads
a boolean variable" (CHANGELOG: "With `GIT_CONFIG_NOSYSTEM=0` (or `false`, `no`), git reads the
system config"). docs/operations.md, "Line ends and attributes": the readers read a plan "as
`git add` stores it ... so the hash they print is the one the controller freezes".

Lab (one, built once): one repository; ``GIT_CONFIG_SYSTEM`` names a file whose
``core.attributesFile`` sets ``plans/** working-tree-encoding=ISO-8859-1``; the plan
``plans/p/PLAN.yml`` holds ``é`` (``C3 A9``), which ``git add`` stores as ``Ã©`` when git reads
the system config (and as ``é`` when it does not). Two reference files outside ``plans/``
give the two hashes (``conv``: the stored text converted; ``raw``: as written). For each
spelling ``<s>`` of ``GIT_CONFIG_NOSYSTEM`` the oracle is git itself (``git hash-object
--path plans/p/PLAN.yml``: converted, raw, or git refuses "bad boolean config value"), and the
readers run under the same environment:
- ``<s>:hash``, ``<s>:validate``: ``plangate hash`` / ``validate`` print the hash of the text
  git would store (``conv`` or ``raw``), or refuse (non-zero exit, no hash) where git refuses
  the variable (the controller cannot run a git command there: ``run --once`` fails too);
- controls: ``unset`` (the variable absent), ``1`` and ``0``.
Spellings: git's words in any case (``OFF``, ``No``, ``YES``, ``TRUE``), integers (``00``,
``-0``, ``+0``, ``0x0``, ``0x1``, ``010`` octal, ``2``, ``-1``), unit suffixes (``0k``, ``0K``,
``0m``, ``0g``, ``1k``, ``1G``), leading blanks (`` 0``, `` 1``, ``\\t0``), and values git refuses
(``0 ``, ``1 ``, ``on `` trailing blanks, ``maybe``, ``0.0``, ``0xg``, ``0kb``, an integer past
64 bits, blanks only).

Seen (round 84), fixed the same hour (lead): ``attrfiles.env_bool`` reads the variable by
git's own grammar (words, a number in git's ``int`` with a unit) and refuses what git refuses
(``E_GIT`` naming it, checked when ``controller.git`` is first imported, before GitPython's
import runs git): the readers and ``run`` exit 2 with the code, never a hash nor "internal
error". Was: **a ``GIT_CONFIG_NOSYSTEM`` git refuses read as set** (``bad1sp``, ``badonsp``,
``badhuge`` ``:{hash,validate}``, 6 ids): git answers ``fatal: bad boolean config value '1 ' for
'GIT_CONFIG_NOSYSTEM'`` (so does every command of the controller: ``GIT_CONFIG_NOSYSTEM='1 '
plangate run --once`` prints ``internal error ... fatal: bad boolean config value``, nothing is
frozen), but ``GIT_CONFIG_NOSYSTEM='1 ' plangate hash plans/p/PLAN.yml`` prints
``sha256:ae42...`` (exit 0) and ``validate`` ``plans/p/PLAN.yml: valid (sha256:ae42...)``, the
same for ``'on '`` and ``9999999999999999999999``: a hash no controller in that environment ever
freezes (a trailing blank is taken, as is an integer git cannot hold). Should (CHANGELOG round 83:
"reads both `GIT_CONFIG_NOSYSTEM` and `GIT_ATTR_NOSYSTEM` as git reads a boolean variable"): refused
as git refuses it (``'0 '``, ``maybe``, ``0.0`` are: exit 2). Noted, not asserted: those refusals
are ``plangate: internal error: ImportError: Failed to initialize: Cmd('git') failed ... remedy:
rerun with PLANGATE_DEBUG=1 for the traceback and report it`` (GitPython's import-time ``git
version``), no ``E_`` code, for the readers and ``run --once`` alike. Held: every spelling git
reads (words in any case, integers in any base, unit suffixes, leading blanks): the readers
printed the hash of the text git stores. ``GIT_ATTR_NOSYSTEM`` is not tried here: its file is
``/etc/gitattributes``, which a test on a shared machine does not write.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, plan_text
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

SPELL: dict[str, str | None] = {
    "unset": None, "1": "1", "0": "0", "empty": "", "false": "false", "OFF": "OFF", "No": "No",
    "YES": "YES", "TRUE": "TRUE", "00": "00", "neg0": "-0", "pos0": "+0", "hex0": "0x0",
    "hex1": "0x1", "oct10": "010", "two": "2", "neg1": "-1", "0k": "0k", "0K": "0K", "0m": "0m",
    "0g": "0g", "1k": "1k", "1G": "1G", "sp0": " 0", "sp1": " 1", "tab0": "\t0",
    "bad0sp": "0 ", "bad1sp": "1 ", "badonsp": "on ", "badmaybe": "maybe", "bad00": "0.0",
    "badhex": "0xg", "badkb": "0kb", "badhuge": "9999999999999999999999", "badblank": "  ",
}  # fmt: skip
WHATS = ("hash", "validate")
HASH = re.compile(r"sha256:[0-9a-f]{64}")


def _env(lab: Lab, spell: str | None) -> dict[str, str]:
    env = lab.env()
    env["GIT_CONFIG_SYSTEM"] = str(lab.root / "sysconfig")
    env.pop("GIT_CONFIG_NOSYSTEM", None)
    if spell is not None:
        env["GIT_CONFIG_NOSYSTEM"] = spell
    return env


def _cli(lab: Lab, env: dict[str, str], *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [PLANGATE, *args, "--config", str(lab.config)],
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "attrs").write_text("plans/** working-tree-encoding=ISO-8859-1\n")
    (root / "sysconfig").write_text(f"[core]\n\tattributesFile = {root / 'attrs'}\n")
    text = plan_text("p").replace("variant p", "variant p é").encode()
    lab.write("p", text)
    (root / "ref").mkdir()
    (root / "ref" / "raw.yml").write_bytes(text)
    (root / "ref" / "conv.yml").write_bytes(text.decode().replace("é", "Ã©").encode())
    plain = _env(lab, "1")
    refs: dict[str, str] = {}
    for kind in ("raw", "conv"):
        code, out = _cli(lab, plain, "hash", str(root / "ref" / f"{kind}.yml"))
        found = HASH.search(out)
        assert code == 0 and found, out
        refs[found.group(0)] = kind
    conv_blob = lab.git("hash-object", str(root / "ref" / "conv.yml")).strip()
    got: dict[str, Any] = {}
    for name, spell in SPELL.items():
        env = _env(lab, spell)
        g = subprocess.run(
            ["git", "hash-object", "--path", "plans/p/PLAN.yml", "plans/p/PLAN.yml"],
            cwd=lab.repo, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        oracle = "refused" if g.returncode else ("conv" if g.stdout.strip() == conv_blob else "raw")
        row: dict[str, Any] = {"git": oracle, "git_out": g.stderr.strip()[-200:]}
        for what in WHATS:
            code, out = _cli(lab, env, what, "plans/p/PLAN.yml")
            found = HASH.search(out)
            row[what] = (code, refs.get(found.group(0), found.group(0)) if found else None, out)
        got[name] = row
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-surface-nosysspell", _build)


IDS = [f"{s}:{w}" for s in SPELL for w in WHATS]


@pytest.mark.parametrize("vid", IDS)
def test_the_reader_reads_the_variable_as_git_does(lab: Lab, vid: str) -> None:
    """The reader's hash is the hash of what git stores under that spelling; where git
    refuses the spelling, the reader prints no hash (exits non-zero)."""
    spell, what = vid.split(":")
    row = lab.got[spell]  # type: ignore[attr-defined]
    code, kind, out = row[what]
    if spell in ("unset", "0", "1"):  # controls: the lab is live (both readings seen)
        assert row["git"] == {"unset": "conv", "0": "conv", "1": "raw"}[spell], row
    if row["git"] == "refused":
        assert code != 0 and kind is None, (row["git_out"], code, out[-600:])
        assert "E_GIT" in out and "internal error" not in out, out[-600:]  # fixed, round 84
    else:
        assert code == 0 and kind == row["git"], (row["git"], code, kind, out[-600:])
