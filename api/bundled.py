"""The files Smriti ships inside its package: the web UI, the default providers.yaml
and GraphiQL's assets.

Found one way, through importlib.resources, from a clone and from an installed wheel
alike. In the repository, ``api/webui`` and ``api/providers.yaml`` are symbolic links
to the top-level ``webui/`` and ``providers.yaml`` that people edit; a wheel holds
copies (pyproject.toml's package data). GraphiQL's assets are fetched into
``api/static/vendor`` by scripts/fetch-graphiql-assets, and a wheel built after that
carries them.

Standard library only: that script imports this module (through api.graphiql) before
anything else is known to be installed.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .errors import ConfigError

_PACKAGE = __name__.rpartition(".")[0]


def bundled(name: str) -> Path:
    """The shipped file or folder ``name`` (slash-separated, inside the package).

    A path on disk: Starlette serves folders from disk and providers.yaml is read
    as a file. Smriti installs as files (pip, pipx and uv all unpack a wheel), so
    anything else is refused with one clear line rather than served half.
    """
    resource = files(_PACKAGE).joinpath(*name.split("/"))
    if not isinstance(resource, Path):
        raise ConfigError(
            f"Smriti's {name} is not a file on disk ({resource!r}): install Smriti "
            "unpacked (pip install), not from a zip."
        )
    return resource


WEBUI_DIR = bundled("webui")
PROVIDERS_FILE = bundled("providers.yaml")
GRAPHIQL_VENDOR_DIR = bundled("static/vendor")
