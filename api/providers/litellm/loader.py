"""LiteLLM, imported once, lazily, and told to stay offline — the only import of it in Smriti.

Importing LiteLLM takes seconds, so nothing imports it until a model that
needs it is used: a server with only the offline models never does. Before
the import it is told, each only if the variable is not already set:

- ``LITELLM_OFFLINE_MODE``, ``LITELLM_LOCAL_MODEL_COST_MAP``: no cost map,
  tokenizer or catalogue downloads;
- ``LITELLM_MODE=PRODUCTION``: not to read a ``.env`` file;
- ``MAX_BASE64_LENGTH_FOR_LOGGING=0``: not to copy every prompt for its
  logging payload.

Three ways to get it, by who is asking:

- ``load()`` imports now and blocks: off the event loop (a script, the
  start-up warm-up thread), or once a call has already loaded it;
- ``await loaded()`` from the event loop: the import runs in a thread of its
  own, started once, and the loop keeps serving while it runs;
- ``load_if_ready()`` for the loop's synchronous estimates: the module when
  it is there (or when not on the loop), else None after starting the import.

``openai_stream_class()`` names the OpenAI SDK's stream class, which LiteLLM
hands back for its ``openai`` route (``streams.py`` reads it directly).

Typed ``Any`` because LiteLLM's stubs are partial.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import os
import sys
import threading
from typing import Any

log = logging.getLogger(__name__)

_lock = threading.Lock()
_module: Any = None
_import_lock = threading.Lock()
_import_future: concurrent.futures.Future[Any] | None = None


def is_loaded() -> bool:
    """Whether LiteLLM has been imported (and configured) by this module."""
    return _module is not None


def load() -> Any:
    """Import and configure LiteLLM once, blocking until it is there."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                # In its default "DEV" mode LiteLLM loads a .env file found above
                # its own install directory into os.environ on import: keys would
                # appear, and providers turn available, after the first call.
                os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
                # After every call LiteLLM builds a logging payload for its
                # callbacks, and first copies the whole prompt (every message
                # dict, every string checked for a data: URI) to shorten base64
                # images in it: ~0.5 ms a call with a 200-turn window. Smriti
                # registers no LiteLLM callback, so nothing reads that copy; 0
                # turns the truncation (and the copy) off. Read once, on import.
                os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
                module: Any = _import_litellm()
                module.suppress_debug_info = True  # no "Provider List: …" on stdout
                _module = module
    return _module


# Python's words for a module read before another thread finished importing it,
# and its error for two threads each waiting for a module the other is importing
# (raised instead of handing over a half-executed module when neither is yet in
# sys.modules; private, hence looked up).
_CONCURRENT_IMPORT = "partially initialized module"
_DeadlockError: type[BaseException] | tuple[()] = getattr(
    importlib._bootstrap,
    "_DeadlockError",
    (),  # a Python without it: nothing is that error
)
_ATTEMPTS = 3


def _import_litellm() -> Any:
    """``import litellm``, again when another thread's import got in its way.

    Python locks each module while it is imported, not the whole import. When
    another thread imports a module LiteLLM also imports, and reaches it by
    another path (``openai.types.chat.chat_completion`` before ``openai``,
    while LiteLLM's import holds ``openai`` and waits for ``openai.types.chat``),
    each waits for the other; Python breaks the tie by handing one of them the
    module half-executed, and LiteLLM's import fails reading a name it does not
    have yet ("cannot import name … from partially initialized module
    'openai.types.chat'"; seen in a fresh interpreter importing that module
    from the main thread while the loader imports LiteLLM), or it refuses the
    deadlock ("deadlock detected by _ModuleLock(…)"). The other thread's
    import completes, so the next attempt finds that module whole. Any other
    failure is raised at once: importing again would fail the same way.
    """
    attempt = 1
    while True:
        before = set(sys.modules)
        try:
            return importlib.import_module("litellm")
        except BaseException as exc:
            _forget_failed_import(before)
            if not _concurrent(exc) or attempt == _ATTEMPTS:
                raise
            log.warning("importing LiteLLM again: another thread's import got in its way (%s)", exc)
            attempt += 1


def _concurrent(exc: BaseException) -> bool:
    """Whether ``exc`` is another thread's import getting in the way of this one:
    the half-executed module Python handed over, or the deadlock it refused."""
    if isinstance(exc, _DeadlockError):
        return True
    return isinstance(exc, ImportError | AttributeError) and _CONCURRENT_IMPORT in str(exc)


def _forget_failed_import(before: set[str]) -> None:
    """Take out of ``sys.modules`` the modules a failed import stranded.

    Python removes only the modules whose own execution failed: ``litellm``
    itself, and any package that was importing the failing module. Their
    submodules that finished stay, bound to the package object that was
    discarded. A second import builds a new ``litellm``, finds those submodules
    already imported, so never sets them as its attributes, and its own
    ``__init__`` fails on the first such read ("partially initialized module
    'litellm' has no attribute 'utils'"): every retry, for the life of the
    process. A module is stranded when one of its parent packages is no longer
    in ``sys.modules``; without them the next import starts from a clean slate.
    Every other module the attempt imported is whole and kept (importing it
    again would make a second copy of its classes). Called under ``_lock``, so
    no other thread is importing LiteLLM meanwhile.
    """
    for name in [n for n in sys.modules if n not in before]:
        parts = name.split(".")
        if any(".".join(parts[:depth]) not in sys.modules for depth in range(1, len(parts))):
            del sys.modules[name]


def openai_stream_class() -> Any:
    """The OpenAI SDK's ``AsyncStream``, which LiteLLM's ``openai`` route hands
    back under its stream wrapper (``streams.beneath``). The SDK is LiteLLM's
    own dependency, imported by LiteLLM already: this only names it."""
    return importlib.import_module("openai").AsyncStream


async def loaded() -> Any:
    """LiteLLM, awaiting the import thread if it has not finished (the loop keeps running)."""
    if _module is not None:
        return _module
    return await asyncio.wrap_future(_import_in_thread())


def load_if_ready() -> Any:
    """LiteLLM when it can be had without the event loop waiting for the import, else None.

    Off the loop (the start-up warm-up thread, a script) importing here is
    fine; on the loop the import is started in its thread and None returned.
    """
    if _module is not None or not _on_event_loop():
        return load()
    _import_in_thread()
    return None


def _import_in_thread() -> concurrent.futures.Future[Any]:
    """The one import of LiteLLM, started (once) in a thread of its own.

    Importing takes seconds and holds Python's import lock on modules the
    event loop may also need, so the loop must never run it, nor wait for it.
    """
    global _import_future
    with _import_lock:
        if _import_future is None:
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            # Running from the start, so it can never be cancelled: every call
            # awaits this one future, and a caller cancelled while waiting (a
            # client that went away) must not cancel the import for the rest.
            future.set_running_or_notify_cancel()

            def run() -> None:
                global _import_future
                try:
                    future.set_result(load())
                except BaseException as exc:  # handed to every awaiting call
                    # and forgotten: the next call imports again. An import that
                    # failed once (a partially initialised module seen while
                    # another thread imported one of its dependencies, under
                    # load) must not fail every call for the life of the process.
                    with _import_lock:
                        if _import_future is future:
                            _import_future = None
                    future.set_exception(exc)

            _import_future = future
            threading.Thread(target=run, name="litellm-import", daemon=True).start()
        return _import_future


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
