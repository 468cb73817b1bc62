"""The test session's local Ray, in a process of its own: started as ``pcnn-explore sweep --executor ray``
starts one on a machine without a cluster (:func:`pcnn_explore.sweep.ray_cluster.connect`, no address),
its address printed on stdout, kept until stdin closes.

Run as ``python tests/ray_holder.py NUM_CPUS``; conftest starts it once per test session, before the
test workers start, so that Ray's node comes up while the machine is quietest (the raylet of Ray
2.60 gives its dashboard agent a fixed 15 s to start; see :mod:`pcnn_explore.sweep.ray_cluster`).
"""
from __future__ import annotations

import sys


def main(num_cpus: int) -> None:
    import ray

    from pcnn_explore.sweep.ray_cluster import connect, release

    connect(num_cpus=num_cpus)
    print(ray.get_runtime_context().gcs_address, flush=True)
    sys.stdin.read()  # the test session closes it at its end
    release()


if __name__ == "__main__":
    main(int(sys.argv[1]))
