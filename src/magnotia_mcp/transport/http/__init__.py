"""The opt-in Streamable HTTP transport (``serve --http``; uvicorn and h11 from the ``http`` extra).

* ``serving``: the socket, uvicorn's configuration, signals; ``connections``: how many stay open, deadlines;
* ``guard``: Host, Origin, path, credentials in the URL, the token (``bearer`` finds or makes it);
* ``negotiation``: revision, headers, Accept, the HTTP status of a reply; ``sessions``: ids per ``initialize``;
* ``app``: routing and answering; ``asgi``: reading and writing ASGI messages; ``sse``: event streams;
* ``discovery``: what a client probing for OAuth is told; ``throttle``: log lines under abuse.
"""
