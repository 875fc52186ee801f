"""`spillway bench` and the generated reference."""

import json
import subprocess
import sys

from spillway import _core

SPILLWAY = [sys.executable, "-m", "spillway"]


def test_bench_json_reports_rates():
    r = subprocess.run(SPILLWAY + ["bench", "--json", "incast64"], capture_output=True,
                       text=True, check=True)
    rows = json.loads(r.stdout)
    assert [x["name"] for x in rows] == ["incast64"]
    row = rows[0]
    for k in ("events_per_s", "packet_hops_per_s", "wall_s", "peak_rss_mb"):
        assert row[k] > 0, k
    # 64 senders x 64 KB x 100 rounds all arrive: at least one hop per full data packet.
    assert row["packet_hops"] >= 100 * 64 * 45


def test_bench_repeat_reports_the_median_run_and_the_range():
    r = subprocess.run(SPILLWAY + ["bench", "--json", "--repeat", "3", "incast64"],
                       capture_output=True, text=True, check=True)
    (row,) = json.loads(r.stdout)
    assert row["runs"] == 3
    for k in ("events_per_s", "packet_hops_per_s"):
        lo, hi = row[f"{k}_range"]
        assert 0 < lo <= hi
    lo, hi = row["packet_hops_per_s_range"]
    assert lo <= row["packet_hops_per_s"] <= hi
    # The row is one real run's: all its counts are there.
    assert row["packet_hops"] >= 100 * 64 * 45 and row["wall_s"] > 0
    bad = subprocess.run(SPILLWAY + ["bench", "--repeat", "0", "incast64"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "--repeat" in bad.stderr


def test_bench_pfabric_queue_json_has_a_row_per_form_order_and_length():
    r = subprocess.run(SPILLWAY + ["bench", "pfabric_queue", "--json", "--quick"],
                       capture_output=True, text=True, check=True)
    rows = json.loads(r.stdout)
    keys = {(x["form"], x["order"], x["packets"]) for x in rows}
    for n in (8, 64, 512, 4096):
        for form, order in (("queue", "arrival"), ("queue", "sequence"), ("linear", "arrival")):
            assert (form, order, n) in keys
    for x in rows:
        assert x["ns_per_op"] > 0 and x["ops"] > 0
        # The arrivals at a full buffer mostly evict (random priorities).
        assert 0 < x["evictions"] <= x["ops"]


def test_reference_doc_is_generated_from_the_code(root):
    assert (root / "docs/reference.md").read_text() == _core.reference()


def test_outputs_doc_tables_are_generated_from_the_schemas(root):
    from spillway import reference

    text = (root / "docs/outputs.md").read_text()
    assert reference.fill_outputs(text) == text, "run `make reference`"
    # Every table is there, with every column the schemas define.
    for name in reference.TABLES:
        assert f"<!-- generated: {name} -->" in text, name
    for c in _core.schemas()["ports"]:
        assert f"| `{c['name']}` |" in text


def test_reference_outputs_rewrites_only_the_generated_tables(tmp_path):
    doc = tmp_path / "outputs.md"
    doc.write_text("Prose kept.\n\n<!-- generated: queries -->\nstale\n"
                   "<!-- end generated -->\n\nMore prose.\n")
    subprocess.run(SPILLWAY + ["reference", "--outputs", str(doc)], check=True)
    text = doc.read_text()
    assert "stale" not in text and "| `qct_ps` | u64 |" in text
    assert text.startswith("Prose kept.\n") and text.endswith("More prose.\n")
    (tmp_path / "plain.md").write_text("no tables here\n")
    bad = subprocess.run(SPILLWAY + ["reference", "--outputs", str(tmp_path / "plain.md")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "generated" in bad.stderr
