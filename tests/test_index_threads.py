"""One NodeIndex shared by threads (`dream run` with `concurrency > 1`, tools called from
several units at once): searches, IDF look-ups and updates running at the same time never
raise and never see a half-updated index."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import VaultFactory

from remelink.config import Settings
from remelink.index import NodeIndex

SETTINGS = Settings()
WORDS = ["heron", "egret", "stork", "crane", "ibis", "bittern", "spoonbill", "flamingo"]


def node(i: int, extra: str = "") -> str:
    word = WORDS[i % len(WORDS)]
    return (f"---\nname: {word.title()} {i}\ndescription: About {word} number {i}.\n---\n"
            f"The {word} stands in shallow water. Shared words every node has. {extra}\n")


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault({f"digest/wiki/n{i:03d}.md": node(i) for i in range(120)})


def run_threads(ix: NodeIndex, vault: Path, seconds: float, *, refresh: bool
                ) -> tuple[list[BaseException], int, int]:
    errors: list[BaseException] = []
    done = threading.Event()
    counts = {"search": 0, "update": 0}
    lock = threading.Lock()

    def searcher(k: int) -> None:
        try:
            while not done.is_set():
                word = WORDS[k % len(WORDS)]
                hits = ix.search(f"{word} shallow water", refresh=refresh)
                assert hits and word in hits[0].name.lower(), (word, hits[:1])
                ix.idf(word)
                with lock:
                    counts["search"] += 1
        except BaseException as exc:
            errors.append(exc)

    def updater() -> None:
        try:
            n = 0
            while not done.is_set():
                i = n % 120
                path = vault / f"digest/wiki/n{i:03d}.md"
                path.write_text(node(i, f"edit {n}"), encoding="utf-8")
                ix.update([f"digest/wiki/n{i:03d}.md"])
                n += 1
                with lock:
                    counts["update"] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=searcher, args=(k,)) for k in range(3)]
    threads.append(threading.Thread(target=updater))
    for t in threads:
        t.start()
    # At least `seconds` of overlap, and on until enough searches and updates have interleaved
    # (a loaded machine gets there later; the cap only stops a hung run).
    start = time.monotonic()
    while time.monotonic() - start < 120:
        with lock:
            enough = counts["search"] >= 30 and counts["update"] >= 10
        if (enough and time.monotonic() - start >= seconds) or errors:
            break
        time.sleep(0.05)
    done.set()
    for t in threads:
        t.join(timeout=60)
    return errors, counts["search"], counts["update"]


@pytest.mark.parametrize("refresh", [False, True], ids=["search", "search-with-refresh"])
def test_threads_searching_while_another_updates(vault: Path, refresh: bool) -> None:
    with NodeIndex(vault, SETTINGS) as ix:
        ix.refresh()
        errors, searches, updates = run_threads(ix, vault, 3.0, refresh=refresh)
        assert errors == [], f"{len(errors)} errors in {searches} searches: {errors[:3]!r}"
        assert searches >= 30 and updates >= 10, (searches, updates)
        # the index ends up exactly as a fresh build of the same files
        ix.refresh()
        after = {h.path: h.score for h in ix.search("heron", limit=100, refresh=False)}
        assert ix.doc_count() == 120
    with NodeIndex(vault, SETTINGS) as fresh:
        fresh.rebuild()
        expected = {h.path: h.score for h in fresh.search("heron", limit=100)}
    # the same nodes, scored as a fresh build scores them (to Whoosh's one-byte length
    # approximation of replaced nodes: see test_update_history_does_not_change_scores)
    assert after.keys() == expected.keys() and len(expected) == 15
    assert all(abs(after[p] - expected[p]) <= 0.01 * expected[p] for p in expected)


def test_threads_with_a_rebuild_in_the_middle(vault: Path) -> None:
    with NodeIndex(vault, SETTINGS) as ix:
        ix.refresh()
        errors: list[BaseException] = []
        stop = threading.Event()

        def searcher() -> None:
            try:
                while not stop.is_set():
                    assert ix.search("heron", refresh=False)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=searcher) for _ in range(3)]
        for t in threads:
            t.start()
        for _ in range(3):
            ix.rebuild()
            ix.close()  # also closing under the searchers' feet
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
