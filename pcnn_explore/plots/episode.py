"""episode figures."""
__all__: list[str] = []
