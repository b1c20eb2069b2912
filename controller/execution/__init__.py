"""Running a frozen plan: the engine, its journal, the execution log, secrets, tools."""
