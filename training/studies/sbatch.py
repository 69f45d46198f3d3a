"""``study PLAN --sbatch FILE``: a Slurm script that runs the study as a job array, then collects it.

The file is one bash script with two roles, so that a user types two commands in all::

    python -m training study PLAN --sbatch study.sh     (here: writes the script)
    bash study.sh                                       (on the cluster's login node: submits)

- Run by hand (``bash FILE``), it submits itself as the member array (``sbatch --parsable``:
  its ``#SBATCH`` lines give ``--array=0-(N-1)%K``, the time limit, CPUs, partition, gres),
  then the collection job, ``study PLAN --collect`` with ``--dependency=afterok:ARRAY``: it
  runs only once every member task succeeded.  ``--kill-on-invalid-dep=yes`` makes a failed
  member cancel it rather than leave it pending forever.
- Run by Slurm as array task I, it runs member I's command, exactly the line ``study --list``
  prints (``runner.list_commands``, the one implementation), plus ``--no-progress``.  That
  command is idempotent and resumable, so a task killed (preempted, ``scancel``, time limit)
  and submitted again (``sbatch --array=I FILE``) resumes its member from the last checkpoint,
  and ``bash FILE`` again after a failure redoes only the unfinished members.

Each task's output goes to ``ROOT/slurm/<array id>_<index>.out`` (ROOT: the plan's root, made
absolute), the collection's to ``ROOT/slurm/<id>-collect.out``.  The commands carry absolute
paths (the working directory, the plan, this Python), so every node must see them at the same
paths: a shared file system and the same environment, as usual on a cluster.  Flags with no
value write no ``#SBATCH`` line (the cluster's defaults: partition, no GPUs) except the time
limit (``DEFAULT_TIME``) and CPUs per task (``--threads``, default 1), which every member needs.
"""

from __future__ import annotations

import os
import re
import shlex

from theory.io.files import atomic_write_text
from training.cli_common import UsageError

from .plan import Plan
from .runner import list_commands, study_command

__all__ = ["DEFAULT_TIME", "SlurmOptions", "check_slurm_options", "sbatch_script", "write_sbatch"]

DEFAULT_TIME = "04:00:00"  # a smoke or small study fits easily; a longer one resumes when resubmitted
_TIME = re.compile(r"(?:(\d+)-)?(\d+):([0-5]\d):([0-5]\d)")
_PARTITION = re.compile(r"[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*")
_GRES = re.compile(
    r"[A-Za-z][A-Za-z0-9_]*(?::[A-Za-z0-9_.-]+)*(?:,[A-Za-z][A-Za-z0-9_]*(?::[A-Za-z0-9_.-]+)*)*"
)
# what an #SBATCH --output line and a shell word hold literally: shlex's safe characters (no blank, quote,
# $ or ;), less % (a Slurm file name pattern)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_@+=:,./-]+")


class SlurmOptions:
    """The checked values of --partition, --time, --cpus-per-task, --gres, --max-parallel."""

    def __init__(self, partition=None, time=None, cpus_per_task=1, gres=None, max_parallel=None):
        self.partition, self.time, self.cpus_per_task = partition, time or DEFAULT_TIME, cpus_per_task
        self.gres, self.max_parallel = gres, max_parallel


def check_slurm_options(partition, time, cpus_per_task, gres, max_parallel) -> SlurmOptions:
    """UsageError (one line naming the flag, the value and what is allowed) for a bad value."""
    if partition is not None and not _PARTITION.fullmatch(partition):
        raise UsageError(
            f"--partition must be a partition name (letters, digits, _ . -; a comma-separated list "
            f"for several), got {partition!r}"
        )
    if time is not None:
        match = _TIME.fullmatch(time)
        if not match or not any(int(g or 0) for g in match.groups()):
            raise UsageError(
                f"--time must be HH:MM:SS or D-HH:MM:SS (minutes and seconds 00-59, not all zero), "
                f"got {time!r}"
            )
    if cpus_per_task < 1:
        raise UsageError(f"--cpus-per-task must be >= 1, got {cpus_per_task}")
    if gres is not None and not _GRES.fullmatch(gres):
        raise UsageError(
            f"--gres must look like gpu:1 or gpu:a100:2 (NAME[:TYPE][:COUNT], comma-separated), got {gres!r}"
        )
    if max_parallel is not None and max_parallel < 1:
        raise UsageError(f"--max-parallel must be >= 1, got {max_parallel}")
    return SlurmOptions(partition, time, cpus_per_task, gres, max_parallel)


