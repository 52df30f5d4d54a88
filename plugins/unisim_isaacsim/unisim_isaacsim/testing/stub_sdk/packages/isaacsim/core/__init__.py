"""STUB ``isaacsim.core`` namespace."""
