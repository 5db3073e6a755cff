"""crane_lib: dynamic parameter identification of the CRANE-X7, stage by stage.

Pipeline order (paper Sec. III-VII, Algorithm 1):

  robot_description             MDH table (Table I), manufacturer's description in MDH frames
  symbolic_model, base_parameters   Newton-Euler IDM linear in the standard parameters; exact grouping
  dynamics                      generated numeric kernels: regressor, M, gravity, Coriolis, direct dynamics
  commands, excitation          command files, 4-1-4 interpolation, the 40 trajectories and V01-V03
  controller                    the realization layer (1)-(2), shared by twin, CLIE and recorder
  twin, twin_core, twin_truth   the digital twin; dataset: the default recordings; raw_log: the 106 columns
  joint_identification          Sec. III-B joint-level models (Table XIX)
  preprocessing                 raw log -> 1/10/20/40/80 ms bundles (D-C)
  ols, identify                 OLS by QR; one condition's routing test
  sdp                           nearest-PD projection (8) and rescue (12)
  clie                          closed-loop input-error refinement, fast route, DIDIM
  audit, certified, consequences   all-pose PD audit, certified check, Table X
  metrics                       held-out RMSE and MNE
  sweep, pipeline               papermill sweep driver; the main job's data steps

Shared: parameters, constants, paper_numbers, errors, identifiability, paths, codegen,
npz_io; cli (and cli_*) is the `crane-id` command.
"""

__version__ = "0.1.0"
