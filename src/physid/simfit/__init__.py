"""physid simfit: a MuJoCo model tuned to simulate like the logged robot."""
