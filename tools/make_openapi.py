#!/usr/bin/env python3
"""Writes Sources/CofferServer/OpenAPI/OpenAPIDocument.swift (the document served at /openapi.json)
and docs/openapi.json.

    python3 tools/make_openapi.py

The API is described here once, in Python data; CofferServerTests checks that every route the
server registers is in the document and every path of the document is a registered route, CI
validates the document with openapi-spec-validator and runs schemathesis against a real server
with it (tools/schemathesis/run.sh), which fails on any status, content type or body the
document does not describe.

Adding a route: one `op(...)` under `paths` with
  - an operationId (lowerCamelCase, unique): links and generated clients name it;
  - its success responses (`ok(...)`, or a plain dict for bodiless ones);
  - `request=body(schema, example)` when it takes JSON (the example is what schemathesis' examples
    phase sends; patterns from the constants below, e.g. `obj(["name"], name=NAME)`);
    `body(..., required=False)` when the route also works without one;
  - `errors=(...)` for the statuses it answers beyond the common ones, which are added by
    themselves (`COMMON`; `TOKEN` unless `auth` says otherwise; `BODY` for POST, PUT, PATCH and
    DELETE), e.g. `errors=("409", "422")`;
  - `retry_after=(...)` for those of its error statuses that carry `Retry-After`, e.g. `("429", "503")`;
  - `description="..."` for what the summary cannot say in a line (e.g. when it answers 409);
  - `auth="none"` for a public route, `auth="app"` for a device's (HTTP Basic) route.
Path parameters come from the path itself; each `{name}` must be in `PATH_PARAMETERS`, which says
what a valid value looks like (an `examples` entry there names something tools/schemathesis/seed.py
creates). A route that creates something other routes address goes in
`PRODUCERS`, and links to those routes are made for it (schemathesis' stateful phase follows them).
"""
import json
import os

def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}

def body(schema, example, required=True):
    """A JSON request body; its example documents it and is what schemathesis' examples phase sends.
    `required=False` for a route that also works without one."""
    return {"required": required, "content": {"application/json": {"schema": schema, "example": example}}}

def ok(description, schema=None, status="200"):
    response = {"description": description}
    if schema is not None:
        response["content"] = {"application/json": {"schema": schema}}
    return {status: response}

def array(schema):
    return {"type": "array", "items": schema}

def obj(required, **props):
    return {"type": "object", "required": list(required), "properties": props}

S = {"type": "string"}
DATE = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}
ROLE = {"type": "string", "enum": ["viewer", "developer", "owner"]}

# --- What valid values look like (request side only: answers are described without patterns) ---

# Team, member, app, key, token, model and deployment names (`Names.validate` in the server, which
# also takes non-ASCII letters and digits): 1 to 100 characters, no space at either end.
NAME = {"type": "string", "minLength": 1, "maxLength": 100, "pattern": r"^[A-Za-z0-9_.@+-]([A-Za-z0-9 _.@+-]{0,98}[A-Za-z0-9_.@+-])?$"}
# A collection identifier (what apps name in code).
IDENTIFIER = {"type": "string", "minLength": 1, "maxLength": 100, "pattern": r"^[A-Za-z0-9._-]{1,100}$"}
# A model key ID (docs/FORMAT.md; keys made by the server have 32 hex digits).
KEY_ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^[A-Za-z0-9._-]{1,64}$"}
# A blob address: the SHA-256 of its bytes, lowercase hex.
SHA256 = {"type": "string", "minLength": 64, "maxLength": 64, "pattern": r"^[0-9a-f]{64}$"}
ID = {"type": "string", "format": "uuid", "pattern": r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"}
# A device's identifier, as it sends it with its manifest requests (no `|`).
DEVICE_ID = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"^[^|]+$"}
# What a device reports about one model of a deployment (docs/ROLLOUTS.md).
OUTCOME = {"type": "string", "enum": ["downloaded", "opened", "loaded", "failed"]}
# An app's attestation policy (docs/ATTESTATION.md); the fields of the other policies are ignored.
B64 = {"type": "string", "maxLength": 43692, "pattern": r"^[A-Za-z0-9+/]*={0,2}$"}
ATTESTATION_POLICY = obj(["policy"], policy={"type": "string", "enum": ["none", "apple-app-attest", "android-key-attestation"]},
                         appleTeamID={"type": "string", "pattern": r"^[A-Z0-9]{10}$"},
                         bundleID={"type": "string", "pattern": r"^[A-Za-z0-9._-]{1,155}$", "description": "default: the app's bundle ID"},
                         appleEnvironment={"type": "string", "enum": ["production", "development"]},
                         packageName={"type": "string", "pattern": r"^[A-Za-z0-9._-]{1,155}$"},
                         signingCertificateDigests={**array({"type": "string", "pattern": r"^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$"}),
                                                    "minItems": 1, "maxItems": 16, "description": "SHA-256 of the app's signing certificates, hex"},
                         minimumSecurityLevel={"type": "string", "enum": ["software", "tee", "strongbox"]},
                         allowUnlockedDevices={"type": "boolean", "description": "android: also accept devices with an unlocked "
                                               "bootloader or an unverified boot (default false)"})
# The evidence of a key request: an attestation (first request of an install) or an assertion.
EVIDENCE = obj(["format"], format={"type": "string", "enum": ["apple-app-attest", "android-key-attestation"]}, keyID=B64, challenge=B64,
               attestationObject=B64, assertion=B64, certificateChain={**array(B64), "maxItems": 8}, signature=B64,
               counter={"type": "integer", "minimum": 0, "maximum": 4294967295})
PLATFORM = {"type": "string", "enum": ["ios", "ipados", "macos", "tvos", "watchos", "visionos", "android", "linux", "windows", "web", "other"]}

