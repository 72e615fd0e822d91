"""The optional compiled kernel; everything else is configured in pyproject.toml.

``viewer.model._ckernel`` (csrc/ckernel.c, plain C over the buffer protocol) speeds up the
skeleton update. It is optional: without a C compiler or the Python headers the build prints a
warning and the package installs without it, and viewer/model/native.py falls back to the
numpy kernel (the reference), as it does for a stale build.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("viewer.model._ckernel", sources=["csrc/ckernel.c"], optional=True,
                             extra_compile_args=["-O3", "-std=c99", "-ffp-contract=off"])])
