"""pi-context 0.25: durable reset windows (marker → boot → continuation), low-budget
guidance, the final warning, automatic reset at the reserve, bounded overflow recovery,
narrow boot repair and the projection that keeps erased history from the provider.
"""

__all__: list[str] = []
