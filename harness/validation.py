"""One check of the composed run config before any work starts.

A mode (backend, prompt style, protocol view and mode, pool kind and base, cluster kind, task
source) is an enum of its owner's config, so a value outside it already fails at composition. What
an enum cannot say (an aggregate like `quorum:2`, a field that needs another, a bound) is checked
by the layer that owns the config (`check_pool`, `check_protocol`, `check_judge`, `check_cluster`),
which runs the check again where it uses the config; running them all here first means a
bad value anywhere is one line and exit 2 before a pool is generated, a model loaded, a Ray cluster
started or an MLflow run opened, instead of after minutes of work.
"""

from __future__ import annotations

from harness.cluster import check_cluster
from harness.config import RunConfig
from harness.pools import check_counts, check_pool
from harness.tracking import check_tracking
from judges import check_judge, check_protocol


def check_config(config: RunConfig) -> None:
    """Raise `HarnessError` naming the first bad field; read no file, load nothing, start nothing."""
    check_counts(config.limit, config.n)
    check_pool(config.pool)
    check_protocol(config.protocol)
    check_judge(config.judge)
    check_cluster(config.cluster)
    check_tracking(config.tracking)
