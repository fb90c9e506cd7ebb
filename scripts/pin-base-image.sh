#!/bin/sh
# Refreshes the digest the Dockerfile pins its base image to (FROM node:24-bookworm-slim@sha256:…).
#
#   scripts/pin-base-image.sh [tag]      # default tag: node:24-bookworm-slim
#
# Asks the registry for the digest of the tag's multi-platform index (one digest for every
# architecture) with `docker buildx imagetools inspect`, or `crane digest` where Docker is not
# installed, and rewrites the FROM line in place. Review and commit the change; the image's
# rebuild then gets the new base (test/deploy/image-config.test.ts refuses a FROM without one).
set -eu
tag="${1:-node:24-bookworm-slim}"
dockerfile="$(dirname "$0")/../Dockerfile"

if command -v docker >/dev/null 2>&1 && docker buildx version >/dev/null 2>&1; then
  digest="$(docker buildx imagetools inspect "$tag" --format '{{json .Manifest}}' \
    | sed -n 's/.*"digest":"\(sha256:[0-9a-f]\{64\}\)".*/\1/p' | head -n 1)"
elif command -v crane >/dev/null 2>&1; then
  digest="$(crane digest "$tag")"
else
  echo "pin-base-image: needs docker buildx or crane (https://github.com/google/go-containerregistry)" >&2
  exit 1
fi

case "$digest" in
  sha256:????????????????????????????????????????????????????????????????) ;;
  *) echo "pin-base-image: no digest for $tag (got '$digest')" >&2; exit 1 ;;
esac

escaped="$(printf '%s' "$tag" | sed 's/[.]/\\./g')"
sed -i.bak "s|^FROM ${escaped}@sha256:[0-9a-f]\{64\}|FROM ${tag}@${digest}|" "$dockerfile"
rm -f "$dockerfile.bak"
grep -n "^FROM ${escaped}@" "$dockerfile"
echo "pin-base-image: $tag is $digest"
