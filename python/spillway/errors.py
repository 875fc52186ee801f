"""Typed errors raised across the Rust boundary."""


class ScenarioError(ValueError):
    """A scenario that cannot be accepted, naming the key and the value."""

    def __init__(self, key: str, value: str, message: str) -> None:
        self.key = key
        self.value = value
        self.message = message
        text = f"{key}: {message}" if value == "" else f"{key} = {value}: {message}"
        super().__init__(text)
