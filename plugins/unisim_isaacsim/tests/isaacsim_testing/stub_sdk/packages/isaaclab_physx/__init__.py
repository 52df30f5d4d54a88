"""STUB ``isaaclab_physx`` (Isaac Lab 3.0's PhysX backend package); see ``isaacsim_testing.stub_sdk``."""
