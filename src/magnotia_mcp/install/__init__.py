"""``magnotia-mcp install`` / ``uninstall`` and the host table doctor reads.

``command`` runs the two commands, ``hosts`` knows each host's file per OS and its entry,
``launch`` builds the command a host runs per channel, ``edit`` plans and writes a file's
change through ``jsonc``, ``toml_table`` and ``yaml_block``. Only the command line imports
this package (for install, uninstall and doctor), never the path that serves a host.
"""
