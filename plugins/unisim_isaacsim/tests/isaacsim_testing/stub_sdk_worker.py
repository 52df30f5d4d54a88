"""The real Isaac Sim worker (:mod:`unisim_isaacsim.worker`) on the SDK STUBS: ``python -m
isaacsim_testing.stub_sdk_worker`` installs :mod:`.stub_sdk` and serves ``worker.factory`` through
``worker.run``.

Unlike a real Isaac Sim worker, this process serves several INITs in turn (the core's worker pool hands
it the next backend of the same launch): each INIT starts on a fresh stub stage and simulation context,
which stands for the fresh process a real worker is, so the tests pay for one interpreter and its
imports per pool rather than per backend. The worker's own code runs unchanged per INIT.
"""

from isaacsim_testing.stub_sdk import install


def fresh_stubs(factory):
    """``factory`` on a new stub stage and simulation context each INIT, marked reusable."""

    def init(args, progress):
        import omni.usd
        from isaaclab.sim import SimulationContext

        omni.usd.get_context().__init__()
        SimulationContext.instance_ = None
        return factory(args, progress)

    init.reusable = True
    return init


if __name__ == "__main__":
    install()
    from unisim_isaacsim import worker

    worker.run(fresh_stubs(worker.factory))
