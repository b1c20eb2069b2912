"""``plangate tools [--json]``: the controller's tool catalog, for plan authors and agents.

Name, description, kind, what it runs, params_schema, idempotent, timeout, risk, estimate,
output trust and sensitive params (:func:`controller.plan.catalog.describe_tool`), every
value the controller's records hide written ``***`` (:func:`controller.plan.catalog.shown`).
"""

from __future__ import annotations

import json
from typing import Any

from controller.display import visible


def tools(*, config_path: str | None, as_json: bool) -> int:
    from controller.commands._shared import catalog_redactor, required_config
    from controller.plan.catalog import describe_catalog

    config = required_config(config_path)
    catalog = describe_catalog(config, catalog_redactor(config))  # secrets hidden
    if as_json:
        print(json.dumps(catalog, indent=2, ensure_ascii=False))
        return 0
    if not catalog:
        print("no tools in the catalog (config `tools:`)")
    for entry in catalog:
        print("\n".join(_lines(entry)))
    return 0


def _lines(entry: dict[str, Any]) -> list[str]:
    flags = [f"risk {entry['risk']}"] if entry.get("risk") else []
    flags.append("idempotent" if entry["idempotent"] else "not idempotent")
    flags.append(f"timeout {entry['timeout']:g}s")
    if entry.get("estimate"):
        flags.append(f"estimate {_compact(entry['estimate'])}")
    if entry.get("output_trust"):
        flags.append(f"output {entry['output_trust']}")
    lines = [f"{visible(entry['name'])} ({entry['kind']}): {visible(entry['description'] or '-')}"]
    lines.append(f"    runs: {visible(entry['maps_to'])}")
    lines.append(f"    {', '.join(flags)}")
    if entry.get("sensitive"):
        lines.append(f"    sensitive params: {visible(', '.join(entry['sensitive']))}")
    if entry["params_schema"] is not None:
        lines.append(f"    params: {visible(_compact(entry['params_schema']))}")
    return lines


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
