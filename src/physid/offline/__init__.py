"""Offline identification of serial robots (paper C): least squares, essential parameters,
physically consistent fit, validation. Entry point: :func:`physid.offline.pipeline.identify`."""
