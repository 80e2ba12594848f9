"""The web shell: both pages headless (AppTest), the answer worker, and a real browser."""
