"""The scenario every ``vegaslab new-cc`` skeleton starts with (Python or BPF): the new algorithm
(flow ``mine``) beside the native Reno (flow ``reno``) on a 1.5 Mbit/s dumbbell whose 10-packet
DropTail buffer makes them lose packets, with a ``[sweep]`` over the buffer size and three seeds.
"""

from __future__ import annotations

from string import Template

SCENARIO = Template('''\
$comment
[run]
duration = "30s"

[monitor]
cwnd = true

[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "4ms" }
bottleneck = { bandwidth = "1.5Mbps", delay = "20ms", queue = { kind = "droptail", limit = 10 } }

[[flows]]
name = "mine"
from = "S1"
to = "D1"
cc = $cc
tcp = $tcp

[[flows]]
name = "reno"
from = "S2"
to = "D2"
cc = "reno"
tcp = $tcp

[sweep]
seeds = 3

[[sweep.axis]]
name = "buffer"
path = "dumbbell.bottleneck.queue.limit"
values = [5, 10, 20, 40]
''')


def scenario(comment: str, cc: str, tcp: str) -> str:
    """The skeleton's ``scenario.toml``: ``comment`` (``#`` lines) first, then the dumbbell with
    flow ``mine`` running ``cc`` (a TOML value) and flow ``reno``, both with the TCP table
    ``tcp``."""
    return SCENARIO.substitute(comment=comment.rstrip("\n") + "\n", cc=cc, tcp=tcp)
