#!/bin/sh
# Writes the compose demo's secrets: a token file for the registry with one executor token
# and one harness token scoped to devbox-1, the executor's token alone, the harness token
# alone (for `executor exec --token-file`), and the PostgreSQL password.
set -eu
cd "$(dirname "$0")"
exe=${EXECUTOR:-executor}
mkdir -p secrets
umask 077
[ -e secrets/registry-tokens ] && { echo "secrets/ exists; remove it to start over" >&2; exit 1; }
ex=$("$exe" registry token --roles executor --envs devbox-1)
ha=$("$exe" registry token --roles harness --envs devbox-1)
printf '%s\n%s\n' "$ex" "$ha" > secrets/registry-tokens
echo "${ex%% *}" > secrets/executor-token
echo "${ha%% *}" > secrets/harness-token
echo "executor-demo" > secrets/postgres-password
echo "wrote $(pwd)/secrets"
