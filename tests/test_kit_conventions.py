"""A kit's parts are found by convention in its package (``Kit.part``): its planted faults,
seed scenarios, check alphabets and action codec, unless the kit declares them itself."""

from __future__ import annotations

import importlib

import pytest
from test_third_extension import HOME

from pictx_fsm.testing.kit import Kit, kit_named, kit_names


@pytest.mark.parametrize("name", kit_names())
def test_a_packaged_kit_reads_its_faults_scenarios_and_regions_from_its_package(
    name: str,
) -> None:
    # Given a kit this package ships, declared without faults, scenarios or alphabets
    kit = kit_named(name)
    # When its parts are asked for
    faults = importlib.import_module(f"{kit.package}.faults").FAULTS
    scenarios = importlib.import_module(f"{kit.package}.scenarios").SCENARIOS
    regions = importlib.import_module(f"{kit.package}.alphabets").REGIONS
    # Then they are its package's modules' tables
    assert kit.faults is faults and kit.scenarios is scenarios
    assert kit.alphabets() is regions.alphabets
    assert kit.alphabet_horizons() is regions.horizons


def test_a_kit_outside_a_package_says_which_part_it_does_not_declare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given turn-bell, a kit in a top-level module that declares its faults and scenarios
    monkeypatch.syspath_prepend(str(HOME))
    kit: Kit = kit_named("turn_bell:KIT")
    assert kit.package == "" and "early-bell" in kit.faults
    # When a part it does not declare is looked up by convention
    with pytest.raises(TypeError, match=r"declares no faults \(it is in no package\)"):
        kit.part("faults", "FAULTS")
    # Then check still has its alphabet: the host actions
    assert list(kit.alphabets()) == ["host"]
