"""The model session: an executable model of the Pi host as a context-window lifecycle
extension observes it (pi-host §3–§8, §11, §12), Pi 0.87.1 or 1.6.0 by host profile. See
``docs/model-session.md``."""

from pictx_fsm.host.extension import (
    HOST_HOOKS,
    BaseExtension,
    Extension,
    SuppliedCompaction,
    ToolInvocation,
    ToolOutput,
)
from pictx_fsm.hosts.model.compaction import CompactOutcome
from pictx_fsm.hosts.model.errors import AgentBusyError, ModelHostError
from pictx_fsm.hosts.model.messages import TickClock
from pictx_fsm.hosts.model.navigation import NavigationOutcome
from pictx_fsm.hosts.model.profiles import (
    DEFAULT_HOST_PROFILE,
    HOST_PROFILES,
    PI_0_87,
    PI_1_6,
    HostProfile,
    host_profile,
)
from pictx_fsm.hosts.model.provider_usage import (
    EstimatedUsage,
    FauxCacheUsage,
    ProviderRequest,
    UsageAccounting,
)
from pictx_fsm.hosts.model.records import (
    DeliveryRecord,
    EventRecord,
    ExtensionErrorRecord,
    HostLog,
    NoticeRecord,
    ProviderRequestRecord,
    Step,
)
from pictx_fsm.hosts.model.scripted_provider import (
    OVERLOADED,
    Aborted,
    Call,
    LengthStop,
    Overflow,
    ProviderError,
    Response,
    ScriptedProvider,
    Text,
    Tools,
)
from pictx_fsm.hosts.model.session import ModelSession
from pictx_fsm.hosts.model.settings import (
    FAUX_MODEL,
    CompactionSettings,
    HostSettings,
    RetrySettings,
)

__all__ = [
    "DEFAULT_HOST_PROFILE",
    "FAUX_MODEL",
    "HOST_HOOKS",
    "HOST_PROFILES",
    "OVERLOADED",
    "PI_0_87",
    "PI_1_6",
    "Aborted",
    "AgentBusyError",
    "BaseExtension",
    "Call",
    "CompactOutcome",
    "CompactionSettings",
    "DeliveryRecord",
    "EstimatedUsage",
    "EventRecord",
    "Extension",
    "ExtensionErrorRecord",
    "FauxCacheUsage",
    "HostLog",
    "HostProfile",
    "HostSettings",
    "LengthStop",
    "ModelHostError",
    "ModelSession",
    "NavigationOutcome",
    "NoticeRecord",
    "Overflow",
    "ProviderError",
    "ProviderRequest",
    "ProviderRequestRecord",
    "Response",
    "RetrySettings",
    "ScriptedProvider",
    "Step",
    "SuppliedCompaction",
    "Text",
    "TickClock",
    "ToolInvocation",
    "ToolOutput",
    "Tools",
    "UsageAccounting",
    "host_profile",
]


def __getattr__(name: str) -> object:
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
