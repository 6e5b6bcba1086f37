#!/usr/bin/env python3
"""Writes Sources/CofferServer/OpenAPI/OpenAPIDocument.swift (the document served at /openapi.json).

    python3 tools/make_openapi.py

The API is described here once, in Python data; CofferServerTests checks that every route the
server registers is in the document and every path of the document is a registered route, and CI
validates the document with openapi-spec-validator.
"""
import json
import os

def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}

def body(schema):
    return {"required": True, "content": {"application/json": {"schema": schema}}}

def ok(description, schema=None, status="200"):
    response = {"description": description}
    if schema is not None:
        response["content"] = {"application/json": {"schema": schema}}
    return {status: response}

ERRORS = {
    "400": {"$ref": "#/components/responses/Error"},
    "401": {"$ref": "#/components/responses/Error"},
    "403": {"$ref": "#/components/responses/Error"},
    "404": {"$ref": "#/components/responses/Error"},
}

# A name that exists already (also when two requests create it at once).
CONFLICT = {"409": {"$ref": "#/components/responses/Error"}}
# An invitation that was used, revoked or has expired.
GONE = {"410": {"$ref": "#/components/responses/Error"}}
# Past a budget (Retry-After says when to try again).
LIMITED = {"429": {"$ref": "#/components/responses/Error"}}

def op(summary, responses, request=None, security=True, params=()):
    operation = {"summary": summary, "responses": {**responses, **ERRORS}}
    if request is not None:
        operation["requestBody"] = request
    if not security:
        operation["security"] = []
    if params:
        operation["parameters"] = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params]
    return operation

def array(schema):
    return {"type": "array", "items": schema}

def obj(required, **props):
    return {"type": "object", "required": list(required), "properties": props}

S = {"type": "string"}
DATE = {"type": "string", "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}
ROLE = {"type": "string", "enum": ["viewer", "developer", "owner"]}

schemas = {
    "Error": obj(["error", "reason"], error=S, reason=S),
    "Team": obj(["id", "name", "role"], id=UUID, name=S, role=ROLE),
    "CreatedToken": obj(["id", "name", "token", "prefix"], id=UUID, name=S, token=S, prefix=S),
    "Token": obj(["id", "name", "prefix"], id=UUID, name=S, prefix=S, createdAt=DATE, lastUsedAt=DATE, revokedAt=DATE),
    "Member": obj(["name", "role"], name=S, role=ROLE,
                  invitation={**ref("CreatedInvitation"), "description": "for a name that is not a member: the invitation made for them"}),
    "App": obj(["id", "name", "platform", "collections"], id=UUID, name=S, platform=S, bundleID=S,
               collections={**array(S), "description": "identifiers of the collections its devices may read"}, createdAt=DATE, revokedAt=DATE,
               credential={**S, "description": "present only when created or rotated"}),
    "ModelKeyFile": obj(["format", "id", "name", "created", "key"], format=S, id=S, name=S, created=DATE,
                        key={**S, "description": "256-bit key, base64; returned once"}),
    "ModelKey": obj(["id", "name", "team"], id=S, name=S, team=S, createdAt=DATE, revokedAt=DATE),
    "AuditEvent": obj(["action", "actor", "target", "outcome", "count"], at=DATE, action=S, actor=S, target=S, outcome=S, reason=S, deviceID=S,
                      count={"type": "integer", "description": "identical refusals within a minute are one row"}),
    "Blob": obj(["sha256", "size", "created"], sha256=S, size={"type": "integer"}, created={"type": "boolean"}),
    "DeliveryRequest": obj(["appID", "credential", "deviceID", "devicePublicKey"], appID=UUID, credential=S, deviceID=S,
                           devicePublicKey={**S, "description": "raw X25519 public key, base64"}),
    "Delivery": obj(["keyID", "suite", "encapsulatedKey", "ciphertext"], keyID=S, suite=S, encapsulatedKey=S, ciphertext=S),
    "Collection": obj(["id", "identifier", "team", "description", "models", "sequence"], id=UUID, identifier=S, team=S, description=S,
                      models=array(S), sequence={"type": "integer", "description": "grows with every activation"},
                      activeDeploymentID=UUID, createdAt=DATE),
    "NewCollection": obj(["identifier", "models"], identifier=S, description=S, models=array(S)),
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
                      problems={**array(S), "description": "why it cannot be activated; empty when it can"}),
    "DeploymentInput": obj([], name=S, models={"type": "object", "additionalProperties": S, "description": "model name → blob SHA-256"},
                           rules=array(obj(["condition", "models"], condition={**S, "description": "docs/TARGETING.md"},
                                           models={"type": "object", "additionalProperties": S}))),
    "Activation": obj(["sequence", "deploymentID", "deploymentName", "kind", "actor"], sequence={"type": "integer"}, deploymentID=UUID,
                      deploymentName=S, kind={"type": "string", "enum": ["activate", "rollback"]}, actor=S, at=DATE),
    "SignedManifest": obj(["payloadType", "payload", "signatures"], payloadType=S, payload={**S, "description": "base64 of the manifest JSON (docs/MANIFEST.md)"},
                          signatures=array(obj(["keyid", "sig"], keyid=S, sig=S))),
    "CreatedInvitation": obj(["id", "team", "role", "note", "expiresAt", "code"], id=UUID, team=S, role=ROLE, note=S, expiresAt=DATE,
                             code={**S, "description": "cfi_…, shown once; give it to the person"}),
    "Invitation": obj(["id", "role", "note", "createdBy", "expiresAt", "state"], id=UUID, role=ROLE, note=S, createdBy=S, createdAt=DATE,
                      expiresAt=DATE, state={"type": "string", "enum": ["pending", "accepted", "revoked", "expired"]},
                      acceptedBy=S, acceptedAt=DATE, revokedAt=DATE),
    "Joined": obj(["team", "role"], team=S, role=ROLE),
    "Redeemed": obj(["name", "team", "role", "token"], name=S, team=S, role=ROLE, token={**S, "description": "the new account's first API token"}),
    "SigningKey": obj(["algorithm", "keyID", "publicKey"], algorithm=S, keyID=S, publicKey={**S, "description": "raw Ed25519 public key, base64"}),
}

