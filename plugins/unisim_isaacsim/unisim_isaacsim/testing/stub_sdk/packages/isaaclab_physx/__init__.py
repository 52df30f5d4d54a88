"""STUB ``isaaclab_physx`` (Isaac Lab 3.0's PhysX backend package); see ``unisim_isaacsim.testing.stub_sdk``."""
