"""crane_book: the machinery that builds the book from crane_lib, kept apart from the science.

  pipeline    the main job's data steps in order: every record of the book is written here
  sweep       the papermill sweep driver (local pool or Dask), one condition notebook per row
  conditions/ the condition notebooks: a parameters cell, one call into a crane_lib stage
  keys        what decides a record: inputs, parameters, the source its code imports
  claims      the paper's main claims judged from the records (a data step)
  pages       the book's pages executed side by side (only those whose inputs changed)
  kernels     the Jupyter kernels both run notebooks in (on sockets of their own)
  downloads   the records zipped per kind for the pages that link them
  options     the checked options of those commands: a bad value is one line, exit status 2
  workers     process pools whose workers end with the process that started them

It imports crane_lib; crane_lib never imports it (tests/test_architecture.py).
"""
