"""The views: records into tables, figures and generated sentences, one module per chapter in
`chapters/` (the chapters' own views) and beside it the shared ones: the one "paper / this book /
why they differ" table builder (`tables`), how a table or figure is captioned and numbered
(`captions`), the figures drawn by code (`diagrams`), the claims as
the pages show them (`claims`), the architecture picture (`architecture`). Views only read
records; the records are written by the main job (the package crane_book)."""
