"""Creates what docs/openapi.json's examples name, before tools/schemathesis/run.sh runs schemathesis:
team `acme` and its collection `vision` with the model name `classifier`.

    python3 tools/schemathesis/seed.py BASE_URL     # token in COFFER_SCHEMATHESIS_TOKEN

Prints the ID of the token itself, which tools/schemathesis/hooks.py keeps from being revoked.
"""
import json
import os
import sys
import urllib.request

base = sys.argv[1]
token = os.environ["COFFER_SCHEMATHESIS_TOKEN"]


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


call("POST", "/v1/teams", {"name": "acme"})
call("POST", "/v1/teams/acme/collections", {"identifier": "vision", "models": ["classifier"]})
print(next(item["id"] for item in call("GET", "/v1/tokens") if item["name"] == "bootstrap"))
