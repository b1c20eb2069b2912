"""``plangate schema``: JSON Schema of PLAN.yml, for editors (yaml-language-server)."""

from __future__ import annotations

import json


def schema() -> int:
    from controller.plan.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0
