"""``vegaslab new-cc NAME --bpf``: a skeleton for your own congestion control as a BPF struct_ops
object, the one object that vegaslab's simulator (``cc = { bpf = "NAME.bpf.o" }``) and Linux
(``bpftool struct_ops register``) both load (docs/your-algorithm.md, "7. In BPF: the skeleton").

The files: ``NAME.bpf.c`` (Linux's Reno as struct_ops programs, compiled by clang alone: the few
kernel structs it reads are declared in it for CO-RE, no vmlinux.h and no kernel header), a
``Makefile`` (the object; ``register``/``unregister`` in the running kernel), ``scenario.toml``
(it beside the native Reno on Linux's stack, with a sweep) and ``test_NAME.py``. :func:`build`
compiles the object with :data:`CLANG_ARGS`, the one clang line the Makefile, the scenario's
comment and the tests also use.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path
from string import Template

from .new_cc_scenario import scenario

#: clang's arguments for a struct_ops object: BPF target, optimised (the verifier needs it),
#: with BTF (-g: CO-RE relocations and the struct_ops map's type live in it).
CLANG_ARGS = ("-O2", "-g", "-Wall", "-target", "bpf")

#: Linux keeps a congestion control's name in 16 bytes with the terminating NUL
#: (TCP_CA_NAME_MAX); a longer name is cut short when the object is registered.
MAX_NAME = 15

#: C's keywords (C11), which cannot name the struct_ops map variable.
C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
_Thread_local""".split())

#: What to install when clang is missing.
INSTALL_CLANG = "install clang (Debian and Ubuntu: apt-get install clang; macOS: the Xcode command line tools)"

