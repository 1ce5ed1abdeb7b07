"""Scenario text shared by the Python tests: a two-hop path S1 - R1 - D1 with a 10-packet
bottleneck queue and one Vegas flow f1 (losses are possible, runs take milliseconds), and one
Reno flow f1 over a single 1 Mbit/s link A - B (ONE_LINK)."""

TWO_HOP = """
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "1Mbps"
delay = "10ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "500kbps"
delay = "10ms"
queue = { kind = "droptail", limit = 10 }

[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
"""

ONE_LINK = """
[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay = "5ms"

[[flows]]
name = "f1"
from = "A"
to = "B"
cc = "reno"
"""


def two_hop_file(directory, duration: str = "0.2s"):
    """:data:`TWO_HOP` as ``directory/two-hop.toml``, running ``duration``; returns its path."""
    from pathlib import Path

    path = Path(directory) / "two-hop.toml"
    path.write_text(f'[run]\nduration = "{duration}"\n' + TWO_HOP)
    return path

#: A two-hop path S1 - R1 - D1 (10 then 2 Mbit/s) whose bottleneck loses 1% of packets at
#: random, so that the seeds of a sweep differ, and one Vegas flow f1; runs of 0.5 s simulated
#: take milliseconds. The sweep tests add ``[meta]``, ``[run]`` and ``[sweep]``.
LOSSY_TWO_HOP = """
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "5ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "2Mbps"
delay = "10ms"
error_rate = 0.01
queue = { kind = "droptail", limit = 10 }

[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
"""
