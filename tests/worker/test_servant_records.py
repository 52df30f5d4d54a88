"""The servant's error records: one capture where an error is raised, one rebuild on the caller side,
for the worker's plain-data frames and for Ray's pickles (no process started)."""

from __future__ import annotations

import pickle

import pytest

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import DivergenceError, InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.servant import ErrorRecord, RemoteError, Servant


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
    assert str(carried) == f"unisim_core.contract.errors.UnsupportedCapabilityError: {err}"
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


def test_a_record_rebuilds_only_unisim_and_standard_library_classes_without_importing():
    """Before #39 the caller imported whatever module a record named: a record naming ``this`` ran
    its import side effects (the Zen of Python printed) in the host. Now only builtins, modules
    already imported from the standard library or UniSim, and ``unisim_core`` itself are looked at;
    anything else gives ``None`` (the caller raises a UniSim error carrying the text)."""
    import subprocess
    import sys

    code = ("import sys; from unisim_core.plugin.servant import ErrorRecord\n"
            "assert ErrorRecord('this.Zen', 'x').rebuild() is None\n"
            "assert ErrorRecord('antigravity.Error', 'x').rebuild() is None\n"
            "assert ErrorRecord('numpy.linalg.LinAlgError', 'x').rebuild() is None  # third party, imported\n"
            "assert type(ErrorRecord('tomllib.TOMLDecodeError', 'x').rebuild()) is None.__class__\n"
            "import tomllib\n"
            "assert type(ErrorRecord('tomllib.TOMLDecodeError', 'x').rebuild()).__name__ == 'TOMLDecodeError'\n"
            "assert type(ErrorRecord('unisim_core.plugin.worker.errors.WorkerTimeoutError', 'x').rebuild()).__name__ "
            "== 'WorkerTimeoutError'\n"
            "assert 'this' not in sys.modules and 'antigravity' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Beautiful is better than ugly" not in out.stdout, "the record's module was imported"
