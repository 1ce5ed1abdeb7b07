"""``vegaslab new-cc NAME --python|--bpf``: a skeleton for your own congestion control
(docs/your-algorithm.md). ``--python``: ``NAME.py`` with a Reno-like :class:`vegaslab.Controller`
subclass, a ``scenario.toml`` that runs it beside the native Reno on a lossy dumbbell (with a
``[sweep]`` over the bottleneck's buffer), and ``test_NAME.py``, its tests. ``--bpf``: the same as
a BPF struct_ops object (:mod:`.new_cc_bpf`), compiled with clang once its files are written.
"""

from __future__ import annotations

import keyword
import re
import shlex
from pathlib import Path
from string import Template

from . import new_cc_bpf
from .console import console
from .new_cc_scenario import scenario
from .options import FORMATTER, wrap

CONTROLLER = Template('''\
"""$cls: a congestion control to try out, written against vegaslab.Controller.

It starts as Reno (RFC 5681) as ns-2's Agent/TCP/Reno has it: +1 packet per ACK in slow start,
+1/cwnd per ACK in congestion avoidance, and the window halved on a loss. Change the hooks to
try your idea; docs/your-algorithm.md lists them and the Linux op each mirrors.
"""

import vegaslab


class $cls(vegaslab.Controller):
    def __init__(self):
        # One instance per connection; keep the algorithm's state here.
        self.losses = 0

    def cong_avoid(self, w, ack):
        """A new cumulative ACK outside loss recovery (Linux cong_avoid): grow the window."""
        if w.cwnd < w.ssthresh:
            w.cwnd += 1.0  # slow start
        else:
            w.cwnd += 1.0 / w.cwnd  # congestion avoidance: about +1 packet per RTT

    def ssthresh(self, w, loss):
        """A loss (Linux ssthresh): return (ssthresh, cwnd). Reno halves the window after a fast
        retransmit and restarts from one packet after a timeout."""
        self.losses += 1
        half = loss.window / 2.0
        cwnd = half if loss.kind == "fast_retransmit" else 1.0
        return max(int(half), 2), cwnd

    def variables(self):
        """Columns added to the flow's time series (monitor.cwnd)."""
        return {"losses": float(self.losses)}
''')

#: The scenario's comment: how to run it, from a directory where the module can be imported.
COMMENT = Template('''\
# $cls beside the native Reno on a 1.5 Mbit/s dumbbell with a 10-packet DropTail buffer.
# Run it from this directory, where $module.py can be imported:
#   PYTHONPATH=. vegaslab run scenario.toml
# and the sweep below over the buffer size and three seeds:
#   PYTHONPATH=. vegaslab sweep scenario.toml
''')

TEST = Template('''\
"""Tests of $cls: run with `PYTHONPATH=. python -m pytest test_$module.py` from this directory."""

from pathlib import Path

import vegaslab

SCENARIO = Path(__file__).with_name("scenario.toml")


def test_the_scenario_runs_and_both_flows_deliver_data():
    res = vegaslab.run(SCENARIO)
    flows = res.flows.set_index("flow")
    assert flows.loc["mine", "cc"] == "py:$module:$cls"
    assert (flows["goodput_bps"] > 0).all()


def test_a_loss_is_counted_in_the_time_series():
    res = vegaslab.run(SCENARIO)
    series = res.series_flows
    assert series[series["flow"] == "mine"]["losses"].max() >= 1


def test_as_generated_it_behaves_exactly_as_the_native_reno():
    # True of the skeleton, which is Reno; delete this test once your algorithm is your own.
    mine = vegaslab.run(SCENARIO, overrides={"flows[1].cc": "py:$module:$cls"}).flows
    reno = vegaslab.run(SCENARIO, overrides={"flows[0].cc": "reno"}).flows
    assert list(mine["goodput_bps"]) == list(reno["goodput_bps"])
''')

#: A module name: a Python identifier in lower case, digits and underscores.
NAME = re.compile(r"[a-z_][a-z0-9_]*")


