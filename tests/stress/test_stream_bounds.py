"""Item 3 of issue 15 through the real binary: hostile streams end in one line, quickly.

A header claiming 2**40 float32 followed by /dev/zero on stdin was read until MemoryError
at 5.9 GB (a traceback); ``@fifo`` with no writer blocked forever.
"""

from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npy

from .conftest import KVCLI, assert_one_line_error, kvcli_env, run_kvcli

pytestmark = pytest.mark.slow


def test_stdin_header_claiming_2_to_the_40_then_dev_zero(home: Path, tmp_path: Path) -> None:
    header = io.BytesIO()
    npy.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)})
    (tmp_path / "header").write_bytes(header.getvalue())
    assert run_kvcli(home, "init", "w", "zeros(4)").returncode == 0
    started = time.monotonic()
    proc = subprocess.run(
        ["sh", "-c", f'cat "{tmp_path / "header"}" /dev/zero | "{KVCLI}" push w -'],
        capture_output=True, timeout=120, env=kvcli_env(home),
    )
    proc.stdout, proc.stderr = proc.stdout.decode(), proc.stderr.decode()
    assert_one_line_error(proc, "standard input", "1,099,511,627,776 elements", "more than the limit")
    assert time.monotonic() - started < 60


def test_fifo_without_a_writer_is_an_error_not_a_hang(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "value.npy"
    os.mkfifo(fifo)
    started = time.monotonic()
    proc = run_kvcli(home, "init", "w", f"@{fifo}", env={"KVCLI_STREAM_TIMEOUT": "1"}, timeout=60)
    assert_one_line_error(proc, str(fifo), "sent no data for 1 s")
    assert time.monotonic() - started < 30


def test_fifo_with_a_writer_loads(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "value.npy"
    os.mkfifo(fifo)
    value = np.arange(1 << 18, dtype=np.float32)
    writer = subprocess.Popen(["sh", "-c", f'cat > "{fifo}"'], stdin=subprocess.PIPE)
    payload = io.BytesIO()
    np.save(payload, value)
    proc = subprocess.Popen([str(KVCLI), "init", "w", f"@{fifo}"], env=kvcli_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer.communicate(payload.getvalue(), timeout=60)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    out = tmp_path / "out.npy"
    assert run_kvcli(home, "pull", "w", "-o", str(out)).returncode == 0
    assert np.array_equal(np.load(out), value)
