"""Simulators with known ground truth, for tests, demos and benchmarks.

Estimators never import this package (docs/architecture.md).
"""
