"""The command line: ``magnotia-mcp [COMMAND] [OPTIONS]``, each command with its own options and ``--help``.

* ``options``: the table of commands and options, the parsers built from it, and the usage errors;
* ``texts``: what each ``--help`` says beside the options;
* ``serve``: the server on stdin/stdout (also with no command), ``serve_http`` with ``--http``;
* ``storesource``: the one store both transports serve (``--db``, the environment, or ``--demo``).

doctor, index and install run from their own modules, imported only for their command. Start-up
failures become one line on stderr and an exit code; nothing here speaks JSON-RPC or SQL.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from magnotia_mcp import log
from magnotia_mcp.cli.parser import parse


def main(argv: list[str] | None = None) -> int:
    command, args = parse(argv)
    log.set_level(args.log_level)
    return RUN[command](args)


def _serve(args: argparse.Namespace) -> int:
    from magnotia_mcp.cli import serve

    return serve.run(args)


def _doctor(args: argparse.Namespace) -> int:
    from magnotia_mcp.cli.doctor import run_doctor

    return run_doctor(args.db, demo=args.demo, as_json=args.json)


def _index(args: argparse.Namespace) -> int:
    from magnotia_mcp.cli.index import run_index

    return run_index(args.db, model=args.model, drop=args.drop, download=args.download_model, mirror=args.model_mirror)


def _edit(action: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from magnotia_mcp.install.command import Options, run

        return run(
            Options(
                action,
                args.host,
                channel=args.channel,
                db=args.db,
                name=args.name,
                dry_run=args.dry_run,
                config=args.config,
                force=args.force,
                command=args.command_path,
                image=args.image,
                engine=args.engine,
            )
        )

    return run


RUN: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": _serve,
    "doctor": _doctor,
    "index": _index,
    "install": _edit("install"),
    "uninstall": _edit("uninstall"),
}
