"""``vegaslab testbed run``: a scenario with real TCP between network namespaces (root);
``vegaslab testbed envelope``: the highest bottleneck rate the testbed holds on this machine.
"""

from __future__ import annotations

from pathlib import Path

from .console import console
from .options import FORMATTER, add_set, add_stack, resolve_scenario, stack_of, wrap
from .run import say_written, show_and_write


def add_parser(sub) -> None:
    """The ``testbed`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "testbed", formatter_class=FORMATTER,
        help="run a scenario with real TCP between network namespaces (root)",
        description=wrap("Build the scenario's network from namespaces (sender, router, receiver), "
                    "shape its one shared bottleneck with htb + pfifo, delay every path with a TUN "
                    "delay line, run its TCP flows with the kernel's congestion controls (reno, "
                    "cubic, and vegaslab's BPF Vegas family in the Linux flavour), sample them every "
                    "10 ms and write the same tables as `vegaslab run`. Dumbbells and chains; other "
                    "shapes are refused with the reason."),
        epilog="""examples:
  sudo vegaslab testbed run va-reroute --set run.duration=30s --out out/tb-reroute
  sudo vegaslab testbed run examples/kernel/e-two-way.toml --no-capture
  sudo vegaslab testbed envelope --rates 10,20,50,100""",
    )
    tsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    t = tsub.add_parser("run", help="run one scenario on the testbed")
    t.add_argument("scenario", metavar="FILE.toml|ID")
    add_set(t)
    t.add_argument("--out", metavar="DIR", help="output directory (default: out/testbed-<scenario stem>)")
    add_stack(t)
    t.add_argument("--no-capture", dest="capture", action="store_false",
                   help="write no pcap of the bottleneck (by default DIR/bottleneck.pcap, headers only)")
    t.add_argument("--envelope", metavar="FILE",
                   help="the operating envelope to check the bottleneck's rate against (default: "
                        "out/testbed-envelope.json of the repository, or $VEGASLAB_TESTBED_ENVELOPE)")
    t.set_defaults(func=cmd_testbed_run)
    e = tsub.add_parser(
        "envelope", formatter_class=FORMATTER,
        help="measure the highest bottleneck rate the testbed holds on this machine (root; minutes)",
        description=wrap("Step upward through bottleneck rates, each a bulk load of four kernel cubic flows "
                         "(20 ms RTT, two bandwidth-delay products of buffer); a rate is held when the "
                         "carried rate is within 2% of it and the queue is empty in under 1% of the "
                         "samples. Writes the highest rate held, every step and the machine to a JSON "
                         "file that every testbed run checks its bottleneck against."))
    e.add_argument("--rates", metavar="MBPS,...", type=_rates,
                   help="rates to try, Mbit/s, comma-separated (default: 10,20,30,40,50,60,70,80,100,120,150,200,"
                        "250,300,400,500)")
    e.add_argument("--seconds", type=float, default=8.0, help="length of each step's load (default 8)")
    e.add_argument("--out", metavar="FILE", help="where to write the envelope (default: out/testbed-envelope.json "
                                                 "of the repository, or $VEGASLAB_TESTBED_ENVELOPE)")
    e.add_argument("--no-capture", dest="capture", action="store_false",
                   help="measure without the bottleneck capture that runs take by default")
    e.set_defaults(func=cmd_testbed_envelope)


def _rates(text: str) -> list[float]:
    import argparse

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected Mbit/s numbers separated by commas, got {text!r}") from None


def cmd_testbed_run(args) -> int:
    from ..outdir import check_output_dir, output_dir
    from ..testbed.run import run as testbed_run

    path = resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"testbed-{path.stem}"
    check_output_dir(out)
    with output_dir(out) as tmp:
        res = testbed_run(path, overrides=list(args.overrides), stack=stack_of(args), capture=args.capture,
                          capture_dir=tmp, envelope=args.envelope)
        written = show_and_write(res, tmp, out)
        if res.trace_path is not None:
            written.append(res.trace_path)
    say_written(written, out)
    return 0


def cmd_testbed_envelope(args) -> int:
    from ..testbed import envelope

    def progress(step):
        console.result(f"{step['rate_bps'] / 1e6:6g} Mbit/s: carried {step['carried_bps'] / 1e6:7.2f} "
                       f"({step['carried_ratio']:.3f}), queue empty in {100 * step['empty_fraction']:.1f}% of "
                       f"{step['queue_samples']} samples: {'held' if step['held'] else 'not held'}")

    doc = envelope.measure(args.rates or envelope.RATES_MBPS, seconds=args.seconds, capture=args.capture,
                           progress=progress)
    path = envelope.write(doc, Path(args.out) if args.out else envelope.DEFAULT_PATH)
    top = " (the highest rate tried)" if doc["held_rate_bps"] == doc["highest_rate_tried_bps"] else ""
    console.result(f"\nheld up to {doc['held_rate_bps'] / 1e6:g} Mbit/s{top} on {doc['machine']['hostname']}; "
                   f"wrote {path}")
    return 0
