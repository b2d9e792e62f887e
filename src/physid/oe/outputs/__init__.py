"""What a solve returns and writes: the result dataclass, params.json and trajectory.csv
columns, the report's quantities and the figures."""
