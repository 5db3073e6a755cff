"""Beyond the paper: a physically consistent link-level model behind a base model, and the files
robotics tools read (URDF, MJCF).

  consistent   the 94 standard parameters behind a base-parameter model: every link's 4x4
               pseudo-inertia positive definite with a stated margin, rotor inertias and friction
               non-negative, nearest to a prior (the manufacturer's description) in a stated
               distance; or, when no such vector reproduces the model, the nearest consistent one
               (another arm: its own standard parameters, in its chain model's frames)
  files        the URDF and MJCF of a standard vector, in the manufacturer's link frames (another
               arm: in its chain model's frames, with its description's joints and limits)
  verify       the exported files loaded by Pinocchio and MuJoCo, set against the project's model
  beyond_ols   the chapter "Beyond OLS"'s records: OLS, WLS and dual-metric WLS (with Theta_r, and
               with consistent links, hence here) scored side by side, and the invariance test
  peer_tools   the same recordings through MuJoCo's sysid and FIGAROH beside Algorithm 1, every
               result mapped exactly to the model's base parameters and scored by one function
               (the tools read the exported URDF and MJCF, hence here)
"""
