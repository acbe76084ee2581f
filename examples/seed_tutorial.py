"""The seed tutorial's KVStore code, with only the import line changed to kvcli.mx.

Run: python examples/seed_tutorial.py [local|device]
"""
import sys

import kvcli.mx as mx
from kvcli.mx import nd

STORE_TYPE = sys.argv[1] if len(sys.argv) > 1 else "local"

kv = mx.kv.create(STORE_TYPE)
shape = (3, 3)
key = 3 # Using a single key for simplicity in this example

# 1. Initialization
print("1. Initialization")
kv.init(key, nd.ones(shape) * 2)
a = nd.zeros(shape)
kv.pull(key, out=a)
print(a.asnumpy())

# 2. Push (overwrite)
print("\n2. Push (overwrite)")
kv.push(key, nd.ones(shape) * 8)
kv.pull(key, out=a)
print(a.asnumpy())

# 3. Push from multiple sources (aggregation - sum by default)
print("\n3. Push from multiple sources (aggregation)")
# Re-initialize for clarity of aggregation, or ensure previous value is known.
kv.init(key, nd.zeros(shape)) # Initialize to zeros
num_devices = 4
contexts = [mx.cpu(i) for i in range(num_devices)]
arrays_to_push = [nd.ones(shape, ctx=c) for c in contexts]
kv.push(key, arrays_to_push)
kv.pull(key, out=a)
print(a.asnumpy())

# 4. Custom Updater
print("\n4. Custom Updater")
def custom_updater_example(key_id, input_value, stored_value):
    print(f"Updater logic: key {key_id}, input shape {input_value.shape}, stored shape {stored_value.shape}")
    stored_value[:] += input_value * 2 # Modify stored_value in-place

kv.set_updater(custom_updater_example)
# 'a' currently holds [[4., 4., 4.]] from the previous step.
kv.push(key, nd.ones(shape)) # input_value is ones(shape)
# Updater: stored_value (4) becomes 4 + (1*2) = 6
kv.pull(key, out=a)
print(a.asnumpy())

# 5. Pull to multiple devices
print("\n5. Pull to multiple devices")
b_list = [nd.zeros(shape, ctx=c) for c in contexts]
kv.pull(key, out=b_list)
print(b_list[1].asnumpy()) # Value on one of the devices

# Handling multiple key-value pairs: a single device
keys = [5, 7, 9]
shape = (2,2) # Using a different shape for variety

# Initialize multiple keys
kv.init(keys, [nd.ones(shape) for _ in keys])
# If using the custom_updater (stored += input * 2):
# init_val = 1. pushed_val = 1. result = 1 + 1*2 = 3.
kv.push(keys, [nd.ones(shape) for _ in keys])

outputs_list = [nd.zeros(shape) for _ in keys]
kv.pull(keys, out=outputs_list)

print("\nValue for one of the keys (e.g., key 7) after multi-key operations:")
print(outputs_list[1].asnumpy()) # Corresponds to key 7

# Multiple devices
keys = [10, 11, 12] # New set of keys
shape = (2,2)
num_devices = 2
contexts = [mx.cpu(i) for i in range(num_devices)]

# Initialize keys
kv.init(keys, [nd.ones(shape) * 0.5 for _ in keys]) # Initial value 0.5

# For key 10: dev0 pushes 1, dev1 pushes 1. Aggregated input = 2.
# Stored = 0.5. New_stored = 0.5 + 2*2 = 4.5
data_to_push_multi_device = []
for _ in keys:
    key_data_from_devices = [nd.ones(shape, ctx=c) for c in contexts]
    data_to_push_multi_device.append(key_data_from_devices)

kv.push(keys, data_to_push_multi_device)

pulled_data_multi_device = [[nd.zeros(shape, ctx=c) for c in contexts] for _ in keys]
kv.pull(keys, out=pulled_data_multi_device)

print("\nValue for one key (e.g., key 11) on one device (e.g., device 1) after multi-device push:")
print(pulled_data_multi_device[1][1].asnumpy()) # Data for key 11, on context 1
