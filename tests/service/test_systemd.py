"""The systemd units: valid for systemd itself, Type=notify, restarted on failure, hardened.

``systemd-analyze verify`` checks a unit only where its ExecStart program exists, so the
units are copied with ExecStart pointed at this checkout's ``plangate``; everything else is
verified as shipped. Skipped where systemd-analyze is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gitenv import ROOT

UNITS = ("plangate.service", "plangate@.service")
SHIPPED_EXEC = "/usr/local/bin/plangate"
ANALYZE = shutil.which("systemd-analyze")


def plangate_executable() -> str:
    candidate = Path(sys.executable).with_name("plangate")
    return str(candidate if candidate.exists() else shutil.which("plangate") or "")


def unit_text(name: str) -> str:
    return (ROOT / "systemd" / name).read_text()


def settings(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in unit_text(name).splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            found.setdefault(key.strip(), []).append(value.strip())
    return found


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    exe = plangate_executable()
    if not exe:
        pytest.skip("the plangate console script is not installed")
    for name in UNITS:
        (tmp_path / name).write_text(unit_text(name).replace(SHIPPED_EXEC, exe))
    return tmp_path


def verify(path: Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE
    return subprocess.run(
        [ANALYZE, "verify", str(path)], capture_output=True, text=True, check=False, timeout=60
    )


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("unit", ["plangate.service", "plangate@ops.service"])
def test_systemd_analyze_verify_is_clean(installed: Path, unit: str) -> None:
    result = verify(installed / unit)
    # Unknown keys are only warnings (exit 0): any remark about our unit is a failure.
    remarks = [line for line in result.stderr.splitlines() if "plangate" in line]
    assert result.returncode == 0 and not remarks, result.stderr


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_verify_catches_a_broken_unit(installed: Path) -> None:
    unit = installed / "plangate.service"
    unit.write_text(unit.read_text().replace(plangate_executable(), "/nonexistent/plangate"))
    assert verify(unit).returncode != 0


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_exposure_score_is_low(installed: Path) -> None:
    result = subprocess.run(
        [ANALYZE, "security", "--offline=true", str(installed / "plangate.service")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    match = re.search(r"exposure level for \S+: (\d+\.\d+)", result.stdout)
    if match is None:
        pytest.skip("this systemd-analyze has no offline security report")
    assert float(match.group(1)) <= 2.5, result.stdout[-2000:]


@pytest.mark.parametrize("unit", UNITS)
def test_units_are_notify_restarting_and_hardened(unit: str) -> None:
    s = settings(unit)
    assert s["Type"] == ["notify"]
    assert s["Restart"] == ["on-failure"]
    assert s["RestartPreventExitStatus"] == ["2"]  # config errors and E_LOCKED: no loop
    assert s["KillMode"] == ["mixed"]  # SIGTERM to plangate only; the running tool finishes
    # round 88: each tool call in a cgroup of its own below the service's (docs/operations.md)
    assert s["Delegate"] == ["yes"] and s["ProtectControlGroups"] == ["no"]
    assert s["User"] == ["plangate"]
    assert s["StateDirectory"][0].startswith("plangate")
    assert "WatchdogSec" in s and "ExecReload" in s
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
    }.items():
        assert s[key] == [value], key
    assert s["ReadWritePaths"][0].lstrip("-").startswith("/srv/plans")
    assert s["ExecStart"][0].startswith(f"{SHIPPED_EXEC} run --config /etc/plangate/")


def test_template_keeps_instances_apart() -> None:
    s = settings("plangate@.service")
    for key in ("ExecStart", "StateDirectory", "ReadWritePaths", "EnvironmentFile"):
        assert "%i" in s[key][0], key
