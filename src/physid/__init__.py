"""physid: physically consistent identification of robot and rigid-body dynamic parameters.

Layers (see DESIGN.md): ``inertia`` -> ``model`` -> ``data`` -> ``signal`` -> ``regressor`` ->
estimators (``identify``, ``online``, ``impacts``) -> ``report`` and ``cli``.
"""

from physid.errors import InputError, PhysidError

__version__ = "0.1.0"

__all__ = ["InputError", "PhysidError", "__version__"]
