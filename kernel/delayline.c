// vl-delayline: propagation delay for vegaslab's namespace testbed.
//
// The kernel here has no netem, so the testbed routes every packet that crosses its router
// namespace into a TUN device; this program reads each IPv4 packet from the TUN, holds it for
// the delay of its (source, destination) address pair and writes it back to the same TUN when
// it is due, from where the router's main table sends it on to the bottleneck.
//
//   vl-delayline --dev TUN [--pair SRC,DST,DELAY_NS]... [--default-delay NS]
//                [--change AT_NS,SRC,DST,DELAY_NS]... [--pool-packets N] [--ready-fd N]
//                [--parent-pid PID]
//
// Decisions, and why:
// - One FIFO per address pair (and one for packets that match no rule): packets of a pair are
//   never reordered, and a packet is released no earlier than the one ahead of it in its FIFO,
//   so a delay decrease bunches packets instead of reordering them (like a shortened path
//   that drains the longer one first). Packets already held keep their release time when a
//   delay changes.
// - Timing: CLOCK_MONOTONIC, ppoll with nanosecond timeouts, a timer slack of 1 ns and
//   SCHED_FIFO (refused -> a warning; the delay is then less precise, not wrong).
//   A packet usually leaves about 40 us after its time; what breaks 0.1 ms of RTT spread are
//   single stalls of 1-10 ms that no user-space design here avoids (the kernel is not
//   preemptible, the host deschedules the VM, softirq work runs on our CPU), so the program
//   stays single-threaded and does not busy-wait
//   (docs/performance.md, "The testbed's delay line"). The counters line says how many
//   packets left more than 1 ms late, and the worst, so a run hit by a stall can be
//   recognized.
// - Delay changes take effect at packet arrival: a packet that arrives at or after AT_NS (time
//   since the start, printed in the ready line) gets the new delay. No timer is needed since a
//   change only concerns packets not yet held.
// - Bounded memory: a fixed pool of packet slots (default sized for 500 Mbit/s held for 1 s);
//   running out is an error (exit 1) with a message, not a silent drop, because a silently
//   lossy delay line would corrupt every experiment on top of it.
// - Signals are blocked except inside ppoll, so SIGTERM/SIGINT end the loop between packets
//   and the program exits 0 after a line of counters on stderr.
// - It ends with the process that started it (--parent-pid, the testbed's own pid): a parent-death
//   signal (PR_SET_PDEATHSIG, prctl(2)) sends it SIGTERM when that process ends, even by
//   SIGKILL, so a killed testbed leaves no delay line running. It is set here, after the last
//   execve (`ip netns exec` execs this program in the same process, whose parent stays the
//   testbed), because an execve of a set-user-ID program or one with file capabilities clears
//   it. prctl(2) ties it to the parent *thread*: the thread that started the program must live
//   as long as the delay line should (the testbed starts it from the thread that enters its
//   Network, which lives until the network is torn down). A parent that ended before the prctl
//   shows as getppid() naming another process; then the program exits at once.
// - Ready: once the TUN is attached, "ready START_NS" (CLOCK_MONOTONIC nanoseconds of time 0
//   of the --change schedule) goes to stdout, and to --ready-fd N if given.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "vl-delayline"
// One slot holds one packet; a TUN whose MTU exceeds it is refused at start (no truncation).
#define SLOT_BYTES 2048u
#define MAX_RULES 1024u
#define NONE UINT32_MAX
// 500 Mbit/s held for 1 s in 1500-byte packets is 41 667; some margin on top.
#define DEFAULT_POOL 44000u

struct slot {
	uint64_t release_ns;
	uint32_t next;
	uint16_t len;
	unsigned char data[SLOT_BYTES];
};

struct fifo {
	uint32_t head, tail;
	uint64_t last_release_ns;  // release time of the packet at the tail (or last released)
};

struct rule {
	uint32_t src, dst;  // network byte order
	uint64_t delay_ns;
	struct fifo q;
};

struct change {
	uint64_t at_ns;
	uint32_t src, dst;
	uint64_t delay_ns;
};

static struct rule rules[MAX_RULES];
static uint32_t n_rules;
static struct fifo default_q = {NONE, NONE, 0};
static uint64_t default_delay_ns;
static struct change *changes;
static uint32_t n_changes, next_change;

