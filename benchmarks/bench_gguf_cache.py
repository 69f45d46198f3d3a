"""Benchmark (not a test): load time of a GGUF model through the cached HF folder
(``training.llm.hf_cache``): cold (no cache: transformers de-quantises the file and converts its
tokenizer, then the folder is written and loaded) and warm (cache hit: the file's sha256, then
the folder), side by side with their ratio; ``--direct`` adds the uncached route (what every
load cost before the cache).  The cache is a fresh temporary folder, removed afterwards, so the
cold load is really cold and the user's cache is left alone.

Run: python benchmarks/bench_gguf_cache.py MODEL.gguf [--warm-repeats 3] [--direct]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from theory.io.cli import OneLineParser  # noqa: E402

MAX_REPEATS = 20


def timed_load(path: Path, cache: bool) -> float:
    from training.llm.local_model import load_local

    start = time.perf_counter()
    model, tokenizer = load_local(path, cache=cache)
    seconds = time.perf_counter() - start
    del model, tokenizer
    return seconds


def parse(argv):
    parser = OneLineParser(prog="bench_gguf_cache.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .gguf file")
    parser.add_argument(
        "--warm-repeats", type=int, default=3, help=f"warm loads timed (1..{MAX_REPEATS}; median)"
    )
    parser.add_argument("--direct", action="store_true", help="also time the uncached GGUF load")
    args = parser.parse_args(argv)
    path = Path(args.model)
    if not (path.is_file() and path.suffix.lower() == ".gguf"):
        parser.error(f"model: {str(path)!r} is not an existing .gguf file")
    if not 1 <= args.warm_repeats <= MAX_REPEATS:
        parser.error(f"--warm-repeats must be in 1..{MAX_REPEATS}, got {args.warm_repeats}")
    return path, args


def main(argv=None) -> int:
    path, args = parse(argv)
    from training.llm.hf_cache import NO_CACHE_ENV, file_sha256

    os.environ.pop(NO_CACHE_ENV, None)
    with tempfile.TemporaryDirectory(prefix="bench-gguf-cache-") as root:
        os.environ["ROPE_HEADS_CACHE"] = root
        start = time.perf_counter()
        file_sha256(path)
        hashing = time.perf_counter() - start
        direct = timed_load(path, cache=False) if args.direct else None
        cold = timed_load(path, cache=True)
        warm = sorted(timed_load(path, cache=True) for _ in range(args.warm_repeats))[args.warm_repeats // 2]
        size = sum(p.stat().st_size for p in (Path(root) / "gguf").rglob("*") if p.is_file())
    print(
        f"{path.name} ({path.stat().st_size / 2**20:.0f} MiB; cached folder {size / 2**20:.0f} MiB; "
        f"sha256 {hashing:.1f} s, inside every cached load)"
    )
    print(
        f"{'cold (convert + load)':>24} {'warm (cache hit)':>18} {'cold / warm':>12}"
        + (f" {'direct (no cache)':>18} {'direct / warm':>14}" if direct is not None else "")
    )
    print(
        f"{cold:22.1f} s {warm:16.1f} s {cold / warm:11.1f}x"
        + (f" {direct:16.1f} s {direct / warm:13.1f}x" if direct is not None else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
