"""Which model a new session uses when an admin kept the default for admins."""

from __future__ import annotations

from api.providers.types import ProviderStatus
from api.services.access import first_usable

PROVIDERS = (
    ProviderStatus("offline", True, None, ("echo", "extractor")),
    ProviderStatus("openai", False, "OPENAI_API_KEY is not set", ("gpt-4o",)),
    ProviderStatus("lab", True, None, ("my-model",)),
)


def test_the_default_when_it_is_not_kept() -> None:
    assert first_usable("offline/echo", PROVIDERS, frozenset({"lab/my-model"})) == "offline/echo"


def test_else_the_first_model_not_kept_of_an_available_provider() -> None:
    kept = frozenset({"offline/echo"})
    assert first_usable("offline/echo", PROVIDERS, kept) == "offline/extractor"
    kept = frozenset({"offline/echo", "offline/extractor"})
    # openai/gpt-4o comes first but cannot answer: no key.
    assert first_usable("offline/echo", PROVIDERS, kept) == "lab/my-model"


def test_else_the_first_model_not_kept_then_the_default() -> None:
    kept = frozenset({"offline/echo", "offline/extractor", "lab/my-model"})
    assert first_usable("offline/echo", PROVIDERS, kept) == "openai/gpt-4o"
    everything = kept | {"openai/gpt-4o"}
    assert first_usable("offline/echo", PROVIDERS, everything) == "offline/echo"
