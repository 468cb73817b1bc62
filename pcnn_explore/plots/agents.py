"""agents figures."""
__all__: list[str] = []
