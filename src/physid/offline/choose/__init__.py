"""Choices made by blocked cross-validation on the user's own training data: cut-off, deadband,
delay, gravity tilt, friction shapes, the prior's scale."""