static struct slot *pool;
static uint32_t pool_size, free_head, held, max_held;

static volatile sig_atomic_t stop_signal;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void on_signal(int sig) { stop_signal = sig; }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	if (*s == '-' || *s == '\0')
		die("%s: expected a non-negative integer, got \"%s\"", what, s);
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		die("%s: expected a non-negative integer, got \"%s\"", what, s);
	return v;
}

static uint32_t parse_ip(const char *s, const char *what)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1)
		die("%s: expected an IPv4 address, got \"%s\"", what, s);
	return a.s_addr;
}

// Split "a,b,c[,d]" into exactly n comma-separated fields (the string is modified).
static void split(char *s, char **out, int n, const char *opt, const char *form)
{
	int i = 0;
	for (;;) {
		if (i == n)
			die("%s: expected %s, got more fields", opt, form);
		out[i++] = s;
		char *comma = strchr(s, ',');
		if (!comma)
			break;
		*comma = '\0';
		s = comma + 1;
	}
	if (i != n)
		die("%s: expected %s, got fewer fields", opt, form);
}

static struct rule *find_rule(uint32_t src, uint32_t dst)
{
	for (uint32_t i = 0; i < n_rules; i++)
		if (rules[i].src == src && rules[i].dst == dst)
			return &rules[i];
	return NULL;
}

static struct rule *add_rule(uint32_t src, uint32_t dst, uint64_t delay_ns)
{
	if (n_rules == MAX_RULES)
		die("at most %u address pairs", MAX_RULES);
	struct rule *r = &rules[n_rules++];
	r->src = src;
	r->dst = dst;
	r->delay_ns = delay_ns;
	r->q = (struct fifo){NONE, NONE, 0};
	return r;
}

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: " PROG " --dev TUN [--pair SRC,DST,DELAY_NS]... [--default-delay NS]\n"
		"       [--change AT_NS,SRC,DST,DELAY_NS]... [--pool-packets N] [--ready-fd N]\n"
		"       [--parent-pid PID]\n");
	exit(2);
}

// SIGTERM when the thread that started this process ends (see the top of the file); exit 1 if
// the process `parent` has already ended.
static void end_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
		die("cannot ask for a parent-death signal: %s", strerror(errno));
	if (getppid() != parent)
		die("the process that started it (pid %d) has already ended", (int)parent);
}

static int open_tun(const char *name)
{
	// TUNSETIFF would create a missing device: insist on an existing one (the caller owns it).
	if (if_nametoindex(name) == 0)
		die("there is no network device %s (create it first: ip tuntap add mode tun name %s)", name, name);
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("cannot open /dev/net/tun: %s", strerror(errno));
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		die("cannot attach to the TUN device %s: %s", name, strerror(errno));
	// The slots hold SLOT_BYTES; a larger MTU would truncate packets.
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		memset(&ifr, 0, sizeof ifr);
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
		if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && (unsigned)ifr.ifr_mtu > SLOT_BYTES)
			die("%s has MTU %d; at most %u is supported", name, ifr.ifr_mtu, SLOT_BYTES);
		close(s);
	}
	return fd;
}

static void enqueue(struct fifo *q, uint32_t i, uint64_t release)
{
	// Never earlier than the packet ahead: no reordering within a pair.
	if (release < q->last_release_ns)
		release = q->last_release_ns;
	q->last_release_ns = release;
	pool[i].release_ns = release;
	pool[i].next = NONE;
	if (q->tail == NONE)
		q->head = i;
	else
		pool[q->tail].next = i;
	q->tail = i;
}

