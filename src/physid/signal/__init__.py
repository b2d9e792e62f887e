"""Derivative estimation and anti-aliasing for identification data (paper C §2.3 and §3).

``butterworth``: the classical tailor-made pipeline (zero-phase Butterworth, central differences,
parallel decimation). ``kalman``: integrated-random-walk Kalman smoothing (IRWSM 1 and 2).
"""