# The examples name what tools/schemathesis/seed.py creates, so that generated requests reach past
# "team not found" into each route's own checks.
PATH_PARAMETERS = {
    "team": {**NAME, "examples": ["acme"]}, "member": NAME, "model": {**NAME, "examples": ["classifier"]},
    "collection": {**IDENTIFIER, "examples": ["vision"]}, "key": KEY_ID, "sha256": SHA256,
    "app": ID, "token": ID, "deployment": ID, "invitation": ID,
}
# An invitation code (`cfi_` and 43 base64url characters).
CODE = {"type": "string", "minLength": 1, "maxLength": 200}

# --- Statuses: every answer below is `{"error": CODE, "reason": TEXT}` as application/json ---

ERROR = {"$ref": "#/components/responses/Error"}
# The same, with `Retry-After` (seconds): a budget used up (429), or the server cannot take it now (503).
RETRY_LATER = {"$ref": "#/components/responses/RetryLater"}

# Every operation: a malformed address or query (400), nothing there (404).
COMMON = ("400", "404")
# An API token is required (401) and must have the role (403); a client address past its budget of
# failed attempts is refused first (429).
TOKEN = ("401", "403", "429")
# What the routes that take an app credential say of its budget (AppCredentials.check).
CREDENTIAL_BUDGET = ("429 `rate_limited` (with `Retry-After`) also when the client address is past its budget of wrong "
                     "credentials (COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE) and the server cannot vouch for this one.")
# What the anonymous blob routes say of their budget of misses (BlobController.answer).
BLOB_MISSES = ("Each 404 (`Cache-Control: no-store`: the blob may be uploaded later) costs the client address one miss of COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE; past it, 429 "
               "`rate_limited` (with `Retry-After` and `Cache-Control: no-store`) for an address with no record in the database, "
               "without asking the store; registered blobs are still served (past as many look-ups of records again, only "
               "blobs this instance has served).")
# What the blob GET says of the bodies streamed at once (BlobController.stream).
BLOB_STREAMS = ("A body streamed through the server holds a slot until its client has read it: 429 `too_many_downloads` when the "
                "client address has COFFER_BLOB_STREAMS_PER_ADDRESS, 503 `downloads_busy` when the server has COFFER_BLOB_STREAMS "
                "(both with `Retry-After` and `Cache-Control: no-store`); a redirect takes none.")
# A method that may carry a body (whether the route reads one or not): larger than the route takes
# (413), a form or plain text where the API reads JSON (415). Added by method, below.
BODY = ("413", "415")
BODY_METHODS = ("post", "put", "patch", "delete")

# Every operation: 503 `busy` with `Retry-After` when no database connection came free within the
# pool's timeout (an overloaded server, not a broken request).
BUSY = "503"

def op(operation_id, summary, responses, request=None, auth="token", errors=(), query=(), retry_after=(), description=None):
    """One operation; see the module's docstring."""
    statuses = COMMON + (TOKEN if auth == "token" else ()) + tuple(errors)
    assert set(retry_after) <= set(statuses), f"{operation_id}: retry_after names a status it does not answer"
    if BUSY not in statuses:
        statuses += (BUSY,)
        retry_after = tuple(retry_after) + (BUSY,)
    operation = {"operationId": operation_id, "summary": summary,
                 "responses": {**responses, **{status: RETRY_LATER if status in retry_after else ERROR for status in statuses}}}
    if description is not None:
        operation["description"] = description
    if request is not None:
        operation["requestBody"] = request
    if auth == "none":
        operation["security"] = []
    elif auth == "app":
        operation["security"] = [{"app": []}]
    if query:
        operation["parameters"] = list(query)
    return operation

def header(name, schema, description):
    return {"name": name, "in": "header", "required": False, "schema": schema, "description": description}

# Blob downloads: one byte range (RFC 9110 §14; several ranges, or a malformed header, get the whole
# blob), and the ETag a client has.
RANGE = header("Range", {"type": "string", "maxLength": 200}, "bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX")
IF_NONE_MATCH = header("If-None-Match", {"type": "string", "maxLength": 200}, "the blob's ETag, or *")
IF_RANGE = header("If-Range", {"type": "string", "maxLength": 200},
                  "the blob's ETag: Range applies only when it is this (any other value, a date included, gets the whole blob)")

def query(name, schema, description=None):
    parameter = {"name": name, "in": "query", "required": False, "schema": schema}
    if description:
        parameter["description"] = description
    return parameter

