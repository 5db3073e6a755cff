"""crane_lib: dynamic parameter identification of the CRANE-X7, stage by stage.

Pipeline order (paper Sec. III-VII, Algorithm 1):
  robot_description -> symbolic_model, base_parameters -> dynamics
  -> commands, excitation -> controller -> twin, recorder -> preprocessing
  -> ols -> sdp -> clie -> audit -> selection -> metrics; sweep drives the batch.
Shared: parameters, constants, paper_numbers, errors, identifiability, paths, codegen.
"""

__version__ = "0.1.0"
