"""The comparison suite of the simulator (Linux flavour) against the kernel: the same as
`vegaslab compare --suite` (its arguments: --runs, --cases, --reuse-kernel, --sim-set, --set,
--stack, --out), every case of examples/kernel/suite/cases.toml. Needs root unless
--reuse-kernel (make compare-kernel)."""
from __future__ import annotations

import sys

from vegaslab.cli import main

if __name__ == "__main__":
    sys.exit(main(["compare", "--suite", *sys.argv[1:]]))
