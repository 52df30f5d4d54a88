"""What plugin authors build on, beyond the contract: the MJCF reader for engines without one
(``mjcf_lite``), the MJCF feature vocabulary that refusals name (``mjcf_features``), helpers shared
by plugins (``plugin_support``, ``derived_sensors``), the steppable ``fake`` backend, and the
subprocess worker layer (``worker``: the host side; ``servant``: the engine side).
Nothing here imports an engine. docs/architecture.md draws the layers.
"""
