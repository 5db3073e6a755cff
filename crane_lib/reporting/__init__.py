"""Stage 7, reporting: the papermill sweep driver (`sweep`), the main job's data steps
(`pipeline`), what the twin produces next to the paper (`calibration`), the figures drawn
by code (`diagrams`) and the one "paper / this book / why they differ" table builder
(`tables`)."""
