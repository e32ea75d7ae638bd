"""The third layer: people review what the shield and the judges flag, in MLflow (docs/review.md).

`record_review` is the run's part (traces, the queue, `review.json`); `python -m harness.review RUN
list|show|label|stats` is the reviewer's; `review_stats` turns labels into the shield's precision and
recall and each judge's kappa.
"""

from harness.review.flags import FLAGS, ReviewItem, candidate_flags, review_items
from harness.review.publish import record_review
from harness.review.stats import LabelledItem, cohen_kappa, review_stats, wilson

__all__ = [
    "FLAGS",
    "LabelledItem",
    "ReviewItem",
    "candidate_flags",
    "cohen_kappa",
    "record_review",
    "review_items",
    "review_stats",
    "wilson",
]
