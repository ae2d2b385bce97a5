#!/usr/bin/env bash
# The headless sign-in of a realm's administrator with curl (docs/signin.md): a sign-in
# transaction of the built-in `identity-cli` client, the password, an authenticator app (TOTP
# enrollment on the first sign-in, its code afterwards), then the authorization code exchanged
# at the token endpoint for a token for the administration API. Prints each step's JSON answer.
#
#   SERVER=http://localhost:8080 REALM=main EMAIL=admin@example.com PASSWORD='<printed at first start>' \
#     examples/headless-signin.sh
#
# SERVER is the server's public origin (`server.public_origin`): the administration API's
# audience is built from it. The first sign-in enrolls an authenticator and prints its secret;
# give it as TOTP_SECRET on the next sign-ins. Needs curl, openssl and oathtool.
set -euo pipefail

SERVER=${SERVER:-http://localhost:8080}
REALM=${REALM:-main}
EMAIL=${EMAIL:-admin@example.com}
PASSWORD=${PASSWORD:?set PASSWORD: the administrator password printed at first start}
TOTP_SECRET=${TOTP_SECRET:-}

CLIENT_ID=identity-cli
REDIRECT_URI=http://127.0.0.1/callback
TX=$SERVER/api/v1/realms/$REALM/auth/transactions
TOKEN_ENDPOINT=$SERVER/realms/$REALM/oauth/token
# The token is for the administration API. The resource is named when the sign-in starts, so the
# code is bound to it; the token request can then ask for it (RFC 8707).
ADMIN_API=$SERVER/api/v1/realms/$REALM

base64url() { base64 | tr '+/' '-_' | tr -d '=\n'; }
# json_string TEXT: TEXT as the inside of a JSON string (backslashes and quotes escaped).
json_string() { sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$1"; }
# field NAME: the string member NAME of the JSON answer in $ANSWER.
field() { sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p' <<<"$ANSWER"; }
# offers ACTION: whether the transaction's next actions include ACTION.
offers() { grep -q '"type":"'"$1"'"' <<<"$ANSWER"; }
# group NAME: the offered alternatives of group NAME, one type a line. Alternatives carry
# "required":false and options.group (docs/signin.md, "Alternatives"); answering any one is enough.
group() {
  { grep -o '"type":"[a-z_]*","required":false,"fields":\[[^]]*\],"options":{"group":"'"$1"'"' <<<"$ANSWER" || true; } |
    sed 's/^"type":"\([a-z_]*\)".*/\1/'
}

# step TITLE CURL-ARGS...: one request; prints the title and the JSON answer, keeps the answer
# in $ANSWER, and stops the script when the server answers an error.
step() {
  local title=$1 out status
  shift
  out=$(curl -sS -w '\n%{http_code}' "$@")
  status=${out##*$'\n'}
  ANSWER=${out%$'\n'*}
  printf '# %s: HTTP %s\n%s\n' "$title" "$status" "$ANSWER"
  if [ "$status" -ge 400 ]; then exit 1; fi
}
json_step() { local title=$1 url=$2 body=$3; step "$title" -X POST "$url" -H 'content-type: application/json' ${TOKEN:+-H "x-transaction-token: $TOKEN"} -d "$body"; }

# PKCE (RFC 7636): the verifier stays here, the challenge goes into the transaction.
VERIFIER=$(openssl rand 32 | base64url)
CHALLENGE=$(printf %s "$VERIFIER" | openssl dgst -sha256 -binary | base64url)
STATE=$(openssl rand 16 | base64url)

TOKEN=
json_step start "$TX" '{"client_id":"'$CLIENT_ID'","redirect_uri":"'$REDIRECT_URI'","scope":"openid",
  "resource":["'"$ADMIN_API"'"],"code_challenge":"'"$CHALLENGE"'","code_challenge_method":"S256","state":"'"$STATE"'"}'
# The continuation token is shown once and authorizes every further step; the id alone does not.
ID=$(field transaction_id)
TOKEN=$(field continuation_token)

json_step password "$TX/$ID/password" \
  '{"identifier":"'"$(json_string "$EMAIL")"'","password":"'"$(json_string "$PASSWORD")"'"}'
# A refused password is no HTTP error: the transaction simply asks for the password again.
if offers password; then
  echo "the email or password was not accepted" >&2
  exit 1
fi

if offers enroll_totp; then
  json_step totp/enroll "$TX/$ID/totp/enroll" '{}'
  TOTP_SECRET=$(field secret)
  # The authenticator app's first code proves the enrollment; the answer carries the recovery
  # codes, shown this once.
  json_step totp/activate "$TX/$ID/totp/activate" '{"code":"'"$(oathtool --totp -b "$TOTP_SECRET")"'"}'
elif offers totp; then
  # The second factor comes as alternatives of group mfa (the authenticator app's code and, while
  # unused ones are left, a recovery code): answering one is enough. This script answers totp; a
  # recovery-code sign-in gets no administration token.
  ways=$(group mfa | paste -sd ' ' -)
  echo "second factor, any one of: ${ways:-totp}; answering totp" >&2
  : "${TOTP_SECRET:?an authenticator code is asked for: set TOTP_SECRET to the secret printed at enrollment}"
  json_step totp "$TX/$ID/totp" '{"code":"'"$(oathtool --totp -b "$TOTP_SECRET")"'"}'
fi

REDIRECT_TO=$(field redirect_to)
if [ -z "$REDIRECT_TO" ]; then
  echo "the sign-in is not complete; the last answer names what it still needs" >&2
  exit 1
fi
CODE=$(sed -n 's/.*[?&]code=\([^&]*\).*/\1/p' <<<"$REDIRECT_TO")
RETURNED_STATE=$(sed -n 's/.*[?&]state=\([^&]*\).*/\1/p' <<<"$REDIRECT_TO")
if [ "$RETURNED_STATE" != "$STATE" ]; then
  echo "the redirect carries another state" >&2
  exit 1
fi

# identity-cli is a public client: PKCE's verifier is its proof.
step token -X POST "$TOKEN_ENDPOINT" -d grant_type=authorization_code -d client_id=$CLIENT_ID \
  --data-urlencode code="$CODE" --data-urlencode redirect_uri=$REDIRECT_URI \
  -d code_verifier="$VERIFIER" --data-urlencode resource="$ADMIN_API"
