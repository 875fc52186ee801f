"""Bad input: refused with the key and value named, exit 2 from the CLI, a typed
exception from Python, never a panic."""

import subprocess
import sys

import pytest
import spillway
from spillway import ScenarioError

SPILLWAY = [sys.executable, "-m", "spillway"]

CASES = [
    # (scenario text, key named, fragment of the message)
    ('[switch]\nbufer = "128KB"\n', "switch.bufer", "did you mean switch.buffer"),
    ('[topology]\nlink_rate = "10GBs"\n', "topology.link_rate", "unknown rate unit"),
    ('[topology]\nlink_delay = "-1us"\n', "topology.link_delay", "not a time"),
    ('[topology]\nkind = "fat_tree"\nk = 5\n', "topology.k", "even"),
    ('[topology]\nkind = "star"\nk = 4\n', "topology.k", "does not apply"),
    ('[topology]\nkind = "torus"\n', "topology.kind", "must be one of"),
    ('[workload]\nkind = "poisson"\nload = 1.5\n', "workload.load", "(0, 1]"),
    ('[workload]\nreceiver = 99\n', "workload.receiver", "no such host"),
    ('[switch]\nbuffer = "1KB"\n', "switch.buffer", "full-size packet"),
    ('[transport]\nrto_min = "0ms"\n', "transport.rto_min", "positive"),
    ('[nonsense]\nx = 1\n', "nonsense", "unknown section"),
    ('[workload]\nkind = "trace"\n', "workload.flows", "at least one flow"),
    ('[workload]\nkind = "trace"\nflows = [{src = 0, dst = 0, size = 10}]\n',
     "workload.flows[0].dst", "two different hosts"),
    ("this is not toml", "(file)", "not valid TOML"),
    # A source whose only destination is itself would redraw forever.
    ('[workload]\nkind = "poisson"\nsources = [0, 1]\ndestinations = [0]\n',
     "workload.destinations", "source 0 has no destination other than itself"),
    # A repeated host would double its load (rates are per listed host).
    ('[workload]\nkind = "poisson"\nsources = [3, 3]\n', "workload.sources", "listed twice"),
    # A client with no worker but itself would issue queries that never complete.
    ('[workload]\nkind = "short_long"\nshort_fraction = 0\nclients = [0, 1]\n'
     'workers = [0]\n', "workload.workers", "client 0 has no worker other than itself"),
    # Marks that no sender would see.
    ('[switch]\necn = "codel"\n[transport]\necn = false\n', "transport.ecn",
     "not ECN-capable"),
    # pFabric's NIC evicts other flows' packets, which local refusal cannot express.
    ('[switch]\nqueue = "pfabric"\n[host]\nnic_drop = "local"\n', "host.nic_drop",
     "drop-tail NICs"),
    # Networks too large to build: refused before anything is allocated.
    ('[topology]\nkind = "leaf_spine"\nracks = 65536\n', "topology.racks",
     "GiB of routing tables"),
    ('[topology]\nkind = "leaf_spine"\nhosts_per_rack = 65535\n',
     "topology.hosts_per_rack", "ports"),
    ('[topology]\nkind = "star"\nhosts = 70000\n', "topology.hosts", "2..=65536"),
    # The ping workload (docs/outputs.md § pings.parquet).
    ('[ping]\ninterval = "1ms"\nsrc = 3\ndst = 3\n', "ping.dst", "is ping.src"),
    ('[ping]\ninterval = "1ms"\nsrc = 16\ndst = 3\n', "ping.src", "no such host"),
    ('[ping]\ninterval = "0us"\nsrc = 1\ndst = 3\n', "ping.interval", "positive"),
    ('[ping]\ninterval = "1ms"\ndst = 3\n', "ping.src", "required with ping.interval"),
    ('[ping]\nsrc = 1\n', "ping.src", "ping.interval, which is off"),
    ('[ping]\ninterval = "1ms"\nsrc = 1\ndst = 3\nbytes = "9000B"\n', "ping.bytes",
     "28..=1500"),
    ('[run]\nqueue_sample_interval = "0us"\n', "run.queue_sample_interval", "positive"),
    ('[run]\nflow_throughput_interval = "0us"\n', "run.flow_throughput_interval",
     "positive"),
    # Two classifications at once: the message reads as one sentence.
    ('[workload]\nkind = "partition_aggregate"\npriorities = 4\nclasses_by_size = ["100KB"]\n',
     "workload.classes_by_size", "priorities = 4 draws one per query: use one of them"),
]


