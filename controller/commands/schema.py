"""``plangate schema [--config F]``: JSON Schema of PLAN.yml, for editors (yaml-language-server).

With a config, the schema is specialised to its catalog: ``tool`` is an enum of the catalog's
names and each tool's params are checked by its ``params_schema``.
"""

from __future__ import annotations

import json


def schema(*, config_path: str | None = None) -> int:
    from controller.plan.schema import json_schema

    document = json_schema()
    if config_path is not None:
        from controller.commands._shared import catalog_redactor, required_config
        from controller.plan.catalog import specialise_schema

        config = required_config(config_path)
        document = specialise_schema(document, config, catalog_redactor(config))
    print(json.dumps(document, indent=2))
    return 0