// Read every packet the TUN has now; each gets the delay of its pair at its arrival time.
static void drain_reads(int fd, uint64_t start)
{
	for (;;) {
		if (free_head == NONE) {
			static unsigned char scratch[SLOT_BYTES];
			ssize_t n = read(fd, scratch, sizeof scratch);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return;  // full, but nothing more has arrived yet
			die("the packet pool is full (%u packets held); more than --pool-packets are in "
			    "flight through the delay line: lower the rate or delay, or raise --pool-packets",
			    pool_size);
		}
		uint32_t i = free_head;
		ssize_t n = read(fd, pool[i].data, SLOT_BYTES);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("reading the TUN device failed: %s", strerror(errno));
		}
		if (n == 0)
			return;
		free_head = pool[i].next;
		pool[i].len = (uint16_t)n;
		held++;
		if (held > max_held)
			max_held = held;

		uint64_t t = now_ns();
		while (next_change < n_changes && start + changes[next_change].at_ns <= t) {
			struct change *c = &changes[next_change++];
			find_rule(c->src, c->dst)->delay_ns = c->delay_ns;
		}
		struct fifo *q = &default_q;
		uint64_t delay = default_delay_ns;
		const unsigned char *p = pool[i].data;
		if (n >= 20 && (p[0] >> 4) == 4) {
			uint32_t src, dst;
			memcpy(&src, p + 12, 4);
			memcpy(&dst, p + 16, 4);
			struct rule *r = find_rule(src, dst);
			if (r) {
				q = &r->q;
				delay = r->delay_ns;
			}
		}
		enqueue(q, i, t + delay);
	}
}

static uint64_t n_sent, n_write_errors;
// How late packets leave (write() start minus release time): the worst, and how many more than
// LATE_NS late. A run with late packets had a stretch without CPU for the delay line (header).
#define LATE_NS 1000000ull
static uint64_t worst_late_ns, n_late;

