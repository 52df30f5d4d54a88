"""UniLab registry package (entry point ``unilab.tasks``): UniLab imports it from ``ensure_registries``
and then the modules it names."""

__unilab_registry_modules__ = ("unisim_unilab._register",)
