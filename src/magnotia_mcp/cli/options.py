"""The commands and their options: one table, from which ``cli.parser`` builds each command's parser and ``--help``.

Every option is one row naming the commands that take it: its flag, default, help and argparse's keywords.
"""

from __future__ import annotations

from typing import Any

from magnotia_mcp import log

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
        "--download-model",
        (INDEX,),
        False,
        "download minishlab/potion-multilingual-128M (MIT, multilingual, ~530 MB) at a pinned revision into the "
        "cache folder, each file's sha256 checked, then index with it; interrupted, run it again to go on",
        action="store_true",
    ),
    Option(
        "--model-mirror",
        (INDEX,),
        "https://huggingface.co",
        "fetch --download-model's files from this mirror of huggingface.co (the same paths; the sha256 of every "
        "file is still checked) (default: https://huggingface.co)",
        metavar="URL",
    ),
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
