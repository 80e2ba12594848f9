"""Storage and the store: migrations, page reads, imports, concurrent writers, crashes, owners."""
