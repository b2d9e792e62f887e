"""Known and unknown loads: payload estimation and drive gains from a known payload."""
