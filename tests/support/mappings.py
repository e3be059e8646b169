"""What a process maps of the files in a folder, from Linux's /proc: how the tests see a mapped index's memory."""

from __future__ import annotations

from pathlib import Path


def mapped_kib(folder: Path, pid: int | str = "self") -> tuple[int, int]:
    """How many mappings of files in folder process pid has, and their resident KiB (/proc/<pid>/smaps)."""
    mappings, total, inside = 0, 0, False
    with open(f"/proc/{pid}/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                inside = f" {folder}/" in line
                mappings += inside
            elif inside and head == "Rss:":
                total += int(line.split()[1])
    return mappings, total
