"""The four tools: ``catalog.TOOLS`` is the table ``tools/list`` and ``tools/call`` serve from.

* ``base``: what a tool is, its ``tools/list`` entry and its ``tools/call`` result on the wire;
* ``schema``: the building blocks of the tools' input and output schemas;
* ``transcripts``, ``search``, ``tasks``: each tool's schemas, description and handler, side by side;
* ``hints``: what a search that found little says the store holds (languages, time span) and what to try next.
"""
