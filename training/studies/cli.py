"""``python -m training study PLAN``: run, list or collect the members of a multi-seed study.

Each member is trained, then evaluated (test accuracy, length generalisation by hop count)
and analysed (scores over training); every stage is idempotent and resumable.

    python -m training study PLAN [--jobs N] [--threads K]   run every unfinished member
    python -m training study PLAN --batch-seeds              the same, each variant's seeds trained by one
                                                             seed-batched process (default with CUDA;
                                                             --no-batch-seeds: one process per member)
    python -m training study PLAN --list                     one shell command per member
    python -m training study PLAN --member ID                one member (what --list prints)
    python -m training study PLAN --collect                  summary.json with intervals; prints how
                                                             many members have every stage done
    python -m training study PLAN --collect --overwrite-summary   the same, even where it has fewer results
    python -m training study PLAN --sbatch FILE [--partition P] [--time HH:MM:SS] [--cpus-per-task K]
                             [--gres G] [--max-parallel K]   a Slurm script: `bash FILE` submits the
                             members as a job array and the collection after it (``.sbatch``)

Plans: ``training/studies/*.json`` (format in ``training.studies.plan``).  Exit status 2, one
line, before anything runs: a bad plan, an unknown member, ``--jobs 0``, a plan ``root`` (or,
collecting, ``ship``) folder that cannot be written, a damaged member file (member.json, a
stage's JSON: ``training.studies.member_files``).  A failed member exits 1 after the others
finished.  A second ``study`` on the same plan joins safely: members another process is
working on are skipped, not run twice.  Every stage runs as a child that dies with the study
(``training.studies.stage_process``), so a study killed with SIGKILL leaves no orphan.

``--collect`` never replaces the ship folder's summary.json with one holding fewer results
(a fresh clone has the shipped files but not the runs under ``root``): where a member it
records would lose a finished stage, it writes nothing, says what it found in one line and
exits 2; ``--overwrite-summary`` replaces it anyway (``training.studies.ship``).
"""

from __future__ import annotations

import json

from training.cli_common import UsageError, ascii_int, check_output, output_argument

STUDY_DESCRIPTION = (
    "Run, list or collect the members of a study plan (tasks x seeds x recipe variants); every "
    "stage is resumable."
)


