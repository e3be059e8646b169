"""What a search means and how its hits look; the store only runs the SQL.

* ``querylang``: the query language (terms, phrases, OR, prefixes) and its FTS5 expression;
* ``stopwords``, ``stemming``, ``tokens``, ``unicode61``, ``folding``: words as the index cuts and folds them;
* ``matching``: a parsed query matched in folded text (the scan, without the index); ``speakers``: speaker labels;
* ``plan``: which plan answers a search; ``ranking``: relevance, the same with or without the index;
* ``hits``: hits shaped for the answer (snippet, terms matched, moments).
"""
