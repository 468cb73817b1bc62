"""Exploration measures: info["cell"] / info["success"] from the envs, ExplorationTracker on
scripted walks, and the egocentric RoomChain task whose density frame follows the agent's view."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.checkpoint import load, save_atomic
from pcnn_explore.envs import make_env
from pcnn_explore.envs.minigrid_tasks import ROOM_CHAIN_IDS, optimal_steps, room_chain_cells
from pcnn_explore.exploration import ExplorationTracker
from pcnn_explore.envs.frames import to_density_frame

LEFT, RIGHT, FORWARD = 0, 1, 2
# RoomChain-R3 (4x4 rooms), by hand: from (x=1, y=4) facing right, along the bottom row of room 0,
# up to its door (x=5, y=1), along the top row of room 1, down to its door (x=10, y=4), along the
# bottom row of room 2, up to the goal (x=14, y=1).
ROUTE_R3 = ([FORWARD] * 3 + [LEFT] + [FORWARD] * 3 + [RIGHT] + [FORWARD] * 2
            + [FORWARD] * 3 + [RIGHT] + [FORWARD] * 3 + [LEFT] + [FORWARD] * 2
            + [FORWARD] * 3 + [LEFT] + [FORWARD] * 3)


def test_tracker_on_a_scripted_walk_by_hand():
    walk = [  # (info, step): a reset, steps, a second episode's reset, a success, another success
        ({"cell": (0, 0), "success": False}, 0),
        ({"cell": (1, 0), "success": False}, 1),
        ({"cell": (1, 1), "success": False}, 2),
        ({"cell": (1, 0), "success": False}, 3),  # seen before
        ({"cell": (0, 0), "success": False}, 3),  # reset of episode 2: the start again
        ({"cell": (2, 2), "success": True}, 4),
        ({"cell": (3, 2), "success": True}, 7),
    ]
    t = ExplorationTracker()
    assert (t.distinct_cells, t.first_success_step, t.successes) == (0, None, 0)
    expected_cells = [1, 2, 3, 3, 3, 4, 5]
    for (info, step), cells in zip(walk, expected_cells):
        t.update(info, step)
        assert t.distinct_cells == cells
    assert t.first_success_step == 4 and t.successes == 2 and t.updates == 7
    assert t.cells == {(0, 0), (1, 0), (1, 1), (2, 2), (3, 2)}


def test_tracker_counts_updates_when_no_step_is_given_and_ignores_infos_without_cells():
    t = ExplorationTracker()
    for info in ({"lives": 3}, {"cell": 1}, {"cell": 1}, {"cell": 2, "success": True}, {}):
        t.update(info)
    assert t.distinct_cells == 2 and t.first_success_step == 4  # the 4th update
    empty = ExplorationTracker()
    empty.update({"density_frame": None})
    assert empty.distinct_cells == 0 and empty.first_success_step is None


def test_tracker_state_round_trip_through_a_checkpoint_file(tmp_path):
    a = ExplorationTracker()
    for step, cell in enumerate([(0, 0), (np.int64(1), np.int64(0)), (1, 1)]):
        a.update({"cell": cell, "success": step == 2}, step)
    b = ExplorationTracker()
    b.load_state_dict(load(save_atomic(a.state_dict(), tmp_path / "tracker.pt")))
    assert (b.distinct_cells, b.first_success_step, b.successes, b.updates) == (3, 2, 1, 3)
    b.update({"cell": (1, 0)}, 9)  # the restored cells are the same hashable tuples
    assert b.distinct_cells == 3
    with pytest.raises(ValueError, match="ExplorationTracker"):
        b.load_state_dict({"kind": "CTSDensity"})


def test_tracker_rejects_bad_inputs():
    t = ExplorationTracker()
    with pytest.raises(TypeError, match="dict"):
        t.update([("cell", 1)])
    with pytest.raises(TypeError, match="hashable"):
        t.update({"cell": {"row": 1}})
    with pytest.raises(ValueError, match="step"):
        t.update({"cell": 1}, step=-1)
    with pytest.raises(ValueError, match="step"):
        t.update({"cell": 1}, step=1.5)
    assert t.distinct_cells == 0


def test_room_chain_scripted_route_cells_and_success():
    env = make_env("MiniGrid-RoomChain-R3-v0", view="partial")
    obs, info = env.reset()
    assert optimal_steps(env) == len(ROUTE_R3) == 27
    tracker = ExplorationTracker()
    tracker.update(info, 0)
    assert info["cell"] == (4, 1) and info["success"] is False  # (row, column) = (y, x)
    cells = [info["cell"]]
    for step, a in enumerate(ROUTE_R3, start=1):
        obs, reward, term, trunc, info = env.step(a)
        tracker.update(info, step)
        cells.append(info["cell"])
        assert info["success"] == (step == 27) == term
    assert reward > 0 and cells[-1] == (1, 14)
    assert cells[9] == (1, 5) and cells[19] == (4, 10)  # the two doors
    assert tracker.distinct_cells == 1 + 8 + 8 + 6 == 23 and tracker.first_success_step == 27


def test_room_chain_layout_is_fixed_and_its_density_frame_is_the_agents_view():
    env = make_env("MiniGrid-RoomChain-R4-v0", seed=0, view="partial", keep_rgb=True)
    grids = []
    for seed in (0, 1, 2):
        obs, info = env.reset(seed=seed)
        grids.append(env.unwrapped.grid.encode())
        pov = env.unwrapped.get_frame(tile_size=4, agent_pov=True)
        np.testing.assert_array_equal(info["rgb"], pov)
        np.testing.assert_array_equal(obs, pov.transpose(2, 0, 1))
        np.testing.assert_array_equal(info["density_frame"], to_density_frame(pov))
    assert all(np.array_equal(grids[0], g) for g in grids[1:])  # the same map every episode
    obs, *_, info = env.step(FORWARD)
    np.testing.assert_array_equal(info["density_frame"], to_density_frame(env.unwrapped.get_frame(tile_size=4, agent_pov=True)))
    assert info["density_frame"].shape == (42, 42) and env.action_space.n == 3
    # the full view's density frame is the whole grid, as before
    full = make_env("MiniGrid-RoomChain-R4-v0", view="full")
    _, info = full.reset()
    np.testing.assert_array_equal(info["density_frame"],
                                  to_density_frame(full.unwrapped.get_frame(highlight=False, tile_size=4)))


def test_room_chain_rooms_look_different_to_the_density_model():
    # A new room brings new pixels into view: the density frames seen walking the route to the
    # goal of R3 hold frames that the first room's frames do not (the landmark, the next door).
    env = make_env("MiniGrid-RoomChain-R3-v0", view="partial")
    _, info = env.reset()
    frames = [info["density_frame"]]
    for a in ROUTE_R3:
        frames.append(env.step(a)[4]["density_frame"])
    first_room = {f.tobytes() for f in frames[:9]}
    assert len({f.tobytes() for f in frames[11:]} - first_room) >= 10
    assert room_chain_cells(4, 4) == 64 and len(ROOM_CHAIN_IDS) >= 3


def test_montezuma_cells_are_rooms_and_other_games_have_none():
    env = make_env("ALE/MontezumaRevenge-v5", seed=0)
    _, info = env.reset()
    assert info["cell"] == 1 and info["success"] is False  # the first room is room 1
    _, r, *_, info = env.step(0)
    assert info["cell"] == 1 and info["success"] == (r > 0)
    _, info = make_env("ALE/Pong-v5", seed=0).reset()
    assert "cell" not in info and "success" not in info


def test_deep_sea_cells_are_the_n_n_plus_1_over_2_the_agent_can_occupy():
    from pcnn_explore.envs.deep_sea import occupiable_cells

    env = make_env("DeepSea-3-v0")
    t = ExplorationTracker()
    step = 0
    for seq in range(8):  # every action sequence: every cell (row r, columns 0..r) and the row below the grid
        _, info = env.reset()
        t.update(info, step)
        for k in range(3):
            _, _, term, _, info = env.step((seq >> k) & 1)
            step += 1
            assert info["outside"] == term == (k == 2)
            t.update(info, step)
    assert occupiable_cells(3) == 6 and occupiable_cells(50) == 1275
    assert t.cells == {(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)} and t.distinct_cells == 6  # no row 3
    assert t.successes == 1  # the +1 comes on the step out of the grid and still counts


def test_tracker_leaves_out_cells_marked_outside():
    t = ExplorationTracker()
    t.update({"cell": (0, 0), "outside": False})
    t.update({"cell": (1, 1), "outside": True, "success": True}, 1)
    assert t.distinct_cells == 1 and t.first_success_step == 1
