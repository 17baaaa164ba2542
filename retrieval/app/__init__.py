"""The web page (:mod:`retrieval.app.page`): tables, memory, trends and a live memory, each beside its baseline."""
