#!/usr/bin/env bash
# The wheel as a user gets it: build the release wheel with
# maturin, check its tag and contents, install it into a fresh venv in an environment with no
# Rust toolchain (PATH=/usr/bin:/bin, nothing else inherited but pip's settings), and run it
# from a directory outside the checkout: `vegaslab --version`, `vegaslab reproduce va-reroute`
# (its report's index.html) and a documentation file read from the installed package.
#
# Exit status 0 when every step passed; otherwise 1, with the failed step, its command and the
# end of its log. `make wheel-check` runs it, and `make test` runs that.
#
# Environment: PYTHON (default python3): the interpreter the venvs are made from (its base
# interpreter when it is a venv's). CHECK_WHEEL_KEEP=1 keeps the temporary directory.
#
# The build shares the checkout's target/ with `make setup`'s editable install (the same
# release profile), so only the bindings crate and the final link are redone (about a minute
# on 2 cores); from a clean target/ it is the full release build, a few minutes.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vegaslab-check-wheel.XXXXXX")
T0=$(date +%s.%N)
STEP=""

say() { printf 'check-wheel: %s\n' "$*"; }
fail() {
    printf '\ncheck-wheel: FAILED%s: %s\n' "${STEP:+ at \"$STEP\"}" "$*" >&2
    FAILED_REPORTED=1
    exit 1
}
# On failure the temporary directory (logs, wheel, venv) is kept and named.
cleanup() {
    local status=$?
    if [[ $status -ne 0 && -z "${FAILED_REPORTED:-}" ]]; then
        printf '\ncheck-wheel: FAILED%s (exit status %s)\n' "${STEP:+ at \"$STEP\"}" "$status" >&2
    fi
    if [[ $status -ne 0 || "${CHECK_WHEEL_KEEP:-0}" == 1 ]]; then
        printf 'check-wheel: files kept in %s\n' "$WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# run NAME CMD...: one step, its output in $WORK/logs/NAME.log; on failure the end of the log.
run() {
    STEP=$1; shift
    local log="$WORK/logs/$STEP.log" t
    t=$(date +%s.%N)
    if ! "$@" >"$log" 2>&1; then
        printf '\ncheck-wheel: FAILED at "%s": %s\n--- last lines of %s ---\n' "$STEP" "$*" "$log" >&2
        tail -n 40 "$log" >&2
        FAILED_REPORTED=1
        exit 1
    fi
    say "$STEP: ok ($(elapsed "$t") s)"
}
mkdir -p "$WORK/logs"

# --------------------------------------------------------------------------- the interpreter
PYTHON=${PYTHON:-python3}
BASE_PY=$("$PYTHON" -c 'import sys; print(getattr(sys, "_base_executable", None) or sys.executable)') \
    || fail "cannot run $PYTHON"
[[ -x "$BASE_PY" ]] || fail "the interpreter $BASE_PY is not an executable file"
# The version's one owner is the Cargo workspace (pyproject.toml declares it dynamic).
VERSION=$("$BASE_PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' "$ROOT/Cargo.toml")
MATURIN_REQ=$("$BASE_PY" -c 'import sys, tomllib; print(*[r for r in tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"] if r.startswith("maturin")])' "$ROOT/pyproject.toml")
POLICY=$("$BASE_PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["tool"]["maturin"]["compatibility"])' "$ROOT/pyproject.toml")
say "vegaslab $VERSION, $MATURIN_REQ, tag policy $POLICY, Python $BASE_PY; work dir $WORK"

# --------------------------------------------------------------------------- build
# maturin itself from PyPI, in a venv of its own (the project's build requirement, read above).
run "build tools" bash -c '"$1" -m venv "$2" && "$2/bin/python" -m pip install -q "$3"' _ \
    "$BASE_PY" "$WORK/build-venv" "$MATURIN_REQ"
# `maturin build`, not `pip wheel`: pip's PEP 517 build asks maturin for the native linux tag.
# The tag and the audit ("check") come from pyproject.toml's [tool.maturin].
T_BUILD=$(date +%s.%N)
run "wheel build" bash -c 'cd "$1" && nice "$2/bin/maturin" build --release --interpreter "$3" --out "$4"' _ \
    "$ROOT" "$WORK/build-venv" "$BASE_PY" "$WORK/dist"
BUILD_S=$(elapsed "$T_BUILD")

STEP="wheel contents"
shopt -s nullglob
wheels=("$WORK"/dist/*.whl)
[[ ${#wheels[@]} -eq 1 ]] || fail "expected one wheel in $WORK/dist, found ${#wheels[@]}"
WHEEL=${wheels[0]}
name=$(basename "$WHEEL")
[[ "$name" == vegaslab-"$VERSION"-*-"$POLICY"_x86_64.whl || "$name" == vegaslab-"$VERSION"-*-"$POLICY"_aarch64.whl ]] \
    || fail "wheel $name does not carry the $POLICY platform tag of pyproject.toml"
# What a user needs beside the code: the catalog with its studies and benchmark, the docs, the
# stub of the compiled core with py.typed, the license; and an extension without debug info.
"$BASE_PY" - "$WHEEL" "$WORK/so" <<'EOF' || fail "the wheel's contents are incomplete (above)"
import sys, zipfile
from pathlib import Path
wheel, out = sys.argv[1], Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    missing = [n for n in ("vegaslab/catalog_data/va-reroute.toml", "vegaslab/catalog_data/studies/va-buffer.toml",
                           "vegaslab/catalog_data/bench/grids-net2.toml", "vegaslab/docs/scenario-format.md",
                           "vegaslab/docs/catalog-format.md", "vegaslab/_core.pyi", "vegaslab/py.typed")
               if n not in names]
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        missing.append("*.dist-info/licenses/LICENSE")
    meta = next(z.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    for field in ("License-Expression: MIT", "License-File: LICENSE", "Description-Content-Type: text/markdown",
                  "Classifier: ", "Keywords: "):
        if field not in meta:
            missing.append(f"METADATA field {field.strip()}")
    sos = [n for n in names if n.startswith("vegaslab/_core") and n.endswith(".so")]
    if len(sos) != 1:
        missing.append(f"one vegaslab/_core*.so (found {sos})")
    else:
        out.mkdir(parents=True, exist_ok=True)
        (out / "_core.so").write_bytes(z.read(sos[0]))
        print(f"extension {sos[0]}: {z.getinfo(sos[0]).file_size} bytes")
for m in missing:
    print(f"missing from the wheel: {m}", file=sys.stderr)
sys.exit(1 if missing else 0)
EOF
if command -v readelf >/dev/null; then
    sections=$(readelf -S -W "$WORK/so/_core.so")
    if grep -q -E '\.debug_|\.symtab' <<<"$sections"; then
        fail "the wheel's extension has debug info or a symbol table: the release profile must build without them"
    fi
else
    say "readelf not found: the debug-info check of the extension is skipped"
fi
say "wheel: $name, $(stat -c %s "$WHEEL") bytes, extension $(stat -c %s "$WORK/so/_core.so") bytes, built in $BUILD_S s"

# --------------------------------------------------------------------------- a user without Rust
# Nothing inherited but pip's own settings (index, certificates, cache) and HOME: PATH holds
# the system directories only, where no cargo or rustc may be (rustup's live in ~/.cargo/bin).
clean_env=(env -i PATH=/usr/bin:/bin HOME="${HOME:-$WORK/home}" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}")
while IFS= read -r kv; do clean_env+=("$kv"); done < <(env | grep -E '^(PIP_[A-Z_]+|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE)=' || true)
VENV="$WORK/user-venv"
ELSEWHERE="$WORK/elsewhere"
mkdir -p "$ELSEWHERE"

STEP="no Rust"
for tool in cargo rustc rustup; do
    if found=$("${clean_env[@]}" bash -c "command -v $tool"); then
        fail "$tool is on the clean PATH ($found): this would not show an install without Rust"
    fi
done
say "no Rust: ok (cargo, rustc, rustup not found on PATH=/usr/bin:/bin)"

run "fresh venv" "${clean_env[@]}" "$BASE_PY" -m venv "$VENV"
# --only-binary: nothing may be compiled, the dependencies come as wheels from the index.
run "install" "${clean_env[@]}" "$VENV/bin/python" -m pip install -q --only-binary=:all: "$WHEEL"

in_elsewhere() { (cd "$ELSEWHERE" && "${clean_env[@]}" "$@"); }

STEP="vegaslab --version"
out=$(in_elsewhere "$VENV/bin/vegaslab" --version 2>&1) || fail "vegaslab --version exited non-zero: $out"
[[ "$out" == *"$VERSION"* ]] || fail "vegaslab --version printed \"$out\", not the version $VERSION"
say "vegaslab --version: ok ($out)"

STEP="installed package"
in_elsewhere "$VENV/bin/python" - "$VENV" "$ROOT" <<'EOF' || fail "the installed package is not self-contained (above)"
import importlib.resources, shutil, sys
from pathlib import Path
import vegaslab, vegaslab._core
venv, checkout = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
for what, path in (("vegaslab", vegaslab.__file__), ("vegaslab._core", vegaslab._core.__file__)):
    p = Path(path).resolve()
    if not p.is_relative_to(venv) or p.is_relative_to(checkout):
        sys.exit(f"{what} was imported from {p}, not from the fresh venv {venv}")
doc = importlib.resources.files("vegaslab") / "docs" / "scenario-format.md"
if not doc.is_file() or "flows" not in doc.read_text(encoding="utf-8"):
    sys.exit(f"docs/scenario-format.md is not readable from the installed package ({doc})")
for tool in ("cargo", "rustc"):
    if shutil.which(tool):
        sys.exit(f"{tool} is reachable from the installed package's environment: {shutil.which(tool)}")
print(f"package {Path(vegaslab.__file__).parent}, docs {doc}")
EOF
say "installed package: ok (imported from the venv, docs/scenario-format.md read from the package)"

# The full run: va-reroute's [meta.quick] shortens nothing (it takes seconds).
run "reproduce va-reroute" in_elsewhere "$VENV/bin/vegaslab" reproduce va-reroute --out "$ELSEWHERE/report"
STEP="report"
[[ -s "$ELSEWHERE/report/index.html" ]] || fail "vegaslab reproduce wrote no $ELSEWHERE/report/index.html"
grep -q "va-reroute" "$ELSEWHERE/report/index.html" || fail "the report's index.html does not mention va-reroute"
say "report: ok ($(stat -c %s "$ELSEWHERE/report/index.html") bytes of index.html)"

STEP=""
say "PASSED in $(elapsed "$T0") s (wheel build $BUILD_S s): $name"
