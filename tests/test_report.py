"""One print_table for the evaluations (named rows, fixed-width metrics) and the benchmarks (records)."""

from eval.report import METRICS, print_table

# Both outputs as the two former print_tables (eval/report.py's and benchmarks/common.py's) printed them.
EVAL = """
pool (3 tables)
                          mrr@10              top1 first_turn_mrr@10
bm25                      0.5000            0.3333                 -
bm25+dtr (rrf)            0.2500                 -                 -"""
BENCH = """
== indices ==
 index     n      ms      big  x
------  ----  ------  -------  -
  Flat  1000  0.1235  123,457   
HNSW32    10       2      1.5  y"""  # noqa: W291  (the empty cell of the last column)


def test_evaluation_tables_print_as_before(capsys):
    rows = {"bm25": {"mrr@10": 0.5, "top1": 1 / 3, "n": 3}, "bm25+dtr (rrf)": {"mrr@10": 0.25}}
    text = print_table(rows, ["mrr@10", "top1", "first_turn_mrr@10"], "pool (3 tables)", METRICS)
    assert text == EVAL and capsys.readouterr().out == EVAL + "\n"


def test_benchmark_tables_print_as_before(capsys):
    rows = [{"index": "Flat", "n": 1000, "ms": 0.12345, "big": 123456.7, "x": None},
            {"index": "HNSW32", "n": 10, "ms": 2.0, "big": 1.5, "x": "y"}]
    assert print_table(rows, title="== indices ==") == BENCH and capsys.readouterr().out == BENCH + "\n"
    assert print_table([]) == "" and capsys.readouterr().out == ""