schemas = {
    "Error": obj(["error", "reason"], error=S, reason=S),
    "Team": obj(["id", "name", "role"], id=UUID, name=S, role=ROLE),
    "CreatedToken": obj(["id", "name", "token", "prefix"], id=UUID, name=S, token=S, prefix=S),
    "Token": obj(["id", "name", "prefix"], id=UUID, name=S, prefix=S, createdAt=DATE, lastUsedAt=DATE, revokedAt=DATE),
    "Member": obj(["name", "role"], name=S, role=ROLE,
                  invitation={**ref("CreatedInvitation"), "description": "for a name that is not a member: the invitation made for them"}),
    "App": obj(["id", "name", "platform", "collections", "attestation"], id=UUID, name=S, platform=S, bundleID=S,
               collections={**array(S), "description": "identifiers of the collections its devices may read"},
               attestation={**ref("AttestationPolicy"), "description": "what its devices' key requests must prove"}, createdAt=DATE, revokedAt=DATE,
               credential={**S, "description": "present only when created or rotated"}),
    "CreatedInvitation": obj(["id", "team", "role", "note", "expiresAt", "code"], id=UUID, team=S, role=ROLE, note=S, expiresAt=DATE,
                             code={**S, "description": "cfi_…, shown once; give it to the person"}),
    "Invitation": obj(["id", "role", "note", "createdBy", "expiresAt", "state"], id=UUID, role=ROLE, note=S, createdBy=S, createdAt=DATE,
                      expiresAt=DATE, state={"type": "string", "enum": ["pending", "accepted", "revoked", "expired"]},
                      acceptedBy=S, acceptedAt=DATE, revokedAt=DATE),
    "Joined": obj(["team", "role"], team=S, role=ROLE),
    "Redeemed": obj(["name", "team", "role", "token"], name=S, team=S, role=ROLE, token={**S, "description": "the new account's first API token"}),
    "ModelKeyFile": obj(["format", "id", "name", "created", "key"], format=S, id=S, name=S, created=DATE,
                        key={**S, "description": "256-bit key, base64; returned once"}),
    "ModelKey": obj(["id", "name", "team"], id=S, name=S, team=S, createdAt=DATE, revokedAt=DATE),
    "AuditEvent": obj(["action", "actor", "target", "outcome", "count"], at=DATE, action=S, actor=S, target=S, outcome=S, reason=S, deviceID=S,
                      count={"type": "integer", "description": "identical refusals within a minute are one row"}),
    "Blob": obj(["sha256", "size", "created"], sha256=S, size={"type": "integer"}, created={"type": "boolean"}),
    "DeliveryRequest": obj(["appID", "credential", "deviceID", "devicePublicKey"], appID=ID, credential=S,
                           deviceID=DEVICE_ID,
                           devicePublicKey={"type": "string", "pattern": r"^[A-Za-z0-9+/]{43}=$", "description": "raw X25519 public key, base64"},
                           attestation={**EVIDENCE, "description": "required when the app's attestation policy is not none (docs/ATTESTATION.md)"}),
    "AttestationPolicy": {**ATTESTATION_POLICY, "properties": {**ATTESTATION_POLICY["properties"],
                          "signingCertificateDigests": array(S), "appleTeamID": S, "bundleID": S, "packageName": S}},
    "AttestationChallenge": obj(["challenge", "expiresAt"], challenge={**S, "description": "32 bytes, base64, opaque; single use, for 5 minutes"}, expiresAt=DATE),
    "Delivery": obj(["keyID", "suite", "encapsulatedKey", "ciphertext"], keyID=S, suite=S, encapsulatedKey=S, ciphertext=S),
    "Collection": obj(["id", "identifier", "team", "description", "models", "sequence"], id=UUID, identifier=S, team=S, description=S,
                      models=array(S), sequence={"type": "integer", "description": "grows with every activation"},
                      activeDeploymentID=UUID, createdAt=DATE),
    "NewCollection": obj(["identifier", "models"], identifier=IDENTIFIER, description={"type": "string", "maxLength": 1000},
                         models={**array(NAME), "minItems": 1, "maxItems": 100, "uniqueItems": True}),
    "ModelVersion": obj(["versionID", "sha256", "size", "keyID"], versionID=UUID, sha256=S, size={"type": "integer"}, keyID=S,
                        facts=ref("ModelFacts")),
    "ModelFacts": {"type": "object", "required": ["format", "size", "notes"],
                   "description": "What is inside a sealed model, as `coffer inspect --json` writes it under \"model\" "
                                  "(docs/INSPECTION.md): reported by the team's CLI, which has the key.",
                   "properties": {"format": {"type": "string", "enum": ["mlmodel", "mlpackage", "mlmodelc", "onnx", "safetensors",
                                                                        "gguf", "file", "folder"]},
                                  "size": {"type": "integer"}, "notes": {"type": "array", "items": S},
                                  "coreML": {"type": "object"}, "onnx": {"type": "object"}, "safetensors": {"type": "object"},
                                  "gguf": {"type": "object"}, "files": {"type": "array", "items": {"type": "object"}}}},
    "Deployment": obj(["id", "collection", "name", "status", "models", "rules", "createdBy", "problems"], id=UUID, collection=S, name=S,
                      status={"type": "string", "enum": ["draft", "active", "archived"]},
                      models={"type": "object", "additionalProperties": ref("ModelVersion")},
                      rules=array(obj(["condition", "models"], condition=S, models={"type": "object", "additionalProperties": ref("ModelVersion")})),
                      createdBy=S, createdAt=DATE, activatedAt=DATE,
                      problems={**array(S), "description": "why it cannot be activated; empty when it can"},
                      rollout={**ref("Rollout"), "description": "its newest staged rollout, if it had one"}),
    "Rollout": obj(["state", "stages", "stageIndex", "stagePercent", "stageStartedAt", "stageHours", "haltAt", "minReports", "createdBy"],
                   state={"type": "string", "enum": ["staged", "completed", "halted", "superseded"],
                          "description": "staged (stages running), then completed (at 100 %), halted (every device back on the previous "
                                         "deployment) or superseded (another activation replaced it)"},
                   stages={**array({"type": "integer"}), "description": "percent of devices per stage, increasing, the last 100"},
                   stageIndex={"type": "integer", "description": "the current stage, from 0"},
                   stagePercent={"type": "integer", "description": "the current stage's percent of devices (100 once completed)"},
                   stageStartedAt=DATE, nextStageAt={**DATE, "description": "when the timer may advance the stage if the gate allows; only while staged"},
                   stageHours={"type": "number"}, haltAt={"type": "number", "description": "failure rate (percent of reporting devices) that halts it"},
                   minReports={"type": "integer", "description": "reporting devices a gate needs before it advances or halts a stage"},
                   haltReason=S, createdBy=S),
    "ActivationOptions": {**obj([], stages={**array({"type": "integer", "minimum": 1, "maximum": 100}), "minItems": 1, "maxItems": 20, "uniqueItems": True,
                                            "description": "percent of devices per stage, strictly increasing, the last 100; [100] activates at once"},
                                stageHours={"type": "number", "exclusiveMinimum": 0, "maximum": 8760, "default": 24,
                                            "description": "how long each stage lasts at least"},
                                haltAt={"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 5,
                                        "description": "failure rate (percent of reporting devices) at or above which the rollout halts"},
                                minReports={"type": "integer", "minimum": 1, "maximum": 1000000, "default": 20,
                                            "description": "reporting devices a gate needs before it advances or halts a stage"}),
                          "description": "A staged activation (docs/ROLLOUTS.md). stageHours, haltAt and minReports go with stages only (400 otherwise)."},
    "DeploymentStatus": obj(["deployment", "name", "state", "devices", "outcomes", "models", "failureRate", "topReasons"], deployment=UUID, name=S,
                            state={"type": "string", "enum": ["draft", "active", "archived", "staged", "halted"],
                                   "description": "the deployment's status, or its rollout's state while one is staged or after it halted"},
                            rollout={**ref("Rollout"), "description": "its newest staged rollout, if it had one"},
                            devices={"type": "integer", "description": "devices that reported anything about it (a device counts once)"},
                            outcomes={"type": "object", "propertyNames": OUTCOME, "additionalProperties": {"type": "integer"},
                                      "description": "devices by outcome reported, for any model"},
                            models=array(obj(["model", "devices", "failed", "failureRate"], model=S, devices={"type": "integer"},
                                             failed={"type": "integer"}, failureRate={"type": "number", "description": "failed / devices, percent"})),
                            failureRate={"type": "number", "description": "the worst model's failure rate (percent) among those with at least "
                                                                           "minReports devices, else the worst of all"},
                            topReasons={**array(obj(["reason", "count"], reason=S, count={"type": "integer"})),
                                        "description": "the most frequent failure reasons of the raw events still kept"}),
    "ReportBatch": obj(["events"], events={**array(ref("ReportEvent")), "minItems": 1, "maxItems": 100}),
    "ReportEvent": obj(["id", "deviceID", "collection", "sequence", "deployment", "model", "sha256", "outcome", "at"],
                       id={"type": "string", "minLength": 8, "maxLength": 64, "pattern": r"^[A-Za-z0-9_-]{8,64}$",
                           "description": "chosen by the device, unique per event (a UUID will do)"},
                       deviceID=DEVICE_ID, collection=IDENTIFIER, sequence={"type": "integer", "minimum": 0, "description": "the manifest's sequence"},
                       deployment={**ID, "description": "the manifest's deploymentID"}, model=NAME, sha256=SHA256, outcome=OUTCOME,
                       reason={"type": "string", "maxLength": 200, "description": "only with failed: at most 200 bytes, no control or format characters"},
                       at={**DATE, "maxLength": 40, "description": "ISO 8601; within the last 7 days and at most an hour ahead of the server's clock"}),
    "ReportReceipt": obj(["accepted", "duplicates"], accepted={"type": "integer", "description": "events counted"},
                         duplicates={"type": "integer", "description": "events whose ID was counted already (a retry)"}),
    "DeploymentInput": obj([], name=NAME, models={"type": "object", "propertyNames": NAME, "additionalProperties": SHA256,
                                                  "description": "model name → blob SHA-256"},
                           rules={**array(obj(["condition", "models"], condition={**S, "description": "docs/TARGETING.md"},
                                              models={"type": "object", "propertyNames": NAME, "additionalProperties": SHA256})),
                                  "maxItems": 50}),
    "Activation": obj(["sequence", "deploymentID", "deploymentName", "kind", "actor"], sequence={"type": "integer"}, deploymentID=UUID,
                      deploymentName=S, kind={"type": "string", "anyOf": [{"enum": ["activate", "rollback", "halt"]}, {"pattern": "^stage ([1-9][0-9]?|100) %$"}],
                                                "description": "activate, rollback, stage N % (a staged rollout's start or next stage) or halt"},
                      actor=S, at=DATE),
    "SignedManifest": obj(["payloadType", "payload", "signatures"], payloadType=S, payload={**S, "description": "base64 of the manifest JSON (docs/MANIFEST.md)"},
                          signatures=array(obj(["keyid", "sig"], keyid=S, sig=S))),
    "SigningKey": obj(["algorithm", "keyID", "publicKey"], algorithm=S, keyID=S, publicKey={**S, "description": "raw Ed25519 public key, base64"}),
}

