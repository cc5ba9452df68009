"""The one error the routing core raises for bad input: it names where and what to do."""


class InputError(ValueError):
    """Bad input. The message names the row (index or line), the field, what was expected and the fix."""

    def __init__(self, message: str, *, row: int | None = None, field: str | None = None):
        super().__init__(message)
        self.row = row
        self.field = field
