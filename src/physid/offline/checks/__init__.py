"""Checks of the data against the model: the suspect-data verdicts, column fixes, plausibility,
drift, held-out overlap."""
