"""crane_lib: dynamic parameter identification of the CRANE-X7, stage by stage.

The subpackages are the pipeline (paper Sec. III-VII, Algorithm 1); each imports only from
the ones above it in this list and from the shared leaves.

  model/           MDH description, symbolic model, base parameters, generated dynamics, controller
  (2)
  excitation/      command files and their 4-1-4 interpolation; the 40 trajectories and V01-V03
  logs/            the 106-column raw log both recorders write; preprocessing to bundles (D-C)
  twin/            the digital twin: truth, plant core, recorder, default data set, joint models
  hardware/        the arm over dynamixel-sdk: recorder, Protocol 2.0 emulator (the twin's plant
  behind a bus)
  identification/  OLS, routing test and SDP projection, model classes, CLIE, DIDIM, metrics
  acceptance/      all-pose PD audit, certified check, rescue, consequences, selection, the accepted
                   model (Algorithm 1 for one recording), what base parameters say about link
                   consistency
  export/          beyond the paper: the physically consistent link-level model behind a base model
                   (pseudo-inertias, nearest to the manufacturer's description), as URDF and MJCF,
                   verified
                   in Pinocchio and MuJoCo
  reporting/       views: records into tables, figures and generated sentences, one module per
                   chapter (reporting/chapters/), the one "paper / this book / why" table builder
  cli/             the `crane-id` command, one module per subcommand

Shared leaves: paths, errors, constants, paper_numbers, records (every JSON result record),
fingerprint (one content hash for every cache), arithmetic (the same floating-point kernels on
every x86-64 machine), source_graph (the import graph, for the caches' keys and the
architecture), parameter_sets (the sweeps' papermill parameter sets), formatting
(how a number is printed), verdicts (of the paper's claims).

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
)
