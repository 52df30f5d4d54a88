"""The option helpers of unisim_core.contract.options: which are validators, which converters, and that
``boolean`` works as either (used as a converter it crashed every construction with a TypeError)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.options import (
    BackendOptions,
    boolean,
    build_options,
    float_dtype,
    optional_positive_int,
    positive_int,
)


@attrs.frozen(kw_only=True)
class _Opts(BackendOptions):
    as_validator: bool = attrs.field(default=False, validator=boolean)
    as_converter: bool = attrs.field(default=False, converter=boolean)
    substeps: int = attrs.field(default=1, validator=positive_int)
    threads: int | None = attrs.field(default=None, validator=optional_positive_int)


def test_boolean_as_validator_and_as_converter_accepts_real_bools():
    o = build_options(_Opts, "demo", {"as_validator": True, "as_converter": True})
    assert (o.as_validator, o.as_converter) == (True, True)
    assert build_options(_Opts, "demo", {}).as_converter is False


@pytest.mark.parametrize("value", [1, "yes", None, np.float64(1.0)])
def test_boolean_rejects_non_bools_either_way(value):
    with pytest.raises(InvalidInputError, match=r"as_validator: expected a bool, got"):
        build_options(_Opts, "demo", {"as_validator": value})
    with pytest.raises(InvalidInputError, match=r"boolean option: expected a bool, got"):
        build_options(_Opts, "demo", {"as_converter": value})


def test_validators_name_the_option_and_float_dtype_converts():
    with pytest.raises(InvalidInputError, match=r"substeps: expected an int >= 1, got 0"):
        build_options(_Opts, "demo", {"substeps": 0})
    with pytest.raises(InvalidInputError, match=r"threads: expected an int >= 1 or None, got True"):
        build_options(_Opts, "demo", {"threads": True})
    assert float_dtype("float64") is np.float64 and build_options(_Opts, "demo", {"np_dtype": "float64"}).np_dtype \
        is np.float64
