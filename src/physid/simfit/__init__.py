"""physid simfit: a MuJoCo model tuned to simulate like the logged robot (issue 26 item 3)."""
