"""training.tasks.definitions / training.tasks.datasets / python -m training data: every generated
sequence is re-solved by the reference solvers of theory.functions, balance and
split disjointness are counted, and the command line is held to its contract."""

import json
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from theory.functions import index, is_integer_token, iterate, solve_letter, solve_number
from training.tasks import datasets
from training.tasks.definitions import TASKS, Batch, get_task, load_vocab, sample_batch, save_vocab
from training.tasks.generators import EXTRA_BLOCK, follow_paths

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = {"number": solve_number, "letter": solve_letter}


def path_positions(task_name, tokens):
    """Positions visited from the query to the answer, read off the token strings
    (independent of the numpy path follower)."""
    pos, path = len(tokens) - 1, [len(tokens) - 1]
    if task_name == "number":
        while is_integer_token(tokens[pos]):
            pos -= int(tokens[pos])
            path.append(pos)
        return path
    while not tokens[pos][1].isdigit():
        pos = max(k for k in range(pos) if tokens[k][0] == tokens[pos][1])
        path.append(pos)
    return path


def answer_position(task_name, tokens):
    """The answer's position in the effective target window (first 8 of the last 17)."""
    return path_positions(task_name, tokens)[-1] - (len(tokens) - 17)


# -- vocabularies and tokenizer -------------------------------------------------------


def test_number_vocab_is_the_papers():
    vocab = get_task("number").vocab
    assert len(vocab) == 136 == len(set(vocab))
    assert vocab[:26] == list(string.ascii_lowercase)
    bigrams = vocab[26:120]
    assert len(bigrams) == 94 and bigrams[0] == "aa" and bigrams[-1] == "dp" and bigrams == sorted(bigrams)
    assert all(len(b) == 2 and b.isalpha() for b in bigrams)
    assert vocab[120:] == [str(i) for i in range(1, 17)]


def test_letter_vocab_is_the_papers():
    vocab = get_task("letter").vocab
    assert len(vocab) == 128 == len(set(vocab))
    assert vocab[:8] == [f"a{d}" for d in range(1, 9)] and vocab[8] == "b1" and vocab[63] == "h8"
    assert vocab[64:] == [a + b for a in "abcdefgh" for b in "abcdefgh"]


@pytest.mark.parametrize("name", TASKS)
def test_encode_decode_round_trip(name):
    task = get_task(name)
    ids = task.encode(task.vocab)
    assert ids.dtype == np.int64 and ids.tolist() == list(range(len(task.vocab)))
    assert task.decode(ids) == task.vocab
    assert task.encode([task.vocab[:3], task.vocab[3:6]]).shape == (2, 3)
    with pytest.raises(ValueError, match="not in the"):
        task.encode(["zz9"])


def test_unknown_task_names_the_allowed_ones():
    with pytest.raises(ValueError, match="'word'.*number, letter"):
        get_task("word")


