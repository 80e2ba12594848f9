"""The factors a decision reads (``memory.factors``, through ``Evidence.factors``) are the
calibration's, bit for bit, all three at once, and the columns they come with are the turns' own."""

import pytest

from tests.memory.random_log import random_log


@pytest.mark.parametrize("seed", range(6))
def test_one_read_gives_the_calibrations_factors_and_the_turns_columns(seed):
    for layer, n, numbers in random_log(seed):
        evidence = layer.evidence
        for reuse, nearby in [((1.0, 0.0), (1.0, 0.0)), ((0.2, 1.0), (0.4, 1.0)), ((3.0, 0.5), (0.3, 2.0))]:
            cal = evidence.calibration(n, 10.0, numbers, *reuse)
            # the calibration weighs the nearby prior by the reuse strength: asked once more for it
            beside = evidence.calibration(n, 10.0, numbers, 1.0, nearby[1], nearby[0])
            out = evidence.factors(n, 10.0, numbers, reuse, nearby)
            assert (out.factor, out.reuse, out.nearby) == (cal.factor, cal.reuse, beside.nearby)
            if out.role is not None:
                assert (out.role == evidence.column("role", numbers)).all()
                shown = evidence.column("settled_at", numbers) > 0
                assert (out.shown == shown).all()
            if out.beside is not None:
                assert (out.beside == ((evidence.column("nearby_at", numbers) > 0) & ~shown)).all()