REPORT_EXAMPLE = {"events": [{"id": "0f3c9a51-7a2e-4d5b-9c1e-2b8f6d0a4e73", "deviceID": "device-1", "collection": "vision", "sequence": 3,
                              "deployment": "0b6a2c1e-5d3f-4a8b-9c7d-1e2f3a4b5c6d", "model": "classifier",
                              "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "outcome": "failed",
                              "reason": "out of memory", "at": "2026-11-24T08:00:00Z"}]}
DEPLOYMENT_EXAMPLE = {"name": "spring", "models": {"classifier": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}

binary = {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}

paths = {
    "/": {"get": op("root", "The server's address, opened in a browser: a redirect to the dashboard",
                    {"303": {"description": "see the dashboard", "headers": {"Location": {"schema": S, "description": "`/dashboard/`"}}}},
                    auth="none")},
    "/healthz": {"get": op("health", "Health check", ok("healthy"), auth="none")},
    "/metrics": {"get": op("metrics", "Prometheus metrics", {"200": {"description": "metrics in the text exposition format"}}, auth="none")},
    "/openapi.json": {"get": op("openAPI", "This document", {"200": {"description": "OpenAPI 3.1 document"}}, auth="none")},
    "/v1/teams": {
        "get": op("listTeams", "Teams of the caller", ok("teams", array(ref("Team")))),
        "post": op("createTeam", "Create a team; the caller becomes its owner", ok("created", ref("Team"), "201"),
                   body(obj(["name"], name=NAME), {"name": "acme-labs"}), errors=["409"]),
    },
    "/v1/tokens": {
        "get": op("listTokens", "The caller's API tokens", ok("tokens", array(ref("Token")))),
        "post": op("createToken", "Create an API token (its value is returned once)", ok("created", ref("CreatedToken"), "201"),
                   body(obj(["name"], name=NAME), {"name": "ci"}), errors=["409"],
                   description="The new token hangs on the one that asked: revoking that one revokes this one. "
                               "409 `too_many_tokens` when the account holds 100 unrevoked tokens; 401 when the asking token was revoked meanwhile."),
    },
    "/v1/tokens/{token}": {"delete": op("revokeToken", "Revoke one of the caller's tokens, and every unrevoked token made with it", {"204": {"description": "revoked"}},
                                        description="The unused invitations made with any token it revokes are revoked too, each audited.")},
    "/v1/teams/{team}/members": {
        "get": op("listMembers", "Members (viewer)", ok("members", array(ref("Member")))),
        "post": op("addMember", "Change a member's role (200), or invite a name that is not a member (201: the invitation's code, shown once) (owner)",
                   {**ok("role changed", ref("Member")), **ok("invited", ref("Member"), "201")},
                   body(obj(["name", "role"], name=NAME, role=ROLE), {"name": "ada", "role": "developer"}), errors=["409"],
                   description="An owner given a lower role loses the unused invitations they made to the team. "
                               "An invitation made here hangs on the caller and the token: see createInvitation."),
    },
    "/v1/teams/{team}/invitations": {
        "get": op("listInvitations", "Invitations and their state, never their codes (owner)", ok("invitations", array(ref("Invitation")))),
        "post": op("createInvitation", "Make an invitation; its code is returned once (owner)", ok("created", ref("CreatedInvitation"), "201"),
                   body(obj(["role"], role=ROLE, note=NAME, days={"type": "number", "exclusiveMinimum": 0, "maximum": 365}),
                        {"role": "viewer", "note": "ada", "days": 7}),
                   description="The invitation hangs on the caller and the token that asked: it is revoked when the caller is "
                               "removed from the team or given a lower role, or when that token (or one it was made with) is revoked."),
    },
    "/v1/teams/{team}/invitations/{invitation}": {
        "delete": op("revokeInvitation", "Revoke a pending invitation (owner)", {"204": {"description": "revoked"}}, errors=["409"]),
    },
    "/v1/invitations/accept": {
        "post": op("acceptInvitation", "Join the invitation's team with the caller's account", ok("joined", ref("Joined")),
                   body(obj(["code"], code=CODE), {"code": "cfi_example"}), errors=["409", "410"],
                   description="410 `invitation_revoked` also when the owner who made it is no longer an owner of the team, "
                               "or the token that made it was revoked."),
    },
    "/v1/invitations/redeem": {
        "post": op("redeemInvitation", "Make one's own account with an invitation; its first API token is returned once",
                   ok("account made", ref("Redeemed"), "201"),
                   body(obj(["code", "name"], code=CODE, name=NAME, email={"type": "string", "maxLength": 254},
                            password={"type": "string", "minLength": 12, "maxLength": 72,
                                      "description": "12 to 72 bytes of UTF-8, without the NUL character (U+0000)"}),
                            {"code": "cfi_example", "name": "ada"}),
                   auth="none", errors=["409", "410", "429"],
                   description="410 `invitation_used`, `invitation_revoked` or `invitation_expired`; `invitation_revoked` also when "
                               "the owner who made it is no longer an owner of the team, or the token that made it was revoked."),
    },
    "/v1/teams/{team}/members/{member}": {"delete": op("removeMember", "Remove a member (owner)", {"204": {"description": "removed"}}, errors=["409"],
                                                       description="The unused invitations the member made to the team are revoked too, each audited.")},
    "/v1/teams/{team}/apps": {
        "get": op("listApps", "Apps (viewer)", ok("apps", array(ref("App")))),
        "post": op("createApp", "Register an app; its credential is returned once (developer)", ok("created", ref("App"), "201"),
                   body(obj(["name", "platform"], name=NAME, platform=PLATFORM, bundleID=NAME, collections={**array(IDENTIFIER), "maxItems": 1000},
                            attestation=ATTESTATION_POLICY),
                        {"name": "Camera", "platform": "ios", "bundleID": "com.example.camera", "collections": ["vision"]})),
    },
    "/v1/teams/{team}/apps/{app}": {
        "delete": op("revokeApp", "Revoke an app (developer)", {"204": {"description": "revoked"}}),
        "patch": op("updateApp", "Choose the collections an app's devices may read (replacing the ones it had), its attestation policy, or both (developer)",
                    ok("updated", ref("App")),
                    body({**obj([], collections={**array(IDENTIFIER), "maxItems": 1000}, attestation=ATTESTATION_POLICY), "minProperties": 1},
                         {"collections": ["vision"]})),
    },
    "/v1/teams/{team}/apps/{app}/credential": {
        "post": op("rotateAppCredential", "Rotate an app's credential; the new one is returned once (developer)", ok("rotated", ref("App")),
                   errors=["409"]),
    },
    "/v1/teams/{team}/keys": {
        "get": op("listKeys", "Model keys, without material (viewer)", ok("keys", array(ref("ModelKey")))),
        "post": op("createKey", "Create a model key; its .modelkey file is returned once (developer)", ok("created", ref("ModelKeyFile"), "201"),
                   body(obj(["name"], name=NAME), {"name": "vision-2026"}),
                   description="503 `master_key_rotated` (no `Retry-After`) when the master key was rotated since this server "
                               "started: it stores no key until it is restarted with the new master key."),
    },
    "/v1/keys/{key}": {"delete": op("revokeKey", "Revoke a model key (developer of its team)", {"204": {"description": "revoked"}},
                                    description="404 `not_found` for an unknown key and for a key of a team the caller is not a member of (the answer names no team).")},
    "/v1/teams/{team}/audit": {
        "get": op("listAuditEvents", "Audit log, newest first (viewer)", ok("events", array(ref("AuditEvent"))),
                  query=[query("since", DATE)]),
    },
    "/v1/teams/{team}/blobs/{sha256}": {
        "put": {**op("uploadBlob", "Upload a sealed model (developer); Content-Length is its stated size",
                     {**ok("already stored", ref("Blob")), **ok("stored", ref("Blob"), "201")},
                     errors=["411", "422", "503"], retry_after=["429", "503"],
                     description="413 `quota_exceeded` when the blob does not fit its team's quota (COFFER_TEAM_QUOTA_BYTES) "
                                 "beside what the team stores and its uploads in progress reserved, or the teams one of its owners "
                                 "owns, together, past the same limit. "
                                 "503 `blob_being_collected` while blob collection decides about these bytes (send again), "
                                 "`upload_lease_lapsed` when the upload's lease (its quota reservation) lapsed or could not be "
                                 "renewed while its body arrived (send again), "
                                 "`blob_store_unavailable` when the object store did not answer, `uploads_busy` (with "
                                 "`Retry-After`) when uploads in progress hold all the memory a bucket's uploads may take "
                                 "(COFFER_S3_UPLOAD_MEMORY); 429 `too_many_uploads` (with `Retry-After`) when the "
                                 "account's own uploads in progress hold its share of that memory (a quarter), or, "
                                 "with the blob folder, number as many as one account may have at once (six)."),
                "requestBody": {"required": True, **binary}},
    },
    "/v1/teams/{team}/blobs/{sha256}/facts": {
        "put": op("recordModelFacts", "Record what is inside an uploaded sealed model, at most 256 KiB (developer)",
                  {"204": {"description": "recorded (replacing the team's earlier facts for this blob)"}}, body(ref("ModelFacts"), {"format": "onnx", "size": 1024, "notes": []})),
    },
    "/v1/blobs/{sha256}": {
        "get": op("downloadBlob", "Download a blob (Range, strong ETag, immutable caching)", {"200": {"description": "the blob", **binary},
                  "206": {"description": "a range of the blob", **binary}, "304": {"description": "not modified"},
                  "307": {"description": "with COFFER_S3_PRESIGN: Location is a presigned URL of the object store, valid for minutes; "
                                         "ask it with the same Range and no credentials"}},
                  auth="none", errors=["416", "429", "503"], retry_after=["429", "503"], query=[RANGE, IF_NONE_MATCH, IF_RANGE],
                  description="503 `blob_damaged` (`Cache-Control: no-store`) when the stored copy's size is not the size the blob "
                              "was registered with: it is not served until an upload of its bytes replaces it. " + BLOB_STREAMS + " "
                              + BLOB_MISSES),
        "head": op("blobHead", "A blob's size and ETag, as GET would answer without the body",
                   {"200": {"description": "exists"}, "206": {"description": "a range of it"}, "304": {"description": "not modified"}},
                   auth="none", errors=["416", "429", "503"], retry_after=["429"], query=[RANGE, IF_NONE_MATCH, IF_RANGE],
                   description=BLOB_MISSES),
    },
    "/v1/device/keys/{key}": {
        "post": op("deliverKey", "A device obtains a model key sealed to its public key (HPKE)", ok("sealed key", ref("Delivery")),
                   body(ref("DeliveryRequest"), {"appID": "3f0e70d6-bd83-4f12-a2fe-f877525efab0", "credential": "cfa_example", "deviceID": "device-1",
                                                 "devicePublicKey": "L+V9o0fNYkMVKNqsX7spBzD/9oSvxM/C7ZCZX1jLO3Q="}), auth="none", errors=["401", "403", "429"],
                   retry_after=["429"],
                   description=CREDENTIAL_BUDGET + " 403 codes: `credential_revoked`, `app_revoked`, `other_team`, `key_revoked`, `not_in_app_collections`; for apps "
                               "whose attestation policy is not none also `attestation_required`, `attestation_invalid`, `assertion_replayed`, "
                               "`attestation_revoked`, `attestation_challenge_invalid`, `attestation_unknown_key`, "
                               "`attestation_device_key_mismatch` (docs/ATTESTATION.md). 503 `master_key_rotated` (no `Retry-After`) "
                               "when the master key was rotated since this server started: it delivers no key until it is restarted "
                               "with the new master key (another instance may; try again later)."),
    },
    "/v1/device/attestation/challenge": {
        "post": op("attestationChallenge", "A single-use challenge (5 minutes) for a device's attestation, for apps whose policy is not none",
                   ok("the challenge", ref("AttestationChallenge"), "201"),
                   body(obj(["appID", "credential"], appID=ID, credential=S), {"appID": "3f0e70d6-bd83-4f12-a2fe-f877525efab0", "credential": "cfa_example"}),
                   auth="none", errors=["401", "403", "409", "429"], retry_after=["429"],
                   description="409 when the app's attestation policy is none. " + CREDENTIAL_BUDGET),
    },
    "/v1/signing-key": {"get": op("signingKey", "The manifest-signing public key (pin it in apps; coffer-server public-key prints it too)",
                                  ok("the key", ref("SigningKey")), auth="none")},
    "/v1/device/collections/{collection}/manifest": {
        "get": op("deviceManifest", "The signed manifest for a device (HTTP Basic: app ID and credential; device attributes in the query, docs/TARGETING.md)",
                  {**ok("signed manifest (DSSE envelope); ETag", ref("SignedManifest")), "304": {"description": "not modified"}},
                  auth="app", errors=["401", "403", "429"], retry_after=["429"],
                  description=CREDENTIAL_BUDGET),
    },
    "/v1/device/reports": {
        "post": op("sendDeviceReports", "Devices report what became of a deployment's models: 1 to 100 events, at most 64 KiB "
                   "(HTTP Basic: app ID and credential; docs/ROLLOUTS.md)",
                   ok("counted (a retried event ID is a duplicate, counted once)", ref("ReportReceipt")), body(ref("ReportBatch"), REPORT_EXAMPLE),
                   auth="app", errors=["401", "403", "422", "429", "503"], retry_after=["429", "503"],
                   description="One bad event refuses the batch, before anything is counted. 400 `invalid_request` (the reason names the "
                               "event's index and field); 401 `invalid_credential`; 403 `collection_not_bound`, `credential_revoked`, "
                               "`app_revoked`; 413 over 64 KiB; 422 `unknown_deployment`, `unknown_model`; 429 `rate_limited` and "
                               "503 `reports_backlog`, both with `Retry-After`. " + CREDENTIAL_BUDGET),
    },
    "/v1/collections": {"get": op("listAllCollections", "Collections of every team of the caller", ok("collections", array(ref("Collection"))))},
    "/v1/teams/{team}/collections": {
        "get": op("listCollections", "Collections (viewer)", ok("collections", array(ref("Collection")))),
        "post": op("createCollection", "Create a collection (developer)", ok("created", ref("Collection"), "201"), body(ref("NewCollection"), {"identifier": "vision-extra", "description": "image models", "models": ["classifier", "detector"]}),
                   errors=["409"]),
    },
    "/v1/teams/{team}/collections/{collection}": {"get": op("getCollection", "A collection (viewer)", ok("collection", ref("Collection")))},
    "/v1/teams/{team}/collections/{collection}/models": {
        "post": op("addModelName", "Add a model name (developer)", ok("collection", ref("Collection")), body(obj(["name"], name=NAME), {"name": "detector"}),
                   errors=["409"]),
    },
    "/v1/teams/{team}/collections/{collection}/models/{model}": {
        "delete": op("removeModelName", "Remove a model name the active deployment does not use (developer)", ok("collection", ref("Collection")),
                     errors=["409"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments": {
        "get": op("listDeployments", "Deployments (viewer)", ok("deployments", array(ref("Deployment")))),
        "post": op("createDeployment", "Create a draft deployment from uploaded blobs (developer)", ok("created", ref("Deployment"), "201"),
                   body(ref("DeploymentInput"), DEPLOYMENT_EXAMPLE), errors=["409", "422"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}": {
        "get": op("getDeployment", "A deployment (viewer)", ok("deployment", ref("Deployment"))),
        "patch": op("editDeployment", "Edit a draft: models replace the named defaults, rules replace all rules (developer)",
                    ok("deployment", ref("Deployment")), body(ref("DeploymentInput"), DEPLOYMENT_EXAMPLE), errors=["409", "422"],
                    description="409 when it is not a draft, also when it was activated or archived while this edit was under way."),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/clone": {
        "post": op("cloneDeployment", "Clone into a new draft, with edits (developer)", ok("created", ref("Deployment"), "201"),
                   body(ref("DeploymentInput"), DEPLOYMENT_EXAMPLE), errors=["409", "422"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/activate": {
        "post": op("activateDeployment", "Make it the active deployment for every device at once, or, with stages, stage by stage (developer)",
                   ok("activated, or its staged rollout started", ref("Deployment")),
                   body(ref("ActivationOptions"), {"stages": [1, 10, 50, 100], "stageHours": 24, "haltAt": 5, "minReports": 20}, required=False),
                   errors=["409"],
                   description="Without a body it becomes active for every device at once, in one transaction. With `stages` it starts a "
                               "staged rollout from the collection's active deployment (docs/ROLLOUTS.md). 409 when it cannot be "
                               "activated; with stages also when the collection has no active deployment to stage from, when it is the "
                               "active deployment already, or when a staged rollout of the collection is running; also when its models were "
                               "edited after the server checked them (look at it again and activate it again)."),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/advance": {
        "post": op("advanceDeployment", "Move its staged rollout to the next stage now, whatever the gates say (developer)",
                   ok("advanced (completed at 100 %)", ref("Deployment")), errors=["409"],
                   description="409 when it has no staged rollout running, or the rollout changed meanwhile."),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/halt": {
        "post": op("haltDeployment", "Halt its staged rollout: every device gets the previous deployment again (developer)",
                   ok("halted", ref("Deployment")),
                   body(obj([], reason={"type": "string", "maxLength": 200, "description": "at most 200 bytes on one line; recorded as \"by NAME: REASON\""}),
                        {"reason": "crash reports on iPhone 12"}, required=False),
                   errors=["409"], description="409 when it has no staged rollout running, or the rollout changed meanwhile."),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/status": {
        "get": op("getDeploymentStatus", "Where its rollout stands and how its devices fare (viewer)", ok("status", ref("DeploymentStatus"))),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/archive": {
        "post": op("archiveDeployment", "Archive a deployment that is not active (developer)", ok("archived", ref("Deployment")), errors=["409"]),
    },
    "/v1/teams/{team}/collections/{collection}/rollback": {
        "post": op("rollback", "Re-activate the deployment every device had before the current one; a halted rollout's is skipped (developer)", ok("re-activated", ref("Deployment")),
                   errors=["409"]),
    },
    "/v1/teams/{team}/collections/{collection}/activations": {
        "get": op("listActivations", "Activation history, newest first (viewer)", ok("activations", array(ref("Activation")))),
    },
}

def path_parameters(path):
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]

operations = [(path, method, operation) for path, methods in paths.items() for method, operation in methods.items()]
shared_links = {}

# --- Body statuses by method; path parameters from each path's `{name}`s (on each operation: a
# path item's keys are methods) ---

for path, method, operation in operations:
    if method in BODY_METHODS:
        operation["responses"].update({status: ERROR for status in BODY})
    names = path_parameters(path)
    for name in names:
        assert name in PATH_PARAMETERS, f"{path}: add {{{name}}} to PATH_PARAMETERS"
    if names:
        operation["parameters"] = [{"$ref": f"#/components/parameters/{name}"} for name in names] + operation.get("parameters", [])

# Each address is described once, under components/parameters.
parameters = {name: {"name": name, "in": "path", "required": True, "schema": schema} for name, schema in PATH_PARAMETERS.items()}

# --- Links: what an answer names, for the routes that address it ---

# operationId → (status, path parameter it produces, where in its answer or request). A producer links
# to every operation that takes that parameter and otherwise only parameters of its own (passed on).
PRODUCERS = {
    "createTeam": ("201", "team", "$response.body#/name"),
    "addMember": ("201", "member", "$response.body#/name"),
    "createApp": ("201", "app", "$response.body#/id"),
    "createInvitation": ("201", "invitation", "$response.body#/id"),
    "createToken": ("201", "token", "$response.body#/id"),
    "createKey": ("201", "key", "$response.body#/id"),
    "uploadBlob": ("201", "sha256", "$request.path.sha256"),
    "createCollection": ("201", "collection", "$response.body#/identifier"),
    "addModelName": ("200", "model", "$request.body#/name"),
    "createDeployment": ("201", "deployment", "$response.body#/id"),
    "cloneDeployment": ("201", "deployment", "$response.body#/id"),
}

for path, method, operation in operations:
    produced = PRODUCERS.get(operation["operationId"])
    if produced is None:
        continue
    status, parameter, source = produced
    own = path_parameters(path)
    links = {}
    for target_path, target_method, target in operations:
        wanted = path_parameters(target_path)
        if parameter in wanted and set(wanted) <= set(own) | {parameter}:
            # Described once under components/links: several producers (create, clone) share them.
            link = {"operationId": target["operationId"], "parameters": {
                name: source if name == parameter else f"$request.path.{name}" for name in wanted}}
            name = f"{target['operationId']}.{parameter}"
            assert shared_links.setdefault(name, link) == link, f"{name}: producers of {parameter} differ; name the link apart"
            links[target["operationId"]] = {"$ref": f"#/components/links/{name}"}
    assert links, f"{operation['operationId']} produces {parameter} but no operation uses it"
    operation["responses"][status]["links"] = links

document = {
    "openapi": "3.1.0",
    "info": {"title": "Coffer server API", "version": "1.0.0",
             "description": "Teams, apps, model keys, key delivery, model storage, collections, deployments, staged rollouts, device reports "
                            "and signed manifests. Errors are {\"error\": CODE, \"reason\": TEXT} "
                            "(application/json); a method a path does not take is 405 with `Allow` (components/responses/MethodNotAllowed); "
                            "a request asking to switch protocols (CONNECT, or `Connection: Upgrade` with `Upgrade`) is 400 "
                            "`protocol_switch_refused` on any path, and its connection closes."},
    "servers": [{"url": "http://127.0.0.1:8080"}],
    "security": [{"token": []}],
    "paths": paths,
    "components": {
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer", "description": "a personal API token (cft_…)"},
                            "app": {"type": "http", "scheme": "basic", "description": "a device: app ID as user name, app credential as password"}},
        "responses": {
            "Error": {"description": "an error", "content": {"application/json": {"schema": ref("Error")}}},
            "RetryLater": {"description": "an error; retry after `Retry-After` seconds",
                           "headers": {"Retry-After": {"schema": {"type": "integer", "minimum": 0}, "description": "seconds"}},
                           "content": {"application/json": {"schema": ref("Error")}}},
            "MethodNotAllowed": {"description": "405 `method_not_allowed`: the path exists, the method does not (any path, any method); "
                                                 "`Allow` lists the methods it takes",
                                 "headers": {"Allow": {"schema": S, "description": "e.g. `GET, HEAD, POST`"}},
                                 "content": {"application/json": {"schema": ref("Error")}}},
        },
        "schemas": schemas,
        "parameters": parameters,
        "links": shared_links,
    },
}

text = json.dumps(document, indent=1, sort_keys=True)
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "Sources", "CofferServer", "OpenAPI", "OpenAPIDocument.swift")
with open(out, "w") as f:
    f.write("// Generated by tools/make_openapi.py; edit that script, not this file.\n\n")
    f.write("/// The OpenAPI 3.1 document served at `/openapi.json`.\n")
    f.write("enum OpenAPIDocument {\n    static let json = #\"\"\"\n")
    f.write(text)
    f.write("\n\"\"\"#\n}\n")
with open(os.path.join(root, "docs", "openapi.json"), "w") as f:
    f.write(text + "\n")
