#!/usr/bin/env bash
# A real Slurm on this one machine: Debian's slurmctld and slurmd with munge, everything (the
# configuration, keys, state, logs and sockets) in one scratch folder, so that the job scripts
# of scripts/slurm-selfplay.sh and scripts/slurm/ run under a true scheduler (tests/it/slurm.rs,
# run by scripts/test.sh) and a user can try them before a cluster.
#
#   scripts/slurm-local.sh install      install slurmctld, slurmd, slurm-client and munge with
#                                       apt-get where one is missing (needs root)
#   scripts/slurm-local.sh start DIR    write DIR/slurm.conf and a munge key, start munged,
#                                       slurmctld and slurmd, wait until the node is idle, and
#                                       print `export SLURM_CONF=DIR/slurm.conf` (source it, or
#                                       set SLURM_CONF, before sbatch/squeue/scancel)
#   scripts/slurm-local.sh stop DIR     cancel every job, stop the daemons (idempotent)
#
# The one node has the machine's name, at least 4 CPUs (more than a 2-core machine has, so a
# trainer and two workers run side by side: SlurmdParameters=config_overrides) and the partition
# `local`. Processes are tracked by /proc (proctrack/linuxproc) and nothing is confined
# (task/none): no cgroups, which containers often lack. The daemons run as the calling user,
# which must be root (slurmd starts jobs as their submitter). TAFL_LAB_SLURM_PORT (default
# 16817, and the next port) moves the daemons' ports where those are taken.
set -euo pipefail

usage() { echo "usage: scripts/slurm-local.sh install | start DIR | stop DIR" >&2; exit 2; }
die() { echo "scripts/slurm-local.sh: $*" >&2; exit 1; }

install() {
  local missing=()
  command -v slurmctld > /dev/null || missing+=(slurmctld)
  command -v slurmd > /dev/null || missing+=(slurmd)
  command -v sbatch > /dev/null || missing+=(slurm-client)
  { command -v munged > /dev/null && command -v mungekey > /dev/null; } || missing+=(munge)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] || die "installing ${missing[*]} needs root (apt-get)"
  echo "scripts/slurm-local.sh: installing ${missing[*]} with apt-get" >&2
  # Waits for another apt-get (scripts/browser.sh may run beside this) instead of failing.
  local apt=(apt-get -o DPkg::Lock::Timeout=600 -q)
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" > /dev/null 2>&1 ||
    { "${apt[@]}" update > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" > /dev/null; } ||
    die "apt-get could not install ${missing[*]}"
}

# Stops the daemon whose pid file is $1, waiting up to 10 s before killing it.
stop_pid() {
  [[ -f $1 ]] || return 0
  local pid
  pid=$(cat "$1")
  if kill "$pid" 2> /dev/null; then
    for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
  fi
  rm -f "$1"
}

stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  dir=$(cd "$dir" && pwd)
  if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]]; then
    SLURM_CONF=$dir/slurm.conf scancel --quiet --user "$(id -un)" 2> /dev/null || true
    # Job steps outlive slurmd if it goes first: give them the configured KillWait.
    for _ in $(seq 50); do
      [[ -z $(SLURM_CONF=$dir/slurm.conf squeue -h -o %i 2> /dev/null) ]] && break
      sleep 0.2
    done
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munge/munged.pid"
}

start() {
  local dir=$1
  [[ $(id -u) -eq 0 ]] || die "start needs root (slurmd runs jobs as their submitter)"
  for p in munged mungekey slurmctld slurmd sbatch sinfo; do
    command -v $p > /dev/null || die "$p is missing: run scripts/slurm-local.sh install"
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  stop "$dir"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge"
  [[ -f $dir/munge/munge.key ]] || mungekey --create --keyfile="$dir/munge/munge.key"
  chmod 600 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start (see $dir/log/munged.log)"

  local host cpus mem port
  host=$(hostname -s)
  cpus=$(nproc)
  ((cpus >= 4)) || cpus=4
  mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
  port=${TAFL_LAB_SLURM_PORT:-16817}
  cat > "$dir/slurm.conf.tmp" << EOF
# Written by scripts/slurm-local.sh: a one-node cluster in $dir.
ClusterName=tafl-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$dir/slurm.conf.tmp" "$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  # -c: a clean start (no jobs from an earlier one); -i: ignore a stale state.
  slurmctld -c -i -f "$SLURM_CONF" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
  slurmd -f "$SLURM_CONF" -N "$host" || die "slurmd did not start (see $dir/log/slurmd.log)"
  local state=""
  for _ in $(seq 150); do
    state=$(sinfo -h -n "$host" -o %T 2> /dev/null || true)
    [[ $state == idle ]] && break
    sleep 0.2
  done
  [[ $state == idle ]] || die "the node did not become idle in 30 s (state: '${state:-none}'; see $dir/log/)"
  echo "export SLURM_CONF=$SLURM_CONF"
}

case ${1:-} in
  install) [[ $# -eq 1 ]] || usage; install ;;
  start) [[ $# -eq 2 ]] || usage; start "$2" ;;
  stop) [[ $# -eq 2 ]] || usage; stop "$2" ;;
  *) usage ;;
esac
