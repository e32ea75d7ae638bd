import sys

from harness.compare.cli import main

sys.exit(main())
