"""Everything that reads the Magnotia store, and nothing else does.

* ``opening``: opening a connection strictly read-only, and checking the store;
* ``pool``: the connections the server lends to one call at a time;
* ``transcripts``, ``tasks``: the SQL each tool runs, and rows shaped into results;
* ``plans``, ``relevance``, ``hits``: the SQL of a search, returning rows (``search`` shapes them).

Nothing is imported here: the query modules are loaded on the start-up path
(by the tools), while ``opening`` and ``pool`` pull in sqlite3 and asyncio,
which wait until the first call that needs the store.
"""
