#!/usr/bin/env bash
# The seed tutorial's KVStore section, replayed with one-shot kvcli commands.
#
#   examples/seed.sh                                  # a 'local' store
#   examples/seed.sh --type device --num-devices 4    # 4 device processes
#
# Arguments are global options for the session's creation (kvcli reset). Each step prints a
# header and the pulled value; the values are 2, 8, 4, 6, 6, 3 and 4.5, as in the tutorial.
# Set KVCLI to the kvcli to run, SEED_SESSION to the session name (default: seed).
set -euo pipefail
KVCLI=${KVCLI:-kvcli}
kv() { "$KVCLI" --session "${SEED_SESSION:-seed}" "$@"; }

kv "$@" reset --yes  # a script: no question (the session starts over)

echo "1. Initialization"
kv init 3 'ones(3,3)*2'
kv pull 3

echo "2. Push (overwrite)"
kv push 3 'ones(3,3)*8'
kv pull 3

echo "3. Push from multiple sources (aggregation)"
kv init 3 'zeros(3,3)' --yes            # re-initialise to see the sum clearly (a script says --yes)
kv push 3 'ones(3,3)' --devices 4       # four devices push ones: summed to 4
kv pull 3

echo "4. Custom Updater"
kv set-updater scale-add:2              # stored += input * 2
kv push 3 'ones(3,3)'                   # 4 + 1*2 = 6
kv pull 3

echo "5. Pull to multiple devices"
kv pull 3 --devices 4

echo "6. Multiple keys, one device"
kv init 5,7,9 'ones(2,2)'
kv push 5,7,9 'ones(2,2)'               # the updater runs once per key: 1 + 1*2 = 3
kv pull 7

echo "7. Multiple keys, multiple devices"
kv init 10,11,12 'ones(2,2)*0.5'
kv push 10,11,12 'ones(2,2)' --devices 2   # per key: 1+1 = 2, then 0.5 + 2*2 = 4.5
kv pull 11 --devices 2
