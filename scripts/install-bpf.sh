#!/usr/bin/env bash
# Install what vegaslab's BPF congestion controls need (kernel/): clang and llvm (BPF
# compiler), libbpf-dev (loader library and BPF headers), bpftool (vmlinux.h, struct_ops
# listing and unregistering), zlib1g-dev (the decision-vector replay reads .csv.gz), xz-utils
# (unpacking Debian's linux-source package for the kernel selftests' objects, kernel/Makefile
# target selftests; apt-get and dpkg-deb come with Debian), and for the namespace testbed
# (python/vegaslab/testbed): iproute2 (ip, tc), ethtool (offloads off on the veths) and
# iputils-ping (the delay-line accuracy test).
# Idempotent: installs only what is missing; runs `apt-get update` only when a package is not
# known to apt yet. Needs root (or sudo) when it has to install.
set -euo pipefail

packages=()
command -v clang >/dev/null 2>&1 || packages+=(clang)
command -v llvm-strip >/dev/null 2>&1 || command -v llvm-strip-14 >/dev/null 2>&1 || packages+=(llvm)
command -v bpftool >/dev/null 2>&1 || packages+=(bpftool)
[ -f /usr/include/bpf/libbpf.h ] || packages+=(libbpf-dev)
[ -f /usr/include/zlib.h ] || packages+=(zlib1g-dev)
command -v xz >/dev/null 2>&1 || packages+=(xz-utils)
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || packages+=(iproute2)
command -v ethtool >/dev/null 2>&1 || packages+=(ethtool)
command -v ping >/dev/null 2>&1 || packages+=(iputils-ping)

# kernel/Makefile's selftests target downloads this package (`apt-get download`, no install):
# apt must know it.
source_package=linux-source-6.12
apt-cache show "$source_package" >/dev/null 2>&1 && source_known=1 || source_known=0

if [ ${#packages[@]} -eq 0 ] && [ "$source_known" -eq 1 ]; then
    echo "BPF toolchain and testbed tools already installed: $(command -v clang), $(command -v bpftool)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-bpf.sh: need root or sudo to install ${packages[*]} (or to let apt know $source_package)" >&2; exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
if [ "$source_known" -eq 0 ]; then
    $SUDO apt-get update
    if [ ${#packages[@]} -eq 0 ]; then exit 0; fi
fi

for p in "${packages[@]}"; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then $SUDO apt-get update; break; fi
done
$SUDO apt-get install -y "${packages[@]}"
echo "installed: ${packages[*]}"
