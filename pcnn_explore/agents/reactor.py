"""A Reactor-style agent (Gruslys et al. 2017), the paper's 'beta-LOO, beta = 1' variant (Sec. 4.2).

Kept from Reactor:
- a recurrent actor-critic: torso, LSTM, policy and Q-value heads sharing the torso and LSTM
  (:class:`~pcnn_explore.agents.reactor_network.ReactorNetwork`);
- learning from replayed sequences of 33 steps (:mod:`pcnn_explore.agents.sequence_replay`)
  with the behaviour probabilities mu(a|x) of the taken actions stored at acting time;
- Q evaluated by Retrace(lambda), lambda = 1 (:func:`~pcnn_explore.agents.retrace.retrace_targets`)
  with the target network's Q-values, the current policy pi for V(x) = sum_a pi(a|x) Q(x, a) and
  for the traces c = lambda min(1, pi/mu);
- the leave-one-out policy gradient with beta = 1 (see :func:`beta_loo_policy_loss`), plus an
  entropy bonus; a target network the loop syncs every so often (like DQN's).

Left out, and why:
- the distributional critic (Reactor learns a categorical return distribution with a
  distributional Retrace): a scalar Q with a squared Retrace error keeps Retrace itself, the part
  the paper's Sec. 4.2 argument is about (truncated traces vs MMC), and stays comparable to DQN's Q;
- prioritised sequence replay: uniform over sequence starts, as the kit's DQN replay is uniform;
- multiple asynchronous actors and learners: one process, N synchronous envs, so a run is
  deterministic and resumes bit for bit on the CPU;
- stored LSTM states: the learner zeroes the state up to ``burn_in`` observations before a
  sequence and runs those without gradient (R2D2-style burn-in), exact where the episode started
  within them;
- beta other than 1 (Reactor's beta-LOO with beta = min(c, 1/mu(a_hat|x)) would also cut the
  variance); Reactor's other settings (its optimiser, trust region, lambda) are not reproduced:
  Adam with the defaults below.

Loss on a batch of sequences (mean over the stored transitions, padding masked out)::

    critic  = 1/2 (Q(x_t, a_t) - Q^ret_t)^2
    policy  = -[ sg(Q^ret_t - Q(x_t, a_t)) pi(a_t|x_t) + sum_a sg(Q(x_t, a)) pi(a|x_t) ] - entropy_cost H(pi(.|x_t))
    loss    = critic + policy

``sg`` stops the gradient; Q^ret is computed without gradient.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from pcnn_explore.agents.reactor_network import ReactorNetwork
from pcnn_explore.agents.retrace import retrace_targets, reward_trace_products, trace_coefficients
from pcnn_explore.agents.sequence_replay import trim_window

__all__ = ["ReactorAgent", "beta_loo_policy_loss", "TRACE_FIELDS", "trace_summary"]

#: what :func:`trace_summary` reports of one learn call (see there)
TRACE_FIELDS = ("sequences", "c_mean", "rewarded", "span_mean", "product_mean", "product_min",
                "from_start", "from_start_span_mean", "from_start_product_mean")


def trace_summary(c_next: torch.Tensor, reward: torch.Tensor, mask: torch.Tensor, mask_next: torch.Tensor,
                  starts_episode: torch.Tensor, reward_threshold: float = 0.5) -> dict[str, float]:
    """Summary of the Retrace traces one learn call used (its policy pi against the stored mu).

    c_next, reward, mask, mask_next: (B, L) as in :meth:`ReactorAgent.losses` (c_next[b, t] = c_{t+1},
    mask_next 1 where x_{t+1} has a transition); starts_episode: (B,) bool, x_0 is the first
    observation of its episode. A sequence is *rewarded* when a stored step pays r_t >
    ``reward_threshold`` (the clipped reward the learner saw, r + r+: DeepSea's +1, or a bonus that
    large; the replay stores the sum only); its
    product is prod_{s=1}^{k} c_s up to its last rewarded step k
    (:func:`~pcnn_explore.agents.retrace.reward_trace_products`). Returns floats (counts as floats;
    means NaN where nothing to average): ``sequences`` B; ``c_mean`` mean c_s over every stored s >= 1;
    ``rewarded`` and its ``span_mean`` (mean k, in steps), ``product_mean``, ``product_min``;
    ``from_start``: rewarded sequences that start at their episode's first step, with
    ``from_start_span_mean`` and ``from_start_product_mean`` (the weight of the reward at the
    episode's start, over gamma^k).
    """
    products, spans = reward_trace_products(c_next, reward, mask, reward_threshold)
    won = spans >= 0
    start = won & starts_episode.bool()
    c_used = c_next[mask_next > 0].double()

    def mean(x):
        return float(x.double().mean()) if x.numel() else float("nan")

    return {"sequences": float(c_next.shape[0]), "c_mean": mean(c_used), "rewarded": float(won.sum()),
            "span_mean": mean(spans[won]), "product_mean": mean(products[won]),
            "product_min": float(products[won].min()) if bool(won.any()) else float("nan"),
            "from_start": float(start.sum()), "from_start_span_mean": mean(spans[start]),
            "from_start_product_mean": mean(products[start])}


def beta_loo_policy_loss(logits: torch.Tensor, q: torch.Tensor, retrace_return: torch.Tensor, action: torch.Tensor,
                         entropy_cost: float = 0.01) -> torch.Tensor:
    """Per-step policy loss of beta-LOO with beta = 1 (Reactor, Gruslys et al. 2017, Sec. 3.2).

    logits, q: (..., A) policy logits and Q-values of x; retrace_return: (...) R(x, a_hat), the
    Retrace return of the replayed action a_hat; action: (...) int64 a_hat. Returns (...)::

        -[ sg(R - Q(x, a_hat)) pi(a_hat|x) + sum_a sg(Q(x, a)) pi(a|x) ] - entropy_cost H(pi(.|x))

    whose negative gradient in the policy parameters is the leave-one-out estimate
    G = (R - Q(x, a_hat)) grad pi(a_hat|x) + sum_a Q(x, a) grad pi(a|x) (plus the entropy's).
    With beta = 1 this G is biased: a_hat was drawn from the behaviour policy mu, not pi, so
    E_mu[(R - Q(x, a_hat)) grad pi(a_hat|x)] = sum_a mu(a|x) (R - Q) grad pi(a|x). Weighting the
    first term by beta = 1/mu(a_hat|x) would make it unbiased (with R an unbiased estimate of Q^pi),
    at the price of variance; the paper's agent uses beta = 1.
    """
    log_pi = F.log_softmax(logits, dim=-1)
    pi = log_pi.exp()
    q = q.detach()
    q_taken = q.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    pi_taken = pi.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    objective = (retrace_return.detach() - q_taken) * pi_taken + (q * pi).sum(-1)
    entropy = -(pi * log_pi).sum(-1)
    return -(objective + entropy_cost * entropy)


class ReactorAgent:
    """Online and target :class:`ReactorNetwork`, Adam, and the actors' LSTM states (one per env).

    Args:
        obs_shape: (C, H, W) of the uint8 observations. n_actions: discrete actions.
        num_envs: envs acting at once (each keeps its own LSTM state).
        network, hidden, lstm_size: see :class:`ReactorNetwork`.
        gamma: discount (0.99). lam: Retrace lambda (1.0, the paper's). entropy_cost: 0.01.
        lr: Adam learning rate (1e-4); adam_eps: 1e-4. max_grad_norm: gradient clipping by global
            norm (40; None: none). device: torch device.
    """

    def __init__(self, obs_shape, n_actions: int, *, num_envs: int = 1, network: str = "auto",
                 hidden: int | None = None, lstm_size: int | None = None, gamma: float = 0.99, lam: float = 1.0,
                 entropy_cost: float = 0.01, lr: float = 1e-4, adam_eps: float = 1e-4,
                 max_grad_norm: float | None = 40.0, device: str = "cpu"):
        for name, value in (("gamma", gamma), ("lam", lam)):
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        if entropy_cost < 0:
            raise ValueError(f"entropy_cost must be >= 0, got {entropy_cost}")
        self.n_actions, self.num_envs = int(n_actions), int(num_envs)
        self.gamma, self.lam, self.entropy_cost = float(gamma), float(lam), float(entropy_cost)
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.device = torch.device(device)
        self.net = ReactorNetwork(obs_shape, n_actions, network, hidden, lstm_size).to(self.device)
        self.target = ReactorNetwork(obs_shape, n_actions, network, hidden, lstm_size).to(self.device)
        self.target.load_state_dict(self.net.state_dict())
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr, eps=adam_eps)
        self.h, self.c = self.net.initial_state(self.num_envs, self.device)  # actors' states, (num_envs, lstm)
        #: :func:`trace_summary` of the last :meth:`losses` call (None before the first)
        self.last_traces: dict[str, float] | None = None

    # ------------------------------------------------------------------------------------------ act
    def reset_state(self, env_index: int) -> None:
        """Zero env ``env_index``'s LSTM state: call at the start of each of its episodes."""
        self.h[env_index] = 0.0
        self.c[env_index] = 0.0

    @torch.no_grad()
    def policy(self, observations, env_indices) -> np.ndarray:
        """pi(.|x) of the envs ``env_indices`` for their observations (n, C, H, W); advances their
        LSTM states. Returns (n, A) float64 probabilities."""
        idx = torch.as_tensor(np.asarray(env_indices, np.int64), device=self.device)
        x = torch.from_numpy(np.stack([np.asarray(o) for o in observations])).to(self.device)
        logits, _, (h, c) = self.net.step(x, (self.h[idx], self.c[idx]))
        self.h[idx], self.c[idx] = h, c
        return torch.softmax(logits.double(), dim=-1).cpu().numpy()

    @staticmethod
    def _draw(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Inverse-CDF draws: the first action whose cumulative probability exceeds u (n,)."""
        cdf = np.cumsum(probs, axis=-1)
        return np.minimum((cdf <= u[:, None] * cdf[:, -1:]).sum(-1), probs.shape[-1] - 1)

    def act_batch(self, observations, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Actions of all ``num_envs`` envs sampled from pi, one network step for all; one uniform
        per env from ``rng``, in env order. Returns actions (N,) int64 and their probabilities
        mu (N,) float64 (the behaviour probabilities to store in replay)."""
        if len(observations) != self.num_envs:
            raise ValueError(f"act_batch needs one observation per env ({self.num_envs}), got {len(observations)}")
        probs = self.policy(observations, range(self.num_envs))
        actions = self._draw(probs, rng.random(self.num_envs))
        return actions, probs[np.arange(self.num_envs), actions]

    def act(self, obs, rng: np.random.Generator, env_index: int = 0) -> tuple[int, float]:
        """One env's action sampled from pi (one uniform from ``rng``) and its probability mu."""
        probs = self.policy([obs], [env_index])
        a = int(self._draw(probs, rng.random(1))[0])
        return a, float(probs[0, a])

    # ---------------------------------------------------------------------------------------- learn
    def losses(self, batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(critic, policy, Q^ret) on a :class:`~pcnn_explore.agents.sequence_replay.SequenceBatch`:
        the two 0-d losses (with gradient) and the (B, L) Retrace targets (float32, no gradient; 0 past
        the longest sequence of the batch: the window is first cut by :func:`trim_window`).
        Also sets :attr:`last_traces`, the :func:`trace_summary` of the traces these targets used."""
        full_length = batch.action.shape[1]
        batch = trim_window(batch)  # exact: drops the columns no output depends on
        dev, k = self.device, int(batch.burn_in)
        obs = torch.from_numpy(np.ascontiguousarray(batch.obs)).to(dev)
        first = torch.from_numpy(batch.first).to(dev)
        action = torch.from_numpy(batch.action).to(dev)
        mu, reward, terminated, mask = (torch.from_numpy(getattr(batch, f)).to(dev)
                                        for f in ("mu", "reward", "terminated", "mask"))
        logits, q = self.net.unroll(obs, first, burn_in=k)  # (B, L + 1, A): x_0 ... x_L
        L = action.shape[1]
        with torch.no_grad():
            _, q_target = self.target.unroll(obs, first, burn_in=k)
            pi_next = torch.softmax(logits.detach()[:, 1:], dim=-1)  # pi(.|x_{t+1}), t = 0 ... L-1
            q_next_all = q_target[:, 1:]
            zero = torch.zeros_like(action[:, :1])
            a_next = torch.cat([action[:, 1:], zero], dim=1).unsqueeze(-1)  # a_{t+1} (padding: 0)
            mu_next = torch.cat([mu[:, 1:], torch.ones_like(mu[:, :1])], dim=1)
            mask_next = torch.cat([mask[:, 1:], torch.zeros_like(mask[:, :1])], dim=1)  # x_{t+1} has a transition
            c_next = trace_coefficients(pi_next.gather(-1, a_next).squeeze(-1), mu_next, self.lam) * mask_next
            q_ret = retrace_targets(reward, self.gamma * (1.0 - terminated), q_next_all.gather(-1, a_next).squeeze(-1),
                                    (pi_next * q_next_all).sum(-1), c_next)
            self.last_traces = trace_summary(c_next, reward, mask, mask_next, first[:, k] > 0)
        n = mask.sum().clamp(min=1.0)
        q_taken = q[:, :L].gather(-1, action.unsqueeze(-1)).squeeze(-1)
        critic = 0.5 * ((q_taken - q_ret) ** 2 * mask).sum() / n
        policy = (beta_loo_policy_loss(logits[:, :L], q[:, :L], q_ret, action, self.entropy_cost) * mask).sum() / n
        if L < full_length:  # padding steps (mask 0) get a zero target
            q_ret = torch.cat([q_ret, q_ret.new_zeros(q_ret.shape[0], full_length - L)], dim=1)
        return critic, policy, q_ret

    def learn(self, batch) -> torch.Tensor:
        """One Adam step on a sequence batch. Returns the loss (critic + policy), detached, 0-d on the device."""
        critic, policy, _ = self.losses(batch)
        loss = critic + policy
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
        self.optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def sync_target(self) -> None:
        """Copy the online weights into the target network, in place."""
        for t, s in zip(self.target.state_dict().values(), self.net.state_dict().values()):
            t.copy_(s)

    # ----------------------------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict:
        """Weights, optimiser and the actors' LSTM states (tensors and numbers only)."""
        return {"net": self.net.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "h": self.h.clone(), "c": self.c.clone()}

    def load_state_dict(self, d: dict) -> None:
        if tuple(d["h"].shape) != tuple(self.h.shape):
            raise ValueError(f"the checkpoint holds LSTM states of shape {tuple(d['h'].shape)}, "
                             f"this agent {tuple(self.h.shape)} (num_envs, lstm_size)")
        self.net.load_state_dict(d["net"])
        self.target.load_state_dict(d["target"])
        self.optimizer.load_state_dict(d["optimizer"])
        self.h.copy_(d["h"])
        self.c.copy_(d["c"])
