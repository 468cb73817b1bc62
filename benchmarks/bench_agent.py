"""Agent steps per second of DQN and DQN-PixelCNN on Atari, in the same process, and where time goes.

    python benchmarks/bench_agent.py                       # CPU, ALE/Pong-v5
    python benchmarks/bench_agent.py --device cuda --steps 4000 --json out.json
    python benchmarks/bench_agent.py --device cuda --num-envs 8 --steps 8000 --learning-starts 1000

Each variant runs ``pcnn_explore.run.train`` for ``--steps`` agent steps with gradient steps
from ``--learning-starts`` on (every 4 agent steps, batch 32, as in the Nature DQN), and reports
agent steps per second over the learning phase (from the first gradient step to the end). The
variants alternate ``--repeats`` times; the best of the repeats is reported. Then one agent step is
taken apart: env step (with and without the density frame), epsilon-greedy action, one gradient
step (sampling included) and one PixelCNN bonus step, each timed alone.

``--num-envs N`` steps N envs together (one worker process each). The figure that matters is the
bonus's added time per agent step, ``1000 / sps(DQN-PixelCNN) - 1000 / sps(DQN)`` milliseconds,
measured in the same process; DQN's own steps/s is printed beside it (a ratio would reward a slow
DQN). Goal: DQN-PixelCNN at 2,000 agent steps/s or more on one GPU, the bonus adding at most
0.25 ms per agent step.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402


def run_variant(env_id, bonus, thread, args, out_root, tag):
    from pcnn_explore.run import TrainConfig, train

    cfg = TrainConfig.preset(
        "paper", env=env_id, bonus=bonus, mmc_beta=0.1 if bonus != "none" else 0.0, steps=args.steps,
        learning_starts=args.learning_starts, replay_capacity=max(args.steps + 100, 1_000), checkpoint_every=0,
        num_envs=args.num_envs,
        out_dir=os.path.join(out_root, tag), device=args.device, tensorboard=False, bonus_thread=thread,
        num_threads=args.threads, epsilon_decay_steps=args.steps, seed=args.seed,
    )
    result = train(cfg, progress=False)
    return result.learning_steps_per_second


def timed(fn, n, sync):
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t) / n * 1e3


def breakdown(env_id, args):
    """Milliseconds per call of each part of an agent step."""
    from pcnn_explore.agents.dqn import DQNAgent
    from pcnn_explore.agents.replay import ReplayBuffer
    from pcnn_explore.bonus import PseudoCountBonus
    from pcnn_explore.density import make_density
    from pcnn_explore.envs import is_atari, make_env

    cuda = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    out = {}
    for with_frame in (False, True):
        env = make_env(env_id, args.seed, density_frame=with_frame)
        env.reset()

        def env_step():
            _, _, term, trunc, _ = env.step(env.action_space.sample())
            if term or trunc:
                env.reset()

        out["env_step_with_density_frame" if with_frame else "env_step"] = timed(env_step, 300, sync)
        env.close()
    env = make_env(env_id, args.seed)
    obs, info = env.reset()
    agent = DQNAgent(env.observation_space.shape, env.action_space.n, optimizer="rmsprop", device=args.device)
    rng = np.random.default_rng(0)
    out["act_greedy"] = timed(lambda: agent.act(obs, 0.0, rng), 300, sync)
    replay = ReplayBuffer(2_000, env.observation_space.shape, stack=4 if is_atari(env_id) else 1)
    o = obs
    for t in range(1_000):
        o2, r, term, trunc, info = env.step(env.action_space.sample())
        replay.add(o, 0, float(r), term, o2, term or trunc)
        o = o2
        if term or trunc:
            o, info = env.reset()
    out["replay_sample_32"] = timed(lambda: replay.sample(32, rng), 200, sync)
    out["learn_step_32"] = timed(lambda: agent.learn(replay.sample(32, rng)), 200, sync)
    frame = info["density_frame"]
    bonus = PseudoCountBonus(make_density("pixelcnn", device=args.device))
    out["pixelcnn_bonus_step"] = timed(lambda: bonus.step(frame), 200, sync)
    env.close()
    out["dqn_per_agent_step_estimate"] = out["env_step"] + out["act_greedy"] + out["learn_step_32"] / 4
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="ALE/Pong-v5")
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=2_500)
    p.add_argument("--learning-starts", type=int, default=500)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-envs", type=int, default=1, help="envs stepped together (steps must be a multiple)")
    p.add_argument("--variants", default="dqn,dqn_pixelcnn_thread,dqn_pixelcnn_inline",
                   help="comma-separated subset of dqn, dqn_pixelcnn_thread (bonus in a worker thread), "
                        "dqn_pixelcnn_inline; dqn is always run")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    args = p.parse_args(argv)
    args.variants = "dqn," + args.variants
    torch.set_num_threads(args.threads)
    variants = [v for v in [("dqn", "none", False), ("dqn_pixelcnn_thread", "pixelcnn", True),
                            ("dqn_pixelcnn_inline", "pixelcnn", False)] if v[0] in args.variants.split(",")]
    sps = {name: [] for name, *_ in variants}
    with tempfile.TemporaryDirectory() as root:
        for rep in range(args.repeats):
            for name, bonus, thread in variants:
                sps[name].append(run_variant(args.env, bonus, thread, args, root, f"{name}_{rep}"))
    best = {k: max(v) for k, v in sps.items()}
    parts = breakdown(args.env, args)
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    print(f"{args.env} on {device}, {args.num_envs} env(s), {args.steps} agent steps ({args.steps - args.learning_starts} learning), "
          f"best of {args.repeats}")
    for k, v in best.items():
        print(f"  {k:<22} {v:8.1f} agent steps/s   (runs: {', '.join(f'{x:.1f}' for x in sps[k])})")
    added = {k: 1e3 / best[k] - 1e3 / best["dqn"] for k in best if k != "dqn"}
    for k, v in added.items():
        print(f"  bonus adds {v:.3f} ms per agent step ({k}; DQN alone {1e3 / best['dqn']:.3f} ms)")
    print("milliseconds per call:")
    for k, v in parts.items():
        print(f"  {k:<30} {v:7.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"env": args.env, "device": device, "num_envs": args.num_envs, "steps": args.steps,
                       "runs": sps, "best": best, "bonus_added_ms_per_step": added,
                       "ms_per_call": parts}, f, indent=2)


if __name__ == "__main__":
    main()
