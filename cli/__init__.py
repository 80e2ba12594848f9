"""The terminal shell: the ``lagmem`` command (``cli.main``), its chat and bench subcommands."""
