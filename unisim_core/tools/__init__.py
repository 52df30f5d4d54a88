"""What users run on top of the contract: the ``unisim`` CLI (``cli``) and the libraries behind
its commands (``bench``, ``compare``/``compare_report``, ``zoo``, ``tables``, ``output_file``),
actuator models for the per-substep control path (``actuators``), and policy deployment and
sim2sim evaluation (``policy_manifest``, ``deploy``, ``policy_eval``).
Tools depend on the contract and the plugin layer; neither depends on them.
docs/architecture.md draws the layers.
"""
