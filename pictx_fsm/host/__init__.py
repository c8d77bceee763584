"""The host contract: what a host hands an extension (hook events with their ``ctx`` facts)
and what an extension hands back (results and effects as data).

Every host — the real Pi through the bridge, the model session, pydantic-ai — speaks this
contract and nothing else to an extension, so an extension never imports a host.
"""

__all__: list[str] = []