binary = {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}

paths = {
    "/healthz": {"get": op("Health check", ok("healthy"), security=False)},
    "/metrics": {"get": op("Prometheus metrics", {"200": {"description": "metrics in the text exposition format"}}, security=False)},
    "/openapi.json": {"get": op("This document", {"200": {"description": "OpenAPI 3.1 document"}}, security=False)},
    "/v1/teams": {
        "get": op("Teams of the caller", ok("teams", array(ref("Team")))),
        "post": op("Create a team; the caller becomes its owner", {**ok("created", ref("Team"), "201"), **CONFLICT}, body(obj(["name"], name=S))),
    },
    "/v1/tokens": {
        "get": op("The caller's API tokens", ok("tokens", array(ref("Token")))),
        "post": op("Create an API token (its value is returned once)", ok("created", ref("CreatedToken"), "201"), body(obj(["name"], name=S))),
    },
    "/v1/tokens/{token}": {"delete": op("Revoke one of the caller's tokens", {"204": {"description": "revoked"}}, params=["token"])},
    "/v1/teams/{team}/members": {
        "get": op("Members (viewer)", ok("members", array(ref("Member"))), params=["team"]),
        "post": op("Change a member's role (200), or invite a name that is not a member (201, the invitation's code shown once) (owner)",
                   {**ok("role changed", ref("Member")), **ok("invited", ref("Member"), "201"), **CONFLICT},
                   body(obj(["name", "role"], name=S, role=ROLE)), params=["team"]),
    },
    "/v1/teams/{team}/invitations": {
        "get": op("Invitations and their state, never their codes (owner)", ok("invitations", array(ref("Invitation"))), params=["team"]),
        "post": op("Make an invitation; its code is returned once (owner)", ok("created", ref("CreatedInvitation"), "201"),
                   body(obj(["role"], role=ROLE, note=S, days={"type": "number", "description": "1 day to 365; default COFFER_INVITATION_DAYS"})),
                   params=["team"]),
    },
    "/v1/teams/{team}/invitations/{invitation}": {
        "delete": op("Revoke a pending invitation (owner)", {"204": {"description": "revoked"}, **CONFLICT}, params=["team", "invitation"]),
    },
    "/v1/invitations/accept": {
        "post": op("Join the invitation's team with the caller's account", {**ok("joined", ref("Joined")), **CONFLICT, **GONE, **LIMITED},
                   body(obj(["code"], code=S))),
    },
    "/v1/invitations/redeem": {
        "post": op("Make one's own account with an invitation; the account's first API token is returned once",
                   {**ok("account made", ref("Redeemed"), "201"), **CONFLICT, **GONE, **LIMITED},
                   body(obj(["code", "name"], code=S, name=S, email=S, password=S)), security=False),
    },
    "/v1/teams/{team}/members/{member}": {"delete": op("Remove a member (owner)", {"204": {"description": "removed"}}, params=["team", "member"])},
    "/v1/teams/{team}/apps": {
        "get": op("Apps (viewer)", ok("apps", array(ref("App"))), params=["team"]),
        "post": op("Register an app; its credential is returned once (developer)", ok("created", ref("App"), "201"),
                   body(obj(["name", "platform"], name=S, platform=S, bundleID=S, collections=array(S))), params=["team"]),
    },
    "/v1/teams/{team}/apps/{app}": {
        "delete": op("Revoke an app (developer)", {"204": {"description": "revoked"}}, params=["team", "app"]),
        "patch": op("Choose the collections an app's devices may read, replacing the ones it had (developer)", ok("updated", ref("App")),
                    body(obj(["collections"], collections=array(S))), params=["team", "app"]),
    },
    "/v1/teams/{team}/apps/{app}/credential": {
        "post": op("Rotate an app's credential; the new one is returned once (developer)", ok("rotated", ref("App")), params=["team", "app"]),
    },
    "/v1/teams/{team}/keys": {
        "get": op("Model keys, without material (viewer)", ok("keys", array(ref("ModelKey"))), params=["team"]),
        "post": op("Create a model key; its .modelkey file is returned once (developer)", ok("created", ref("ModelKeyFile"), "201"),
                   body(obj(["name"], name=S)), params=["team"]),
    },
    "/v1/keys/{key}": {"delete": op("Revoke a model key (developer of its team)", {"204": {"description": "revoked"}}, params=["key"])},
    "/v1/teams/{team}/audit": {
        "get": {**op("Audit log, newest first (viewer)", ok("events", array(ref("AuditEvent"))), params=["team"]),
                "parameters": [{"name": "team", "in": "path", "required": True, "schema": S},
                               {"name": "since", "in": "query", "required": False, "schema": DATE}]},
    },
    "/v1/teams/{team}/blobs/{sha256}": {
        "put": {**op("Upload a sealed model (developer); Content-Length is its stated size", {
                    **ok("already stored", ref("Blob")), **ok("stored", ref("Blob"), "201"),
                    "411": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"},
                    "422": {"$ref": "#/components/responses/Error"}},
                    {"required": True, **binary}, params=["team", "sha256"])},
    },
    "/v1/teams/{team}/blobs/{sha256}/facts": {
        "put": {**op("Record what is inside an uploaded sealed model, at most 256 KiB (developer)", {
                    "204": {"description": "recorded (replacing the team's earlier facts for this blob)"},
                    "413": {"$ref": "#/components/responses/Error"}},
                    body(ref("ModelFacts")), params=["team", "sha256"])},
    },
    "/v1/blobs/{sha256}": {
        "get": op("Download a blob (Range, strong ETag, immutable caching)", {"200": {"description": "the blob", **binary},
                  "206": {"description": "a range of the blob", **binary}, "304": {"description": "not modified"}},
                  security=False, params=["sha256"]),
        "head": op("A blob's size and ETag", {"200": {"description": "exists"}}, security=False, params=["sha256"]),
    },
    "/v1/device/keys/{key}": {
        "post": {**op("A device obtains a model key sealed to its public key (HPKE)", {**ok("sealed key", ref("Delivery")),
                      "429": {"$ref": "#/components/responses/Error"}},
                      body(ref("DeliveryRequest")), security=False, params=["key"])},
    },
    "/v1/signing-key": {"get": op("The manifest-signing public key (pin it in apps; coffer-server public-key prints it too)",
                                  ok("the key", ref("SigningKey")), security=False)},
    "/v1/device/collections/{collection}/manifest": {
        "get": {**op("The signed manifest for a device (HTTP Basic: app ID and credential; device attributes in the query, docs/TARGETING.md)",
                     {**ok("signed manifest (DSSE envelope); ETag", ref("SignedManifest")), "304": {"description": "not modified"}},
                     security=False, params=["collection"]),
                "security": [{"app": []}]},
    },
    "/v1/collections": {"get": op("Collections of every team of the caller", ok("collections", array(ref("Collection"))))},
    "/v1/teams/{team}/collections": {
        "get": op("Collections (viewer)", ok("collections", array(ref("Collection"))), params=["team"]),
        "post": op("Create a collection (developer)", {**ok("created", ref("Collection"), "201"), **CONFLICT}, body(ref("NewCollection")), params=["team"]),
    },
    "/v1/teams/{team}/collections/{collection}": {"get": op("A collection (viewer)", ok("collection", ref("Collection")), params=["team", "collection"])},
    "/v1/teams/{team}/collections/{collection}/models": {
        "post": op("Add a model name (developer)", ok("collection", ref("Collection")), body(obj(["name"], name=S)), params=["team", "collection"]),
    },
    "/v1/teams/{team}/collections/{collection}/models/{model}": {
        "delete": op("Remove a model name the active deployment does not use (developer)", {**ok("collection", ref("Collection")),
                     "409": {"$ref": "#/components/responses/Error"}}, params=["team", "collection", "model"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments": {
        "get": op("Deployments (viewer)", ok("deployments", array(ref("Deployment"))), params=["team", "collection"]),
        "post": op("Create a draft deployment from uploaded blobs (developer)", {**ok("created", ref("Deployment"), "201"),
                   "422": {"$ref": "#/components/responses/Error"}, **CONFLICT}, body(ref("DeploymentInput")), params=["team", "collection"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}": {
        "get": op("A deployment (viewer)", ok("deployment", ref("Deployment")), params=["team", "collection", "deployment"]),
        "patch": op("Edit a draft: models replace the named defaults, rules replace all rules (developer)", ok("deployment", ref("Deployment")),
                    body(ref("DeploymentInput")), params=["team", "collection", "deployment"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/clone": {
        "post": op("Clone into a new draft, with edits (developer)", {**ok("created", ref("Deployment"), "201"), **CONFLICT}, body(ref("DeploymentInput")),
                   params=["team", "collection", "deployment"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/activate": {
        "post": op("Make it the active deployment, in one transaction (developer)", {**ok("activated", ref("Deployment")),
                   "409": {"$ref": "#/components/responses/Error"}}, params=["team", "collection", "deployment"]),
    },
    "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/archive": {
        "post": op("Archive a deployment that is not active (developer)", ok("archived", ref("Deployment")), params=["team", "collection", "deployment"]),
    },
    "/v1/teams/{team}/collections/{collection}/rollback": {
        "post": op("Re-activate the deployment that was active before the current one (developer)", ok("re-activated", ref("Deployment")),
                   params=["team", "collection"]),
    },
    "/v1/teams/{team}/collections/{collection}/activations": {
        "get": op("Activation history, newest first (viewer)", ok("activations", array(ref("Activation"))), params=["team", "collection"]),
    },
}

document = {
    "openapi": "3.1.0",
    "info": {"title": "Coffer server API", "version": "1.0.0",
             "description": "Teams, apps, model keys, key delivery, model storage, collections, deployments and signed manifests. Errors are {\"error\": CODE, \"reason\": TEXT}."},
    "servers": [{"url": "http://127.0.0.1:8080"}],
    "security": [{"token": []}],
    "paths": paths,
    "components": {
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer", "description": "a personal API token (cft_…)"},
                            "app": {"type": "http", "scheme": "basic", "description": "a device: app ID as user name, app credential as password"}},
        "responses": {"Error": {"description": "an error", "content": {"application/json": {"schema": ref("Error")}}}},
        "schemas": schemas,
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
