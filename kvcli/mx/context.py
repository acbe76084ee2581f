"""``mx.context``: ``cpu``, ``gpu``, ``Context``, ``current_context`` (see :mod:`kvcli.nd_context`)."""

from kvcli.nd_context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus

__all__ = ["Context", "cpu", "cpu_pinned", "current_context", "gpu", "num_gpus"]
