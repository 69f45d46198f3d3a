#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for the tests marked `slurm` (tests/test_slurm.py) and
# for trying the study sbatch scripts (python -m training study PLAN --sbatch FILE) by hand.
#
#   eval "$(scripts/slurm_local.sh start)"     prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm_local.sh stop [DIR]          DIR defaults to the folder of $SLURM_CONF
#
# Needs Debian's slurm-wlm (22.05) and munge (apt-get install -y slurm-wlm munge), run as root
# (a container).  Nothing outside DIR (a fresh mktemp folder) is written or read: the config,
# a munge key and socket, the daemons' state, spool, pid files and logs all live there, so it
# does not touch (or need) /etc/slurm, /etc/munge or systemd, and two clusters can coexist
# (free ports are picked).  Container-friendly plugins: no cgroups (proctrack/linuxproc,
# task/none, jobacct_gather/none), no accounting database (so no sacct: scontrol show job
# keeps a finished job for MinJobAge seconds).  `start` returns once sinfo shows the node idle;
# `stop` cancels every job, waits for the queue to empty, stops slurmd, slurmctld and munged
# (by the pids in DIR), then removes DIR.
set -euo pipefail

die() { echo "slurm_local.sh: $*" >&2; exit 1; }

free_port() {  # the first port from $1 up that nothing on 127.0.0.1 listens on
    local port=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    echo "$port"
}

stop_pid() {  # TERM the process in pid file $1, KILL it after 10 s
    local pid
    [[ -s $1 ]] || return 0
    pid=$(<"$1")
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
}

stop_cluster() {
    local dir=$1
    [[ -f $dir/slurm.conf && -f $dir/.slurm_local ]] || die "$dir is not a folder made by slurm_local.sh start"
    export SLURM_CONF=$dir/slurm.conf
    if [[ -s $dir/slurmctld.pid ]] && kill -0 "$(<"$dir/slurmctld.pid")" 2>/dev/null; then
        scancel --quiet --user="$(id -un)" 2>/dev/null || true  # the cluster is private: every job is ours
        for _ in $(seq 150); do  # a cancelled job's processes get KillWait (2 s) to exit
            [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.2
        done
    fi
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    stop_pid "$dir/munged.pid"
    rm -rf "$dir"
}

start_cluster() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null ||
        die "slurmctld, slurmd or munged not found: apt-get install -y slurm-wlm munge"
    [[ $(id -u) == 0 ]] || die "run as root (slurmd starts jobs as their user)"
    local dir host cpus ctld_port node_port
    dir=$(mktemp -d /tmp/slurm-local.XXXXXX)
    chmod 755 "$dir"
    touch "$dir/.slurm_local"
    trap 'echo "slurm_local.sh: start failed; logs:" >&2; tail -n 20 "$dir"/*.log >&2 2>/dev/null || true;
          stop_cluster "$dir" || true' ERR
    host=$(hostname -s)
    cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc obeys OMP_NUM_THREADS: the CPUs, not a thread cap
    ctld_port=$(free_port 6817)
    node_port=$(free_port $((ctld_port + 1)))
    mkdir -p "$dir/state" "$dir/spool"
    head -c 1024 /dev/urandom > "$dir/munge.key"
    chmod 400 "$dir/munge.key"
    munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" </dev/null
    cat > "$dir/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=2
MinJobAge=600
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF" </dev/null >/dev/null 2>&1
    slurmd -f "$SLURM_CONF" </dev/null >/dev/null 2>&1
    for _ in $(seq 300); do  # the node registers within a few seconds
        [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]] && { trap - ERR; echo "export SLURM_CONF=$SLURM_CONF"; return; }
        sleep 0.2
    done
    false  # not idle after 60 s: the ERR trap prints the logs and cleans up
}

case "${1:-}" in
    start) start_cluster ;;
    stop) dir=${2:-${SLURM_CONF:+$(dirname "$SLURM_CONF")}}
          [[ -n $dir ]] || die "stop: give the folder start made, or set SLURM_CONF"
          stop_cluster "$dir" ;;
    *) die "usage: $0 start | stop [DIR]" ;;
esac
