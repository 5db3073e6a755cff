"""`python -m crane_lib.cli ...` runs `crane-id ...`."""

import sys

from crane_lib.cli import main

sys.exit(main())
