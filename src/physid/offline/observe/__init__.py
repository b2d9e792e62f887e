"""Observations: recordings through the chosen filter into per-joint reduced least-squares systems,
folds and scores (paper C eqs. 1-5)."""
