"""Studies that chose a setting, and generators of evaluation data: not the evaluation commands themselves.

- model selection: ``content_proxy`` (the content ranking's fusion, prior and cut on LoCoMo), ``content_variants``
  (other cuts and rankings scored the same way), ``topic_decision`` (when a question names a topic);
- data: ``temporal_bank`` (with ``bank_phrases``) writes the question bank ``eval/bank``.

They import the evaluation commands' library code (``eval``) and ``retrieval``; nothing imports them.
"""
