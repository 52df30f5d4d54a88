"""Test doubles for the Isaac Sim host (no Isaac Sim needed); see ``fake_isaac_worker``."""
