"""physid: physically consistent identification of robot and rigid-body dynamic parameters.

Python API (docs/api.md): :func:`identify`, :func:`validate`, :func:`load_params`,
:class:`Recording`; :func:`physid.export.write_export` writes identified parameters into a
URDF or MJCF. Layers (docs/architecture.md): ``inertia`` -> ``model`` -> ``data`` -> ``signal``
-> ``regressor`` -> estimators (``offline``, ``online``, ``oe``, ``multibody``, ``impacts``) ->
``report``, ``export`` and ``cli``. The API names are imported on first use, so ``import physid``
stays fast.
"""

from typing import TYPE_CHECKING

from physid.errors import InputError, PhysidError
from physid.version import __version__

_API = ("identify", "validate", "load_params", "Recording", "Params", "IdentifyResult")
_API += ("ValidationResult", "Body", "Joint", "Parameter", "Result")

__all__ = ["InputError", "PhysidError", "__version__", *_API]

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


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 lazy attributes
    if name in _API:
        from physid import api

        return getattr(api, name)
    raise AttributeError(f"module 'physid' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
