"""STUB ``omni`` namespace (see ``isaacsim_testing.stub_sdk``)."""
