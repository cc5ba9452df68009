"""The one error the routing core raises for bad input: it names where and what to do."""


class InputError(ValueError):
    """Bad input. The message names the row (index or line), the field, what was expected and the fix."""

    def __init__(self, message: str, *, row: int | None = None, field: str | None = None):
        super().__init__(message)
        self.row = row
        self.field = field


class Unsupported(Exception):
    """Not an error of the user's: the file is valid for all the columnar reader knows, but not a table it takes.
    `read_rows` then re-reads it with the careful reader, which names the line and field if anything is wrong."""