PROGRAM = Template('''\
// SPDX-License-Identifier: GPL-2.0
/*
 * $name: a congestion control of your own, as BPF struct_ops programs. The same object runs in
 * vegaslab's simulator (cc = { bpf = "$name.bpf.o" } in a scenario) and in Linux
 * (bpftool struct_ops register $name.bpf.o, then the socket option TCP_CONGESTION "$name").
 *
 * It starts as Linux's Reno (net/ipv4/tcp_cong.c): slow start up to ssthresh, then about one
 * packet more per round trip (RFC 5681), the window halved on a loss, and the window from before
 * the loss back when the loss proves spurious. Change the hooks to try your idea;
 * docs/your-algorithm.md lists the hooks and the socket fields the simulator offers.
 *
 * Build it with make, or by hand:
 *   $clang
 * No vmlinux.h and no kernel header: the few kernel structs the programs read are declared here
 * with Linux's field names and types, and preserve_access_index makes each access a CO-RE
 * relocation, which the loader (libbpf for Linux, vegaslab for the simulator) points at the
 * field's place in the running kernel's socket (or the simulator's).
 */

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
/* A kernel function the programs call (a kfunc), found by its name when the object is loaded. */
#define __ksym __attribute__((section(".ksyms")))
#define __always_inline inline __attribute__((always_inline))

/* Linux's structs, with only the fields read here. */
struct sock;

struct inet_connection_sock {
	__u64 icsk_ca_priv[13]; /* the congestion control's private area, 104 bytes */
} __attribute__((preserve_access_index));

struct tcp_sock {
	__u32 snd_cwnd;         /* congestion window, packets */
	__u32 snd_ssthresh;     /* slow-start threshold, packets */
	__u32 prior_cwnd;       /* the window when the last reduction began */
	__u32 max_packets_out;  /* the most packets in flight in the last window */
	__u8 is_cwnd_limited:1; /* the last window was used up: cwnd, not the application, limited it */
} __attribute__((preserve_access_index));

struct ack_sample {
	__u32 pkts_acked;
	__s32 rtt_us; /* the ACK's round-trip time sample, µs; negative when it gave none */
	__u32 in_flight;
} __attribute__((preserve_access_index));

/* The hooks, named as in Linux's struct tcp_congestion_ops; a hook left out is Linux's default. */
struct tcp_congestion_ops {
	void (*init)(struct sock *sk);
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	__u32 (*undo_cwnd)(struct sock *sk);
	char name[16];
} __attribute__((preserve_access_index));

/* Linux's slow start and additive increase (net/ipv4/tcp_cong.c), which it offers as kfuncs. */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

/* A bitfield read relocated whole (its byte, size and bit position: CO-RE field info kinds 0, 1,
 * 4 and 5), since Linux may keep the bit elsewhere in its byte than this declaration does. */
#define READ_BITFIELD(s, field) ({                                                       \\
	__u64 v = 0;                                                                     \\
	const void *p = (const void *)(s) + __builtin_preserve_field_info((s)->field, 0); \\
	switch (__builtin_preserve_field_info((s)->field, 1)) {                          \\
	case 1: v = *(const __u8 *)p; break;                                             \\
	case 2: v = *(const unsigned short *)p; break;                                   \\
	case 4: v = *(const __u32 *)p; break;                                            \\
	case 8: v = *(const __u64 *)p; break;                                            \\
	}                                                                                \\
	v <<= __builtin_preserve_field_info((s)->field, 4);                              \\
	v >>= __builtin_preserve_field_info((s)->field, 5);                              \\
	v; })

/* This algorithm's state, one per connection, in the socket's private area. */
struct $name {
	__u32 losses;     /* window reductions so far */
	__u32 min_rtt_us; /* the smallest RTT sample, µs; 0 before the first */
};
_Static_assert(sizeof(struct $name) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "the state must fit in icsk_ca_priv");

static __always_inline struct $name *state(struct sock *sk)
{
	return (struct $name *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* Linux's tcp_is_cwnd_limited(): a window the sender used up may grow; in slow start also one
 * that is under twice what was in flight. */
static __always_inline int cwnd_limited(struct tcp_sock *tp)
{
	if (READ_BITFIELD(tp, is_cwnd_limited))
		return 1;
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

/* Each program gets the hook's arguments as an array of u64, in the hook's order. */

/* The connection starts. */
SEC("struct_ops/${name}_init")
void ${name}_init(__u64 *ctx)
{
	struct $name *ca = state((struct sock *)ctx[0]);

	ca->losses = 0;
	ca->min_rtt_us = 0;
}

/* An ACK that acknowledged data: its RTT sample. */
SEC("struct_ops/${name}_pkts_acked")
void ${name}_pkts_acked(__u64 *ctx)
{
	struct $name *ca = state((struct sock *)ctx[0]);
	const struct ack_sample *sample = (const struct ack_sample *)ctx[1];
	__s32 rtt_us = sample->rtt_us;

	if (rtt_us > 0 && (ca->min_rtt_us == 0 || (__u32)rtt_us < ca->min_rtt_us))
		ca->min_rtt_us = rtt_us;
}

/* A new cumulative ACK outside loss recovery, for `acked` packets: grow the window. */
SEC("struct_ops/${name}_cong_avoid")
void ${name}_cong_avoid(__u64 *ctx)
{
	struct tcp_sock *tp = (struct tcp_sock *)ctx[0];
	__u32 acked = ctx[2];

	if (!cwnd_limited(tp))
		return;
	if (tp->snd_cwnd < tp->snd_ssthresh) {
		acked = tcp_slow_start(tp, acked); /* +1 per packet acked, up to ssthresh */
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked); /* +1 per window's worth of packets acked */
}

/* A loss: the new slow-start threshold. Linux brings the window down to it in the recovery
 * (or restarts from one packet after a timeout). */
SEC("struct_ops/${name}_ssthresh")
__u32 ${name}_ssthresh(__u64 *ctx)
{
	struct tcp_sock *tp = (struct tcp_sock *)ctx[0];
	__u32 half = tp->snd_cwnd >> 1;

	state((struct sock *)ctx[0])->losses++;
	return half > 2 ? half : 2;
}

/* The loss was spurious: the window to go on with. */
SEC("struct_ops/${name}_undo_cwnd")
__u32 ${name}_undo_cwnd(__u64 *ctx)
{
	struct tcp_sock *tp = (struct tcp_sock *)ctx[0];

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

/* The congestion control as Linux registers it; its name has at most 15 characters. */
SEC(".struct_ops")
struct tcp_congestion_ops $name = {
	.init = (void *)${name}_init,
	.ssthresh = (void *)${name}_ssthresh,
	.cong_avoid = (void *)${name}_cong_avoid,
	.pkts_acked = (void *)${name}_pkts_acked,
	.undo_cwnd = (void *)${name}_undo_cwnd,
	.name = "$name",
};

/* Linux lets a congestion control call its kfuncs only under a GPL-compatible licence. */
char _license[] SEC("license") = "GPL";
''')

