"""Figures, HTML report and JSON outputs. Nothing below this layer imports it
(docs/architecture.md)."""
