"""What ``physid oe`` reads: the recording's columns (fixed and floating base, regridded when its
time stamps jitter) and the ``--config`` YAML."""
