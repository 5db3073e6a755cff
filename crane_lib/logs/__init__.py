"""Stage 3, what a recording is and how it becomes data (paper Appendix D-C): the 106-column
raw log that the twin and the hardware recorder both write (`raw_log`, `npz_io`), and the
preprocessing of a raw log into bundles at 1/10/20/40/80 ms (`preprocessing`)."""
