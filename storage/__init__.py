"""The database layer: SQLAlchemy models (``models``), engines and migrations (``db``), the
repository functions (``repo``) and the rows a unit of work writes (``writes``), the pages' and the
service's light reads (``views``, ``candidates``), where a unit of work's rows go (``sinks``) and
chunked writes (``chunks``). Only ``assistant.store`` imports it; it knows ``memory``'s value types
and nothing else of the core."""
