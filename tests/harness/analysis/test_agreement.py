"""Krippendorff's alpha and Fleiss' kappa against published worked examples, then on run results."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.analysis import agreement, fleiss_kappa, krippendorff_alpha_nominal
from harness.selection import ProblemResult

_ = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section A: binary data, two
# observers, ten units. o_01 = o_10 = 4, n_0 = 14, n_1 = 6, n = 20: alpha = 1 - 19 * 4 / 84 = 0.095.
SECTION_A = list(zip([0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]))
# Section C: nominal data, four observers, twelve units with missing values; the paper gives 0.743.
SECTION_C = list(
    zip(
        [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
        [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
    )
)


@pytest.mark.parametrize(
    ("units", "expected"),
    [
        pytest.param(SECTION_A, 1 - 19 * 4 / 84, id="krippendorff2011-A-binary"),
        pytest.param(SECTION_C, 0.743, id="krippendorff2011-C-nominal-missing"),
        pytest.param([(True, True), (False, False), (True, None)], 1.0, id="perfect-with-unpairable-unit"),
        # o_TF = o_FT = 2 (two units, each adding 1 + 1), n_T = n_F = 2, n = 4: 1 - 3 * 4 / 8
        pytest.param([(True, False), (False, True)], -0.5, id="systematic-disagreement"),
    ],
)
def test_krippendorff_alpha(units: list[tuple[object, ...]], expected: float) -> None:
    assert krippendorff_alpha_nominal(units) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize(
    "units",
    [
        pytest.param([], id="no-units"),
        pytest.param([(True, None), (None, False)], id="nothing-pairable"),
        pytest.param([(True, True), (True, True)], id="no-variation"),
    ],
)
def test_krippendorff_alpha_undefined(units: list[tuple[object, ...]]) -> None:
    assert krippendorff_alpha_nominal(units) is None


# Fleiss (1971) as worked on Wikipedia ("Fleiss' kappa", worked example): 10 subjects, 14 raters,
# 5 categories; P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        pytest.param(FLEISS_WIKIPEDIA, 0.210, id="fleiss1971-wikipedia"),
        pytest.param([[2, 0], [0, 2]], 1.0, id="perfect"),
        # P-bar = 0, p = (1/2, 1/2), P-bar_e = 1/2: (0 - 1/2) / (1 - 1/2)
        pytest.param([[1, 1], [1, 1]], -1.0, id="always-split"),
        pytest.param([[2, 0], [2, 0]], None, id="one-category"),
        pytest.param([], None, id="no-units"),
    ],
)
def test_fleiss_kappa(counts: list[list[int]], expected: float | None) -> None:
    value = fleiss_kappa(counts)
    assert value == (pytest.approx(expected, abs=5e-4) if expected is not None else None)


def test_fleiss_kappa_rejects_unequal_raters() -> None:
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([[2, 0], [1, 0]])


def test_agreement_over_candidates_treats_unscored_as_missing(problem: Callable[..., ProblemResult]) -> None:
    results = [
        problem(
            "p1",
            [
                {"scores": {"a": 0.9, "b": 0.7, "c": None}},  # T T -
                {"scores": {"a": 0.2, "b": 0.5, "c": 0.1}},  # F T F  (0.5 counts as "correct")
            ],
        ),
        problem("p2", [{"scores": {"a": 0.1, "b": None, "c": None}}]),  # F - -: not pairable
    ]
    metrics = agreement(results)
    # Same coincidences as units (T, T), (F, T, F): o_TT = 2, o_TF = o_FT = 1, o_FF = 1;
    # n_T = 3, n_F = 2, n = 5: alpha = 1 - 4 * 2 / 12 = 1/3.
    assert metrics["agreement.krippendorff_alpha"] == pytest.approx(1 / 3)
    assert metrics["agreement.pairable_units"] == 2
    assert metrics["agreement.members"] == 3
    # Only the second candidate was scored by all three: counts (1 T, 2 F); a single unit gives
    # P-bar = 1/3, p = (1/3, 2/3), P-bar_e = 5/9: (1/3 - 5/9) / (4/9) = -1/2.
    assert metrics["agreement.complete_units"] == 1
    assert metrics["agreement.fleiss_kappa"] == pytest.approx(-0.5)


def test_agreement_needs_two_members(problem: Callable[..., ProblemResult]) -> None:
    metrics = agreement([problem("p1", [{"scores": {"a": 0.9}}, {"scores": {"a": 0.1}}])])
    assert metrics == {
        "agreement.members": 1,
        "agreement.krippendorff_alpha": None,
        "agreement.pairable_units": 0,
        "agreement.fleiss_kappa": None,
        "agreement.complete_units": 0,
    }
