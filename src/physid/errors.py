"""Exceptions raised on bad input. Their message is one line that names the culprit."""


class PhysidError(Exception):
    """Base class of every error physid raises on purpose."""


class InputError(PhysidError, ValueError):
    """Bad user input: a file, a column, a row or a parameter that cannot be used.

    The message is a single line that names the file, column, row or parameter at fault, so the
    CLI can print it as is.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        text = f"{source}: {message}" if source else message
        super().__init__(" ".join(text.split()))
