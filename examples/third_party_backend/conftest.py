"""Run the UniSim conformance kit against ExampleBackend without installing an entry point:

    pytest --pyargs unisim_conformance          # from this directory

The kit activates when it sees this fixture; ``--unisim-backend=example`` (after
``pip install -e .``) overrides it.
"""

import pytest

from unisim_example_backend import ExampleBackend


@pytest.fixture
def unisim_backend_factory():
    def factory(scene, num_envs, sim_dt):
        return ExampleBackend(scene, num_envs, sim_dt)

    return factory


@pytest.fixture
def unisim_expected_failures():
    """Checks this backend is known to fail, with reasons (strict xfail). None today."""
    return {}
