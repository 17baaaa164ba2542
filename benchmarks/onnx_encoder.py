"""ONNX Runtime encoding of the packaged MiniLM, for ``benchmarks.encode``: exported offline, pooled as ours.

sentence-transformers' own ONNX path (``SentenceTransformer(path, backend="onnx")``) needs ``optimum-onnx``, whose
every release pins ``transformers<4.58`` (this project runs 5.x), so it cannot be installed beside the project.
The same inference is measured here without it: the packaged folder's BERT exported once with ``torch.onnx.export``
(no network: the weights are the package's) into ``$CTBLS_CACHE_DIR/bench/onnx-<name>/model.onnx``, run by
``onnxruntime.InferenceSession`` on the CPU with the same tokenizer, length-sorted batches, masked mean pooling and
L2 normalisation: what ``backend="onnx"`` runs, minus optimum's wrapper.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retrieval.atomic import save_with

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_onnx(model_path: str, out_dir: str | Path) -> Path:
    """``out_dir/model.onnx`` exported from the transformers folder ``model_path`` (once; reused after)."""
    import torch
    from transformers import AutoModel

    path = Path(out_dir) / "model.onnx"
    if path.is_file():
        return path
    bert = AutoModel.from_pretrained(model_path).eval()

    class Hidden(torch.nn.Module):  # keyword arguments in, the last hidden state out
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    model = Hidden().eval()
    dummy = {k: torch.ones(2, 8, dtype=torch.long) for k in INPUTS}
    axes = {k: {0: "batch", 1: "tokens"} for k in INPUTS}

    def write(partial: Path) -> None:
        with torch.no_grad():
            torch.onnx.export(model, (dummy["input_ids"], dummy["attention_mask"], dummy["token_type_ids"]),
                              str(partial), input_names=list(INPUTS), output_names=["last_hidden_state"],
                              dynamic_axes={**axes, "last_hidden_state": {0: "batch", 1: "tokens"}},
                              opset_version=17, dynamo=False)

    return save_with(write, path)


class OnnxEncoder:
    """Encode documents with an exported model under ONNX Runtime (CPU), pooled and normalised as MiniLM is."""

    def __init__(self, onnx_path: str | Path, tokenizer_path: str, max_length: int = 256, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
        self.max_length = max_length
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = None
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            feats = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="np")
            feeds = {k: v.astype(np.int64) for k, v in feats.items() if k in self.inputs}
            hidden = self.session.run(["last_hidden_state"], feeds)[0]  # (B, T, D)
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            emb = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            emb /= np.linalg.norm(emb, axis=1, keepdims=True).clip(1e-12)
            if out is None:
                out = np.zeros((len(texts), emb.shape[1]), dtype=np.float32)
            out[idx] = emb
        return out
