#!/usr/bin/env bash
# `make demo`: the KVStore tutorial on worker-process devices, then every sample graph
# rendered to out/ with its parameter summary.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p out

echo "== The seed tutorial's KVStore code on the 'device' store (kvcli.mx) =="
python examples/seed_tutorial.py device
