# Shared by the sbatch scripts in this folder; sourced, never run. An sbatch script runs from a copy
# in Slurm's spool directory, so the scripts find this file through the path they were submitted
# with (`scontrol show job`'s Command), or $HARNESS_SLURM_DIR.
# shellcheck shell=bash

# The job's key: its id, or <array job id>_<task index> for an array task. A requeued job keeps it.
harness_job_key() {
    if [[ -n "${SLURM_ARRAY_JOB_ID:-}" ]]; then
        echo "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
    else
        echo "${SLURM_JOB_ID:?this runs inside a Slurm job: submit it with sbatch}"
    fi
}

# harness_supervise COMMAND...: run COMMAND in the background and hand it the SIGUSR1 (Slurm's
# warning) or SIGTERM (preemption, cancellation) this script receives; return when it has exited.
# Sets HARNESS_STATUS (its exit status) and HARNESS_SIGNAL (USR1, TERM or empty).
harness_supervise() {
    HARNESS_CHILD=""
    HARNESS_SIGNAL=""
    trap '_harness_forward USR1' USR1
    trap '_harness_forward TERM' TERM
    "$@" &
    HARNESS_CHILD=$!
    # A trapped signal interrupts `wait`; keep waiting until the command itself has exited.
    while :; do
        wait "$HARNESS_CHILD"
        HARNESS_STATUS=$?
        kill -0 "$HARNESS_CHILD" 2>/dev/null || break
    done
    if (( HARNESS_STATUS > 128 )) && [[ -n "$HARNESS_SIGNAL" ]]; then
        wait "$HARNESS_CHILD"  # the signal and the exit raced: read the command's own status
        HARNESS_STATUS=$?
    fi
}

# shellcheck disable=SC2317  # invoked by the traps above
_harness_forward() {
    HARNESS_SIGNAL="$1"
    if [[ -n "$HARNESS_CHILD" ]]; then kill -s "$1" "$HARNESS_CHILD" 2>/dev/null || true; fi
}

# After SIGUSR1 the harness exits 75 with everything answered in the call cache: requeue this job,
# whose next attempt resumes from the cache. After SIGTERM, requeueing is Slurm's call (it requeues
# a preempted --requeue job; a cancelled one stays cancelled).
harness_requeue_if_warned() {
    if (( HARNESS_STATUS == 75 )) && [[ "$HARNESS_SIGNAL" == USR1 ]]; then
        echo "$(basename "$1"): stopped on SIGUSR1 with everything answered in the cache; requeueing job ${SLURM_JOB_ID}"
        scontrol requeue "$SLURM_JOB_ID"
    fi
}
