"""The speed of 07's PixelCNN lines under each optimizer reading, and what 07's design costs with them.

The deep-sea pilot (:mod:`pcnn_explore.study.power`, ``data/pilot/deep_sea_pilot.json``) timed the PixelCNN lines
before the readings were named (torch's form, then the kit's only one). This probe runs them again as the pilot's
speed probe does (:func:`pcnn_explore.experiments.agents.pilot.run_pilot`, there 100 episodes, here 500 (100 ran in
about a second, too short to time) of DeepSea-14, tuning
seed 0 with its declared map, two runs at once), now ``paper_pixelcnn`` (tf1, the paper's reading),
``paper_pixelcnn_torch`` (the sensitivity reading) and ``kit_pixelcnn_pos`` (tf1), and prices, by
:func:`pcnn_explore.study.power.design_minutes` with these rates, 07's design (DeepSea-10, 1,000 episodes) with
the PixelCNN lines added, per reading, at the seeds the power model asks for (every run to its cap: the paper's
PixelCNN is modelled as DQN, which does not solve DeepSea-10 in 1,000 episodes). Wall rates, as the pilot's
(runs two at once on the 2-core machine, which ran other work at the same time).

Run (about 20 seconds)::

    PYTHONPATH=. python benchmarks/pixelcnn_line_readings_probe.py --out data/pilot/pixelcnn_readings_probe.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

LINES = ("paper_pixelcnn", "paper_pixelcnn_torch", "kit_pixelcnn_pos")
SEED, SIZE, EPISODES = 0, 14, 500


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudySettings, run_study
    from pcnn_explore.experiments.agents.pilot import _run_record
    from pcnn_explore.run.lines import line
    from pcnn_explore.study import power as pw
    from pcnn_explore.study.preregistered import deep_sea as pre
    from pcnn_explore.study.preregistered.deep_sea_power import DESIGNS, POWER

    if SEED not in pre.TUNING_SEEDS:
        raise SystemExit(f"error: the probe runs tuning seeds only, {SEED} is not")
    settings = DeepSeaStudySettings(profile="study", sizes=(SIZE,), episodes=(EPISODES,), seeds=(SEED,), workers=2,
                                    mapping_seed=pre.PER_SEED,
                                    train_overrides=(("stop_when_solved", True), ("tensorboard", False)))
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pixelcnn-probe-") as out_dir:
        study = run_study(settings, [line(k) for k in LINES], Path(out_dir))
        probe = [_run_record(r, settings.mapping_of(r.seed), None) for r in study.runs]
    wall = time.monotonic() - t0
    for r in probe:
        print(f"probe {r['line']}: {r['episodes_run']} episodes, {r['wall_s']:.2f} s wall", flush=True)
    pilot = pw.load_pilot()
    old = {r["line"]: r for r in pilot["probe"]}
    new_pilot = {**pilot, "probe": [r for r in pilot["probe"] if r["line"] not in LINES] + probe}
    rates = pw.agent_rates(new_pilot)
    rate_of = {**pw.RATE_OF, "paper_pixelcnn_torch": "paper_pixelcnn_torch"}
    d = DESIGNS["07"]
    sizes, caps = d["sizes"], d["episodes"]
    k = {name: POWER[name]["needs"] for name in ("pixelcnn_bonus_explores", "position_bias_helps")}
    n = max(k.values())

    def minutes(lines, seeds):
        return round(pw.design_minutes(new_pilot, lines, sizes, caps, seeds, 2, rate_of), 1)

    prices = {
        "07 lines (the design's, no PixelCNN), 40 seeds": minutes(d["lines"], 40),
        f"tf1 run: 07 lines + paper_pixelcnn, {n} seeds": minutes(d["lines"] + ("paper_pixelcnn",), n),
        "tf1 run: 07 lines + paper_pixelcnn, 40 seeds": minutes(d["lines"] + ("paper_pixelcnn",), 40),
        f"tf1 run: 07 lines + paper_pixelcnn + kit_pixelcnn_pos, {n} seeds":
            minutes(d["lines"] + ("paper_pixelcnn", "kit_pixelcnn_pos"), n),
        "tf1 run: 07 lines + paper_pixelcnn + kit_pixelcnn_pos, 40 seeds":
            minutes(d["lines"] + ("paper_pixelcnn", "kit_pixelcnn_pos"), 40),
        "torch run: paper_pixelcnn_torch + dqn, 40 seeds": minutes(("dqn", "paper_pixelcnn_torch"), 40),
        "torch run: paper_pixelcnn_torch + kit_pixelcnn_pos (torch) + dqn, 40 seeds":
            minutes(("dqn", "paper_pixelcnn_torch", "kit_pixelcnn_pos"), 40),
    }
    before = pw.agent_rates(pilot)
    for r in probe:
        was = (f"; the pilot's probe before the readings were named: {before[r['line']]:.0f} steps/s over "
               f"{old[r['line']]['episodes_run']} episodes") if r["line"] in old else ""
        print(f"{r['line']:22s} {r['episodes_run']} episodes of DeepSea-{SIZE}: {r['wall_s']:.2f} s wall "
              f"({rates[r['line']]:.0f} agent steps/s{was})")
    for what, v in prices.items():
        print(f"{what}: {v} min on 2 cores")
    record = {"what": "speed of 07's PixelCNN lines under each optimizer reading (wall, two runs at once, 500 episodes "
                      "of DeepSea-14, tuning seed 0) and 07's design priced with them (study.power.design_minutes, "
                      "every run to its cap)",
              "command": "PYTHONPATH=. python benchmarks/pixelcnn_line_readings_probe.py --out "
                         "data/pilot/pixelcnn_readings_probe.json",
              "load_average": [round(x, 2) for x in os.getloadavg()], "wall_s": round(wall, 1), "probe": probe,
              "rates_steps_per_s": {k2: round(rates[k2], 1) for k2 in LINES},
              "rates_before_readings_steps_per_s": {k2: round(pw.agent_rates(pilot)[k2], 1) for k2 in LINES if k2 in old},
              "seeds_needed": k, "design_07": {"sizes": list(sizes), "episodes": list(caps)},
              "minutes": prices, "budget_minutes": d["budget_minutes"]}
    if args.out:
        from pcnn_explore.atomic import write_text_atomic

        write_text_atomic(Path(args.out), json.dumps(record, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
