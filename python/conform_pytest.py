"""pytest plugin of conform: the `conform_check` fixture judges your kernel's outputs in a test.

    def test_my_roi_align(conform_check):
        conform_check("roi_align", {"pooled_h": 7, "pooled_w": 7, "spatial_scale": 0.25},
                      inputs={"input": x, "rois": rois}, actual={"output": my_kernel(x, rois)})

It is conform_check.check() with its files under the test's tmp_path (pytest keeps the last few
runs' folders, so a failure's repro command still works, and cleans the rest). `make install`
registers this module as a pytest plugin (entry point pytest11), so an installed copy needs no
conftest.py; from the repository, `-p conform_pytest` with python/ on the path loads it.
"""
import functools

import pytest

import conform_check as _helper


@pytest.fixture
def conform_check(tmp_path):
    """check(op, attrs, inputs, actual, dtype=..., conform=...) -> Verdict, or AssertionError."""
    return functools.partial(_helper.check, workdir=str(tmp_path))


@pytest.fixture
def conform_judge(tmp_path):
    """judge(op, attrs, inputs, actual, dtype=..., conform=...) -> Verdict, never raising on a failure."""
    return functools.partial(_helper.judge, workdir=str(tmp_path))
