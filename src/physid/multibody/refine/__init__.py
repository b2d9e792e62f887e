"""Output-error refinement of a multibody fit by multiple shooting over windows of the
recordings (:mod:`.output_error`)."""
