"""Command line: parse arguments, set up stderr logging, run the server or the doctor.

Start-up failures become one line on stderr and an exit code; nothing here
speaks JSON-RPC or SQL.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from magnotia_mcp import __version__, log
from magnotia_mcp.paths import DIR_ENV_VAR, ENV_VAR, resolve_db_path

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

DESCRIPTION = """\
magnotia-mcp serves your Magnotia transcripts and tasks to MCP hosts (Claude Desktop,
Claude Code, Cursor, VS Code, Goose, ...) over stdin/stdout. It opens the store
strictly read-only and never changes it.

commands:
  serve    run the MCP server on stdin/stdout (the default; hosts start this);
           serve --http [HOST:]PORT serves Streamable HTTP at http://HOST:PORT/mcp instead (opt-in,
           bearer token required; pip install 'magnotia-mcp[http]')
  doctor   check the store, list the hosts configured to start this server, print host
           configuration (exit 1 if anything is wrong; --json for scripts)
  install HOST    add this server to HOST's own config file (or `claude mcp add` for Claude Code)
  uninstall HOST  remove it again

hosts: claude-desktop, claude-code, cursor, vscode, windsurf, cline, gemini-cli, codex, goose,
       lm-studio, zed (where each keeps its config on Linux, macOS and Windows: docs/hosts.md)
"""

EPILOG = f"""\
store location, first match wins:
  --db PATH, then ${ENV_VAR} (the file), then ${DIR_ENV_VAR} (the folder holding
  magnotia.db), then the Magnotia app's data directory
  (Linux ~/.local/share/com.magnotia.app/magnotia.db, macOS ~/Library/Application
  Support/com.magnotia.app/magnotia.db, Windows %APPDATA%\\com.magnotia.app\\magnotia.db)

examples:
  magnotia-mcp doctor                 is my store found? how do I add this to my host?
  magnotia-mcp install claude-desktop add this server to Claude Desktop (old file kept as .bak)
  magnotia-mcp install cursor --dry-run   show the change to ~/.cursor/mcp.json, change nothing
  magnotia-mcp install goose --channel docker --db ~/magnotia.db   start it in the container
  magnotia-mcp --demo                 serve a generated sample store (no app needed)
  magnotia-mcp --db ~/magnotia.db     serve a specific store

time words (today, last week, 7d, ...) resolve in the system's local time zone;
--timezone NAME (or $MAGNOTIA_TZ) sets another, an IANA name such as Europe/Berlin.

