"""Execute a study: every member's stages as ``python -m training`` commands, idempotent.

A member's folder (``Plan.folder``) holds ``run/`` (the training run), one JSON file per
finished stage and ``logs/<stage>.log``.  Stages, in order, each skipped when its output
exists (outputs are written atomically, so existing means complete):

    train    run/ (resumed from its last checkpoint when it has one) -> train.json
    test     test_accuracy.json          evaluate --split test            (if the plan asks)
    lengths  length_generalisation.json  evaluate --lengths ... (per hop count)
    rescale  length_rescaled.json        evaluate --lengths ... --query-scale (the plan's rescale
                                         variants: trained without a scale, scaled at inference)
    dilution dilution.json               dilution --accuracy length_generalisation.json (if asked)
    rescale_dilution  dilution_rescaled.json   dilution --query-scale --accuracy length_rescaled.json
                                         (the rescale variants, if the rescale section asks)
    analyze  analysis.json               analyze (scores of every checkpoint, ...)
    long     length_long.json            evaluate --lengths (past the grid; listed variants only)

so rerunning a study skips finished members and resumes partial ones, and a kill -9 at any
moment loses at most one checkpoint interval of training (or one evaluation).  Each stage is
a subprocess with its own torch thread count (``--threads``, default max(1, cores // --jobs);
the train stage gets it as ``OMP_NUM_THREADS``, its cap: ``training.run.threads`` takes one thread
for a small model), which is also what
``--list`` prints for a scheduler: one line per member, ``study PLAN --member ID``.  A stage's
subprocess dies with the study, even one killed with SIGKILL (``stage_process``), and every
file the runner reads or trusts is checked before any work (``check_members``).

Seed-batched training (the study's ``--batch-seeds``): ``training.studies.batch_seeds``, which the
command runs before ``run_study`` (it imports this module, so this module never imports it).

A second ``study`` on the same plan joins safely: a member is locked while a process works on
it (``.member.lock``, the run folders' flock of ``training.run.lock``), and other
processes skip it; the train stage's run folder has its own lock besides.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from theory.io.files import atomic_write_bytes, atomic_write_json, check_output_dir
from theory.io.inputs import InputError, parse_json
from training.run.checks import RunError
from training.run.lock import LockHeld, RunLock

from .member_files import MEMBER_SHAPE, check_stage_outputs, read_json, read_stage_file
from .plan import Member, Plan
from .stage_process import run_tied

__all__ = [
    "STAGES",
    "MemberFailed",
    "stage_commands",
    "member_finished",
    "check_members",
    "recipe_conflict",
    "run_member",
    "run_study",
    "list_commands",
]

STAGES = ("train", "test", "lengths", "rescale", "dilution", "rescale_dilution", "analyze", "long")
OUTPUTS = {
    "train": "train.json",
    "test": "test_accuracy.json",
    "lengths": "length_generalisation.json",
    "rescale": "length_rescaled.json",
    "dilution": "dilution.json",
    "rescale_dilution": "dilution_rescaled.json",
    "analyze": "analysis.json",
    "long": "length_long.json",
}


class MemberFailed(RuntimeError):
    """A stage of a member exited non-zero; the message names it and the end of its log."""


def training_stage(*args) -> list[str]:
    return [sys.executable, "-m", "training", *map(str, args)]


def run_folder(plan: Plan, member: Member) -> Path:
    return plan.reuse.get(member.id) or plan.folder(member) / "run"


def has_checkpoint(run: Path) -> bool:
    return any((run / "checkpoints").glob("step-*"))


def stage_commands(plan: Plan, member: Member, threads: int = 1) -> dict:
    """stage -> argv of the command that makes its output (module doc)."""
    folder, run, task = plan.folder(member), run_folder(plan, member), member.task
    variant = plan.variants[member.variant]
    train = training_stage(
        "train",
        "--task",
        task,
        "--out",
        run,
        "--preset",
        variant["preset"],
        "--seed",
        member.seed,
        "--no-progress",
    )
    for override in variant["set"]:
        train += ["--set", override]
    if has_checkpoint(run):
        train.append("--resume")
    common = ["--threads", threads, "--no-progress"]
    ev, an = plan.evaluate, plan.analyze

    def evaluate(settings: dict, stage: str) -> list:
        argv = training_stage(
            "evaluate",
            "--run",
            run,
            "--task",
            task,
            "--lengths",
            ",".join(map(str, settings["lengths"])),
            "--count",
            settings["count"],
            "--seed",
            settings["seed"],
            "--json",
            folder / OUTPUTS[stage],
            *common,
        )
        if settings.get("max_tokens") is not None:  # the long stage has no cap
            argv += ["--max-tokens", str(settings["max_tokens"])]
        return argv

    def dilution(lengths, stage: str, accuracy_stage: str) -> list:
        return training_stage(
            "dilution",
            "--run",
            run,
            "--task",
            task,
            "--json",
            folder / OUTPUTS[stage],
            "--lengths",
            ",".join(map(str, lengths)),
            "--count",
            plan.dilution["count"],
            "--seed",
            plan.dilution["seed"],
            "--accuracy",
            folder / OUTPUTS[accuracy_stage],
            *common,
        )

    commands = {"train": train, "lengths": evaluate(ev, "lengths")}
    rescale = (
        plan.rescale if plan.rescale is not None and member.variant in plan.rescale["variants"] else None
    )
    if rescale:
        commands["rescale"] = evaluate(rescale, "rescale") + ["--query-scale", rescale["query_scale"]]
    if (
        plan.long is not None
        and member.variant in plan.long["variants"]
        and member.task in plan.long["tasks"]
    ):
        commands["long"] = evaluate(plan.long, "long")
    if plan.dilution is not None:
        commands["dilution"] = dilution(ev["lengths"], "dilution", "lengths")
        if rescale and rescale["dilution"]:
            commands["rescale_dilution"] = dilution(rescale["lengths"], "rescale_dilution", "rescale") + [
                "--query-scale",
                rescale["query_scale"],
            ]
    if an is not None:
        commands["analyze"] = analyze = training_stage(
            "analyze",
            "--run",
            run,
            "--task",
            task,
            "--json",
            folder / OUTPUTS["analyze"],
            "--n-inputs",
            an["n_inputs"],
            *common,
        )
        if not an["discrepancy"]:
            analyze.append("--no-discrepancy")
        if an["discrepancy_lengths"]:
            analyze += ["--discrepancy-lengths", ",".join(map(str, an["discrepancy_lengths"]))]
        if an["discrepancy_count"]:
            analyze += ["--discrepancy-count", str(an["discrepancy_count"])]
    if ev["test_split"]:
        commands["test"] = training_stage(
            "evaluate",
            "--run",
            run,
            "--task",
            task,
            "--split",
            "test",
            "--json",
            folder / OUTPUTS["test"],
            *common,
        )
    return {stage: commands[stage] for stage in STAGES if stage in commands}


def member_finished(plan: Plan, member: Member) -> bool:
    """Whether every stage the plan gives ``member`` has its output (a stage added to the plan
    later makes a member unfinished again until it has run)."""
    folder = plan.folder(member)
    return all((folder / OUTPUTS[stage]).is_file() for stage in stage_commands(plan, member))


def _reuse_results(plan: Plan, member: Member) -> None:
    """A reused member takes the results its run folder already has, where they were made
    with the plan's settings; anything else is computed from its weights as usual."""
    source, folder = plan.reuse[member.id], plan.folder(member)
    if not (folder / OUTPUTS["train"]).exists():
        atomic_write_json(folder / OUTPUTS["train"], {"reused": str(source)}, indent=1)
    checks = {
        "test": lambda d: d.get("split") == "test",
        "lengths": lambda d: (
            d.get("lengths") == plan.evaluate["lengths"]
            and d.get("seed") == plan.evaluate["seed"]
            and (d.get("n_per_length") or [None])[0] == plan.evaluate["count"]
        ),
        "analyze": lambda d: plan.analyze is not None and d.get("n_inputs") == plan.analyze["n_inputs"],
    }
    for stage, matches in checks.items():
        src, dst = source / OUTPUTS[stage], folder / OUTPUTS[stage]
        if dst.exists() or not src.is_file():
            continue
        if matches(read_stage_file(source, stage, OUTPUTS[stage])):
            atomic_write_bytes(dst, src.read_bytes())
    if (source / "metrics.jsonl").is_file() and not (folder / "metrics.jsonl").exists():
        atomic_write_bytes(folder / "metrics.jsonl", (source / "metrics.jsonl").read_bytes())


