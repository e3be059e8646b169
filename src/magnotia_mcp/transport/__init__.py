"""Framing bytes for the one ``Server``: stdio (``stdio/``) and opt-in Streamable HTTP (``http/``).

Neither transport imports the other; the bounds they share are in ``limits``.
"""
