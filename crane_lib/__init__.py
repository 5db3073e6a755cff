"""crane_lib: dynamic parameter identification of the CRANE-X7, stage by stage.

The subpackages are the pipeline (paper Sec. III-VII, Algorithm 1); each imports only from
the ones above it in this list and from the shared leaves.

  model/           a robot as data (description folders, `describe` from a URDF or MJCF, the
                   servo catalogue, drive modes), symbolic model, base parameters, generated
                   dynamics, the realization controller (2) and the servo's position loop
  excitation/      command files and their 4-1-4 interpolation; the 40 trajectories and V01-V03;
                   the blocks of any described arm
  logs/            the raw log every recorder writes; preprocessing to bundles (D-C)
  twin/            the digital twin: truth, plant core, recorder, default data set, joint models
  hardware/        the arms' buses: the DYNAMIXEL Protocol 2.0 recorder and emulator, the Feetech
                   STS recorder and emulator (the twin's plant behind a bus)
  identification/  OLS, routing test and SDP projection, model classes, CLIE, DIDIM, the exact
                   Jacobian of CLIE's simulation, metrics
  acceptance/      all-pose PD audit, certified check, Yoshida-Khalil's condition, rescue,
                   consequences, selection, the accepted model (Algorithm 1 for one recording),
                   the torque scale from a known weight, a payload on an accepted model
  export/          beyond the paper: the physically consistent link-level model behind a base
                   model, as URDF and MJCF (with actuators), verified in Pinocchio and MuJoCo,
                   replayed in MuJoCo, and compared with MuJoCo sysid and FIGAROH
  reporting/       views: records into tables and figures, one module per chapter
                   (reporting/chapters/), the one "paper / this book / why" table builder
  cli/             the `crane-id` command, one module per subcommand

Shared leaves: paths, errors, constants, paper_numbers, records (every JSON result record),
fingerprint (one content hash for every cache), arithmetic (the same floating-point kernels on
every x86-64 machine), source_graph (the import graph, for the caches' keys and the
architecture), parameter_sets (the sweeps' papermill parameter sets), formatting
(how a number is printed), verdicts (of the paper's claims), threads (a compiled batch loop run
side by side on numba's threads).

The machinery that builds the book (pipeline, sweeps, pages, downloads) is the package crane_book
beside this one; it imports crane_lib, never the other way round.
"""

from crane_lib import arithmetic as _arithmetic

# before numpy loads, where crane_lib comes first: the reference kernels (crane_lib/arithmetic.py)
_arithmetic.pin()

__version__ = "0.1.0"

# the stage order that the import rule of tests/test_architecture.py checks
STAGES = (
    "model",
    "excitation",
    "logs",
    "twin",
    "hardware",
    "identification",
    "acceptance",
    "export",
    "reporting",
    "cli",
)
SHARED = (
    "paths",
    "errors",
    "constants",
    "paper_numbers",
    "records",
    "fingerprint",
    "arithmetic",
    "formatting",
    "parameter_sets",
    "source_graph",
    "verdicts",
    "threads",
)
