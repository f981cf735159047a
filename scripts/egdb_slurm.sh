#!/bin/bash
# Slurm batch script for `egdb build --mpi` (docs/mpi.md): one rank per node, all its cores and
# memory. Submit with `sbatch scripts/egdb_slurm.sh`; resubmit the same script after a time
# limit or a lost node: finished units are skipped (resume).
#
# Settings through the environment (sbatch --export=ALL,PIECES=9,...):
#   PIECES       tables with at most this many pieces (default 9)
#   DIR          table directory on a filesystem every node sees (default /shared/egdb)
#   EGDB         the egdb binary, built with `cargo build --release --features mpi` against the
#                cluster's MPI (default ./target/release/egdb)
#   MEMORY       --memory per rank (default: 90% of the node's memory as Slurm reports it);
#                units whose solver state (2 bytes per position) exceeds it are split over
#                all the ranks
#   PLAN_ONLY=1  print `egdb plan --ranks` for this allocation and stop
#SBATCH --job-name=egdb
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=64
#SBATCH --mem=0
#SBATCH --time=7-00:00:00
#SBATCH --output=egdb-%j.log
set -euo pipefail
PIECES=${PIECES:-9}
DIR=${DIR:-/shared/egdb}
EGDB=${EGDB:-./target/release/egdb}
if [ -z "${MEMORY:-}" ]; then
    # SLURM_MEM_PER_NODE is in MiB when set; else the node's MemTotal (KiB).
    if [ -n "${SLURM_MEM_PER_NODE:-}" ] && [ "${SLURM_MEM_PER_NODE}" != 0 ]; then
        MEMORY="$((SLURM_MEM_PER_NODE * 9 / 10))M"
    else
        MEMORY="$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) * 9 / 10 / 1024 ))M"
    fi
fi
RANKS=${SLURM_NTASKS:-${SLURM_JOB_NUM_NODES:-1}}
"$EGDB" plan --pieces "$PIECES" --ranks "$RANKS" --memory "$MEMORY" | tail -1
if [ "${PLAN_ONLY:-0}" = 1 ]; then exit 0; fi
export RAYON_NUM_THREADS=${SLURM_CPUS_PER_TASK:-$(nproc)}
# srun needs Slurm built with PMIx/PMI2 matching the MPI (`--mpi=pmix` on most sites); with
# Open MPI's own launcher inside the allocation use instead:
#   mpirun --map-by ppr:1:node --bind-to none "$EGDB" build --mpi ...
# --kill-on-bad-exit=1: a rank that dies (out of memory, a lost node) ends the whole step;
# Slurm's default (KillOnBadExit=0) can leave the other ranks waiting on it until --time.
srun --kill-on-bad-exit=1 --cpu-bind=none "$EGDB" build --mpi --pieces "$PIECES" --memory "$MEMORY" --dir "$DIR"
