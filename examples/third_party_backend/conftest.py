"""Run the UniSim conformance kit against ExampleBackend without installing an entry point:

    pytest --pyargs unisim_conformance          # from this directory

The kit activates when it sees the ``unisim_backend_factory`` fixture; ``--unisim-backend=example``
(after ``pip install -e .``) overrides it. The scene features the backend refuses are declared on the
class (``ExampleBackend.UNSUPPORTED_SCENE_FEATURES``), so both ways of running see them.
"""

import pytest

from unisim_example_backend import ExampleBackend


@pytest.fixture
def unisim_backend_factory():
    def factory(scene, num_envs, sim_dt):
        return ExampleBackend(scene, num_envs, sim_dt)

    return factory
