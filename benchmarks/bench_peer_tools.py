"""Benchmark of the comparison with the field's tools: each tool's time against Algorithm 1's,
measured in one run on the same recording.

Algorithm 1 (`acceptance.accepted.accept_recording`: identify, refine, audit on seeds 1-5,
rescue if needed) runs on the arm's identification recording at 40 ms; then every other result
of `export.peer_tools` (MuJoCo's sysid from the prior and from the model just accepted,
FIGAROH's OLS and its physically consistent fit) runs on the same recording, and each prints its
wall and CPU time (the tool's call; the preparation around it in brackets) and the ratio to
Algorithm 1's, with its held-out RMSE. Needs the build's recordings and records
(`make book PROFILE=quick`); `--profile full` runs MuJoCo's fit at the full profile's length.

`--smoke`: a few seconds' command file recorded on the twin stands in for the recording (held
out: the same recording), with OLS and the audit on seed 1 (no refinement) as Algorithm 1 and a
one-second, one-iteration MuJoCo fit; its numbers are not measurements.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

SMOKE_SYSID = {"duration_s": 1.0, "chunk_s": 1.0, "timestep_s": 0.004, "max_iters": 1}


def timed(function, *args, **kwargs):
    """(result, wall s, CPU s) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def algorithm1(data, smoke: bool):
    """Algorithm 1 on the arm's identification recording; its record as the comparison reads it."""
    from crane_lib.acceptance import accepted as accepted_stage
    from crane_lib.export import peer_tools
    from crane_lib.logs.raw_log import read_raw_log

    log = read_raw_log(data.inputs.identification)
    name = "PI_ALPHA" if data.arm != "crane_x7" else log.path.stem.split("_run")[0]
    options = {"refine": "none", "seeds": (1,)} if smoke else {}
    accepted = accepted_stage.accept_recording(
        log, name, peer_tools.TS, model=data.model, **options
    )
    return accepted_stage.accepted_record(accepted, peer_tools.TS)


def bench(data, profile: str, smoke: bool) -> None:
    """Run Algorithm 1 and every tool on `data`, printing times and ratios."""
    from crane_lib.export import peer_tools

    record, wall, cpu = timed(algorithm1, data, smoke)
    data.accepted = record
    ours = peer_tools.score(data, np.asarray(record["parameters"]), None, None)
    print(
        f"{data.arm}: Algorithm 1 {wall:.1f} s wall, {cpu:.1f} s CPU; held-out RMSE "
        f"{ours['held_out_rmse']:.4g} N·m; {record['verdict'][:60]}"
    )
    for tool in peer_tools.TOOLS[1:]:
        try:
            result, total_wall, total_cpu = timed(peer_tools.run_tool, tool, data, profile)
        except Exception as error:  # a tool that fails is a result
            print(f"{data.arm}: {tool} failed: {type(error).__name__}: {error}")
            continue
        score = peer_tools.score(data, result["base"], None, None)
        print(
            f"{data.arm}: {tool} {result['wall_s']:.2f} s wall, {result['cpu_s']:.2f} s CPU "
            f"(with its preparation {total_wall:.2f} s, {total_cpu:.2f} s); ratio to Algorithm "
            f"1: wall {result['wall_s'] / wall:.3g}, CPU {result['cpu_s'] / max(cpu, 1e-9):.3g}; "
            f"held-out RMSE {score['held_out_rmse']:.4g} N·m"
        )


def smoke_data():
    """ArmData of the CRANE-X7 on the smoke recording (held out: the same recording)."""
    from benchmarks._smoke import smoke_recordings
    from crane_lib.export import peer_tools

    path = smoke_recordings(("SMOKE01",))["SMOKE01"]
    peer_tools.SYSID_SETTINGS["smoke"] = SMOKE_SYSID
    inputs = peer_tools.Inputs("crane_x7", path, [path], None, path)
    bundle = peer_tools.bundle_of(path, peer_tools.TS)
    model = peer_tools.shared_model("reduced")
    return peer_tools.ArmData(
        "crane_x7",
        None,
        model,
        bundle,
        peer_tools.bundle_of(path, peer_tools.SYSID_TS),
        [bundle],
        [path.stem],
        {},
        peer_tools.truth_score.twin_truth_base(model, "crane_x7"),
        inputs,
    )


def main(argv=None) -> int:
    """Run the comparison's benchmark and print each tool's time against Algorithm 1's."""
    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    parser.add_argument("--arm", default="crane_x7", help="crane_x7 or so101")
    parser.add_argument("--profile", default="quick", help="quick or full (MuJoCo's fit length)")
    args = parser.parse_args(argv)
    from crane_lib.errors import InputError
    from crane_lib.export import peer_tools

    if args.smoke:
        if (code := isolated("benchmarks.bench_peer_tools", ["--smoke"])) is not None:
            return code
        bench(smoke_data(), "smoke", smoke=True)
        return 0
    try:
        inputs = peer_tools.check_request(args.arm, peer_tools.TOOLS, args.profile)
    except InputError as error:
        print(f"bench_peer_tools: {error}", file=sys.stderr)
        return 2
    bench(peer_tools.arm_data(inputs), args.profile, smoke=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
