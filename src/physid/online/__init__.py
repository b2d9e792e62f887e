"""Online, physically consistent inertial estimation (paper E): a log-Cholesky EKF whose streamed
estimates a controller can trust, the baseline linear KF, and replay of recordings.

Modules: :mod:`~physid.online.ekf` (the filter loop and :class:`InertialEKF`),
:mod:`~physid.online.baseline`, :mod:`~physid.online.measurement` (nominal/estimated split,
contact Jacobians), :mod:`~physid.online.stream` (finite-difference window, bias calibration,
rate limiter), :mod:`~physid.online.results`, :mod:`~physid.online.config` (settings and YAML),
:mod:`~physid.online.columns` (the trajectory-contract columns it reads: ``q_/dq_/tau_<joint>``,
floating-base ``base_*`` pose and velocity, ``f_/m_<frame>_*`` contact wrenches),
:mod:`~physid.online.replay`, :mod:`~physid.online.metrics`, :mod:`~physid.report.online_plot`.
Guide: docs/online.md.
"""

from physid.online.baseline import BaselineKF
from physid.online.config import OnlineConfig, load_online_config, parse_online_config
from physid.online.ekf import InertialEKF, RecursiveInertialFilter
from physid.online.measurement import SplitMeasurement
from physid.online.replay import ReplayResult, replay
from physid.online.results import BodyEstimate, OnlineEstimate

__all__ = [
    "BaselineKF",
    "BodyEstimate",
    "InertialEKF",
    "OnlineConfig",
    "OnlineEstimate",
    "RecursiveInertialFilter",
    "ReplayResult",
    "SplitMeasurement",
    "load_online_config",
    "parse_online_config",
    "replay",
]
