"""``mx.kv``: the same module as :mod:`kvcli.mx.kvstore` (MXNet has both names)."""

from __future__ import annotations

import sys

from kvcli.mx import kvstore as _kvstore

sys.modules[__name__] = _kvstore
