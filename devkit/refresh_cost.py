"""What a run that brings the index up to date costs when there is nothing to do: what a server's refresh does
after every commit the app makes (the stamps of every transcript compared with the index's), in-process.

Prints its wall time, and the process's peak and resident memory over what they were before it (``VmHWM``, reset
first, and ``VmRSS`` from /proc; Linux only), with the model already loaded, as a server's is::

    MAGNOTIA_MCP_CACHE_DIR=<a cache folder holding the store's index> python -m devkit.refresh_cost --size 100k

Run by hand, never by the tests.
"""

from __future__ import annotations

import gc
import time

from devkit.prefilter_recall import bench_store
from magnotia_mcp.search.semantic import build, indexfile
from magnotia_mcp.search.semantic.nearest import _load_model


def _status() -> dict[str, int]:
    """VmHWM and VmRSS of this process, in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        return {
            line.split(":")[0]: int(line.split()[1]) >> 10 for line in status if line.startswith(("VmHWM", "VmRSS"))
        }


def main() -> None:
    store, _ = bench_store(__doc__.splitlines()[0])
    found = indexfile.open_existing(store)
    if found is None:
        raise SystemExit(f"no index of {store} in {indexfile.cache_folder()}: run `magnotia-mcp index` first")
    conn, meta = found
    conn.close()
    model = _load_model(meta)
    named = {k: meta.get(k, "") for k in ("model_name", "model_path", "model_sha256", "dims")}
    gc.collect()
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")  # VmHWM back to VmRSS: the model's load peaked higher than what follows may
    before = _status()
    started = time.perf_counter()
    report = build.update(store, model, named, rebuild=False)
    seconds = time.perf_counter() - started
    gc.collect()
    after = _status()
    print(f"{report.live} live, {report.embedded} embedded, {report.moved} moved, in {seconds:.2f} s")
    print(f"peak +{after['VmHWM'] - before['VmRSS']} MiB, resident after +{after['VmRSS'] - before['VmRSS']} MiB")


if __name__ == "__main__":
    main()
