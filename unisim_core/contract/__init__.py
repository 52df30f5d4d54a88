"""The contract: what every backend implements and what every user calls.

``backend.SimBackend`` (its behaviour split over the private mixins ``_lifecycle``, ``_stepping``,
``_frames``, ``_state``, ``_model_queries``, ``_randomizing``, ``_playback``), the config classes
(``config``, ``options``, ``portable_options``), the capability model (``capabilities``), errors,
the registry and its hooks, input validation and guards, bindings (sensors, contacts, height
scans, mocap), and the shared computations behind capabilities an engine need not implement
itself (``heightfield``, ``kinematics``, ``quat``, ``sensor_timing``, ``torch_views``).
Nothing here imports an engine. docs/architecture.md draws the layers.
"""
