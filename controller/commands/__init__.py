"""One function per subcommand: explicit arguments in, exit code out."""
