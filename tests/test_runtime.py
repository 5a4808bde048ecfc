"""eadct.runtime: the opt-in allocator setting applies and can be undone."""

from __future__ import annotations

import platform

import pytest

from eadct.runtime import keep_freed_memory, keeps_freed_memory


@pytest.mark.skipif(platform.system() != "Linux", reason="glibc only")
def test_keep_freed_memory_applies_and_restores():
    assert keep_freed_memory(True) is True
    assert keeps_freed_memory()
    assert keep_freed_memory(False) is True
    assert not keeps_freed_memory()
