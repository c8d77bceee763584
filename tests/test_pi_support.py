"""Which Pi versions pi-context supports (``pictx_fsm.hosts.pi.support``): the oldest is
0.87.1, the first with boundary results; an older Pi gets one clear notice at startup."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pi_versions import INSTALLS

from pictx_fsm.hosts.pi.support import (
    NEWEST_TESTED_PI,
    OLDEST_SUPPORTED_PI,
    is_supported,
    version_key,
    version_notice,
)

VERSIONS = st.tuples(*(st.integers(min_value=0, max_value=120) for _ in range(3)))


@given(VERSIONS, st.sampled_from(("", "-beta.1", "-rc.2")))
def test_a_pi_older_than_0_87_1_gets_one_warning_naming_both_versions(
    parts: tuple[int, int, int], suffix: str
) -> None:
    # Given any Pi version (with or without a pre-release suffix)
    version = ".".join(map(str, parts)) + suffix
    notice = version_notice(version)
    # Then exactly the versions before 0.87.1 get the notice, and it names both versions
    assert (notice is not None) is (parts < (0, 87, 1))
    if notice is not None:
        assert notice.level == "warning"
        assert notice.message == (
            f"pi-context: Pi {version} is older than 0.87.1, the oldest Pi pi-context supports; "
            "context windows will not work. Update Pi to 0.87.1 or newer."
        )


def test_every_tested_pi_is_supported_and_the_range_matches_the_installs() -> None:
    # The tested installs span exactly the documented range, and each is supported
    versions = [install.version for install in INSTALLS]
    assert (versions[0], versions[-1]) == (OLDEST_SUPPORTED_PI, NEWEST_TESTED_PI)
    assert all(is_supported(v) and version_notice(v) is None for v in versions)


def test_an_unreadable_version_is_not_judged() -> None:
    assert version_key("dev") is None
    assert version_notice("dev") is None
