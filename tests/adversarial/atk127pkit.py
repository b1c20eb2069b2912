"""Round 127 policy-and-audit lab builders (atk127p): a controller whose identity changes
A -> B -> C -> A (with approvers changed, a gate and a plans folder change across it), and
an agent's forged identity link."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from advkit import Lab

IDA = ("plangate", "plangate@localhost")
IDB = ("plangate-b", "pg-b@localhost")
IDC = ("plangate-c", "pg-c@localhost")
EVIL = ("plangate-x", "pg-x@localhost")


def gate_plan(slug: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "round 127 two steps {slug}"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first"\n    params: {{tag: "{slug}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{slug}"}}\n'
    )


def config(lab: Lab, ident: tuple[str, str], approvers: list[str], plans_dir: str = "") -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    log = json.dumps(str(lab.log))
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        + (f"plans_dir: {plans_dir}\n" if plans_dir else "")
        + f"identity: {{name: {ident[0]}, email: {ident[1]}}}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}}}\n"
        "  echo: {kind: echo}\n"
    )


def audit_in(lab: Lab, cwd: Path, *args: str) -> dict[str, Any]:
    out = lab.cli("audit", "--json", *args, cwd=cwd)
    try:
        rep = json.loads(out.stdout)
    except ValueError:
        rep = {"raw": out.stdout[-800:]}
    return {"rc": out.returncode, "report": rep, "err": out.stderr[-1500:]}


def clone(lab: Lab, dest: Path, *opts: str, transport: bool = False) -> Path:
    src = f"file://{lab.repo}" if transport else str(lab.repo)
    subprocess.run(
        ["git", "clone", "-q", *opts, src, str(dest)],
        check=True,
        env=lab.env(),
        capture_output=True,
    )
    return dest


def starts(lab: Lab) -> dict[str, tuple[str, str | None]]:
    """Each controller start commit (any identity): (its Policy-Hash: trailer, the sha256
    of ``.plangate/policy.json`` in its tree)."""
    out: dict[str, tuple[str, str | None]] = {}
    rows = lab.git(
        "log",
        "--format=%H%x00%(trailers:key=Policy-Hash,valueonly,separator=%x2C)",
        "--grep=^plangate: start ",
    )
    for line in rows.splitlines():
        if "\0" not in line:
            continue
        commit, trailer = line.split("\0", 1)
        data = subprocess.run(
            ["git", "show", f"{commit}:.plangate/policy.json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=False,
        ).stdout
        tree = "sha256:" + hashlib.sha256(data).hexdigest() if data else None
        out[commit] = (trailer.strip(), tree)
    return out


def ci_check(lab: Lab, dest: Path, head: str, who: str) -> dict[str, Any]:
    """``plangate check --as who`` in a fresh clone ``dest`` with the lab's config pointed at
    the clone and an empty state directory (a CI runner): plan -> (outcome, codes)."""
    clone(lab, dest)
    cfg = dest.parent / f"{dest.name}.yml"
    text = lab.config.read_text().replace(f"repo: {lab.repo}\n", f"repo: {dest}\n")
    cfg.write_text(text.replace(f"state_dir: {lab.state}\n", f"state_dir: {dest}-state\n"))
    told = lab.cli(
        "check",
        "--config",
        str(cfg),
        "--base",
        "main",
        "--head",
        head,
        "--as",
        who,
        "--format",
        "json",
        cwd=dest,
    )
    try:
        plans = json.loads(told.stdout)["plans"]
    except (ValueError, KeyError, TypeError):
        return {"raw": (told.stdout[-600:] + told.stderr[-600:], [])}
    return {
        p["plan"]: (p.get("outcome"), [r.get("code") for r in p.get("refused") or []])
        for p in plans
    }
