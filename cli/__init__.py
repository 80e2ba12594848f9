"""The terminal shell: the ``lagmem`` command (``cli.main``), its chat, bench and loadtest subcommands."""
