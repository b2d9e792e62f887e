"""physid's version (one place: the package, ``params.json`` provenance, the CLI's --version)."""

__version__ = "0.1.0"