def class_name(module: str) -> str:
    """``my_reno`` -> ``MyReno``."""
    return "".join(part[:1].upper() + part[1:] for part in module.split("_")) or "Controller"


def skeleton(module: str) -> dict[str, str]:
    """The files of a Python skeleton for ``module``, by name."""
    names = {"module": module, "cls": class_name(module)}
    return {f"{module}.py": CONTROLLER.substitute(names),
            "scenario.toml": scenario(COMMENT.substitute(names), f'"py:{module}:{names["cls"]}"', "{ window = 1000 }"),
            f"test_{module}.py": TEST.substitute(names)}


def add_parser(sub) -> None:
    """The ``new-cc`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "new-cc", formatter_class=FORMATTER,
        help="write a skeleton for your own congestion control (a Reno-like start, a scenario, tests)",
        description=wrap("--python writes NAME.py (a Reno-like vegaslab.Controller subclass), scenario.toml (it "
                         "beside the native Reno on a lossy dumbbell, with a sweep over the buffer) and "
                         "test_NAME.py into DIR (default: ./NAME). Python controllers are the slow path, for "
                         "trying an idea before writing it in Rust or BPF. --bpf writes NAME.bpf.c (Linux's Reno "
                         "as BPF struct_ops programs, for the simulator and the kernel alike), a Makefile, "
                         "scenario.toml (it beside the native Reno on Linux's stack) and test_NAME.py, then "
                         "compiles NAME.bpf.o with clang (docs/your-algorithm.md)."),
        epilog="""examples:
  vegaslab new-cc my_reno --python
  cd my_reno && PYTHONPATH=. vegaslab run scenario.toml
  vegaslab new-cc my_bpf_reno --bpf
  cd my_bpf_reno && vegaslab run scenario.toml""",
    )
    p.add_argument("name", metavar="NAME", help="the module name: lower case letters, digits and underscores "
                                                f"(--bpf: at most {new_cc_bpf.MAX_NAME}, Linux's limit)")
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--python", action="store_true", help="a Python controller (vegaslab.Controller)")
    kind.add_argument("--bpf", action="store_true", help="a BPF struct_ops object (NAME.bpf.c, built with clang)")
    p.add_argument("--out", metavar="DIR", help="the directory to write into (default: ./NAME); existing "
                                                "files are never replaced")
    p.set_defaults(func=cmd_new_cc)


def name_refusal(name: str, bpf: bool) -> str | None:
    """Why ``name`` cannot name the skeleton, or None."""
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        return (f"must be a Python module name in lower case (letters, digits, underscores, not starting with a "
                f"digit), got {name!r}")
    return new_cc_bpf.refusal(name) if bpf else None


def cmd_new_cc(args) -> int:
    refused = name_refusal(args.name, args.bpf)
    if refused:
        console.error(f"vegaslab: new-cc NAME: {refused}")
        return 2
    out = Path(args.out if args.out is not None else args.name)
    files = new_cc_bpf.skeleton(args.name) if args.bpf else skeleton(args.name)
    taken = [str(out / name) for name in files if (out / name).exists()]
    if taken:
        console.error(f"vegaslab: {taken[0]}: exists; new-cc never replaces a file (choose another --out)")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        console.detail(f"wrote {out / name}")
    if not args.bpf:
        console.result(f"{out}: {', '.join(files)}; run it with: cd {out} && PYTHONPATH=. vegaslab run scenario.toml")
        return 0
    unbuilt = new_cc_bpf.build(out, args.name)
    if unbuilt:
        console.error(f"vegaslab: new-cc: wrote {', '.join(files)} into {out}, but {unbuilt}")
        return 1
    console.detail(f"built {out / (args.name + '.bpf.o')}: {shlex.join(new_cc_bpf.clang_argv(args.name))}")
    console.result(f"{out}: {', '.join(files)}, {args.name}.bpf.o; run it with: cd {out} && vegaslab run scenario.toml")
    return 0
