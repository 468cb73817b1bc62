"""Training runs: DQN, optionally with the pseudo-count bonus and the mixed Monte Carlo update.

``pcnn-explore train --env ENV --bonus none|pixelcnn|pixelcnn_pos|cts|convcts --mmc BETA ...`` and, from Python::

    from pcnn_explore.train import TrainConfig, train, read_log
    cfg = TrainConfig.preset("study", env="MiniGrid-DoorKey-5x5-v0", bonus="pixelcnn", mmc_beta=0.1,
                             steps=50_000, seed=0, out_dir="runs/doorkey")
    result = train(cfg)
    log = read_log(cfg.out_dir)          # dict of numpy columns, one row per episode

The code lives in :mod:`pcnn_explore.run` (config, loop, log, checkpoints, resume, policy, cli);
this module keeps the public names where users import them from.
"""
from pcnn_explore.run import (BONUSES, LOG_COLUMNS, SCORED_FRAMES, Policy, RunError, TrainConfig, TrainResult,
                              episode_seed, epsilon_at, load_policy, read_log, train)
from pcnn_explore.run.cli import add_arguments, run_cli

__all__ = ["TrainConfig", "TrainResult", "train", "read_log", "load_policy", "Policy", "episode_seed", "epsilon_at",
           "LOG_COLUMNS", "BONUSES", "SCORED_FRAMES", "RunError", "add_arguments", "run_cli"]
