# Smriti in one container: API, web UI and GraphiQL on port 8000, SQLite under /data.
#   docker build -t smriti .
#   docker run -p 8000:8000 -v smriti-data:/data --env-file provider-keys.env smriti
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LITELLM_OFFLINE_MODE=true \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    SMRITI_DATABASE_URL=sqlite:///data/smriti.sqlite3

WORKDIR /app

# Dependencies first, hash-checked, in their own layer (it changes only with the lock).
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock

# The app installs in place (as `make serve` does): it finds providers.yaml and the
# web UI beside the package. GraphiQL's assets are fetched for offline use
# (scripts/fetch-graphiql-assets); a build without the npm registry still succeeds.
COPY . .
RUN pip install --no-deps --no-build-isolation -e . \
    && { python scripts/fetch-graphiql-assets \
         || echo "warning: GraphiQL assets not fetched; /graphql will load them from the CDN" >&2; } \
    && useradd --create-home smriti \
    && mkdir -p /data \
    && chown smriti /data

USER smriti
VOLUME /data
EXPOSE 8000
# Bound to all interfaces, so accounts mode: create the first account first
# (`docker run --rm -i -v smriti-data:/data IMAGE smriti users add NAME --admin --password-stdin`).
CMD ["smriti", "serve", "--host", "0.0.0.0", "--port", "8000"]
