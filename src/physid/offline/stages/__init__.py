"""The stages of one identification (paper C and the trust layer), in order, each callable and
testable alone with a small typed state between them:

1. :mod:`.read` - read and check the recordings (suspect data, held-out overlap, derivatives);
2. :mod:`.prepare` - the preprocessing the training folds choose (cut-off, deadband, delay,
   friction shapes, gravity direction);
3. :mod:`.base_fit` - base parameters, what the data excite, (weighted) least squares, essential
   parameters and the joint terms' prior;
4. :mod:`.consistent_fit` - the physically consistent fit with the prior, checked against the
   URDF's own model and for plausible masses;
5. :mod:`.quantify` - standard deviations, the jackknife, what the data and the prior decide;
   :mod:`.undecided` - where the residuals are mostly misfit, the plausible refit taken when
   the data leave the masses undecided (then quantified again);
6. :mod:`.predict` - predictions at the recorded samples, training and held out;
7. :mod:`.judge` - the findings on the fit and the one status.

:func:`physid.offline.pipeline.identify` runs them.
"""
