"""``pictx_fsm.extensions.pi_context.texts`` is the one transcription of the spec's texts
(lifecycle §2.3, §16, D1): verify's oracle (``kit/oracle.py``, ``kit/contents.py``) compares
what the lifecycle writes with these constants, so each must read exactly as the spec does.
Skipped, saying so, without ``../shared/spec``."""

from __future__ import annotations

import re

import pytest
from shared_paths import SHARED

from pictx_fsm.extensions.pi_context import texts

SPEC = SHARED / "spec" / "lifecycle.md"
pytestmark = pytest.mark.skipif(not SPEC.exists(), reason=f"{SPEC} is absent")

EXACT = {
    "WARNING_PROMPT": texts.WARNING_PROMPT,
    "CONTINUATION_0_25_1": texts.CONTINUATION_0_25_1,
    "CONTINUATION_0_24": texts.CONTINUATION_0_24,
    "RESET_SUMMARY_0_24": texts.RESET_SUMMARY_0_24,
    "WIPE_DISABLED_ERROR": texts.WIPE_DISABLED_ERROR,
    "NOTICE_COMPACT_DISABLED": texts.NOTICE_COMPACT_DISABLED,
    "NOTICE_WIPE_NEEDS_ON": texts.NOTICE_WIPE_NEEDS_ON,
    "NOTICE_TOGGLE_USAGE": texts.NOTICE_TOGGLE_USAGE,
    "NOTICE_TREE_SUMMARY_SKIPPED": texts.NOTICE_TREE_SUMMARY_SKIPPED,
    "NOTICE_GUIDANCE_RECORDED": texts.NOTICE_GUIDANCE_RECORDED,
    "NOTICE_WARNING_RECORDED": texts.NOTICE_WARNING_RECORDED,
    "NOTICE_INVALID_MARGIN": texts.NOTICE_INVALID_MARGIN,
}
TEMPLATES = {
    "NOTICE_MEMORY_CLEARED": (texts.NOTICE_MEMORY_CLEARED, "<windowId>"),
    "NOTICE_RESET_BUILD_FAILED": (texts.NOTICE_RESET_BUILD_FAILED, "<error>"),
    "NOTICE_MISSING_BOOT": (texts.NOTICE_MISSING_BOOT, "<windowId>"),
    "NOTICE_NOTES_INCOMPLETE": (texts.NOTICE_NOTES_INCOMPLETE, "<labels>"),
    "NOTICE_SETTINGS_UNREADABLE": (texts.NOTICE_SETTINGS_UNREADABLE, "<error>"),
}


def _spec() -> str:
    return re.sub(r"\s+", " ", SPEC.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_each_text_reads_as_the_spec_quotes_it(name: str) -> None:
    assert EXACT[name] in _spec(), name


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_each_notice_template_reads_as_the_spec_quotes_it(name: str) -> None:
    template, placeholder = TEMPLATES[name]
    spelled = re.sub(r"\{\w+\}", placeholder, template)
    variants = {spelled, spelled.replace("<windowId>", "<id>")}
    assert any(v in _spec() for v in variants), spelled


def test_the_guidance_template_reads_as_the_spec_quotes_it() -> None:
    opening, body, closing = texts.guidance_content(7).split("\n")
    quoted = f"{opening}\\n{body.replace('— 7 tokens', '— N tokens')}\\n{closing}"
    assert quoted in _spec()
    assert texts.WARNING_RUNWAY_TOKENS == 12288 and "WARNING_RUNWAY_TOKENS = 12288" in _spec()
