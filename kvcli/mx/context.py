"""``mx.context``: ``cpu``, ``gpu``, ``Context``, ``current_context`` (see :mod:`kvcli.mx.ndarray.context`)."""

from kvcli.mx.ndarray.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from kvcli.mx.scope import guard as _scope_guard

__all__ = ["Context", "cpu", "cpu_pinned", "current_context", "gpu", "num_gpus"]


# MXNet names kvcli does not provide raise their scope error (kvcli/mx/scope_table.py)
__getattr__ = _scope_guard(__name__)
