"""Soft-contact settings physid chooses from the data when the config gives none: the feet's
radius and the process-noise floor near contact flag changes."""