Logs go to stderr; stdout carries only MCP messages.
"""


def _env_log_level() -> str:
    level = os.environ.get("MAGNOTIA_MCP_LOG_LEVEL", "info").strip().lower()
    return level if level in log.LEVELS else "info"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="magnotia-mcp",
        usage="magnotia-mcp [serve|doctor] [--db PATH] [--demo] [--log-level LEVEL] [--call-timeout SECONDS] "
        "[--timezone NAME] [--json]\n"
        "       magnotia-mcp serve --http [HOST:]PORT [--token-file PATH] [--no-auth] [--allow-origin ORIGIN] "
        "[--allow-host HOST] [--request-timeout SECONDS] [--max-connections N]\n"
        "       magnotia-mcp install|uninstall HOST [--channel package|executable|docker] [--db PATH] [--name NAME] "
        "[--dry-run] [--config PATH] [--force] [--command PATH] [--image IMAGE] [--engine ENGINE]",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=("serve", "doctor", "install", "uninstall"),
        default="serve",
        help=argparse.SUPPRESS,
    )
    parser.add_argument("host", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--db", metavar="PATH", help=f"the Magnotia store (magnotia.db); overrides ${ENV_VAR}")
    parser.add_argument(
        "--demo", action="store_true", help="serve a sample store generated in a temporary directory (removed at exit)"
    )
    parser.add_argument(
        "--log-level",
        choices=tuple(log.LEVELS),
        default=_env_log_level(),
        help="how much to log on stderr (default: info, or $MAGNOTIA_MCP_LOG_LEVEL)",
    )
    parser.add_argument(
        "--call-timeout",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="stop any tool call that runs longer than this and answer with an error (default: 30)",
    )
    parser.add_argument(
        "--timezone",
        metavar="NAME",
        help="the user's time zone for time words such as today or last week, an IANA name like Europe/Berlin "
        "(default: $MAGNOTIA_TZ, else the system's local zone)",
    )
    parser.add_argument("--json", action="store_true", help="doctor: print one JSON object instead of text")
    _add_http_options(parser)
    _add_install_options(parser)
    parser.add_argument("--version", action="version", version=f"magnotia-mcp {__version__}")
    return parser


def _add_http_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "serve --http (opt-in)",
        "Streamable HTTP at http://HOST:PORT/mcp instead of stdin/stdout; a bearer token is required "
        "(see README, HTTP)",
    )
    group.add_argument("--http", metavar="[HOST:]PORT", help="serve MCP over HTTP on HOST (default 127.0.0.1) and PORT")
    group.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the bearer token from PATH, its first line: a regular file only you (or root) may change, "
        "and only you may read if it is yours (default: $MAGNOTIA_MCP_TOKEN, else one generated once and kept in "
        "the user's config folder, mode 0600); a token has at least 32 characters",
    )
    group.add_argument(
        "--no-auth", action="store_true", help="accept requests without a token (only with a loopback HOST)"
    )
    group.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept requests whose Origin header is ORIGIN (repeatable); others are refused with 403",
    )
    group.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept requests whose Host header is HOST (repeatable; DNS-rebinding protection)",
    )
    group.add_argument(
        "--request-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection that has not sent a whole request (headers, then body) within SECONDS of "
        "connecting or of its last answer (default: 10); idle keep-alive connections close after 5",
    )
    group.add_argument(
        "--max-connections",
        type=int,
        default=4096,
        metavar="N",
        help="keep at most N connections open (default: 4096, or what the open-file limit allows); when full, "
        "the one that has waited longest without sending a request is closed to let a new one in",
    )


def _add_install_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("install and uninstall")
    group.add_argument(
        "--channel",
        choices=("package", "executable", "docker"),
        help="how the host starts the server: this Python package's console script, the one-file executable, "
        "or the container image (default: the one running this command)",
    )
    group.add_argument("--name", default="magnotia", help="the server's name in the host's config (default: magnotia)")
    group.add_argument("--dry-run", action="store_true", help="print the change (a diff) and change nothing")
    group.add_argument("--config", metavar="PATH", help="edit this file instead of the host's usual one")
    group.add_argument("--force", action="store_true", help="create the host's config even if the host looks absent")
    group.add_argument(
        "--command",
        dest="command_path",
        metavar="PATH",
        help="--channel executable: the executable (default: this one, when frozen)",
    )
    group.add_argument("--image", default="magnotia-mcp", help="--channel docker: the image (default: magnotia-mcp)")
    group.add_argument("--engine", default="docker", help="--channel docker: docker or podman (default: docker)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    log.set_level(args.log_level)
    if args.host is not None and args.command not in ("install", "uninstall"):
        log.error(f"unexpected argument {args.host!r}; see magnotia-mcp --help")
        return 2
    if args.command == "doctor":
        from magnotia_mcp.doctor import run_doctor

        return run_doctor(args.db, demo=args.demo, as_json=args.json)
    if args.command in ("install", "uninstall"):
        from magnotia_mcp.install.command import Options, run

        return run(
            Options(
                args.command,
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
    if args.call_timeout <= 0:
        log.error("--call-timeout must be a positive number of seconds")
        return 2
    zone, origin = (args.timezone, "--timezone") if args.timezone else (os.environ.get("MAGNOTIA_TZ"), "MAGNOTIA_TZ")
    if zone:
        from magnotia_mcp.timewords import UnknownZone, use_zone

        try:
            use_zone(zone)
        except UnknownZone as exc:
            log.error(f"{exc} (from {origin})")
            return 2
    if args.http is not None:
        return _serve_http(args)
    if args.demo:
        return _serve_demo(args.call_timeout)
    try:
        path, origin = resolve_db_path(args.db)
    except Exception as exc:  # platformdirs failing on an odd platform
        log.error(f"cannot work out where the Magnotia store is ({exc}); pass --db PATH")
        return 2
    return _serve(path, origin, args.call_timeout)


def _serve_http(args: argparse.Namespace) -> int:
    """serve --http: the same server and store, framed by the HTTP transport (magnotia_mcp.http)."""
    try:
        from magnotia_mcp import http
    except ImportError as exc:  # uvicorn missing
        log.error(f"--http needs the optional dependency: pip install 'magnotia-mcp[http]' ({exc})")
        return 2
    from magnotia_mcp.bearer import TokenError, load_token

    try:
        host, port = http.parse_bind(args.http)
    except ValueError as exc:
        log.error(f"--http: {exc}")
        return 2
    token: str | None = None
    if args.no_auth:
        if not http.is_loopback(host):
            log.error(
                f"--no-auth is refused on {host}: only a loopback address (127.0.0.1, ::1) may go without a token"
            )
            return 2
        log.warning("--no-auth: any local process may call this server")
    else:
        try:
            token, source, created = load_token(args.token_file)
        except TokenError as exc:
            log.error(str(exc))
            return 2
        if source.startswith("$") or source == args.token_file:
            log.info(f"bearer token from {source}")
        else:
            # The token itself is never logged: hosts keep servers' stderr in log files.
            log.info(
                f"bearer token ({'new, ' if created else ''}kept in {source}); "
                "`magnotia-mcp doctor` shows it and the header to configure"
            )
    if not args.request_timeout > 0:
        log.error("--request-timeout must be a positive number of seconds")
        return 2
    if args.max_connections < 1:
        log.error("--max-connections must be at least 1")
        return 2
    settings = http.Settings(
        host=host,
        port=port,
        token=token,
        allow_origins=args.allow_origin,
        allow_hosts=args.allow_host,
        request_timeout=args.request_timeout,
        max_connections=args.max_connections,
    )
    if args.demo:
        import tempfile

        from magnotia_mcp.demo import build_sample_store

        with tempfile.TemporaryDirectory(prefix="magnotia-demo-") as tmp:
            path = build_sample_store(Path(tmp) / "magnotia.db")
            return _run_http(http, path, "the sample store", args.call_timeout, settings)
    try:
        path, origin = resolve_db_path(args.db)
    except Exception as exc:
        log.error(f"cannot work out where the Magnotia store is ({exc}); pass --db PATH")
        return 2
    return _run_http(http, path, f"from {origin}", args.call_timeout, settings)


def _run_http(http: Any, path: Path, origin: str, call_timeout: float, settings: Any) -> int:
    from magnotia_mcp.methods import new_server

    _exit_cleanly_on_sigterm()  # until uvicorn takes the signals over, and as PID 1 in a container

    def open_store() -> Store:
        from magnotia_mcp.store.pool import Store

        return Store(path)

    shared = new_server(open_store, call_timeout=call_timeout)  # owns the one store every request reads
    log.info(f"serving {path} ({origin}), read-only")
    return int(http.run(lambda: new_server(lambda: shared.store, call_timeout=call_timeout), settings, shared.close))


def _serve(path: Path, origin: str, call_timeout: float) -> int:
    from magnotia_mcp.prelude import claim_stdout

    out_fd = claim_stdout()
    log.info(f"magnotia-mcp {__version__} serving {path} (from {origin}), read-only")
    try:
        present = path.exists()
    except OSError as exc:  # e.g. a directory on the way this user may not enter
        log.warning(f"cannot look at {path} ({exc.strerror}); tool calls will say what is wrong")
    else:
        if not present:
            log.warning(f"no store at {path} yet; tool calls will say so until it exists (see: magnotia-mcp doctor)")
    return _run(path, call_timeout, out_fd)


def _run(path: Path, call_timeout: float, out_fd: int) -> int:
    from magnotia_mcp.methods import new_server
    from magnotia_mcp.prelude import answer_first_messages

    def open_store() -> Store:
        from magnotia_mcp.store.pool import Store

        return Store(path)

    server = new_server(open_store, call_timeout=call_timeout)
    stdin_fd = sys.stdin.fileno()
    _exit_cleanly_on_sigterm()
    try:
        leftover = answer_first_messages(server, stdin_fd, out_fd)
        if leftover is None:
            return 0  # stdin ended before anything needed the loop
        import asyncio

        from magnotia_mcp.stdio import serve

        return asyncio.run(serve(server, stdin_fd, out_fd, leftover))
    except KeyboardInterrupt:
        return 0


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM is how hosts stop a server: exit 0, also before the event loop runs.

    It also matters as PID 1 in a container, where an unhandled SIGTERM is ignored.
    The event loop installs its own handler once it runs.
    """
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, stop)


def _serve_demo(call_timeout: float) -> int:
    import tempfile

    from magnotia_mcp.demo import build_sample_store
    from magnotia_mcp.prelude import claim_stdout

    out_fd = claim_stdout()
    with tempfile.TemporaryDirectory(prefix="magnotia-demo-") as tmp:
        path = build_sample_store(Path(tmp) / "magnotia.db")
        log.info(f"magnotia-mcp {__version__} serving the sample store {path} (removed at exit)")
        return _run(path, call_timeout, out_fd)
