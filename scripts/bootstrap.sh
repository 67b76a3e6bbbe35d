#!/usr/bin/env bash
# Sets up everything wafersim needs on a Debian/Ubuntu machine, then runs one job:
#   scripts/bootstrap.sh demo       build, install, run `wafersim demo`
#   scripts/bootstrap.sh test       build, install with test extras, run the test suite
#   scripts/bootstrap.sh sanitize   build with ASan+UBSan into a second venv, run the fast tests
# Safe to re-run: installed system packages and an existing venv are reused.
# WAFERSIM_TORCH=1 also installs PyTorch (the optional `torch` extra) so that the tests
# comparing with torch run instead of skipping; WAFERSIM_MPI_EXTRA=1 installs the `mpi` extra
# (mpi4py and MPICH's wheel, whose mpiexec lands in the venv) so that the tests that run
# `mpiexec -n 2` and `-n 3` run instead of skipping.
set -euo pipefail

job="${1:-demo}"
shift || true
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

# --- system packages (apt-get; as root directly, otherwise through sudo) -------------------
need=()
dpkg -s libxtensor-dev >/dev/null 2>&1 || need+=(libxtensor-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
python3 -c 'import sysconfig,os,sys; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"],"Python.h")) else 1)' \
  || need+=(python3-dev)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing system packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

# --- Python environment ----------------------------------------------------------------------
make_venv() {  # $1: venv dir
  if [ ! -x "$1/bin/python" ]; then
    python3 -m venv "$1"
    "$1/bin/python" -m pip install -q --upgrade pip
  fi
}

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

case "$job" in
  demo)
    make_venv .venv
    .venv/bin/python -m pip install -q .
    exec .venv/bin/wafersim demo "$@"
    ;;
  test)
    make_venv .venv
    if [ "${WAFERSIM_TORCH:-0}" = "1" ] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
      # the release the project is tested with first, else whatever the extra's range gives
      .venv/bin/python -m pip install -q "torch==2.13.0" 2>/dev/null \
        || .venv/bin/python -m pip install -q "torch>=2.0"
    fi
    extras="test"
    if [ "${WAFERSIM_MPI_EXTRA:-0}" = "1" ]; then extras="test,mpi"; fi
    .venv/bin/python -m pip install -q ".[$extras]" \
      --config-settings=cmake.define.WAFERSIM_WERROR=ON
    exec .venv/bin/python -m pytest -q "$@"
    ;;
  sanitize)
    make_venv .venv-sanitize
    .venv-sanitize/bin/python -m pip install -q ".[test]" \
      --config-settings=cmake.define.WAFERSIM_WERROR=ON --config-settings=cmake.define.WAFERSIM_SANITIZE=ON \
      --config-settings=build-dir=build/sanitize
    # Python itself is not instrumented: preload the runtime, ignore interpreter leaks.
    LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)" \
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      exec .venv-sanitize/bin/python -m pytest -q -p no:cacheprovider -m "not slow and not nosanitize" "$@"
    ;;
  *)
    echo "usage: scripts/bootstrap.sh demo|test|sanitize [args...]" >&2
    exit 2
    ;;
esac
