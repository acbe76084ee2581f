#!/usr/bin/env bash
# `make demo`: the main job on the built-in samples.
#   1. the seed tutorial's KVStore code (kvcli.mx) on worker-process devices;
#   2. the same tutorial as one-shot shell commands on a persistent session;
#   3. every graph in sample_graphs/ drawn to out/NAME.svg, with its parameter summary.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p out
export KVCLI_HOME="${KVCLI_HOME:-$PWD/out/sessions}"

echo "== 1. The seed tutorial's KVStore code on the 'device' store (4 worker processes) =="
python examples/seed_tutorial.py device

echo
echo "== 2. The same tutorial with one-shot commands (examples/seed.sh, session in $KVCLI_HOME) =="
SEED_SESSION=demo bash examples/seed.sh --type device --num-devices 4

echo
echo "== 3. Sample graphs: drawn to out/*.svg, summarised =="
for graph in sample_graphs/*.json; do
  name=$(basename "$graph" .json)
  kvcli viz "$graph" -o "out/$name.svg" --title "$name" --yes  # a second run redraws them
  kvcli summary "$graph"
done
echo
echo "Open out/*.svg to see the graphs."
