"""The guide's broadcast / custom store / compression example (docs/kvstore.md) runs and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re

import kvcli.mx as mx

from .conftest import ROOT


def test_readme_kvstore_api_example_runs() -> None:
    text = (ROOT / "docs" / "kvstore.md").read_text()
    section = text.index("### Broadcast, custom stores, gradient compression")
    match = re.search(r"```python\n(.*?)```", text[section:], re.S)
    assert match, "the docs/kvstore.md section has no python example"
    saved = dict(mx.kv.KVStoreBase.kv_registry)
    printed = io.StringIO()
    namespace: dict = {}
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(match.group(1), "docs/kvstore.md", "exec"), namespace)  # noqa: S102 - our own guide
    finally:
        mx.kv.KVStoreBase.kv_registry.clear()
        mx.kv.KVStoreBase.kv_registry.update(saved)
    assert printed.getvalue().strip() == "[0.5 0.5 0.5 0.5]"
    assert [g.asnumpy().tolist() for g in namespace["grads"]] == [[[2.0, 2.0]] * 2] * 2
    assert [o.asnumpy().tolist() for o in namespace["outs"]] == [[[3.0, 3.0]] * 2] * 2
    assert type(namespace["mine"]).__name__ == "MyStore"
