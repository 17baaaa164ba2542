"""The memory's learned relevance model: features of a candidate row (:mod:`.features`), the model and its cut
(:mod:`.model`), and the second stage that re-ranks with it (:mod:`.rerank`)."""
