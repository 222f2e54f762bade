# Smriti in one container: the API, the web UI and GraphiQL on port 8000, SQLite in /data.
#   docker build -t smriti .
#   docker run --rm -i -v smriti-data:/data smriti smriti users add ada --admin --password-stdin
#   docker run -p 8000:8000 -v smriti-data:/data -e OPENAI_API_KEY smriti
# Several workers on PostgreSQL behind a TLS-terminating proxy: compose.yaml.
#
# Providers: the image serves the providers.yaml bundled in the package. To use your
# own, mount it and name it:
#   -v "$PWD/providers.yaml:/etc/smriti/providers.yaml:ro" -e SMRITI_PROVIDERS_FILE=/etc/smriti/providers.yaml
#
# The base, pinned by digest: python:3.11-slim (Python 3.11.15, Debian 13) as the
# Docker Official Images record it in docker-library/repo-info
# (repos/python/remote/3.11-slim.md, commit 2477d553). No registry answered here, so
# it was not pulled; update it with the tag's current index digest.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:90744cff8f32887f075c47d747a173ff333e9e98801667af93c357fa9f5e28ff

# --- build: a wheel, as `pip install .` makes one, installed into /opt/smriti ----------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/smriti
# Dependencies first, hash-checked, in their own layer (it changes only with the lock).
COPY requirements.lock /src/
RUN /opt/smriti/bin/pip install --require-hashes -r /src/requirements.lock
# What the wheel is built from (api/webui and api/providers.yaml link to the copies
# beside it). GraphiQL's assets are fetched into api/static/vendor and so into the
# wheel; a build without the npm registry still succeeds (/graphql then loads them
# from the CDN).
COPY pyproject.toml README.md providers.yaml /src/
COPY webui /src/webui
COPY api /src/api
COPY scripts/fetch-graphiql-assets /src/scripts/
WORKDIR /src
RUN { /opt/smriti/bin/python scripts/fetch-graphiql-assets \
      || echo "warning: GraphiQL assets not fetched; /graphql will load them from the CDN" >&2; } \
    && /opt/smriti/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /dist . \
    && /opt/smriti/bin/pip install --no-deps /dist/smriti-*.whl

# --- the image: the venv, no source tree ---------------------------------------------
FROM ${PYTHON_IMAGE}
ENV PATH=/opt/smriti/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LITELLM_OFFLINE_MODE=true \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    SMRITI_DATABASE_URL=sqlite:///data/smriti.sqlite3
# The user Smriti runs as when /data is a named volume (docker/entrypoint.sh runs it as
# the owner of a bind-mounted directory instead).
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /data smriti \
    && mkdir /data \
    && chown smriti:smriti /data
COPY --from=build /opt/smriti /opt/smriti
COPY docker/entrypoint.sh /usr/local/bin/smriti-entrypoint
VOLUME /data
EXPOSE 8000
# No curl in the slim image: Python's urllib asks /healthz (loopback names always pass
# the host check). Exit 1 on a refused connection, a timeout or any status but 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["smriti-entrypoint"]
# Bound to all interfaces, so accounts mode: create the first account first (above).
CMD ["smriti", "serve", "--host", "0.0.0.0", "--port", "8000"]
