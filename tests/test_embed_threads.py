"""The sentence encoder runs on one BLAS thread unless the user chose a number: its matrices
are a few sentences wide, and OpenBLAS's other threads only spent CPU waiting for work (issue
21: the embedder was most of the local engine's CPU time per note)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = ("import os, sys; from remelink.models.local import embed; embed._one_blas_thread(); "
          "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)")


def _probe(env: dict[str, str], before: str = "") -> str:
    done = subprocess.run([sys.executable, "-c", before + _PROBE], env=env, capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize(("chosen", "expected"), [(None, "1 False"), ("4", "4 False")])
def test_one_blas_thread_unless_the_user_chose(chosen: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    if chosen is not None:
        env["OPENBLAS_NUM_THREADS"] = chosen
    assert _probe(env) == expected


def test_numpy_already_loaded_is_left_as_it_is() -> None:
    # OpenBLAS reads the variable once, when numpy loads it: set later, it would only mislead.
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    pytest.importorskip("numpy")
    assert _probe(env, "import numpy; ") == "None True"
