"""The kit's checks, one module per layer (collected only when the kit is active)."""
