"""The witness passes the reference and catches every planted red-team implementation."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import normlab
from normlab import audit, red_team, torch_twins


def torch_layer_norm(x):
    t = torch.from_numpy(np.asarray(x, dtype=np.float64))
    return F.layer_norm(t, t.shape[-1:]).numpy()


def twin_layer_norm(x):
    return torch_twins.layer_norm(torch.from_numpy(np.asarray(x, dtype=np.float64))).numpy()


@pytest.mark.parametrize("fn", [normlab.layer_norm, torch_layer_norm, twin_layer_norm])
def test_the_witness_passes_correct_layer_norms(fn):
    report = audit.audit(fn)
    assert report.ok, str(report)
    np.testing.assert_allclose(report.out_mean, 0, atol=1e-9)
    np.testing.assert_allclose(report.out_var, 1, atol=1e-6)


# which checks must catch each planted mistake: the evidence a reader is shown
EXPECTED_ALARMS = {
    "wrong_axis": {"standardized", "independence", "batch_of_one"},
    "batch_axes": {"standardized", "independence", "batch_of_one"},
    "joint_token_feature": {"standardized", "independence", "batch_of_one"},
    "sample_variance": {"standardized"},
    "eps_outside_sqrt": {"epsilon"},
    "one_pass_variance": {"shift"},
    "rms_in_place_of_ln": {"standardized", "shift"},
}


def test_every_planted_implementation_has_an_expected_alarm():
    assert set(EXPECTED_ALARMS) == set(red_team.RED_TEAM)


@pytest.mark.parametrize("name", sorted(red_team.RED_TEAM))
def test_the_witness_catches_each_planted_implementation(name):
    report = audit.audit(red_team.RED_TEAM[name].fn)
    assert not report.ok
    failed = {c.name for c in report.failures}
    assert EXPECTED_ALARMS[name] <= failed, str(report)


def test_independence_evidence_names_the_records_and_the_axis():
    check = audit.audit(red_team.batch_axes).check("independence")
    assert check.evidence.startswith("changing record (0, 3) changed record (1, 0)")
    assert "the batch axis" in check.evidence
    check = audit.audit(red_team.wrong_axis).check("independence")
    assert "the token axis" in check.evidence


def test_the_witness_reports_a_crash_instead_of_raising():
    def broken(x):
        raise RuntimeError("boom")

    report = audit.audit(broken)
    assert not report.ok
    assert "RuntimeError: boom" in report.failures[0].evidence


def test_the_witness_reports_a_wrong_output_shape():
    report = audit.audit(lambda x: normlab.layer_norm(x)[..., :-1])
    assert "returned shape" in report.failures[0].evidence


def test_the_witness_sees_a_function_that_writes_into_its_input():
    def in_place(x):
        x -= x.mean(axis=-1, keepdims=True)
        x /= np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-5)
        return x

    report = audit.audit(in_place)
    assert not report.check("input_untouched").passed


def test_the_witness_refuses_a_batch_that_is_not_three_dimensional():
    with pytest.raises(ValueError, match=r"\(B, T, d\)"):
        audit.audit(normlab.layer_norm, np.zeros((4, 8)))


def test_red_team_functions_keep_the_output_shape():
    x = audit.witness_batch()
    for planted in red_team.RED_TEAM.values():
        assert planted.fn(x).shape == x.shape
