"""Joint state and parameter estimation (paper A §3-4): the residuals and their sparse Jacobian
(:mod:`.residuals`, :mod:`.assembly`, :mod:`.problem`), Levenberg-Marquardt on the manifold
(:mod:`.lm`, :mod:`.normal`), the observations (:mod:`.observe`), the covariance
(:mod:`.covariance`) and the fit itself (:mod:`.fit`)."""
