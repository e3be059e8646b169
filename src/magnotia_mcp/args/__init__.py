"""Tool arguments: ``checks`` validates them from the tools' schemas (and time filters), ``cursors`` are opaque
page tokens, ``timewords`` reads "last week" in the user's time zone (loaded on the first word)."""
