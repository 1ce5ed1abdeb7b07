"""Whether the kernel tests can run here (root, BTF, bpftool, clang, namespaces...), shared by
the kernel and testbed test files: elsewhere they skip with the one-sentence reason; under
``make test`` (``VEGASLAB_REQUIRE_BPF=1``) a missing piece is an error, not a skip."""
from __future__ import annotations

import os

import pytest


def unavailable(*checks) -> str | None:
    """The first failing check's message (each raises with one sentence), or None."""
    for check in checks:
        try:
            check()
        except Exception as e:  # noqa: BLE001 - the reason to skip, whatever is missing
            reason = str(e)
            break
    else:
        return None
    if os.environ.get("VEGASLAB_REQUIRE_BPF") == "1":
        raise RuntimeError(f"VEGASLAB_REQUIRE_BPF=1 but {reason}")
    return reason


def skip_unless(reason: str | None) -> pytest.MarkDecorator:
    """A skip mark that applies when ``reason`` is not None."""
    return pytest.mark.skipif(reason is not None, reason=reason or "")



def simulator_loads(obj) -> bool:
    """Whether vegaslab's simulator loads the compiled BPF object ``obj`` (docs/bpf-objects.md):
    a one-flow scenario naming it validates."""
    import vegaslab

    text = (f'[run]\nduration = "1s"\n[[links]]\nendpoints = ["S", "D"]\nbandwidth = "1Mbps"\ndelay = "1ms"\n'
            f'[[flows]]\nfrom = "S"\nto = "D"\ncc = {{ bpf = "{obj}" }}\n')
    try:
        vegaslab.validate(text)
    except vegaslab.ScenarioError:
        return False
    return True
