"""The servant's error records: one capture where an error is raised, one rebuild on the caller side,
for the worker's plain-data frames and for Ray's pickles (no process started)."""

from __future__ import annotations

import pickle

import pytest

from unisim_core.capabilities import Capability
from unisim_core.errors import DivergenceError, InvalidInputError, UnsupportedCapabilityError
from unisim_core.servant import ErrorRecord, RemoteError, Servant


def test_a_plain_record_rebuilds_the_class_args_and_attributes():
    err = DivergenceError("envs [1, 3] diverged", env_ids=(1, 3))
    record = ErrorRecord.from_plain(ErrorRecord.capture(err).to_plain())
    rebuilt = record.rebuild()
    assert type(rebuilt) is DivergenceError and str(rebuilt) == "envs [1, 3] diverged"
    assert rebuilt.env_ids == [1, 3]  # plain data: tuples cross as lists
    key = ErrorRecord.from_plain(ErrorRecord.capture(KeyError("body 'x'")).to_plain()).rebuild()
    assert type(key) is KeyError and key.args == ("body 'x'",) and str(key) == str(KeyError("body 'x'"))
    assert ErrorRecord("no_such_module.Error", "x").rebuild() is None


def test_a_pickled_record_keeps_attributes_that_are_not_plain():
    err = UnsupportedCapabilityError("fake", Capability.CONTACTS, "no contact model")
    carried = pickle.loads(pickle.dumps(RemoteError(ErrorRecord.capture(err))))
    assert str(carried) == f"unisim_core.errors.UnsupportedCapabilityError: {err}"
    rebuilt = carried.record.rebuild()
    assert type(rebuilt) is UnsupportedCapabilityError and rebuilt.capability is Capability.CONTACTS
    assert str(rebuilt) == str(err) and carried.record.safe  # a UniSim error: the backend stays usable
    assert ErrorRecord.capture(err).to_plain()["attrs"]["capability"] == "contacts"  # plain: the enum's value


def test_the_op_table_refuses_unknown_ops_and_arguments_naming_them():
    servant = Servant()
    with pytest.raises(InvalidInputError, match=r"unknown op 'warp': expected one of \[.*'step'"):
        servant.call("warp")
    with pytest.raises(InvalidInputError, match=r"op 'contacts': .*expected arguments \(key\)"):
        servant.call("contacts", 1, 2)
