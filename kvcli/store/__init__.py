"""The KVStore engine: one :class:`~kvcli.store.api.KVStore` (MXNet's API and every check)
composed over a backend (:mod:`kvcli.store.backend`: ``local``, ``device``, Ray).

:data:`REGISTRY` is the one table of store types: every name a user may pass to
:func:`kvcli.create` (MXNet's names included), the backend class behind it, the options
it takes and the ones a session remembers. :func:`create`, the session and the
distributed backend all read it; :func:`register` adds a backend (the core twin of
MXNet's ``KVStoreBase.register``, which :mod:`kvcli.mx.kvstore` provides for MXNet-style
store classes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kvcli.store.registry import (
    DIST_OPTIONS,
    NAMES,
    REGISTRY,
    SESSION_OPTION_SPECS,
    UNAVAILABLE,
    OptionSpec,
    StoreType,
    check_options,
    known_names,
    register,
    resolve,
)

if TYPE_CHECKING:  # the registry stays numpy-free: the CLI's option table reads it at start-up
    from kvcli.store.api import KVStore


def __getattr__(name: str) -> Any:
    if name == "KVStore":  # imported on first use: it needs numpy
        from kvcli.store.api import KVStore

        return KVStore
    raise AttributeError(f"module 'kvcli.store' has no attribute {name!r}")


def create(
    type: str = "local",  # noqa: A002 - MXNet's name
    parse_updater: Callable[[str], Any] | None = None,
    **options: Any,
) -> KVStore:
    """Create a store of ``type`` (see :func:`kvcli.create`): the registry's backend, made
    with ``options``, composed into a :class:`~kvcli.store.api.KVStore`. ``store.type`` is
    ``type`` as given (lower case), e.g. ``"local_allreduce_cpu"``, as MXNet reports it;
    ``parse_updater`` turns spec strings given to ``set_updater`` into updaters (without
    it the store takes updater objects only)."""
    from kvcli.store.api import KVStore

    store_type = resolve(type)
    check_options(store_type, options)
    maker: Any = store_type.backend_class()  # each backend has its own constructor; the registry says which arguments
    backend = maker(store_type.name, **options) if store_type.takes_kind else maker(**options)
    return KVStore(backend, type.lower(), parse_updater=parse_updater, compression=store_type.compression)


__all__ = [
    "KVStore", "NAMES", "REGISTRY", "SESSION_OPTION_SPECS", "OptionSpec", "StoreType",
    "UNAVAILABLE", "check_options", "create", "register", "resolve", "DIST_OPTIONS", "known_names",
]