def add_study_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "study", help="run, list or collect a multi-seed study", description=STUDY_DESCRIPTION
    )
    parser.add_argument("plan", metavar="PLAN", help="study plan (JSON), e.g. training/studies/seeds.json")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="print one shell command per member and exit")
    what.add_argument("--collect", action="store_true", help="write the plan's summary.json and exit")
    what.add_argument("--member", metavar="ID", help="run one member, e.g. paper/letter/seed-1")
    output_argument(
        what,
        "--sbatch",
        metavar="FILE",
        help="write a Slurm script and exit: `bash FILE` submits one "
        "array task per member, then --collect once all succeeded",
    )
    slurm = parser.add_argument_group("with --sbatch (training.studies.sbatch)")
    slurm.add_argument("--partition", metavar="P", help="Slurm partition (default: the cluster's)")
    slurm.add_argument("--time", metavar="HH:MM:SS", help="time limit per member (default 04:00:00)")
    slurm.add_argument(
        "--cpus-per-task", type=ascii_int, metavar="K", help="CPUs per member (default: --threads)"
    )
    slurm.add_argument("--gres", metavar="G", help="generic resources per member, e.g. gpu:1 (default none)")
    slurm.add_argument(
        "--max-parallel", type=ascii_int, metavar="K", help="members running at once (default all)"
    )
    parser.add_argument(
        "--overwrite-summary",
        action="store_true",  # ship.OVERWRITE_FLAG: its refusal names it
        help="with --collect: replace the ship folder's summary.json even where the members found "
        "have fewer finished stages than it records (without this flag such a collect writes "
        "nothing and exits 2)",
    )
    parser.add_argument("--jobs", type=ascii_int, default=1, metavar="N", help="members at once (default 1)")
    parser.add_argument(
        "--threads",
        type=ascii_int,
        default=None,
        metavar="K",
        help="torch threads per member (default: the machine's cores // --jobs, at least 1; "
        "--list and --sbatch: 1)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    batch = parser.add_mutually_exclusive_group()
    batch.add_argument(
        "--batch-seeds",
        dest="batch_seeds",
        action="store_true",
        default=None,
        help="train the members of one variant and task that differ only in seed in one seed-batched "
        "train --seeds process (training.run.batched_loop); the default where CUDA is present",
    )
    batch.add_argument(
        "--no-batch-seeds",
        dest="batch_seeds",
        action="store_false",
        help="train every member in its own process (the default on CPU, where batching is not faster)",
    )
    parser.set_defaults(handler=run_study_command)


def run_study_command(args) -> int:
    from training.run.checks import RunError

    from .collect import collect
    from .plan import PlanError, load_plan
    from .runner import check_members, list_commands, member_threads, run_study, stage_commands

    if args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    if args.overwrite_summary and not args.collect:
        raise UsageError("--overwrite-summary only goes with --collect")
    slurm = {
        flag: getattr(args, flag.replace("-", "_"))
        for flag in ("partition", "time", "cpus-per-task", "gres", "max-parallel")
    }
    if not args.sbatch and any(value is not None for value in slurm.values()):
        raise UsageError(f"--{next(f for f, v in slurm.items() if v is not None)} only goes with --sbatch")
    try:
        plan = load_plan(args.plan)
        members = [plan.member(args.member)] if args.member else plan.members()
    except PlanError as error:
        raise UsageError(str(error)) from None
    if args.list:
        print("\n".join(list_commands(plan, args.threads or 1)))
        return 0
    # the folders the work writes, checked before any (the output policy: one line, exit 2); the plan
    # names them, so a plan cannot aim its runs at the package's own files or shipped results unasked
    check_output(
        plan.root,
        f"{plan.path}: root",
        kind="folder",
        inputs=[plan.path],
        replace_shipped=args.replace_shipped,
    )
    if args.sbatch:
        from .sbatch import check_slurm_options, write_sbatch

        if slurm["cpus-per-task"] is None:
            slurm["cpus-per-task"] = args.threads or 1
        options = check_slurm_options(*slurm.values())
        check_output(args.sbatch, "--sbatch", inputs=[plan.path], replace_shipped=args.replace_shipped)
        write_sbatch(plan, args.sbatch, options, args.threads or 1)
        print(json.dumps({"sbatch": args.sbatch, "members": len(members), "submit": f"bash {args.sbatch}"}))
        return 0
    if args.collect:
        # the summary is collect's own documented output, so a shipped folder is its place; never the source
        check_output(plan.ship, f"{plan.path}: ship", kind="folder", inputs=[plan.path], replace_shipped=True)
        try:
            document = collect(plan, overwrite=args.overwrite_summary)
        except RunError as error:  # a member's metrics.jsonl damaged, a best member without weights
            raise UsageError(str(error)) from None
        # complete: every stage the plan gives it has a result, read from its run or its shipped copy
        finished = [
            m.id
            for m in plan.members()
            if set(stage_commands(plan, m)) <= set(document["members"][m.id]["stages"])
        ]
        print(
            json.dumps(
                {
                    "summary": str(plan.ship / "summary.json"),
                    "members": len(document["members"]),
                    "complete": len(finished),
                }
            )
        )
        return 0
    check_members(plan, members)  # damaged member files, unwritable member folders: one line, exit 2
    batch_seeds = args.batch_seeds
    if batch_seeds is None:  # issue 34: batching pays on a GPU, which one small model leaves idle
        import torch

        batch_seeds = torch.cuda.is_available()
    # each member's share of this machine (training.run.threads.member_threads); a member's train
    # stage still takes one thread for a small model (training.run.threads.choose_threads)
    threads = member_threads(args.jobs) if args.threads is None else args.threads
    if batch_seeds:  # each seed group trained in one process first; run_study then finds them trained
        from .batch_seeds import train_seed_groups

        train_seed_groups(plan, members, threads)
    outcome = run_study(plan, members, jobs=args.jobs, threads=threads, progress=not args.no_progress)
    failed = {m: o for m, o in outcome.items() if o.startswith("failed")}
    print(
        json.dumps(
            {
                "plan": plan.name,
                "done": sum(o == "done" for o in outcome.values()),
                "skipped_busy": sum(o == "skipped" for o in outcome.values()),
                "failed": failed,
            }
        )
    )
    return 1 if failed else 0
