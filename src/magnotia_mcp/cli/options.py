"""The commands and their options: one table, from which each command's parser and ``--help`` are built.

Every option is one row naming the commands that take it. A command's parser has
exactly its rows, so ``magnotia-mcp doctor --help`` is complete and ``doctor --http``
is refused, naming the command that takes ``--http``. With no command the server runs
on stdin/stdout, as every host config starts it; options before the command keep the
meaning they always had (``magnotia-mcp --db PATH``, ``magnotia-mcp --db PATH doctor``),
and are refused in the same words when the command does not take them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from magnotia_mcp import __version__, log

SERVE, DOCTOR, INDEX, INSTALL, UNINSTALL = "serve", "doctor", "index", "install", "uninstall"
EVERY = (SERVE, DOCTOR, INDEX, INSTALL, UNINSTALL)
# install and uninstall take the same options, so that an install line becomes its uninstall by one word.
EDITING = (INSTALL, UNINSTALL)
INSTALL_ONLY = "install's; uninstall accepts it and has no use for it"
HTTP_GROUP = "serve --http (opt-in)"
MODEL_HELP = (
    "embed with the Model2Vec model in folder DIR (config.json, model.safetensors, tokenizer.json); default: "
    "the model the index was last built with"
)


class Option:
    """One option: its flag, the commands that take it, its default, its help, and argparse's keywords.

    (A plain class: a NamedTuple or a dataclass is built at import, and costs the start-up of
    every host's server more than this whole table.)
    """

    __slots__ = ("commands", "default", "flag", "group", "help", "help_for", "kwargs")

    def __init__(
        self,
        flag: str,
        commands: tuple[str, ...],
        default: Any,
        help: str,
        *,
        group: str | None = None,
        help_for: dict[str, str] | None = None,  # another wording for one command
        **kwargs: Any,
    ) -> None:
        self.flag = flag
        self.commands = commands
        self.default = default
        self.help = help
        self.group = group
        self.help_for = help_for or {}
        self.kwargs = kwargs

    @property
    def dest(self) -> str:
        return str(self.kwargs.get("dest", self.flag.lstrip("-").replace("-", "_")))

    def synopsis(self) -> str:
        metavar = self.kwargs.get("metavar")
        return f"[{self.flag} {metavar}]" if metavar else f"[{self.flag}]"


def _env_log_level() -> str:
    level = os.environ.get("MAGNOTIA_MCP_LOG_LEVEL", "info").strip().lower()
    return level if level in log.LEVELS else "info"


OPTIONS: tuple[Option, ...] = (
    Option(
        "--db",
        EVERY,
        None,
        "the Magnotia store (magnotia.db); overrides $MAGNOTIA_DB",
        metavar="PATH",
        help_for={
            INSTALL: "the store the host's server is to read, written into its entry as --db PATH "
            "(default: none, so the server looks where it always does; the docker channel mounts its folder)",
            UNINSTALL: INSTALL_ONLY,
        },
    ),
    Option(
        "--demo",
        (SERVE, DOCTOR),
        False,
        "serve a sample store generated in a temporary directory (removed at exit)",
        action="store_true",
        help_for={DOCTOR: "there is no store to check: say so and exit 0"},
    ),
    Option(
        "--log-level",
        EVERY,
        None,  # $MAGNOTIA_MCP_LOG_LEVEL, read when the arguments are parsed
        f"how much to log on stderr: {', '.join(log.LEVELS)} (default: info, or $MAGNOTIA_MCP_LOG_LEVEL)",
        metavar="LEVEL",
        choices=tuple(log.LEVELS),
    ),
    Option(
        "--call-timeout",
        (SERVE,),
        30.0,
        "stop any tool call that runs longer than this and answer with an error (default: 30)",
        metavar="SECONDS",
        type=float,
    ),
    Option(
        "--timezone",
        (SERVE,),
        None,
        "the user's time zone for time words such as today or last week, an IANA name like Europe/Berlin "
        "(default: $MAGNOTIA_TZ, else the system's local zone)",
        metavar="NAME",
    ),
    Option(
        "--http",
        (SERVE,),
        None,
        "serve MCP over HTTP on HOST (default 127.0.0.1) and PORT",
        metavar="[HOST:]PORT",
        group=HTTP_GROUP,
    ),
    Option(
        "--token-file",
        (SERVE,),
        None,
        "read the bearer token from PATH, its first line: a regular file only you (or root) may change, "
        "and only you may read if it is yours (default: $MAGNOTIA_MCP_TOKEN, else one generated once and kept in "
        "the user's config folder, mode 0600); a token has at least 32 characters",
        metavar="PATH",
        group=HTTP_GROUP,
    ),
    Option(
        "--no-auth",
        (SERVE,),
        False,
        "accept requests without a token (only with a loopback HOST)",
        action="store_true",
        group=HTTP_GROUP,
    ),
    Option(
        "--allow-origin",
        (SERVE,),
        (),
        "also accept requests whose Origin header is ORIGIN (repeatable); others are refused with 403",
        metavar="ORIGIN",
        action="append",
        group=HTTP_GROUP,
    ),
    Option(
        "--allow-host",
        (SERVE,),
        (),
        "also accept requests whose Host header is HOST (repeatable; DNS-rebinding protection)",
        metavar="HOST",
        action="append",
        group=HTTP_GROUP,
    ),
    Option(
        "--request-timeout",
        (SERVE,),
        10.0,
        "close a connection that has not sent a whole request (headers, then body) within SECONDS of "
        "connecting or of its last answer (default: 10); idle keep-alive connections close after 5",
        metavar="SECONDS",
        type=float,
        group=HTTP_GROUP,
    ),
    Option(
        "--max-connections",
        (SERVE,),
        4096,
        "keep at most N connections open (default: 4096, or what the open-file limit allows); when full, "
        "the one that has waited longest without sending a request is closed to let a new one in",
        metavar="N",
        type=int,
        group=HTTP_GROUP,
    ),
    Option("--json", (DOCTOR,), False, "print one JSON object instead of text", action="store_true"),
    Option("--model", (INDEX,), None, MODEL_HELP, metavar="DIR"),
    Option(
        "--drop", (INDEX,), False, "remove the store's semantic index (search goes by words only)", action="store_true"
    ),
    Option(
        "--channel",
        EDITING,
        None,
        "how the host starts the server: this Python package's console script, the one-file executable, "
        "or the container image (default: the one running this command)",
        help_for={UNINSTALL: INSTALL_ONLY},
        metavar="package|executable|docker",
        choices=("package", "executable", "docker"),
    ),
    Option("--name", EDITING, "magnotia", "the server's name in the host's config (default: magnotia)", metavar="NAME"),
    Option("--dry-run", EDITING, False, "print the change (a diff) and change nothing", action="store_true"),
    Option("--config", EDITING, None, "edit this file instead of the host's usual one", metavar="PATH"),
    Option(
        "--force",
        EDITING,
        False,
        "create the host's config even if the host looks absent",
        action="store_true",
        help_for={UNINSTALL: INSTALL_ONLY},
    ),
    Option(
        "--command",
        EDITING,
        None,
        "--channel executable: the executable (default: this one, when frozen)",
        metavar="PATH",
        dest="command_path",
        help_for={UNINSTALL: INSTALL_ONLY},
    ),
    Option(
        "--image",
        EDITING,
        "magnotia-mcp",
        "--channel docker: the image (default: magnotia-mcp)",
        metavar="IMAGE",
        help_for={UNINSTALL: INSTALL_ONLY},
    ),
    Option(
        "--engine",
        EDITING,
        "docker",
        "--channel docker: docker or podman (default: docker)",
        metavar="ENGINE",
        help_for={UNINSTALL: INSTALL_ONLY},
    ),
)


def synopsis(command: str) -> str:
    """One line naming everything command takes, as the top-level usage shows it."""
    words = ["magnotia-mcp install|uninstall HOST" if command in EDITING else f"magnotia-mcp {command}"]
    words += [option.synopsis() for option in OPTIONS if command in option.commands]
    return " ".join(words)


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
