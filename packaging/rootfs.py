#!/usr/bin/env python3
"""Lay out a minimal root filesystem around a PyInstaller build, for a ``FROM scratch`` image.

    python packaging/rootfs.py dist/magnotia-mcp /rootfs

Copies the one-file binary (or one-dir folder) to /usr/local/bin (or /opt),
every shared library the ELF files in it load that PyInstaller leaves to the
system (ldd), the glibc core a bundled extension may need, and adds a /tmp
(mode 1777, where one-file unpacks) and /etc/passwd, /etc/group for user
65532. Used in the Dockerfile's ``frozen-build`` stage; stdlib only.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

# glibc's own libraries, which PyInstaller never bundles; a bundled extension
# may load one that the bootloader does not. libgcc_s is dlopen'ed by glibc
# for thread cancellation.
GLIBC_CORE = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1", "libgcc_s.so.1")
USER_ID = 65532


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def ldd(path: Path) -> set[Path]:
    """Absolute paths of the libraries (and loader) that ``path`` loads."""
    done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
    found: set[Path] = set()
    for line in done.stdout.splitlines():
        parts = line.split()
        if "=>" in parts:
            target = parts[parts.index("=>") + 1]
            if target.startswith("/"):
                found.add(Path(target))
        elif parts and parts[0].startswith("/"):
            found.add(Path(parts[0]))
    return found


def system_libraries(frozen: Path) -> set[Path]:
    """Libraries from outside the bundle that the frozen program loads."""
    executable = frozen if frozen.is_file() else frozen / "magnotia-mcp"
    # The bootloader loads its own libraries (libz among them) from the system
    # before it knows the bundle, so take all of them.
    needed = ldd(executable)
    if frozen.is_dir():
        # ldd resolves a bundled library's own needs on the system (no rpath);
        # at run time the bundled copy wins, so skip any name the bundle holds.
        bundled = {p.name for p in frozen.rglob("*")}
        for elf in (p for p in frozen.rglob("*") if p.is_file() and is_elf(p) and p != executable):
            needed |= {lib for lib in ldd(elf) if lib.name not in bundled}
    libc = next((lib for lib in needed if lib.name == "libc.so.6"), None)
    if libc is None:
        raise SystemExit(f"rootfs.py: ldd found no libc for {frozen}")
    for name in GLIBC_CORE:
        candidate = libc.parent / name
        if candidate.exists():
            needed.add(candidate)
    return needed


def copy_into(rootfs: Path, source: Path) -> None:
    target = rootfs / source.relative_to("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source.resolve(), target)  # follow symlinks: scratch has no /lib -> /usr/lib link


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("frozen", type=Path, help="one-file binary, or one-dir folder holding the executable")
    parser.add_argument("rootfs", type=Path, help="folder to fill (created)")
    args = parser.parse_args(argv)
    frozen: Path = args.frozen.resolve()
    rootfs: Path = args.rootfs
    (rootfs / "usr/local/bin").mkdir(parents=True, exist_ok=True)
    if frozen.is_file():
        shutil.copy2(frozen, rootfs / "usr/local/bin/magnotia-mcp")
    else:
        shutil.copytree(frozen, rootfs / "opt/magnotia-mcp", symlinks=True)
        (rootfs / "usr/local/bin/magnotia-mcp").symlink_to("/opt/magnotia-mcp/magnotia-mcp")
    for library in sorted(system_libraries(frozen)):
        copy_into(rootfs, library)
    tmp = rootfs / "tmp"
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o1777)
    (rootfs / "data").mkdir(exist_ok=True)
    etc = rootfs / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{USER_ID}:{USER_ID}::/tmp:/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nnonroot:x:{USER_ID}:\n")
    for path in sorted(p for p in rootfs.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size:>10} {path.relative_to(rootfs)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