def _log_tail(path: Path, size: int = 4096) -> str:
    """The end of a stage's log (a training log may be long; its last line says why it failed)."""
    try:
        with open(path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - size))
            return log.read().decode("utf-8", errors="replace")
    except OSError as error:
        return f"(its log {path} cannot be read: {error.strerror or error})"


def run_stage(stage: str, argv: list, folder: Path, threads: int) -> dict:
    """Run one stage (``stage_process.run_tied``: it dies with this process), its output in
    ``logs/<stage>.log``; MemberFailed naming the log's last line if it fails."""
    logs = folder / "logs"
    log_path = logs / f"{stage}.log"
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    started = time.time()
    try:
        logs.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"$ {shlex.join(argv)}\n")
            log.flush()
            returncode, stdout = run_tied(argv, log, env, logs)
            log.write(stdout)
    except OSError as error:  # a full disk or a folder turned unwritable under the study
        raise MemberFailed(
            f"stage {stage}: cannot write {error.filename or log_path}: {error.strerror or error}"
        ) from None
    if returncode != 0:
        tail = _log_tail(log_path).strip().splitlines()[-1:]
        raise MemberFailed(f"stage {stage} exited {returncode}: {' '.join(tail)} (log {log_path})")
    lines = stdout.strip().splitlines()
    return {"seconds": round(time.time() - started, 1), "stdout": lines[-1] if lines else ""}


