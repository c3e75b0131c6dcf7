class ParseError(ValueError):
    """A file the importer cannot understand: where (1-based line) and why."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
