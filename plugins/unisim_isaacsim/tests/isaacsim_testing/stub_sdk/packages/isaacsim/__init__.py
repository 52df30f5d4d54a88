"""STUB ``isaacsim`` namespace (see ``isaacsim_testing.stub_sdk``)."""
