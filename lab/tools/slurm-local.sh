#!/usr/bin/env bash
# A single-node Slurm cluster on localhost (Debian's slurm-wlm and munge), for the `slurm`-flagged test of
# nbs/06_runs/00_spec and for trying `horde-run --executor slurm` without a cluster.
#   bash lab/tools/slurm-local.sh install   # apt-get the packages (needs root and the Debian registry)
#   bash lab/tools/slurm-local.sh up        # write a config for this machine, start munged, slurmctld, slurmd
#   bash lab/tools/slurm-local.sh down      # cancel all jobs and stop the daemons
set -euo pipefail
ETC=/etc/slurm
NODE=$(hostname -s)

case "${1:-}" in
install)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge ;;
up)
  command -v slurmctld >/dev/null || { echo "slurm-local: slurmctld not found; run: bash lab/tools/slurm-local.sh install" >&2; exit 1; }
  mkdir -p "$ETC" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/lib/munge /var/log/munge /etc/munge
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
  chmod 0400 /etc/munge/munge.key; chmod 0700 /etc/munge
  pgrep -x munged >/dev/null || su -s /bin/sh munge -c munged 2>/dev/null || munged --force
  MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  cat > "$ETC/slurm.conf" <<CONF
ClusterName=local
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
JobRequeue=1
MpiDefault=none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SchedulerType=sched/backfill
NodeName=$NODE CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE 'idle|mixed|allocated'; then sinfo; exit 0; fi
    sleep 1
  done
  echo "slurm-local: the node did not come up; see /var/log/slurm/" >&2; exit 1 ;;
down)
  scancel --user="$(id -un)" 2>/dev/null || true
  pkill -x slurmd 2>/dev/null || true; pkill -x slurmctld 2>/dev/null || true ;;
*)
  echo "usage: bash lab/tools/slurm-local.sh install|up|down" >&2; exit 2 ;;
esac
