"""Numerical building blocks shared by several estimators (no estimator's internals here)."""
