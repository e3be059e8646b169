"""MCP over JSON-RPC 2.0: one ``Server`` per connection owns every request from bytes to reply.

* ``jsonrpc``: decoding, the envelope, encoding, and ``Reply`` (what an encoded message is, for transports);
* ``requests``: one request, the revision it speaks, its result and failure on the wire;
* ``server``: the dispatcher (``Server.submit``), requests in flight, cancellation;
* ``methods``: the MCP methods and the table the dispatcher serves them from (the one module here that knows tools);
* ``revisions``: what each protocol revision has.
"""
