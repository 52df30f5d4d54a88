"""STUB ``omni.replicator`` namespace."""
