#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` for the real-engine tests (tests/probes/real_engine), once,
# into a cache outside the checkout, and prints that cache's directory. A later run finds the
# stamp and prints the directory at once. The source is the `llama-cpp-python` source
# distribution from PyPI (it vendors llama.cpp), downloaded with pip: nothing else is fetched,
# and nothing of llama.cpp is ever committed here.
#
# The cache keeps, beside bin/llama-server (linked statically: no shared libraries to carry):
#   src/gguf-py            the gguf writer scripts/make_tiny_llama.py uses
#   src/models/ggml-vocab-*.gguf  vocabulary-only models (a real tokenizer for the tiny model)
#   src/models/templates   the chat templates (DeepSeek-R1-Distill answers in reasoning_content)
#   build.log, build-seconds  the build's output and how long it took
#
#   scripts/llama-server.sh            build if needed, print the cache directory
#   AVIA_ENGINE_CACHE=DIR              where the caches live (default ~/.cache/avia)
#   AVIA_BUILD_JOBS=N                  parallel compile jobs (default 2)
set -euo pipefail

version=0.3.36  # llama-cpp-python; vendors llama.cpp 0.5.0-dev (commit 0c1e570)
root=${AVIA_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/avia}
cache="$root/llama-server-$version"
stamp="$cache/.built"
python=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
[[ -x $python ]] || python=python3

if [[ -f $stamp ]]; then echo "$cache"; exit 0; fi

for tool in cmake g++ make; do
  command -v "$tool" >/dev/null || {
    echo "error: $tool is missing (scripts/system-deps.sh installs it)" >&2; exit 1; }
done

mkdir -p "$root"
# One build at a time: a second run waits for the first and then reuses its result.
exec 9>"$cache.lock"
if ! flock -n 9; then
  echo "llama-server: another run is building it; waiting ..." >&2
  flock 9
fi
if [[ -f $stamp ]]; then echo "$cache"; exit 0; fi

started=$(date +%s)
work="$cache.partial"
rm -rf "$work"
mkdir -p "$work/download"
echo "llama-server: building llama.cpp from llama-cpp-python $version (PyPI sdist) into $cache;" \
  "this takes 10-20 minutes once" >&2
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
  "llama-cpp-python==$version" -d "$work/download" >&2
sdist="$work/download/llama_cpp_python-$version.tar.gz"
[[ -f $sdist ]] || { echo "error: pip did not download $sdist" >&2; exit 1; }
tar -xzf "$sdist" -C "$work" "llama_cpp_python-$version/vendor/llama.cpp"
mv "$work/llama_cpp_python-$version/vendor/llama.cpp" "$work/src"
rm -rf "$work/download" "$work/llama_cpp_python-$version"

log="$work/build.log"
if ! {
  nice cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF &&
    nice cmake --build "$work/build" --config Release --target llama-server \
      -j "${AVIA_BUILD_JOBS:-2}"
} >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "error: building llama-server failed; the whole log is $log" >&2
  exit 1
fi
mkdir -p "$work/bin"
cp "$work/build/bin/llama-server" "$work/bin/llama-server"
"$work/bin/llama-server" --version >>"$log" 2>&1 || {
  tail -n 20 "$log" >&2; echo "error: the built llama-server does not run" >&2; exit 1; }
rm -rf "$work/build"  # the object files (hundreds of MB); the binary is self-contained
echo $(($(date +%s) - started)) >"$work/build-seconds"
rm -rf "$cache"
mv "$work" "$cache"
touch "$stamp"
echo "llama-server: built in $(cat "$cache/build-seconds") s" >&2
echo "$cache"
