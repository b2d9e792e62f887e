"""The multibody model in maximal coordinates (paper A §2.1, Appendix F): the parameter vector
and its bodies and hinges (:mod:`.spec`), built from a URDF and a YAML config (:mod:`.build`),
the kinematics on (R^3 x H_1)^n (:mod:`.kinematics`) and one SPOOK step's CasADi expressions
(:mod:`.dynamics`)."""
