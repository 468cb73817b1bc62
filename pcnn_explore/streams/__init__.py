"""Frame streams from real Atari games, generated once and cached on disk.

- :mod:`~pcnn_explore.streams.frame_stream`: :class:`FrameStream`, its settings, generation by the
  random and biased policies, and the cache (:func:`load_stream`);
- :mod:`~pcnn_explore.streams.policies`: the policies that move through the game (the Montezuma
  explorer and a trained checkpoint).
"""
from pcnn_explore.streams.frame_stream import (BIASED_CONCENTRATION, POLICIES, FrameStream, check_game,
                                               default_cache_dir, draw_actions, frames_fingerprint, generate_stream,
                                               load_stream, prefix, stream_path, stream_settings)

__all__ = ["FrameStream", "POLICIES", "BIASED_CONCENTRATION", "load_stream", "generate_stream",
           "stream_settings", "stream_path", "prefix", "draw_actions", "frames_fingerprint", "default_cache_dir", "check_game"]
