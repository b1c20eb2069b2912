"""Reading, modelling, validating and freezing a plan: load -> validate -> freeze."""
