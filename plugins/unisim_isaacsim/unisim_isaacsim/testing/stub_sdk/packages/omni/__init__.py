"""STUB ``omni`` namespace (see ``unisim_isaacsim.testing.stub_sdk``)."""