MAKEFILE = Template('''\
# $name.bpf.o, the struct_ops object that vegaslab's simulator and Linux both load.
#   make                  build it
#   sudo make register    register it in this machine's kernel as "$name" (bpftool)
#   sudo make unregister  and take it out again
CLANG ?= clang
BPFTOOL ?= bpftool

$name.bpf.o: $name.bpf.c
	@command -v $$(CLANG) >/dev/null || { echo "$$(CLANG) is not on PATH: $install" >&2; exit 1; }
	$$(CLANG) $flags -c $name.bpf.c -o $name.bpf.o

register: $name.bpf.o
	$$(BPFTOOL) struct_ops register $name.bpf.o

unregister:
	$$(BPFTOOL) struct_ops unregister name $name

clean:
	rm -f $name.bpf.o

.PHONY: register unregister clean
''')

COMMENT = Template('''\
# $name (a BPF struct_ops object) beside the native Reno, both on Linux's TCP stack, on a
# 1.5 Mbit/s dumbbell with a 10-packet DropTail buffer; packets as Linux sends them on a
# 1500-byte MTU. Build the object first (make, or the same line by hand):
#   $clang
# then, from this directory:
#   vegaslab run scenario.toml
#   vegaslab sweep scenario.toml                   # the sweep below: buffer sizes x three seeds
#   sudo vegaslab compare scenario.toml --kernel   # the same object in this machine's kernel
''')

#: Both flows on Linux's stack (the stack of a BPF flow), in Linux's packet sizes.
TCP = '{ stack = "linux", packet_size = 1448, header_bytes = 52 }'

