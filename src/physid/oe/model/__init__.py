"""The models of paper B: the state manifold, the inertial charts (eqs. 9-15), the free and
contact dynamics with their impulse maps (eqs. 2-3, 16-19), the joint terms, and the
observations (eq. 1: encoders, IMU, force/torque sensors, accelerometer)."""
