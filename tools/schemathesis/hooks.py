"""schemathesis hooks for tools/schemathesis/run.sh (loaded through SCHEMATHESIS_HOOKS).

The run's owner token must live through the run: schemathesis learns IDs from answers (GET
/v1/tokens lists this token's ID) and would revoke it, after which every request is 401 and tests
nothing. A DELETE of that one token is sent for a token that does not exist instead; tokens the run
created itself are revoked as generated.
"""
import os

import schemathesis

KEEP = os.environ.get("COFFER_SCHEMATHESIS_TOKEN_ID", "").lower()
ABSENT = "00000000-0000-4000-8000-000000000000"


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() == "DELETE" and case.path == "/v1/tokens/{token}":
        if KEEP and str(case.path_parameters.get("token", "")).lower() == KEEP:
            case.path_parameters["token"] = ABSENT
