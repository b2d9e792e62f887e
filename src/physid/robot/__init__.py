"""Layer 2, a robot: the model and what its parameters multiply.

:mod:`.model` — a Pinocchio model with the parameter layout (bodies, joint terms, transmission,
gravity); :mod:`.friction` — the joint friction laws; :mod:`.regressor` — the observation matrix,
base and essential parameters (paper C); :mod:`.joint_locking` — joints held at their recorded
positions.
"""
