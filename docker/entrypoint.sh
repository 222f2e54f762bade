#!/bin/sh
# The image's entrypoint: run the command as the owner of Smriti's data directory,
# never as root.
#
# /data is a named volume (Docker creates it owned by the image's smriti user,
# 10001) or a bind mount of a host directory owned by anyone. Started as root, the
# default, this runs the command as the directory's owner: what Smriti writes stays
# that user's on the host, and no host file changes hands (a recursive chown of a
# user's directory would). Only a directory owned by root -- the one Docker makes
# for a bind mount whose source did not exist -- is given to the smriti user first,
# since Smriti does not run as root. Started as another user (docker run --user),
# it runs the command as it is.
set -eu

data=${SMRITI_DATA_DIR:-/data}
uid=${SMRITI_UID:-10001}
gid=${SMRITI_GID:-10001}

if [ "$(id -u)" != 0 ]; then
    exec "$@"
fi

owner=$(stat -c %u "$data")
group=$(stat -c %g "$data")
if [ "$owner" = 0 ]; then
    chown -R "$uid:$gid" "$data"
    owner=$uid
    group=$gid
fi
exec setpriv --reuid="$owner" --regid="$group" --clear-groups -- "$@"
