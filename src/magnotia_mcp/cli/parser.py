"""The command line parsed: each command's parser and ``--help``, built from the option table (``cli.options``).

A command's parser has exactly its rows, so ``magnotia-mcp doctor --help`` is complete and
``doctor --http`` is refused, naming the command that takes ``--http``. With no command the
server runs on stdin/stdout, as every host config starts it; options before the command keep
the meaning they always had (``magnotia-mcp --db PATH``, ``magnotia-mcp --db PATH doctor``),
and are refused in the same words when the command does not take them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import NoReturn

from magnotia_mcp import __version__, log
from magnotia_mcp.cli.options import DOCTOR, EDITING, EVERY, INDEX, INSTALL, OPTIONS, SERVE, Option, synopsis


def _env_log_level() -> str:
    level = os.environ.get("MAGNOTIA_MCP_LOG_LEVEL", "info").strip().lower()
    return level if level in log.LEVELS else "info"


def _add(parser: argparse.ArgumentParser, command: str | None) -> None:
    """Add the options of command to parser; None: every option, with help shown for serve's stdio ones.

    No default is set here (SUPPRESS): the namespace holds exactly what was given, before or
    after the command, and ``parse`` fills in the defaults once it knows the command.
    """
    groups: dict[str, Callable[..., argparse.Action]] = {}
    for option in OPTIONS:
        if command is not None and command not in option.commands:
            continue
        visible = command is not None or (SERVE in option.commands and option.group is None)
        add = parser.add_argument
        if option.group is not None and visible:
            if option.group not in groups:
                from magnotia_mcp.cli.texts import GROUPS

                groups[option.group] = parser.add_argument_group(option.group, GROUPS[option.group]).add_argument
            add = groups[option.group]
        help_text = option.help_for.get(command or SERVE, option.help) if visible else argparse.SUPPRESS
        add(option.flag, default=argparse.SUPPRESS, help=help_text, **option.kwargs)


def build_parser(*, described: bool = False) -> argparse.ArgumentParser:
    """The one parser: the command and every option of every command, which may come before or after it.

    described: with the top-level help's prose (``texts`` is loaded only for a help). Each command's
    own parser is ``command_parser``.
    """
    usage = "\n       ".join(
        [
            "magnotia-mcp " + " ".join(o.synopsis() for o in OPTIONS if SERVE in o.commands and o.group is None),
            *(synopsis(command) for command in (SERVE, DOCTOR, INDEX, INSTALL)),
            "magnotia-mcp COMMAND --help | --version",
        ]
    )
    description = epilog = None
    if described:
        from magnotia_mcp.cli.texts import COMMANDS, TOP_DESCRIPTION, TOP_EPILOG

        commands = "\n".join(f"  {name:<10} {summary}" for name, (summary, _) in COMMANDS.items())
        description, epilog = f"{TOP_DESCRIPTION}\ncommands:\n{commands}", TOP_EPILOG
    parser = argparse.ArgumentParser(
        prog="magnotia-mcp",
        usage=usage,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,  # -h shows the help of the command given, wherever it stands
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help (after a COMMAND: its own) and exit")
    parser.add_argument("--version", action="version", version=f"magnotia-mcp {__version__}")
    parser.add_argument("command", nargs="?", choices=EVERY, metavar="COMMAND", help=argparse.SUPPRESS)
    parser.add_argument("host", nargs="?", metavar="HOST", help=argparse.SUPPRESS)
    _add(parser, None)
    return parser


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one command, exactly its options: for its --help and its usage errors."""
    from magnotia_mcp.cli.texts import COMMANDS, EPILOGS, HOSTS

    parser = argparse.ArgumentParser(
        prog=f"magnotia-mcp {command}",
        description=COMMANDS[command][1],
        epilog=EPILOGS[command],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if command in EDITING:
        parser.add_argument("host", nargs="?", metavar="HOST", help=f"one of: {HOSTS} (docs/hosts.md)")
    _add(parser, command)
    return parser


def parse(argv: Sequence[str] | None = None) -> tuple[str, argparse.Namespace]:
    """The command (serve when none is given) and its options, every one set; exits 2 on a usage error.

    Intermixed: ``install --dry-run cursor`` finds its HOST after an option.
    """
    top = build_parser()
    args = top.parse_intermixed_args(argv)
    command = args.command or SERVE
    if args.help:
        (command_parser(command) if args.command else build_parser(described=True)).print_help()
        raise SystemExit(0)
    given = vars(args)
    for option in OPTIONS:
        if option.dest not in given:
            setattr(args, option.dest, option.default)
        elif command not in option.commands:
            _refuse(args.command, option)
    if args.host is not None and command not in EDITING:
        _usage_error(args.command, f"unexpected argument {args.host!r}")
    if args.log_level is None:
        args.log_level = _env_log_level()
    return command, args


def _usage_error(command: str | None, message: str) -> NoReturn:
    """Exit 2 with command's usage (the top-level one when no command was given) and message."""
    (command_parser(command) if command else build_parser()).error(message)


def _refuse(command: str | None, option: Option) -> NoReturn:
    takers = " and ".join(option.commands)
    which = command or f"{SERVE}, which runs when no command is given"
    see = f"magnotia-mcp {option.commands[0]} --help"
    _usage_error(command, f"{option.flag} is an option of {takers}, not of {which} (see: {see})")
