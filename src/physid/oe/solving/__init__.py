"""The optimal-estimation problem of paper B eq. 16 and its solver: linearization, parametrized
Riccati recursion (eqs. 20-31), rollouts and merit line search (eqs. 32-38), the accelerometer
bias rounds and the serial-correlation widening of the standard deviations."""
