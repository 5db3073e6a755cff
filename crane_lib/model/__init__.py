"""Stage 1, the model (paper Sec. III, Table I, Appendix A): the robot description in MDH
frames, parameter names and files, the symbolic Newton-Euler model, the exact base-parameter
grouping, the generated numeric kernels and dynamics, identifiability measures, and the
realization controller (2) that the twin, CLIE and the hardware recorder share.

In import order: robot_description, parameters -> symbolic_model -> codegen -> base_parameters
-> arm_description, chain_model (any arm) -> dynamics (-> spd_solve for the numba loops) ;
identifiability ; controller.
"""
