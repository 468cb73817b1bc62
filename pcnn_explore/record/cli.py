"""Command line: ``pcnn-explore record --env ENV --density MODEL --out FILE.npz ...``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pcnn_explore.record.episode import save_episode
from pcnn_explore.record.recorder import DENSITY_MODELS, _check_settings, record_episode

__all__ = ["add_arguments", "run_cli"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", required=True, help="environment id, e.g. ALE/MontezumaRevenge-v5")
    parser.add_argument("--policy", default="random",
                        help="random | scripted | path of an agent checkpoint (default: random)")
    parser.add_argument("--density", default="pixelcnn", choices=DENSITY_MODELS,
                        help="density model trained online (default: pixelcnn)")
    parser.add_argument("--warmup-frames", type=int, default=0,
                        help="frames the model trains on before the recorded episode (default: 0)")
    parser.add_argument("--max-steps", type=int, default=2000,
                        help="at most this many agent steps are recorded (default: 2000)")
    parser.add_argument("--episodes", type=int, default=1, help="episodes to record back to back (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="environment, policy and model seed (default: 0)")
    parser.add_argument("--pg-scale", type=float, default=0.1, help="bonus scale c (default: 0.1)")
    parser.add_argument("--pg-schedule", default="inverse_sqrt",
                        help="PG decay: inverse_sqrt | inverse | constant (default: inverse_sqrt)")
    parser.add_argument("--sticky-actions", type=float, default=None,
                        help="sticky-action probability (default: 0.25; 0 for the scripted policy)")
    parser.add_argument("--device", default="cpu", help="torch device of the PixelCNN (default: cpu)")
    parser.add_argument("--out", required=True, help="output file, ending in .npz")


def run_cli(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    try:
        if out.suffix != ".npz":
            raise ValueError(f"--out must end in .npz, got {args.out!r}")
        if not out.parent.is_dir():
            raise ValueError(f"--out directory {out.parent} does not exist; create it first")
        from pcnn_explore.bonus import SCHEDULES

        if args.pg_schedule not in SCHEDULES:
            raise ValueError(f"unknown --pg-schedule {args.pg_schedule!r}: choose one of {', '.join(SCHEDULES)}")
        _check_settings(args.env, args.policy, args.density, args.warmup_frames, args.seed, args.max_steps,
                        args.episodes, args.pg_scale, args.sticky_actions)
    except (ValueError, TypeError) as e:
        print(f"pcnn-explore record: error: {e}", file=sys.stderr)
        return 2
    try:
        episode = record_episode(args.env, args.policy, args.density, args.warmup_frames, args.seed,
                                 max_steps=args.max_steps, n_episodes=args.episodes, pg_scale=args.pg_scale,
                                 pg_schedule=args.pg_schedule, sticky_actions=args.sticky_actions,
                                 device=args.device, progress=sys.stderr.isatty())
    except (ValueError, TypeError, FileNotFoundError) as e:  # e.g. a checkpoint for another game
        print(f"pcnn-explore record: error: {e}", file=sys.stderr)
        return 2
    save_episode(episode, out)
    size = out.stat().st_size / 1e6
    print(f"wrote {out} ({size:.1f} MB): {episode!r}; mean bonus {episode.bonus.mean():.4f}, "
          f"max bonus {episode.bonus.max():.4f}")
    return 0
