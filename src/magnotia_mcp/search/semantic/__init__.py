"""Search by meaning: a local embedding model and an index of our own beside the store, never in it.

Everything here needs the ``semantic`` extra (numpy and tokenizers) and is imported only when a
semantic index is built or searched; the server without the extra never loads this package.

* ``model``: a static embedding model read from a folder (Model2Vec's layout), and the vectors it gives;
* ``download``: the model `index --download-model` fetches, at a pinned revision, each file's sha256 checked;
* ``chunks``: a transcript cut into the pieces that are embedded (segment windows with times and speakers, its title);
* ``indexfile``: the index file in the user's cache folder, one per store, checked before it is trusted;
* ``build``: the index brought up to date with the store (new, edited, trashed, purged), resumable;
* ``citing``: how a hit found by meaning says so, and the moments it cites (plain Python, as ``found``).
"""
