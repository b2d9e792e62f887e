"""physid: physically consistent identification of robot and rigid-body dynamic parameters.

Python API (docs/api.md): :func:`identify`, :func:`validate`, :func:`load_params`,
:class:`Recording`, and one function per estimator (:func:`payload`, :func:`online_replay`,
:func:`oe_estimate`, :func:`multibody_simulate`, :func:`multibody_identify`,
:func:`impacts_simulate`, :func:`impacts_identify`, :func:`impacts_snapshots`,
:func:`excite_design`, :func:`export_model`, :func:`simfit_tune`), each returning a
:class:`Result` (status, message, parameters, to_dict, save).
Layers (docs/architecture.md): ``inertia`` -> ``model`` -> ``data`` -> ``signal``
-> ``regressor`` -> estimators (``offline``, ``online``, ``oe``, ``multibody``, ``impacts``) ->
``report``, ``export`` and ``cli``. The API names are imported on first use, so ``import physid``
stays fast.
"""

from typing import TYPE_CHECKING

from physid.errors import InputError, PhysidError
from physid.version import __version__

_API = ("identify", "validate", "load_params", "Recording", "Params", "IdentifyResult")
_API += ("ValidationResult", "Body", "Joint", "Parameter", "Result")
# the other estimators' faces, by the module that holds them (physid.api.*)
_FACES = {
    "payload": "robot_runs",
    "excite_design": "excite_run",
    "export_model": "robot_runs",
    "simfit_tune": "simfit_run",
    "online_replay": "online_run",
    "oe_estimate": "oe_run",
    "multibody_simulate": "multibody_runs",
    "multibody_identify": "multibody_runs",
    "impacts_simulate": "impacts_runs",
    "impacts_identify": "impacts_runs",
    "impacts_snapshots": "impacts_runs",
    "Poses": "impacts_runs",
}

__all__ = ["InputError", "PhysidError", "__version__", *_API, *_FACES]

if TYPE_CHECKING:
    from physid.api import (  # noqa: F401 - re-exported lazily by __getattr__
        Body,
        IdentifyResult,
        Joint,
        Parameter,
        Params,
        Recording,
        Result,
        ValidationResult,
        identify,
        load_params,
        validate,
    )
    from physid.api.excite_run import excite_design  # noqa: F401
    from physid.api.impacts_runs import (  # noqa: F401
        Poses,
        impacts_identify,
        impacts_simulate,
        impacts_snapshots,
    )
    from physid.api.multibody_runs import multibody_identify, multibody_simulate  # noqa: F401
    from physid.api.oe_run import oe_estimate  # noqa: F401
    from physid.api.online_run import online_replay  # noqa: F401
    from physid.api.robot_runs import export_model, payload  # noqa: F401
    from physid.api.simfit_run import simfit_tune  # noqa: F401


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 lazy attributes
    if name in _API:
        from physid import api

        return getattr(api, name)
    if name in _FACES:
        from importlib import import_module

        return getattr(import_module(f"physid.api.{_FACES[name]}"), name)
    raise AttributeError(f"module 'physid' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
