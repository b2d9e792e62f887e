"""The SPOOK stepper with frictional hinges (paper A eqs. 2.8-2.28): the per-step mixed LCP
(:mod:`.mlcp`), the simulator (:mod:`.simulate`) and its files (:mod:`.files`)."""