def train_summary(stdout: str, folder: Path) -> dict:
    """The JSON line train prints last (its summary), checked like any input."""
    try:
        return parse_json(
            stdout or "{}", f"the last line train printed (log {folder / 'logs' / 'train.log'})", dict
        )
    except InputError as error:
        raise MemberFailed(str(error)) from None


def check_members(plan: Plan, members: list[Member]) -> None:
    """Before any work: every member folder can be made and written, and every file the runner
    will read or trust there is whole (``member_files``): its member.json, the stage outputs it
    already has (existing means done, so a damaged one would be built on), a reused run's
    results.  InputError / OutputError name the file (one line, exit 2)."""
    for member in members:
        folder = plan.folder(member)
        check_output_dir(folder, f"study member {member.id} folder")
        read_json(
            folder / "member.json", MEMBER_SHAPE, "study member recipe"
        )  # a conflict fails that member only
        check_stage_outputs(folder, OUTPUTS)
        if member.id in plan.reuse:
            check_stage_outputs(
                plan.reuse[member.id], {s: OUTPUTS[s] for s in ("test", "lengths", "analyze")}
            )


def run_member(plan: Plan, member: Member, threads: int = 1, on_stage=None) -> str:
    """Run every unfinished stage of one member; returns "done", "skipped" (another process
    holds it) or raises MemberFailed."""
    folder = plan.folder(member)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with RunLock(folder, ".member.lock", "study process"):
            check_member_recipe(plan, member)
            if member.id in plan.reuse:
                _reuse_results(plan, member)
            for stage, argv in stage_commands(plan, member, threads).items():
                output = folder / OUTPUTS[stage]
                if output.exists():
                    continue
                if on_stage:
                    on_stage(member, stage)
                result = run_stage(stage, argv, folder, threads)
                if stage == "train":
                    atomic_write_json(
                        output,
                        {
                            "summary": train_summary(result["stdout"], folder),
                            "seconds": result["seconds"],
                            "threads": threads,
                            "host": os.uname().nodename,
                        },
                        indent=1,
                    )
            return "done"
    except LockHeld:
        return "skipped"
    except RunError as error:  # the member folder could not be locked at all
        raise MemberFailed(str(error)) from None