@pytest.mark.parametrize(("text", "key", "fragment"), CASES)
def test_python_raises_typed_error(text, key, fragment):
    with pytest.raises(ScenarioError) as e:
        spillway.validate(text)
    assert e.value.key == key
    assert fragment in str(e.value)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(("text", "key", "fragment"), CASES[:6])
def test_cli_exits_2_naming_the_key(tmp_path, text, key, fragment):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    for cmd in (["validate", str(p)], ["run", str(p), "--out", str(tmp_path / "o")]):
        r = subprocess.run(SPILLWAY + cmd, capture_output=True, text=True)
        assert r.returncode == 2, r
        assert key in r.stderr and fragment in r.stderr
        assert "panicked" not in r.stderr and "Traceback" not in r.stderr


def test_bad_cdf_files_are_refused(tmp_path):
    cases = {
        "short.cdf": ("1 1 0\n10 1 0.5\n", "does not end at 1"),
        "wobbly.cdf": ("1 1 0\n10 1 0.6\n5 1 0.7\n20 1 1\n", "not monotone"),
        "words.cdf": ("small 1 0\n", "not a number"),
    }
    for name, (body, fragment) in cases.items():
        (tmp_path / name).write_text(body)
        scenario = tmp_path / f"{name}.toml"
        scenario.write_text(f'[workload]\nkind = "poisson"\ncdf = "{name}"\n')
        with pytest.raises(ScenarioError) as e:
            spillway.validate(scenario)
        assert e.value.key == "workload.cdf"
        assert fragment in e.value.message


def test_bad_override_is_refused():
    with pytest.raises(ScenarioError) as e:
        spillway.validate("", ["workload.sendrs=4"])
    assert e.value.key == "workload.sendrs"
    with pytest.raises(ScenarioError) as e:
        spillway.validate("", ["workload.senders"])
    assert e.value.key == "--set"


