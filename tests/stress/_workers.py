"""Process bodies of the concurrency stress test (importable by ``spawn`` children).

Each function reports through files in ``out`` rather than pipes, so the parent never
deadlocks on a full queue: ``<name>.err`` holds a traceback, ``<name>.npy`` a reader's
observations (one row per pull: min, max of the pulled array).
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any


def _report_failure(out: str, name: str) -> None:
    Path(out, f"{name}.err").write_text(traceback.format_exc())
    raise SystemExit(1)


def writer(home: str, out: str, name: str, key: str, size: int, pushes: int, start: Any) -> None:
    """``pushes`` pushes of ones(size) to ``key``, one Session kept open (like the shell)."""
    try:
        import numpy as np

        from kvcli.session import Session

        ones = np.ones(size, np.float32)
        start.wait(60)
        with Session("default", home) as session:
            for _ in range(pushes):
                session.push([key], [ones])
    except BaseException:
        _report_failure(out, name)


def reader(home: str, out: str, name: str, key: str, start: Any, stop: Any, fresh: bool) -> None:
    """Pull ``key`` until ``stop`` is set, then once more; ``fresh`` opens a new Session per pull
    (like one-shot commands), otherwise one Session is kept (like the shell)."""
    try:
        import numpy as np

        from kvcli.session import Session

        rows = []
        kept = None if fresh else Session("default", home)
        start.wait(60)

        def pull() -> None:
            session = Session("default", home) if fresh else kept
            try:
                [[array]] = session.pull([key])
            finally:
                if fresh:
                    session.close()
            rows.append((float(array.min()), float(array.max())))

        while not stop.is_set():
            pull()
        pull()  # after every writer finished: the final value
        if kept is not None:
            kept.close()
        np.save(Path(out, f"{name}.npy"), np.array(rows, dtype=np.float64).reshape(-1, 2))
    except BaseException:
        _report_failure(out, name)
