"""physid: physically consistent identification of robot and rigid-body dynamic parameters.

Python API (docs/api.md): :func:`identify`, :func:`validate`, :func:`load_params`,
:class:`Recording`; :func:`physid.export.write_export` writes identified parameters into a
URDF or MJCF. Layers (docs/architecture.md): ``inertia`` -> ``model`` -> ``data`` -> ``signal``
-> ``regressor`` -> estimators (``identify``, ``online``, ``impacts``) -> ``report``, ``export``
and ``cli``. The API names are imported on first use, so ``import physid`` stays fast.
"""

import sys
import types
from typing import TYPE_CHECKING

from physid.errors import InputError, PhysidError
from physid.version import __version__

_API = ("identify", "validate", "load_params", "Recording", "Params", "IdentifyResult")
_API += ("ValidationResult", "Body", "Joint")

__all__ = ["InputError", "PhysidError", "__version__", *_API]

if TYPE_CHECKING:
    from physid.api import (  # noqa: F401 - re-exported lazily by __getattr__
        Body,
        IdentifyResult,
        Joint,
        Params,
        Recording,
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


class _PhysidModule(types.ModuleType):
    """``physid.identify`` is both the API function and the estimator subpackage
    (``physid.identify.pipeline``, ...). Importing a submodule binds it as an attribute of its
    package, which would hide the function: this property keeps the function public, while the
    subpackage stays importable by its dotted name (``from physid.identify.pipeline import
    ...``). The function's ``__name__`` is ``physid.identify`` so that ``import
    physid.identify.pipeline as p`` (which looks ``pipeline`` up under that name) works too."""

    @property
    def identify(self):  # noqa: ANN201 - the function's own signature is documented
        from physid.api import identify

        identify.__name__ = "physid.identify"
        return identify

    @identify.setter
    def identify(self, _subpackage: types.ModuleType) -> None:
        pass  # the import system's binding of physid.identify (the subpackage): kept out


sys.modules[__name__].__class__ = _PhysidModule
