"""Derivative estimation and anti-aliasing for identification data (paper C §2.3 and §3).

``butterworth``: the classical tailor-made pipeline (zero-phase Butterworth, central differences,
parallel decimation) on ``iir`` (Butterworth design, zero-phase filtering and periodograms on
NumPy and LAPACK). ``kalman``: integrated-random-walk Kalman smoothing (IRWSM 1 and 2).
"""
