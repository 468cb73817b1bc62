"""density figures."""
__all__: list[str] = []
