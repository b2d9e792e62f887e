"""The finding codes of ``physid.simfit`` (documented in docs/findings.md; ``physid codes``)."""

from __future__ import annotations

from physid.findings import Severity, define  # noqa: F401
