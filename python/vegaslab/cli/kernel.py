"""``vegaslab kernel``: register, list and unregister the BPF congestion controls (root).
"""

from __future__ import annotations

from .console import console
from .options import FORMATTER, wrap


def add_parser(sub) -> None:
    """The ``kernel`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "kernel", formatter_class=FORMATTER,
        help="register, list and unregister the BPF congestion controls in this kernel (root)",
        description=wrap("The kernel versions of the simulator's Linux flavour (Vegas, Vegas-A, AdaVegas, "
                    "Vegas_1, Vegas_8) as BPF struct_ops congestion controls named vl_*. Parameters take "
                    "the names of a scenario's params table and are checked by the same reader. Needs "
                    "root, the kernel's BTF, clang and bpftool (scripts/install-bpf.sh)."),
        epilog="""examples:
  sudo vegaslab kernel register vegas-a --set alpha=2 --set beta=4
  sudo vegaslab kernel list
  sudo vegaslab kernel unregister vl_vegas_a""",
    )
    ksub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    k = ksub.add_parser("register", help="register (or replace) one algorithm")
    k.add_argument("cc", choices=sorted(_kernel_algorithms()), help="the scenario's cc name")
    k.add_argument("--set", dest="params", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter as in the scenario's params table, e.g. --set alpha=2")
    k.set_defaults(func=cmd_kernel_register)
    k = ksub.add_parser("list", help="the registered struct_ops congestion controls")
    k.set_defaults(func=cmd_kernel_list)
    k = ksub.add_parser("unregister", help="unregister one by its kernel name (vl_...)")
    k.add_argument("name")
    k.set_defaults(func=cmd_kernel_unregister)


def _kernel_algorithms():
    from ..kernel import ALGORITHMS

    return ALGORITHMS


def _param_value(text: str):
    """A --set value: an integer, a number, or else the string itself."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def cmd_kernel_register(args) -> int:
    from .. import kernel

    params = {}
    for item in args.params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise kernel.KernelError(f"--set: expected KEY=VALUE, got {item!r}")
        params[key.strip()] = _param_value(value.strip())
    console.result(str(kernel.register(args.cc, **params)))
    return 0


def cmd_kernel_list(args) -> int:
    from .. import kernel

    for name in kernel.registered():
        console.result(name)
    return 0


def cmd_kernel_unregister(args) -> int:
    from .. import kernel

    kernel.unregister(args.name)
    return 0