def test_missing_file_is_a_clean_error(tmp_path):
    r = subprocess.run(SPILLWAY + ["validate", str(tmp_path / "nope.toml")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "not found" in r.stderr


def test_an_out_directory_that_is_a_file_is_a_clean_error(tmp_path, root):
    f = tmp_path / "file"
    f.write_text("")
    r = subprocess.run([*SPILLWAY, "run", "examples/trace.toml", "--out", str(f)],
                       capture_output=True, text=True, cwd=root)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert str(f) in r.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory, root) -> dict[str, str]:
    """Paths the usage-error cases name: broken files, and a finished sweep of the trace
    example (which has no queries)."""
    from spillway.sweep import build_sweep, run_sweep

    d = tmp_path_factory.mktemp("files")
    (d / "latin1.toml").write_bytes('[topology]\nkind = "star"  # caf\xe9\n'.encode("latin-1"))
    (d / "latin1-sweep.toml").write_bytes(b'seeds = 1  # \xff\n')
    (d / "base5.toml").write_text("base = 5\n")
    (d / "base-latin1.toml").write_text('base = "latin1.toml"\n')
    (d / "ok-sweep.toml").write_text(f'base = "{root / "examples/trace.toml"}"\n')
    run_sweep(build_sweep({"base": str(root / "examples/trace.toml"),
                           "set": {"run.duration": "1ms"}}), d / "store", workers=1, quiet=True)
    (d / "empty").mkdir()
    return {k.replace("-", "_").removesuffix(".toml"): str(d / k) for k in (
        "latin1.toml", "latin1-sweep.toml", "base5.toml", "base-latin1.toml", "ok-sweep.toml",
        "store", "empty", "nope")}


USAGE_ERRORS = [
    # (argv, with {name} standing for files[name]; fragments of the one-line message)
    (["validate", "{latin1}"], ["(file)", "not UTF-8", "0xe9"]),
    (["run", "{latin1}", "--out", "{out}"], ["(file)", "not UTF-8"]),
    (["sweep", "{latin1_sweep}", "--out", "{out}"], ["(sweep file)", "not UTF-8"]),
    (["sweep", "{base5}", "--out", "{out}"], ["sweep.base = 5", "expected a string"]),
    (["sweep", "{base_latin1}", "--out", "{out}"], ["sweep.base", "not UTF-8"]),
    (["sweep", "{ok_sweep}", "--out", "{out}", "--workers", "-1"], ["--workers", "-1"]),
    (["sweep", "{ok_sweep}", "--out", "{out}", "--workers", "0"], ["--workers"]),
    (["sweep", "{ok_sweep}", "--out", "{out}", "--workers", "two"], ["--workers"]),
    (["sweep", "{ok_sweep}", "--out", ""], ["--out is empty"]),
    (["query", "{store}", "SELEC 1"], ["query failed", "syntax error"]),
    (["query", "{store}", "SELECT * FROM flowz"], ["query failed", "flowz"]),
    (["query", "{store}", "SELECT nope FROM flows"], ["query failed", "nope"]),
    (["query", "{store}", "SELECT count(*) FROM queries"], ["no `queries`"]),
    (["query", "{empty}", "SELECT 1"], ["no catalog"]),
    (["validate", "{nope}"], ["not found"]),
    (["run", "{nope}", "--out", "{out}"], ["not found"]),
    (["sweep", "{nope}", "--out", "{out}"], ["not found"]),
    (["bench", "--repeat", "0", "incast64"], ["--repeat"]),
    (["bench", "nosuch"], ["unknown benchmark", "nosuch"]),
    (["bench", "arbiter", "incast64"], ["bench arbiter", "on its own"]),
    (["reproduce", "nosuch", "--out", "{out}"], ["unknown reproduction", "nosuch"]),
    (["reproduce", "incast", "--figure", "nope", "--out", "{out}"], ["unknown figure"]),
    (["reproduce", "incast", "--seeds-from", "-1", "--out", "{out}"], ["--seeds-from -1"]),
    (["reproduce", "incast", "--workers", "-1", "--out", "{out}"], ["--workers"]),
    (["reproduce", "incast", "--out", ""], ["--out is empty"]),
    (["reproduce", "incast"], ["--out"]),
    (["arbiter", "demo", "--endpoints", "2", "--duration", "3x"],
     ["--duration", "unknown time unit"]),
    (["arbiter", "demo", "--endpoints", "2", "--duration", "nan"], ["--duration", "not a time"]),
    (["arbiter", "demo", "--endpoints", "2", "--duration", "3s", "--kill-primary-at", "4s"],
     ["--kill-primary-at", "between 0 and --duration"]),
    ([], ["command"]),
]


@pytest.mark.parametrize(("argv", "fragments"), USAGE_ERRORS,
                         ids=[" ".join(a) or "(none)" for a, _ in USAGE_ERRORS])
def test_usage_errors_exit_2_with_one_line(argv, fragments, files, tmp_path, capsys,
                                          monkeypatch):
    """Each used to end in a Python traceback (or exit 1, or a usage text of several
    lines); the CLI's main is called in-process, so an exception escaping it is the
    traceback a user would see."""
    from spillway.cli import main

    monkeypatch.chdir(tmp_path)  # `--out ""` used to write into the current directory
    out = tmp_path / "out"
    try:
        code = main([a.format(**files, out=out) for a in argv])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    for f in fragments:
        assert f in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == [], "nothing is written"


def test_a_cli_usage_error_prints_no_traceback(tmp_path, usage_error):
    """The same end to end, in a process of its own."""
    p = tmp_path / "bad.toml"
    p.write_bytes(b"\xff\xfe[topology]\n")
    usage_error(["validate", str(p)], "not UTF-8")
    usage_error(["sweep", str(p), "--out", str(tmp_path / "o"), "--workers", "-1"],
                "--workers")


def test_help_describes_the_command_in_whole_sentences(capsys):
    """`spillway --help` once stopped mid-sentence ("... exit statuses are an"): its
    description and epilog are whole sentences, and the exit statuses are there."""
    from spillway.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "deterministic packet-level simulator" in text
    for sentence in ("compare every scheme head to head.", "130 when interrupted.",
                     "a plain number is seconds."):
        assert sentence in text, text


@pytest.mark.parametrize(("value", "seconds"), [("3s", 3.0), ("1500ms", 1.5), ("3", 3.0),
                                                ("0.25", 0.25), ("200us", 2e-4)])
def test_cli_times_take_the_scenario_syntax(value, seconds):
    """`arbiter demo --duration 3s` was refused (`invalid float value: '3s'`) while every
    scenario time takes units; a plain number still means seconds."""
    from spillway.cli import build_parser

    a = build_parser().parse_args(["arbiter", "demo", "--endpoints", "2", "--duration", value,
                                   "--pause-for", value])
    assert a.duration == pytest.approx(seconds) and a.pause_for == pytest.approx(seconds)
    a = build_parser().parse_args(["arbiter", "serve", "x.toml", "--duration", value])
    assert a.duration == value