TEST = Template('''\
"""Tests of $name: run with `python -m pytest test_$name.py` from this directory. They build
$name.bpf.o from $name.bpf.c first ($clang), so they test the source as it is."""

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import vegaslab

HERE = Path(__file__).parent
SCENARIO = HERE / "scenario.toml"
OBJECT = HERE / "$name.bpf.o"
CLANG = $clang_argv


@pytest.fixture(scope="module", autouse=True)
def built_object():
    if shutil.which(CLANG[0]) is None:
        pytest.fail("clang is not on PATH, so $name.bpf.o cannot be built: $install")
    built = subprocess.run(CLANG, cwd=HERE, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"clang failed on $name.bpf.c:\\n{built.stderr}")


def test_the_scenario_runs_and_both_flows_deliver_data():
    res = vegaslab.run(SCENARIO)
    flows = res.flows.set_index("flow")
    assert flows.loc["mine", "cc"] == "bpf:$name"
    assert (flows["goodput_bps"] > 0).all()


def test_a_loss_lowers_the_slow_start_threshold_below_the_window():
    res = vegaslab.run(SCENARIO)
    assert res.flows.set_index("flow").loc["mine", "fast_retransmits"] >= 1
    mine = res.series_flows[res.series_flows["flow"] == "mine"]
    assert mine["ssthresh_pkts"].min() < mine["cwnd_pkts"].max()


def test_as_generated_it_behaves_exactly_as_the_native_reno():
    # True of the skeleton, which is Linux's Reno; delete this test once your algorithm is your own.
    mine = vegaslab.run(SCENARIO, overrides={"flows[1].cc": {"bpf": OBJECT.name}}).flows
    reno = vegaslab.run(SCENARIO, overrides={"flows[0].cc": "reno"}).flows
    assert list(mine["goodput_bps"]) == list(reno["goodput_bps"])


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("bpftool") is None,
                    reason="registering a congestion control in Linux needs Linux, root and bpftool")
def test_linux_registers_it_and_a_connection_uses_it():
    bpftool = shutil.which("bpftool")
    if subprocess.run([bpftool, "struct_ops", "show", "name", "$name"], capture_output=True).returncode == 0:
        pytest.skip("$name is registered in this kernel already (sudo make unregister)")
    registered = subprocess.run([bpftool, "struct_ops", "register", str(OBJECT)], capture_output=True, text=True)
    assert registered.returncode == 0, registered.stderr
    try:
        assert _loopback_transfer(b"$name", 1 << 20) == (b"$name", 1 << 20)
    finally:
        subprocess.run([bpftool, "struct_ops", "unregister", "name", "$name"], capture_output=True)


def _loopback_transfer(cc, size):
    """Send ``size`` bytes over a loopback TCP connection whose sender uses ``cc``; return the
    congestion control the socket reports and the bytes the receiver got."""
    server = socket.create_server(("127.0.0.1", 0))
    received = []

    def sink():
        conn, _ = server.accept()
        with conn:
            received.append(sum(iter(lambda: len(conn.recv(1 << 16)), 0)))

    receiver = threading.Thread(target=sink)
    receiver.start()
    with server, socket.socket() as sender:
        sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc)
        sender.connect(server.getsockname())
        used = sender.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0")
        sender.sendall(b"x" * size)
        sender.shutdown(socket.SHUT_WR)
        receiver.join()
    return used, received[0]
''')


def refusal(name: str) -> str | None:
    """Why ``name`` (already a Python module name) cannot name a BPF congestion control, or
    None: Linux's length limit and C's keywords."""
    if len(name) > MAX_NAME:
        return f"a BPF congestion control's name has at most {MAX_NAME} characters (Linux's limit), got {name!r}"
    if name in C_KEYWORDS:
        return f"{name!r} is a C keyword, which cannot name the struct_ops map"
    return None


def clang_argv(name: str, clang: str = "clang") -> list[str]:
    """The command that compiles ``NAME.bpf.c`` into ``NAME.bpf.o`` in the skeleton's directory."""
    return [clang, *CLANG_ARGS, "-c", f"{name}.bpf.c", "-o", f"{name}.bpf.o"]


def skeleton(name: str) -> dict[str, str]:
    """The files of a BPF skeleton for ``name``, by file name."""
    argv = clang_argv(name)
    line = shlex.join(argv)
    return {
        f"{name}.bpf.c": PROGRAM.substitute(name=name, clang=line),
        "Makefile": MAKEFILE.substitute(name=name, flags=" ".join(CLANG_ARGS), install=INSTALL_CLANG),
        "scenario.toml": scenario(COMMENT.substitute(name=name, clang=line), f'{{ bpf = "{name}.bpf.o" }}', TCP),
        f"test_{name}.py": TEST.substitute(name=name, clang=line, clang_argv=repr(argv), install=INSTALL_CLANG),
    }


def build(directory: Path, name: str) -> str | None:
    """Compile ``directory/NAME.bpf.c`` into ``NAME.bpf.o`` with clang; None when it was built,
    else one sentence saying why not (clang missing, or clang's first error)."""
    clang = shutil.which("clang")
    if clang is None:
        return f"clang is not on PATH, so {directory / (name + '.bpf.o')} was not built: {INSTALL_CLANG}, then run make in {directory}"
    p = subprocess.run(clang_argv(name, clang), cwd=directory, capture_output=True, text=True)
    if p.returncode != 0:
        errors = [line for line in p.stderr.splitlines() if "error" in line] or p.stderr.splitlines() or [f"exit status {p.returncode}"]
        return f"clang could not build {directory / (name + '.bpf.o')}: {errors[0]}"
    return None
