"""STUB ``isaacsim`` namespace (see ``unisim_isaacsim.testing.stub_sdk``)."""
