"""The judged assistant set (issue 44): a store, questions with their facts, a naive server, a client, a grader.

A language model acting as the user's assistant answers each question through ``ask`` (the tools are its only
view of the store); ``grade`` holds its answers to the facts. How to run it: docs/assistant-eval.md.

* ``planted``: the transcripts and tasks that hold the answers, and the store's fixed "now";
* ``filler``: everyday meetings, dictations and tasks around them, in five languages;
* ``store``: writes a store of 1k or 10k transcripts with ``devkit.storefactory.StoreBuilder``;
* ``questions``: the questions, their kinds, facts and split (tune / heldout);
* ``naive``: the baseline server of the same contract (plain FTS5, every word required, no hint);
* ``clock``: runs magnotia-mcp with time words read against the store's "now";
* ``ask``: the command-line client a model calls; ``grade``: the grader and its report.
"""
