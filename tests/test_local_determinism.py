"""The local engine decides the same way in every process (issue 21): Python orders sets of
strings by hashes that change per process (PYTHONHASHSEED), so nothing it decides may depend on
the order a set is walked in, not even a float sum's last bits (a cosine at a threshold linked a
node in one run and not in the next)."""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = r"""
from remelink.models.local import decide
a = decide.bag("How to mock httpx using pytest-mock: the httpx_mock fixture intercepts every "
               "request, and pytest --pdb stops at the failing assertion of the request body.")
b = decide.bag("A tip for debugging pytest-httpx: set a breakpoint in the callback, run pytest, "
               "and inspect the request object when every request is intercepted by httpx_mock.")
c = decide.bag("调试 pytest-httpx 的小技巧：在回调里设断点，运行 pytest，"
               "检查被 httpx_mock 拦截的 request。")
idf = decide.default_idf
print(repr(decide.cosine(a, b, idf)), repr(decide.coverage(a, b, idf)),
      repr(decide.cosine(b, c, idf)), repr(decide.coverage(c, b, idf)))
"""


def test_scores_are_the_same_bits_in_every_process() -> None:
    seen = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                             text=True, check=True).stdout
        seen.add(out)
    assert len(seen) == 1, seen
