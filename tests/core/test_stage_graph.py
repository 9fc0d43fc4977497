"""normlab.stage_graph: the graph of LayerNorm's six stages, read from the stages (chapter 10)."""

from __future__ import annotations

from normlab import stage_graph
from normlab.backward_stages import STAGES


def test_every_stage_has_an_output_and_every_value_a_place_and_a_label():
    assert set(stage_graph.OUTPUTS) == set(STAGES)
    values = {name for edge in stage_graph.edges() for name in edge[:2]}
    assert values == set(stage_graph.PLACES) == set(stage_graph.LABELS)


def test_the_edges_follow_the_stages_inputs():
    assert stage_graph.edges()[:3] == [("x", "mu", "Mean"), ("x", "xc", "Centre"),
                                       ("mu", "xc", "Centre")]  # fmt: skip
    assert ("gamma", "y", "ScaleShift") in stage_graph.edges()
    # every input is either a leaf (x, gamma, beta) or the output of an earlier stage
    produced = set()
    for source, target, _ in stage_graph.edges():
        assert source in {"x", "gamma", "beta"} or source in produced, source
        produced.add(target)


def test_the_values_whose_gradients_add_are_x_and_the_centred_record():
    assert stage_graph.fan_out() == {"x", "xc"}


def test_the_figure_draws_a_box_per_value_and_an_arrow_per_edge():
    fig = stage_graph.graph_figure()
    (ax,) = fig.axes
    boxes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    assert len(boxes) == len(stage_graph.PLACES)
    assert len(ax.patches) == len(stage_graph.edges())
