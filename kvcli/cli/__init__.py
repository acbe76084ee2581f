"""The ``kvcli`` command line: one-shot subcommands and the interactive shell."""
