"""Layer 1, one rigid body: its 10 inertial parameters and their charts.

:mod:`.inertia` — conversions, the pseudo-inertia and full physical consistency (paper B eq. 8),
the log-Cholesky chart (paper E eqs. 16-17), distances between bodies;
:mod:`.expeig` — the exponential-eigenvalue chart (paper B section III-B).
"""
