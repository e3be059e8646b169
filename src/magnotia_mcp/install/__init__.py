"""``magnotia-mcp install`` / ``uninstall`` and the host table doctor reads.

``command`` runs the two commands; ``hosts`` holds one record per host (its file per OS,
format, entry shape, marker folder, CLI: the fields are in ``record``); ``formats`` holds one
object per config format (JSON, JSONC, TOML, YAML) behind one interface, over ``jsonc``,
``toml_table`` and ``yaml_block``; ``edit`` routes a file's change through its host's format
and ``configfile`` (safe reading and writing); ``launch`` builds the command a host runs per channel.
Only the command line imports this package (for install, uninstall and doctor), never the path that serves a host.
"""
