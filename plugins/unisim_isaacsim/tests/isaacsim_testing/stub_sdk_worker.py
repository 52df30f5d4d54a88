"""The real Isaac Sim worker (:mod:`unisim_isaacsim.worker`) on the SDK STUBS: ``python -m
isaacsim_testing.stub_sdk_worker`` installs :mod:`.stub_sdk` and serves ``worker.main()``."""

from isaacsim_testing.stub_sdk import install

if __name__ == "__main__":
    install()
    from unisim_isaacsim import worker

    worker.main()
