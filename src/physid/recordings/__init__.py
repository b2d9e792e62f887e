"""Layer 3, recordings: recorded motion in, checked, on the joint side.

:mod:`.tables` (one file as named columns: CSV, NPZ, Parquet) -> :mod:`.manifest` (YAML
manifests that map other layouts onto the contract) -> :mod:`.timebase` (time stamps checked
against the motion) -> :mod:`.trajectory` (the trajectory contract: validation, units, drive
gains, transmissions) ; :mod:`.streamed` reads files larger than memory block by block.
"""
