"""Typed errors raised across the Rust boundary, and by the command line's own checks."""


class ScenarioError(ValueError):
    """A scenario that cannot be accepted, naming the key and the value."""

    def __init__(self, key: str, value: str, message: str) -> None:
        self.key = key
        self.value = value
        self.message = message
        text = f"{key}: {message}" if value == "" else f"{key} = {value}: {message}"
        super().__init__(text)


class UsageError(ValueError):
    """A command that cannot be carried out as asked: an empty or occupied output
    directory, a bad option value, a query the store cannot answer. The command line
    prints its message on one line and exits 2."""
