"""`python -m harness.review RUN list|show|label|decline|stats` (see harness.review.cli)."""

import sys

from harness.review.cli import main

if __name__ == "__main__":
    sys.exit(main())
