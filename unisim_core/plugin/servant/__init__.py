"""Serve a backend's primitives to a remote caller, for any transport.

- :class:`Servant` (``ops``): the op table, op name -> method on the hosted backend, with argument
  checks; a transport subclasses it only to shape replies (publish or return state after a change).
- :class:`ErrorRecord` (``records``): an exception raised while serving, as data that crosses any
  transport, and the one caller-side rebuild (``record.rebuild()``); :class:`RemoteError` carries a
  record through transports that move exceptions.
- ``plain``: plain-data forms of arrays, model info and scenes, and ``adopt_description`` (the
  caller side of ``describe``).

Used by the worker (``unisim_core.plugin.worker.hosted``) and by ``unisim-ray``'s shard actors.
"""

from unisim_core.plugin.servant.ops import Servant
from unisim_core.plugin.servant.plain import adopt_description
from unisim_core.plugin.servant.records import ErrorRecord, RemoteError

__all__ = ["Servant", "ErrorRecord", "RemoteError", "adopt_description"]
