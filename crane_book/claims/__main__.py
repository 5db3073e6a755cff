"""`python -m crane_book.claims --profile quick`: the pipeline's claims step alone."""

from crane_book.claims import main

raise SystemExit(main())
