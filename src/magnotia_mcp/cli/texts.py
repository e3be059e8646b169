"""What ``--help`` says beside the options: each command's summary, description and epilog."""

from __future__ import annotations

from magnotia_mcp.install.hosts import HOSTS as HOST_RECORDS  # only --help loads this module
from magnotia_mcp.paths import DIR_ENV_VAR, ENV_VAR

HOSTS = ", ".join(HOST_RECORDS)  # a new host record names itself here

STORE_LOOKUP = f"""\
store location, first match wins:
  --db PATH, then ${ENV_VAR} (the file), then ${DIR_ENV_VAR} (the folder holding
  magnotia.db), then the Magnotia app's data directory
  (Linux ~/.local/share/com.magnotia.app/magnotia.db, macOS ~/Library/Application
  Support/com.magnotia.app/magnotia.db, Windows %APPDATA%\\com.magnotia.app\\magnotia.db)
"""

TIME_ZONE = """\
time words (today, last week, 7d, ...) resolve in the system's local time zone;
--timezone NAME (or $MAGNOTIA_TZ) sets another, an IANA name such as Europe/Berlin.
"""

TOP_DESCRIPTION = """\
magnotia-mcp serves your Magnotia transcripts and tasks to MCP hosts (Claude Desktop,
Claude Code, Cursor, VS Code, Goose, ...) over stdin/stdout. It opens the store
strictly read-only and never changes it. With no command it serves on stdin/stdout
(what hosts start); the options shown below are serve's, and `magnotia-mcp COMMAND --help`
lists everything a command takes.
"""

TOP_EPILOG = f"""\
hosts: {HOSTS}
       (where each keeps its config on Linux, macOS and Windows: docs/hosts.md)

{STORE_LOOKUP}
examples:
  magnotia-mcp doctor                 is my store found? how do I add this to my host?
  magnotia-mcp install claude-desktop add this server to Claude Desktop (old file kept as .bak)
  magnotia-mcp install cursor --dry-run   show the change to ~/.cursor/mcp.json, change nothing
  magnotia-mcp install goose --channel docker --db ~/magnotia.db   start it in the container
  magnotia-mcp --demo                 serve a generated sample store (no app needed)
  magnotia-mcp --db ~/magnotia.db     serve a specific store
  magnotia-mcp serve --http 8765      serve Streamable HTTP at http://127.0.0.1:8765/mcp

{TIME_ZONE}
Logs go to stderr; stdout carries only MCP messages.
"""

# command: (its line in the top-level help, the description its own --help starts with)
COMMANDS = {
    "serve": (
        "serve MCP on stdin/stdout (the default: what hosts start), or HTTP with --http",
        "Serve MCP on stdin/stdout, as hosts start it (`magnotia-mcp` with no command does the same).\n"
        "With --http [HOST:]PORT, serve Streamable HTTP at http://HOST:PORT/mcp instead (opt-in, bearer\n"
        "token required; pip install 'magnotia-mcp[http]'). The store is opened strictly read-only.",
    ),
    "doctor": (
        "check the store and the hosts set up to start this server; print host configuration",
        "Check the store (found, readable, its schema, counts and full-text index), list the hosts\n"
        "configured to start this server and whether their command still exists, show the bearer token\n"
        "serve --http would use, and print the configuration to add this server to each host.\n"
        "Changes nothing. Exit 1 if anything is wrong.",
    ),
    "index": (
        "build or update the semantic index that lets search find by meaning (opt-in)",
        "Build the store's semantic index, or bring it up to date (new, edited, trashed and purged\n"
        "transcripts), so that search_transcripts also finds by meaning, in any language the model knows.\n"
        "Needs pip install 'magnotia-mcp[semantic]' and a model: --download-model fetches one once, at a\n"
        "pinned revision with each file's sha256 checked, or --model DIR takes yours. The index is a file\n"
        "of this server's in your cache folder, never beside or inside the store, which is only read.\n"
        "Interrupted, it keeps what it finished: run it again to go on. --drop removes the index.",
    ),
    "install": (
        "add this server to HOST's own config file (Claude Code: `claude mcp add`)",
        "Add this server to HOST's own config file: parsed, the entry merged, the old file kept as .bak\n"
        "and the new one written atomically; Claude Code through `claude mcp add --scope user` when its\n"
        "CLI is on PATH. Nothing is written when the file cannot be edited safely (exit 1).",
    ),
    "uninstall": (
        "remove it from HOST's config file again",
        "Remove this server's entry (--name, default magnotia) from HOST's own config file, the old file\n"
        "kept as .bak; Claude Code through `claude mcp remove --scope user` when its CLI is on PATH.",
    ),
}

# an option group's title (the Option's group): the text under it
GROUPS = {
    "serve --http (opt-in)": "Streamable HTTP at http://HOST:PORT/mcp instead of stdin/stdout; a bearer token is "
    "required\n(pip install 'magnotia-mcp[http]'; docs/http.md)",
}

_EDITING_EPILOG = f"""\
hosts: {HOSTS}
       (where each keeps its config on Linux, macOS and Windows: docs/hosts.md)

examples:
  magnotia-mcp install claude-desktop     add this server to Claude Desktop
  magnotia-mcp install cursor --dry-run   show the change to ~/.cursor/mcp.json, change nothing
  magnotia-mcp install goose --channel docker --db ~/magnotia.db   start it in the container
  magnotia-mcp uninstall claude-desktop   take it out again
"""

EPILOGS = {
    "serve": f"{STORE_LOOKUP}\n{TIME_ZONE}\nLogs go to stderr; stdout carries only MCP messages.\n",
    "doctor": f"{STORE_LOOKUP}\n--json prints the same facts as one object, for scripts.\n",
    "index": f"""{STORE_LOOKUP}
the index lives in $MAGNOTIA_MCP_CACHE_DIR/index, else the user cache folder
  (Linux ~/.cache/com.magnotia.mcp/index, macOS ~/Library/Caches/com.magnotia.mcp/index,
  Windows %LOCALAPPDATA%\\com.magnotia.mcp\\Cache\\index); doctor shows its state.
A server holds up to 128 MiB of the index's rows in its memory ($MAGNOTIA_MCP_INDEX_MEMORY_MIB
  sets how many); on Linux a larger index is mapped from a file beside it that no name reaches,
  and its pages are handed back after each search: far less memory, searches ~10% slower.

--download-model puts the model in the same cache folder, under models/ (~530 MB); nothing
  else in this server uses the network, and the server itself never does.

examples:
  magnotia-mcp index --download-model  fetch the model once, then build it (progress on stderr)
  magnotia-mcp index --model ~/models/potion-multilingual-128M   build it with a model folder you have
  magnotia-mcp index                  update it with the model it was built with
  magnotia-mcp index --drop           remove it
""",
    "install": _EDITING_EPILOG,
    "uninstall": _EDITING_EPILOG,
}
