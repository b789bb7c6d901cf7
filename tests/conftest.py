"""Settings every test shares.

Hypothesis: no deadline and no "too slow" health check. Both judge a test by the clock (200 ms
an example, by default), and a busy machine decides that, not the code: `.ci/run` on a fresh
clone failed once at load 10 when one round trip of `test_filter_term_round_trips_any_text`
took 275 ms and its replay 49 ms. What a property test checks is its property; speed is
measured by `benchmarks/`, never asserted.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("ledger-tui", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ledger-tui")