def _job_name(plan: Plan) -> str:
    return "study-" + (re.sub(r"[^A-Za-z0-9_.-]", "_", plan.name) or "plan")


def _log_folder(plan: Plan) -> str:
    folder = os.path.abspath(plan.root / "slurm")
    if not _PLAIN_PATH.fullmatch(folder):
        raise UsageError(
            f"--sbatch: the plan's root {str(plan.root)!r} has a character other than letters, digits and "
            f"_ @ + = : , . / -, which an #SBATCH --output line cannot hold; choose a root without it"
        )
    return folder


def sbatch_script(plan: Plan, options: SlurmOptions, threads: int = 1) -> str:
    """The text of the script (module doc); ``threads``: torch threads per member."""
    commands = list_commands(plan, threads)
    members, logs, name = plan.members(), _log_folder(plan), _job_name(plan)
    count = len(members)
    parallel = min(options.max_parallel or count, count)
    shared = [f"--time={options.time}"] + ([f"--partition={options.partition}"] if options.partition else [])
    array_lines = [
        f"--job-name={name}",
        f"--array=0-{count - 1}%{parallel}",
        *shared,
        f"--cpus-per-task={options.cpus_per_task}",
    ]
    if options.gres:
        array_lines.append(f"--gres={options.gres}")
    array_lines.append(f"--output={logs}/%A_%a.out")
    collect = f"{study_command(plan)} --collect"
    collect_flags = [
        f"--job-name={name}-collect",
        *shared,
        "--cpus-per-task=1",
        f"--output={logs}/%j-collect.out",
        "--dependency=afterok:$array",
        "--kill-on-invalid-dep=yes",
        f"--wrap={shlex.quote(collect)}",
    ]
    cases = "\n".join(f"    {i}) {command} --no-progress ;;" for i, command in enumerate(commands))
    return f"""#!/bin/bash
# Study {plan.name!r} ({str(plan.path)!r}) on Slurm: {count} members, one array task each, then the collection.
# Written by `python -m training study PLAN --sbatch FILE` (training/studies/sbatch.py).
#   bash THIS_FILE                submit the array and the collection job (it runs if every member succeeds)
#   sbatch --array=I THIS_FILE    run member I again (it resumes from its last checkpoint)
# Members are idempotent: after a failure or preemption, `bash THIS_FILE` again redoes only what is unfinished.
# Paths are absolute: every node must see them (a shared file system, the same Python environment).
{chr(10).join("#SBATCH " + line for line in array_lines)}
set -uo pipefail

if [[ -n ${{SLURM_ARRAY_TASK_ID:-}} ]]; then  # an array task: its member's command, its exit status the task's
  case $SLURM_ARRAY_TASK_ID in
{cases}
    *) echo "no member $SLURM_ARRAY_TASK_ID in {name} (0-{count - 1})" >&2; false ;;
  esac
  exit
fi

# run by hand: the array first, then the collection after every member succeeded
set -e
mkdir -p {logs}
array=$(sbatch --parsable "${{BASH_SOURCE[0]}}")
array=${{array%%;*}}  # --parsable prints ID or ID;CLUSTER
collect=$(sbatch --parsable {" ".join(collect_flags)})
echo "{name}: array job $array ({count} members, {parallel} at once), collection job ${{collect%%;*}} after it; output in {logs}"
"""


def write_sbatch(plan: Plan, path, options: SlurmOptions, threads: int = 1) -> None:
    """Write the script atomically (a reader sees the old file or the whole new one)."""
    atomic_write_text(path, sbatch_script(plan, options, threads))
