"""schemathesis hooks for tools/schemathesis/run.sh (loaded through SCHEMATHESIS_HOOKS).

The run's owner must keep its means to act until the end, or every later request is 401 or 403
and tests nothing. schemathesis learns IDs and names from answers (GET /v1/tokens lists this
token's ID, GET members lists `admin`), so three requests are redirected:
- revoking this token → revoking a token that does not exist;
- removing `admin` from a team → removing a member that does not exist;
- changing `admin`'s role → changing a member that does not exist.
What the run creates itself is revoked, removed and changed as generated.
"""
import os

import schemathesis
from hypothesis.internal import lambda_sources

# CPython 3.11 (Debian 12's Python) can fail `ast.parse` with "SystemError: AST constructor recursion
# depth mismatch" when it runs deep in the stack. Hypothesis parses a lambda's source file to name
# the lambda in a strategy's repr, which schemathesis builds while generating nested bodies: the run
# then stops with a "Runtime Error" that says nothing about the server. A lambda whose source cannot
# be parsed is named generically instead (versions pinned in requirements.txt).
_describe_lambda = lambda_sources.lambda_description


def _lambda_description(function):
    try:
        return _describe_lambda(function)
    except SystemError:
        return "lambda: <source not parsed>"


lambda_sources.lambda_description = _lambda_description

TOKEN_ID = os.environ.get("COFFER_SCHEMATHESIS_TOKEN_ID", "").lower()
OWNER = "admin"  # the bootstrap user
ABSENT_TOKEN = "00000000-0000-4000-8000-000000000000"
ABSENT_MEMBER = "nobody-schemathesis"


@schemathesis.hook
def before_call(context, case, kwargs):
    method = case.method.upper()
    if method == "DELETE" and case.path == "/v1/tokens/{token}":
        if TOKEN_ID and str(case.path_parameters.get("token", "")).lower() == TOKEN_ID:
            case.path_parameters["token"] = ABSENT_TOKEN
    elif method == "DELETE" and case.path == "/v1/teams/{team}/members/{member}":
        if case.path_parameters.get("member") == OWNER:
            case.path_parameters["member"] = ABSENT_MEMBER
    elif method == "POST" and case.path == "/v1/teams/{team}/members":
        if isinstance(case.body, dict) and case.body.get("name") == OWNER:
            case.body = {**case.body, "name": ABSENT_MEMBER}
