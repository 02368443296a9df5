"""Build: the modules of ``ledger.native.COMPILED`` are compiled to C by mypyc
(pyproject.toml says why); every other module stays plain Python.

A compiled module is the same source, compiled: ``ledger/_native.json`` records the
SHA-256 of each source it was built from, and ``ledger.native.NativeGuard`` imports a
compiled module only while its source is byte for byte that one; a source edited since
runs as Python until the next ``pip install``. ``PITBOSS_PURE_PYTHON=1 pip install ...``
builds nothing: every module runs as Python, with the same results, slower.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _native() -> object:
    """``ledger/native.py`` on its own (standard library only): nothing else of the
    project is installed while it builds."""
    spec = importlib.util.spec_from_file_location("pitboss_build_native", HERE / "ledger" / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _extensions() -> list[object]:
    native = _native()
    manifest: Path = native.MANIFEST  # type: ignore[attr-defined]
    manifest.unlink(missing_ok=True)  # nothing claims to be compiled until the build below does
    if os.environ.get("PITBOSS_PURE_PYTHON") == "1":
        return []
    from mypyc.build import mypycify

    names: tuple[str, ...] = native.COMPILED  # type: ignore[attr-defined]
    sources = [native.source_of(name) for name in names]  # type: ignore[attr-defined]
    # The build environment holds setuptools and mypy only, not the project's dependencies
    # (pydantic, orjson...): mypy runs here without the project's strict configuration
    # (which the quality gate applies in the real environment, .ci/run), a missing import's
    # types as Any and errors in imported modules silenced, with a cache of its own (not a
    # developer's .mypy_cache, typed against another environment), so every build is alike.
    flags = ["--config-file=", "--ignore-missing-imports", "--follow-imports=silent",
             f"--cache-dir={HERE / 'build' / 'mypyc-cache'}"]
    # group_name: the compiled group's shared library, ledger/_native__mypyc*.so (no module's name)
    modules = mypycify(flags + [str(path.relative_to(HERE)) for path in sources], opt_level="3",
                       group_name="ledger._native")
    manifest.write_text(json.dumps({name: hashlib.sha256(path.read_bytes()).hexdigest()
                                    for name, path in zip(names, sources)}, indent=1, sort_keys=True) + "\n")
    return list(modules)


setup(ext_modules=_extensions())