def _recipe(plan: Plan, member: Member) -> dict:
    variant = plan.variants[member.variant]
    return {"task": member.task, "seed": member.seed, "preset": variant["preset"], "set": variant["set"]}


def recipe_conflict(plan: Plan, member: Member) -> str | None:
    """Why the member's folder is not this plan's member: its member.json (validated) records
    another recipe (two plans sharing a root with one id for two recipes); None if it is."""
    recipe, path = _recipe(plan, member), plan.folder(member) / "member.json"
    recorded = read_json(path, MEMBER_SHAPE, "study member recipe")
    if recorded is None or recorded == recipe:
        return None
    return f"{path} records another recipe ({recorded}) than plan {plan.path} ({recipe})"


def check_member_recipe(plan: Plan, member: Member) -> None:
    """Record the member's recipe in its folder; one that records another is refused rather than mixed."""
    conflict = recipe_conflict(plan, member)
    if conflict:
        raise MemberFailed(conflict)
    if not (plan.folder(member) / "member.json").exists():
        atomic_write_json(plan.folder(member) / "member.json", _recipe(plan, member), indent=1)


def study_command(plan: Plan) -> str:
    """``cd CWD && PYTHON -m training study PLAN``: the start of every shell line that runs part of
    the study (a member, the collection) from anywhere that sees the same files."""
    return (
        f"cd {shlex.quote(str(Path.cwd()))} && {shlex.quote(sys.executable)} -m training study "
        f"{shlex.quote(str(plan.path.resolve()))}"
    )


def member_threads(jobs: int, cores: int | None = None) -> int:
    """Each member's torch threads when ``jobs`` members run at once on this machine:
    max(1, cores // jobs) (training.run.threads.member_threads)."""
    from training.run.threads import member_threads as share

    return share(jobs, cores)


def list_commands(plan: Plan, threads: int = 1) -> list[str]:
    """One shell line per member, runnable from anywhere that sees the same files."""
    return [f"{study_command(plan)} --member {shlex.quote(m.id)} --threads {threads}" for m in plan.members()]


def run_study(
    plan: Plan, members: list[Member], jobs: int = 1, threads: int = 1, progress: bool = True
) -> dict:
    """Run ``members`` with ``jobs`` at once; returns {member id: "done" | "skipped" | error}.
    (Seed-batched training, ``batch_seeds.train_seed_groups``, runs before this, built on it.)"""
    from tqdm import tqdm

    bar = tqdm(
        total=len(members),
        desc=f"study {plan.name}",
        unit="member",
        disable=not progress,
        position=0,
        dynamic_ncols=True,
    )
    slots = [
        tqdm(total=0, bar_format="{desc}", position=i + 1, disable=not progress, leave=False)
        for i in range(min(jobs, len(members)))
    ]
    free = list(range(len(slots)))
    outcome = {}

    def work(member: Member):
        slot = free.pop()
        try:

            def show(m, stage):
                slots[slot].set_description_str(f"  {m.id}: {stage}")

            outcome[member.id] = run_member(plan, member, threads, on_stage=show)
        except MemberFailed as error:
            outcome[member.id] = f"failed: {error}"
        finally:
            slots[slot].set_description_str("")
            free.append(slot)
            bar.update(1)
            bar.set_postfix_str(member.id + " " + outcome[member.id].split(":")[0])

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(work, members))
    for slot in slots:
        slot.close()
    bar.close()
    return outcome