// Write the due packets at the head of q; returns the next release time in q (or UINT64_MAX).
static uint64_t release_due(int fd, struct fifo *q, uint64_t t)
{
	while (q->head != NONE) {
		uint32_t i = q->head;
		if (pool[i].release_ns > t)
			return pool[i].release_ns;
		uint64_t late = now_ns() - pool[i].release_ns;
		if (late > worst_late_ns)
			worst_late_ns = late;
		if (late > LATE_NS)
			n_late++;
		if (write(fd, pool[i].data, pool[i].len) == (ssize_t)pool[i].len)
			n_sent++;
		else
			n_write_errors++;  // the kernel refused it (e.g. no buffer): a drop, counted
		q->head = pool[i].next;
		if (q->head == NONE)
			q->tail = NONE;
		pool[i].next = free_head;
		free_head = i;
		held--;
	}
	return UINT64_MAX;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int ready_fd = -1;
	pid_t parent = 0;
	uint64_t pool_packets = DEFAULT_POOL;
	changes = calloc((size_t)argc, sizeof *changes);
	if (!changes)
		die("out of memory");

	// Pass 1: pairs and scalars; pass 2: changes (they may name pairs given later).
	for (int pass = 1; pass <= 2; pass++) {
		for (int a = 1; a < argc; a++) {
			const char *opt = argv[a];
			int known = !strcmp(opt, "--dev") || !strcmp(opt, "--pair") || !strcmp(opt, "--change") ||
				    !strcmp(opt, "--default-delay") || !strcmp(opt, "--ready-fd") ||
				    !strcmp(opt, "--pool-packets") || !strcmp(opt, "--parent-pid");
			if (!known) {
				if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
					usage();
				die("unknown option %s", opt);
			}
			if (a + 1 >= argc)
				die("%s needs a value", opt);
			char *val = argv[++a];
			char buf[256], *f[4];
			if (pass == 1 && !strcmp(opt, "--dev")) {
				if (strlen(val) >= IFNAMSIZ)
					die("--dev: interface names have at most %d characters", IFNAMSIZ - 1);
				dev = val;
			} else if (pass == 1 && !strcmp(opt, "--default-delay")) {
				default_delay_ns = parse_u64(val, "--default-delay");
			} else if (pass == 1 && !strcmp(opt, "--ready-fd")) {
				ready_fd = (int)parse_u64(val, "--ready-fd");
			} else if (pass == 1 && !strcmp(opt, "--parent-pid")) {
				uint64_t pid = parse_u64(val, "--parent-pid");
				if (pid < 1 || pid > INT32_MAX)
					die("--parent-pid: must be a process id from 1 to %d, got %s", INT32_MAX, val);
				parent = (pid_t)pid;
			} else if (pass == 1 && !strcmp(opt, "--pool-packets")) {
				pool_packets = parse_u64(val, "--pool-packets");
				if (pool_packets < 1 || pool_packets > 10000000)
					die("--pool-packets: must be between 1 and 10000000, got %s", val);
			} else if (pass == 1 && !strcmp(opt, "--pair")) {
				snprintf(buf, sizeof buf, "%s", val);
				split(buf, f, 3, "--pair", "SRC,DST,DELAY_NS");
				uint32_t s = parse_ip(f[0], "--pair SRC"), d = parse_ip(f[1], "--pair DST");
				if (find_rule(s, d))
					die("--pair %s,%s is given twice", f[0], f[1]);
				add_rule(s, d, parse_u64(f[2], "--pair DELAY_NS"));
			} else if (pass == 2 && !strcmp(opt, "--change")) {
				snprintf(buf, sizeof buf, "%s", val);
				split(buf, f, 4, "--change", "AT_NS,SRC,DST,DELAY_NS");
				struct change *c = &changes[n_changes++];
				c->at_ns = parse_u64(f[0], "--change AT_NS");
				c->src = parse_ip(f[1], "--change SRC");
				c->dst = parse_ip(f[2], "--change DST");
				c->delay_ns = parse_u64(f[3], "--change DELAY_NS");
				// A change for a pair without a rule starts it at the default delay.
				if (!find_rule(c->src, c->dst))
					add_rule(c->src, c->dst, default_delay_ns);
			}
		}
	}
	if (!dev)
		usage();
	if (parent)
		end_with_parent(parent);
	qsort(changes, n_changes, sizeof *changes, cmp_change);

	pool_size = (uint32_t)pool_packets;
	pool = malloc((size_t)pool_size * sizeof *pool);  // pages are committed as they are used
	if (!pool)
		die("cannot allocate a pool of %u packets", pool_size);
	for (uint32_t i = 0; i < pool_size; i++)
		pool[i].next = i + 1 < pool_size ? i + 1 : NONE;
	free_head = 0;

	int fd = open_tun(dev);

	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) != 0)
		fprintf(stderr, PROG ": warning: cannot set the timer slack: %s\n", strerror(errno));
	struct sched_param sp = {.sched_priority = 10};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		fprintf(stderr, PROG ": warning: SCHED_FIFO refused (%s); delays will jitter more\n",
			strerror(errno));

	// Signals are delivered only inside ppoll (the mask it installs), never mid-packet.
	sigset_t blocked, during_poll;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigprocmask(SIG_BLOCK, &blocked, &during_poll);
	sigdelset(&during_poll, SIGTERM);
	sigdelset(&during_poll, SIGINT);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	uint64_t start = now_ns();
	char line[64];
	int len = snprintf(line, sizeof line, "ready %" PRIu64 "\n", start);
	if (ready_fd >= 0) {
		if (write(ready_fd, line, (size_t)len) != len)
			die("cannot write to --ready-fd %d: %s", ready_fd, strerror(errno));
		close(ready_fd);
	}
	fputs(line, stdout);
	fflush(stdout);

	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	while (!stop_signal) {
		uint64_t t = now_ns();
		uint64_t next = release_due(fd, &default_q, t);
		for (uint32_t r = 0; r < n_rules; r++) {
			uint64_t nr = release_due(fd, &rules[r].q, t);
			if (nr < next)
				next = nr;
		}
		struct timespec ts, *timeout = NULL;
		if (next != UINT64_MAX) {
			t = now_ns();
			uint64_t wait = next > t ? next - t : 0;
			ts.tv_sec = (time_t)(wait / 1000000000ull);
			ts.tv_nsec = (long)(wait % 1000000000ull);
			timeout = &ts;
		}
		int rc = ppoll(&pfd, 1, timeout, &during_poll);
		if (rc < 0 && errno != EINTR)
			die("ppoll failed: %s", strerror(errno));
		if (rc > 0) {
			if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
				die("the TUN device %s went away", dev);
			drain_reads(fd, start);
		}
	}
	fprintf(stderr, PROG ": stopped by signal %d: %" PRIu64 " packets forwarded, %" PRIu64
		" refused by the kernel, %u still held, at most %u held, %" PRIu64 " more than 1 ms late"
		" (worst %" PRIu64 " us late)\n",
		(int)stop_signal, n_sent, n_write_errors, held, max_held, n_late, worst_late_ns / 1000);
	return 0;
}