def test_vocab_json_round_trip_and_mismatch(tmp_path):
    path = tmp_path / "vocab.json"
    save_vocab(path, "number")
    assert json.loads(path.read_text()) == get_task("number").vocab
    assert load_vocab(path, "number") == get_task("number").vocab
    assert [p.name for p in tmp_path.iterdir()] == ["vocab.json"]  # no temp file left behind
    with pytest.raises(ValueError, match="does not match the letter task.*136 tokens"):
        load_vocab(path, "letter")
    swapped = get_task("letter").vocab[:]
    swapped[5], swapped[6] = swapped[6], swapped[5]
    path.write_text(json.dumps(swapped))
    with pytest.raises(ValueError, match="id 5"):
        load_vocab(path, "letter")
    path.write_text("[not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_vocab(path, "letter")


# -- generated sequences against theory.functions ---------------------------------


@pytest.mark.parametrize("name", TASKS)
def test_every_generated_sequence_resolves_to_its_answer(name):
    task = get_task(name)
    batch = task.generate(3000, seed=11)
    assert batch.inputs.shape == (3000, 17) and batch.inputs.dtype == np.int64
    fast_pos, fast_hops, _ = follow_paths(name, batch.inputs)
    assert (fast_hops == batch.hops).all()
    for row, answer, hops, pos in zip(task.decode(batch.inputs), batch.answers, batch.hops, fast_pos):
        assert SOLVERS[name](row) == (task.vocab[answer], hops)
        assert answer_position(name, row) == pos
        check_structure(name, row, hops)
    if name == "number":  # f_NUM = [Index^h(sigma)]_n (Section 3.2) on a sample
        for row, answer, hops in zip(task.decode(batch.inputs[:300]), batch.answers, batch.hops):
            assert iterate(index, row, int(hops))[-1] == task.vocab[answer]


def check_structure(name, row, hops):
    """The construction rules of Appendix B, checked on token strings."""
    path = path_positions(name, row)
    assert path[0] == 16 and path[-1] <= 7 and all(8 <= p <= 15 for p in path[1:-1])
    assert path == sorted(path, reverse=True) and len(set(path)) == len(path) == hops + 1
    if name == "number":
        assert all(not is_integer_token(t) for t in row[:8]) and all(is_integer_token(t) for t in row[8:])
        assert all(1 <= int(row[i]) <= min(i, 16) for i in range(8, 17))
        return
    assert all(t[1].isdigit() and "1" <= t[1] <= "8" for t in row[:8])
    assert all(t[1].isalpha() for t in row[8:])
    chain = {row[p][1] for p in path[:-1]}  # the letters looked up along the path
    assert len(chain) == hops
    off_path = [row[i] for i in range(17) if i not in path[1:]]  # the query counts as off the path
    assert all(t[0] not in chain for t in off_path), (row, chain)


@pytest.mark.parametrize("name,count", [("number", 2 * 4 * 120 * 8), ("letter", 2 * 4 * 64 * 8)])
def test_balance_is_exact_when_the_count_allows(name, count):
    task = get_task(name)
    batch = task.generate(count, seed=5, exact_balance=True)
    rows = task.decode(batch.inputs)
    hop_counts = Counter(batch.hops.tolist())
    assert hop_counts == {h: count // 4 for h in (1, 2, 3, 4)}
    for hop in (1, 2, 3, 4):
        cells = Counter(
            (int(a), answer_position(name, row))
            for row, a, h in zip(rows, batch.answers, batch.hops)
            if h == hop
        )
        assert len(cells) == task.n_answer_values * 8 and set(cells.values()) == {2}


@pytest.mark.parametrize("name", TASKS)
def test_balance_is_as_near_as_possible_otherwise(name):
    task = get_task(name)
    batch = task.generate(1003, seed=2, hops=(1, 3))
    rows = task.decode(batch.inputs)
    hop_counts = Counter(batch.hops.tolist())
    assert set(hop_counts) == {1, 3} and sorted(hop_counts.values()) == [501, 502]
    for hop in (1, 3):
        mine = [
            (int(a), answer_position(name, row))
            for row, a, h in zip(rows, batch.answers, batch.hops)
            if h == hop
        ]
        for counts, size in (
            (Counter(v for v, _ in mine), task.n_answer_values),
            (Counter(p for _, p in mine), 8),
            (Counter(mine), task.n_answer_values * 8),
        ):
            full = [
                counts.get(k, 0)
                for k in (
                    range(size)
                    if size != task.n_answer_values * 8
                    else [(v, p) for v in range(task.n_answer_values) for p in range(8)]
                )
            ]
            assert max(full) - min(full) <= 1


@pytest.mark.parametrize("name,unit", [("number", 480), ("letter", 256)])
def test_exact_balance_refuses_counts_that_cannot_be_balanced(name, unit):
    task = get_task(name)
    with pytest.raises(ValueError, match=f"multiple of {unit}"):
        task.generate(unit + 4, seed=0, exact_balance=True)
    assert len(task.generate(unit, seed=0, exact_balance=True)) == unit


@pytest.mark.parametrize(
    "bad",
    [
        dict(count=0),
        dict(hops=(0,)),
        dict(hops=(5,)),
        dict(hops=()),
        dict(seed=-1),
        dict(extra_target=-1),
        dict(extra_target=1_000_001),
    ],
)
def test_generate_refuses_bad_arguments(bad):
    arguments = dict(count=10, seed=0) | bad
    with pytest.raises(ValueError):
        get_task("number").generate(**arguments)


@pytest.mark.parametrize("name", TASKS)
def test_seeds_reproduce_and_differ(name):
    task = get_task(name)
    a, b, c = task.generate(500, 7), task.generate(500, 7), task.generate(500, 8)
    assert np.array_equal(a.inputs, b.inputs) and np.array_equal(a.answers, b.answers)
    assert not np.array_equal(a.inputs, c.inputs)
    rng1, rng2 = np.random.default_rng(1), np.random.default_rng(1)
    assert np.array_equal(sample_batch(name, rng1, 64).inputs, sample_batch(name, rng2, 64).inputs)


# -- length extension (Section 3.6) -----------------------------------------------------


@pytest.mark.parametrize("name", TASKS)
@pytest.mark.parametrize("extra", [0, 1, 100, 5000])
def test_extension_keeps_answer_and_hops(name, extra):
    task = get_task(name)
    base = task.generate(48, seed=3)
    longer = task.generate(48, seed=3, extra_target=extra)
    assert longer.inputs.shape == (48, 17 + extra)
    assert np.array_equal(longer.inputs[:, extra:], base.inputs)  # the core is untouched
    assert np.array_equal(longer.answers, base.answers) and np.array_equal(longer.hops, base.hops)
    for row, answer, hops in zip(task.decode(longer.inputs), longer.answers, longer.hops):
        assert SOLVERS[name](row) == (task.vocab[answer], hops)
        extras = row[:extra]
        if name == "number":
            assert all(not is_integer_token(t) for t in extras)
        else:
            path = path_positions(name, row)
            chain = {row[p][1] for p in path[:-1]}
            assert all(t[1].isdigit() and t[0] not in chain for t in extras)


@pytest.mark.parametrize("name", TASKS)
def test_extension_is_the_same_when_streamed_in_blocks(name):
    task = get_task(name)
    whole = task.generate(2 * EXTRA_BLOCK + 50, seed=4, extra_target=9)
    core = task.generate(2 * EXTRA_BLOCK + 50, seed=4)
    pieces = [
        task.extend(core.select(slice(s, s + EXTRA_BLOCK)), 9, 4, row_start=s)
        for s in range(0, len(core), EXTRA_BLOCK)
    ]
    assert np.array_equal(whole.inputs, np.concatenate([p.inputs for p in pieces]))
    with pytest.raises(ValueError, match="0..1000000"):
        task.extend(core, 1_000_001, 4)


# -- splits ---------------------------------------------------------------------------------

SMALL = {"train": 3000, "validation": 200, "test": 802}


@pytest.mark.parametrize("name", TASKS)
def test_small_splits_are_disjoint_and_balanced(name):
    splits, info = datasets.build_splits(name, SMALL, seed=1)
    assert {k: len(v) for k, v in splits.items()} == SMALL
    union = np.concatenate([b.inputs for b in splits.values()])
    assert len({row.tobytes() for row in union}) == len(union)
    for batch in splits.values():
        counts = np.bincount(batch.hops, minlength=5)[1:]
        assert counts.max() - counts.min() <= 1
    assert info["redrawn_duplicates"] == 0


@pytest.mark.parametrize("name", TASKS)
def test_duplicates_are_redrawn_in_their_own_cell(name):
    task = get_task(name)
    batch = task.generate(400, seed=9)
    for i in range(1, 6):  # rows 1..5 become copies of row 0
        batch.inputs[i], batch.answers[i], batch.hops[i] = batch.inputs[0], batch.answers[0], batch.hops[0]
    position = answer_position(name, task.decode(batch.inputs[0]))
    assert datasets.duplicate_rows(batch.inputs).tolist() == [1, 2, 3, 4, 5]
    assert datasets.resample_duplicates(name, batch, seed=0) == 5
    assert len(datasets.duplicate_rows(batch.inputs)) == 0
    for row, answer, hops in zip(task.decode(batch.inputs[:6]), batch.answers, batch.hops):
        assert SOLVERS[name](row) == (task.vocab[answer], hops) and answer_position(name, row) == position


def test_cache_is_reused_and_rebuilt_when_stale(tmp_path, monkeypatch):
    first = datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)
    manifests = sorted(tmp_path.glob("*.json"))
    assert len(manifests) == 1 and len(list(tmp_path.glob("*.npz"))) == 1
    built = []
    original = datasets.build_splits
    monkeypatch.setattr(datasets, "build_splits", lambda *a, **k: built.append(1) or original(*a, **k))
    again = datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)
    assert built == [] and all(np.array_equal(first[k].inputs, again[k].inputs) for k in SMALL)
    manifest = json.loads(manifests[0].read_text())
    manifest["content_sha256"] = "0" * 64  # content no longer vouched for: must rebuild
    manifests[0].write_text(json.dumps(manifest))
    datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)
    assert built == [1]
    datasets.cached_splits("letter", SMALL, seed=3, cache_dir=tmp_path)  # another parameter, another file
    assert built == [1, 1] and len(list(tmp_path.glob("*.json"))) == 2
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("name", TASKS)
def test_paper_splits(name, tmp_path):
    """The real 480,000 sequences (about 2 s per task): sizes, disjointness, balance."""
    splits = datasets.paper_splits(name, cache_dir=tmp_path)
    sizes = {"train": 432_000, "validation": 2_400, "test": 45_600}
    assert {k: len(v) for k, v in splits.items()} == sizes
    union = Batch(
        *(np.concatenate([getattr(b, f) for b in splits.values()]) for f in ("inputs", "answers", "hops"))
    )
    assert len(datasets.duplicate_rows(union.inputs)) == 0
    task = get_task(name)
    report = datasets.balance_report(name, union)
    assert report["hop_counts"] == {h: 120_000 for h in (1, 2, 3, 4)}
    for hop in (1, 2, 3, 4):
        assert report[f"hop{hop}"]["values"] == (120_000 // task.n_answer_values,) * 2
        assert report[f"hop{hop}"]["positions"] == (15_000, 15_000)
        low, high = report[f"hop{hop}"]["cells"]
        assert high - low <= 1 and low == 120_000 // (task.n_answer_values * 8)
    for split, batch in splits.items():
        report = datasets.balance_report(name, batch)
        assert set(report["hop_counts"].values()) == {sizes[split] // 4}
        for hop in (1, 2, 3, 4):
            for key in ("values", "positions"):
                low, high = report[f"hop{hop}"][key]
                assert high - low <= 1
    manifest = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert manifest["parameters"]["sizes"] == sizes and manifest["parameters"]["task"] == name


# -- command line ------------------------------------------------------------------------------


def cli(*args, check=True):
    result = subprocess.run(
        [sys.executable, "-m", "training", "data", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_cli_is_reproducible_and_matches_the_api(tmp_path):
    out = tmp_path / "letter.tsv"
    first = cli("--task", "letter", "--count", "300", "--seed", "5", "--extra-target", "3", "--hops", "2,4")
    cli(
        "--task",
        "letter",
        "--count",
        "300",
        "--seed",
        "5",
        "--extra-target",
        "3",
        "--hops",
        "2,4",
        "--out",
        str(out),
    )
    assert out.read_text() == first.stdout and first.stderr == ""
    other = cli("--task", "letter", "--count", "300", "--seed", "6", "--extra-target", "3", "--hops", "2,4")
    assert other.stdout != first.stdout
    task = get_task("letter")
    batch = task.generate(300, 5, hops=(2, 4), extra_target=3)
    lines = first.stdout.splitlines()
    assert len(lines) == 300
    for line, row, answer, hops in zip(lines, task.decode(batch.inputs), batch.answers, batch.hops):
        text, answer_token, hop_text = line.split("\t")
        assert text.split() == row and answer_token == task.vocab[answer] and int(hop_text) == hops
        assert solve_letter(text.split()) == (answer_token, int(hop_text))


@pytest.mark.parametrize(
    "args,names",
    [
        (["--task", "words", "--count", "5", "--seed", "0"], "words"),
        (["--task", "number", "--count", "5", "--seed", "0", "--hops", "1,5"], "1..4"),
        (["--task", "number", "--count", "5", "--seed", "0", "--extra-target", "-1"], "-1"),
        (["--task", "number", "--count", "5", "--seed", "0", "--extra-target", "5000000"], "5000000"),
        (["--task", "number", "--count", "0", "--seed", "0"], "got 0"),
        (["--task", "number", "--count", "100", "--seed", "0", "--exact-balance"], "multiple of 480"),
    ],
)
def test_cli_bad_input_is_one_line_and_status_2(args, names):
    result = cli(*args, check=False)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0] and "Traceback" not in result.stderr


# -- a damaged dataset cache is rebuilt, a bad cache folder refused (issue 13) ---------------------


def _damage(folder: Path, how: str) -> Path:
    """Damage the one cache in ``folder``; return the file damaged."""
    data, manifest = next(folder.glob("*.npz")), next(folder.glob("*.json"))
    if how == "truncated":
        data.write_bytes(data.read_bytes()[:200])
    elif how == "empty":
        data.write_bytes(b"")
    elif how == "manifest []":
        manifest.write_text("[]")
    else:
        manifest.write_text("{not json")
    return manifest if how.startswith("manifest") else data


@pytest.mark.parametrize("how", ["truncated", "empty", "manifest []", "manifest garbage"])
def test_a_damaged_cache_is_rebuilt_and_says_so(tmp_path, capsys, how):
    first = datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)
    damaged = _damage(tmp_path, how)
    capsys.readouterr()
    again = datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)
    assert all(np.array_equal(first[k].inputs, again[k].inputs) for k in SMALL)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(damaged) in lines[0] and "rebuilding" in lines[0]
    datasets.cached_splits("letter", SMALL, seed=2, cache_dir=tmp_path)  # the rebuilt cache loads silently
    assert capsys.readouterr().err == "" and not list(tmp_path.glob(".*.tmp"))


def test_a_cache_folder_that_is_a_file_is_a_usage_error(tmp_path, monkeypatch):
    from training.cli_common import UsageError

    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("x")
    monkeypatch.setenv("ROPE_HEADS_CACHE", str(not_a_folder))
    with pytest.raises(datasets.CacheError, match="ROPE_HEADS_CACHE") as raised:
        datasets.cached_splits("letter", SMALL, seed=2)
    assert isinstance(raised.value, UsageError) and str(not_a_folder) in str(raised.value)
    assert not_a_folder.read_text() == "x"
    with pytest.raises(datasets.CacheError, match="not a directory"):  # a file above the cache folder
        datasets.cached_splits("letter", SMALL, seed=2, cache_dir=not_a_folder / "below")
