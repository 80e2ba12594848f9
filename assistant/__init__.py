"""The product: wires the pure memory core, the database and the model together.

``config`` reads the settings; ``runtime`` builds the running parts; ``service`` runs one exchange;
``store`` is the only door to ``storage/``; ``ui/`` holds the web shell's helpers.
"""
