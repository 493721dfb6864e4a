"""Shared fixtures for the weft Python module's tests.

The module is imported from PYTHONPATH (scripts/test.sh points it at
build/release/python). If it cannot be imported the whole suite fails with a
message saying how to build it, rather than silently skipping.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

try:
    import weft  # noqa: F401
except ImportError as error:  # pragma: no cover - a setup problem, not a test
    raise ImportError(
        "cannot import the weft module: build it with `ninja -C build/release weft_python` "
        "and run pytest with PYTHONPATH=build/release/python "
        f"(import failed: {error})"
    ) from error


@functools.lru_cache(maxsize=1)
def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot run a sandbox here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--unshare-net", "--die-with-parent", "true"],
            capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap cannot start: {error}"
    if probe.returncode != 0:
        detail = probe.stderr.decode(errors="replace").strip()
        return f"bubblewrap cannot create a sandbox here (user namespaces?): {detail}"
    return None


requires_bubblewrap = pytest.mark.skipif(
    bubblewrap_problem() is not None, reason=str(bubblewrap_problem()))
