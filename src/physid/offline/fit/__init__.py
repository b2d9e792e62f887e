"""Fits: the joint-term prior, the physically consistent least squares (SDP) and its polish,
essential parameters, uncertainties."""
