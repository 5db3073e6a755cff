"""Stage 4, the digital twin: a simulated CRANE-X7 with known true parameters and the
nonidealities of the real arm. `truth` (true parameters and drive settings, from their
sources), `core` (the numba plant and control loop, a template bound to the generated
kernels), `recorder` (a command file in, a raw log out), `dataset` (the default recordings of
a profile, cached by content), `joint_identification` (Sec. III-B, Table XIX on the twin)."""
