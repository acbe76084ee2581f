"""``mx.context``: ``cpu``, ``gpu``, ``Context``, ``current_context`` (see :mod:`kvcli.mx.ndarray.context`)."""

from kvcli.mx.ndarray.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus

__all__ = ["Context", "cpu", "cpu_pinned", "current_context", "gpu", "num_gpus"]
