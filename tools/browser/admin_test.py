#!/usr/bin/env python3
"""End-to-end test of the dashboard's team administration in headless Chromium: keys (the
.modelkey file downloaded once), apps (the credential shown once), members, API tokens, the
activity log with its two charts after real device syncs (coffer sync and coffer open), a
viewer who cannot change anything, and a forged form refused.

    python3 tools/browser/admin_test.py [--bin .build/debug] [--artifacts .build/browser-artifacts]

Uses the server, browser and CLI helpers of dashboard_test.py. Screenshots (prefix "admin-")
go into the artifacts folder, at a laptop's width and a phone's.
"""
import base64
import json
import os
import stat
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_test import Failure, Run, check, run_story  # noqa: E402

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

OWNER_EMAIL = "owner@example.com"
OWNER_PASSWORD = "spring release 2026"
VIEWER_EMAIL = "vera@example.com"
VIEWER_PASSWORD = "viewer password 42"
TEAM = "/dashboard/teams/Flowers"


class AdminRun(Run):
    team_quota = None  # its deployments' models are larger than the dashboard story's quota

    def __init__(self, args):
        super().__init__(args)
        # Its own folder: the server log of this run stays beside dashboard_test.py's.
        self.artifacts = os.path.join(self.artifacts, "admin")
        os.makedirs(self.artifacts, exist_ok=True)
        self.secrets = []

    def downloading_browser(self):
        """A browser that saves downloads into a folder of its own, without asking."""
        driver = self.browser()
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads, exist_ok=True)
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": self.downloads})
        return driver

    def downloaded(self, name, timeout=30):
        path = os.path.join(self.downloads, name)
        for _ in range(timeout * 10):
            if os.path.exists(path) and not os.path.exists(path + ".crdownload"):
                return path
            time.sleep(0.1)
        raise Failure(f"{name} was not downloaded (folder has {os.listdir(self.downloads)})")

    def api(self, path, token):
        request = urllib.request.Request(self.base + path, headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status
        except urllib.error.HTTPError as error:
            return error.code

    def value(self, driver, element_id):
        return driver.find_element(By.ID, element_id).get_attribute("value")

    def story(self):
        self.start_server()
        self.cli("team", "create", "Flowers")
        owner = self.downloading_browser()

        print("set-up", flush=True)
        self.open(owner, "/dashboard/setup")
        self.fill(owner, {"token": self.token, "email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        self.submit(owner, "Create the owner and sign in")
        check(owner.current_url.endswith("/dashboard"), "the owner is signed in")
        check(owner.find_elements(By.LINK_TEXT, "Keys"), "the team's section links to its keys")

        print("keys", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "Keys"))
        check(owner.current_url.endswith(TEAM + "/keys"), "the keys page opens from the team's section")
        check("No keys yet" in self.text(owner), "an empty key list says what to do next")
        self.shoot(owner, "admin-01-keys-empty")
        self.fill(owner, {"name": "flowers-2026"})
        self.submit_without_waiting(owner, "Create and download")
        path = self.downloaded("flowers-2026.modelkey")
        with open(path) as f:
            keyfile = json.load(f)
        check(keyfile.get("format") == "coffer-modelkey-v1" and keyfile.get("name") == "flowers-2026", "the download is a .modelkey file")
        check(len(base64.b64decode(keyfile["key"])) == 32, "it holds a 256-bit key")
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        self.secrets.append(keyfile["key"])
        for _ in range(100):  # keys.js shows the page again once the download started
            if "created=1" in owner.current_url and owner.execute_script("return document.readyState") == "complete":
                break
            time.sleep(0.1)
        check("flowers-2026" in self.text(owner) and keyfile["id"] in self.text(owner), "the new key is listed after the download")
        check("only copy" in self.text(owner), "the page says the file is the only copy")
        check(keyfile["key"] not in owner.page_source, "the key material is not in the page")
        self.shoot(owner, "admin-02-keys")
        owner.refresh()
        time.sleep(1)
        check(os.listdir(self.downloads) == ["flowers-2026.modelkey"], "reloading the page downloads nothing again")
        check(keyfile["key"] not in owner.page_source, "nor shows the key")
        # Over a slow network (3 s before each answer) the page must not leave before the download
        # has begun: leaving cancels the pending answer, and with it the only copy of the key.
        self.open(owner, TEAM + "/keys")
        owner.execute_script("window.cofferPreviousPage = true")
        owner.execute_cdp_cmd("Network.enable", {})
        owner.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 3000,
                                                                    "downloadThroughput": -1, "uploadThroughput": -1})
        self.fill(owner, {"name": "flowers-slow"})
        self.submit_without_waiting(owner, "Create and download")
        slow_path = self.downloaded("flowers-slow.modelkey")
        with open(slow_path) as f:
            slow = json.load(f)
        os.chmod(slow_path, stat.S_IRUSR | stat.S_IWUSR)
        self.secrets.append(slow["key"])
        check(slow.get("name") == "flowers-slow", "over a slow network the key's file is downloaded all the same")
        WebDriverWait(owner, 60).until(lambda d: "created=1" in d.current_url
                                       and d.execute_script("return !window.cofferPreviousPage && document.readyState === 'complete'"))
        owner.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0,
                                                                    "downloadThroughput": -1, "uploadThroughput": -1})
        check(slow["id"] in self.text(owner), "and the page shows it listed once the download began")
        check(not [c for c in owner.get_cookies() if c["name"].startswith("coffer_download")], "the download ticket's cookie is gone")

        print("apps", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "Apps"))
        check("No apps yet" in self.text(owner), "an empty app list says what to do next")
        self.fill(owner, {"name": "Flower App", "bundleID": "com.example.flowers", "password": OWNER_PASSWORD})
        self.submit(owner, "Register app")
        credential = self.value(owner, "shown-credential")
        app_id = self.value(owner, "shown-app-id")
        check(credential.startswith("cfa_") and len(app_id) == 36, "the credential and the app ID are shown")
        self.secrets.append(credential)
        self.shoot(owner, "admin-03-app-credential")
        self.open(owner, TEAM + "/apps")
        check(credential not in owner.page_source, "after leaving the page the credential is gone")
        check(app_id in self.text(owner), "the app is listed with its ID")
        self.fill(owner, {"name": "Old App", "password": OWNER_PASSWORD})
        self.submit(owner, "Register app")
        self.open(owner, TEAM + "/apps")
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "button[aria-label='Revoke Old App']"))
        row = [r for r in owner.find_elements(By.CSS_SELECTOR, "table.list tbody tr") if "Old App" in r.text][0]
        check("Revoked" in row.text, "the revoked app shows as revoked")
        check(not row.find_elements(By.TAG_NAME, "button"), "a revoked app has no buttons left")
        self.shoot(owner, "admin-04-apps")

        print("members", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "Members"))
        self.fill(owner, {"name": "vera", "password": OWNER_PASSWORD})
        owner.find_element(By.CSS_SELECTOR, "#role option[value='viewer']").click()
        self.submit(owner, "Invite")
        vera = self.value(owner, "shown-code")
        check(vera.startswith("cfi_"), "the invitation's code is shown once")
        check("cft_" not in owner.page_source, "no API token is made for the invited person")
        self.secrets.append(vera)
        tables = owner.find_elements(By.CSS_SELECTOR, "table.list")
        check("vera" not in tables[0].text, "vera is not a member until she accepts")
        check(len(tables) == 2 and "pending" in tables[1].text, "the invitation is listed as pending")
        self.shoot(owner, "admin-05-members")

        print("API tokens", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "API tokens"))
        self.fill(owner, {"name": "ci-release", "password": "not my password"})
        self.submit(owner, "Create token")
        check("The current password is not right." in self.text(owner), "a token needs the current password")
        check(not owner.find_elements(By.ID, "shown-token"), "no token without the current password")
        self.fill(owner, {"name": "ci-release", "password": OWNER_PASSWORD})
        self.submit(owner, "Create token")
        token = self.value(owner, "shown-token")
        check(self.api("/v1/tokens", token) == 200, "the new API token works")
        self.secrets.append(token)
        self.shoot(owner, "admin-06-token-created")
        self.open(owner, "/dashboard/tokens")
        check(token not in owner.page_source, "the token is not shown again")
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "button[aria-label='Revoke token ci-release']"))
        check(self.api("/v1/tokens", token) == 401, "the revoked token no longer works")
        self.shoot(owner, "admin-07-tokens")

        print("devices sync (coffer sync, coffer open)", flush=True)
        model = os.path.join(self.work, "classifier.bin")
        with open(model, "wb") as f:
            f.write(os.urandom(64 * 1024))
        sealed = os.path.join(self.work, "classifier.coffer")
        # A browser saves downloads under the umask (0644 here); the CLI refuses a key others may read.
        os.chmod(path, 0o600)
        self.cli("encrypt", model, "--key", path, "--output", sealed, "--quiet")
        self.cli("collection", "create", "FlowerModels", "--team", "Flowers", "--models", "FlowerClassifier")
        self.cli("app", "update", "--team", "Flowers", app_id, "--collections", "FlowerModels")
        self.cli("deployment", "create", "--collection", "FlowerModels", "--name", "spring", "--model", "FlowerClassifier=" + sealed, "--activate")
        with urllib.request.urlopen(self.base + "/v1/signing-key", timeout=30) as reply:
            public_key = json.load(reply)["publicKey"]
        credential_file = os.path.join(self.work, "app.credential")
        with open(credential_file, "w") as f:
            f.write(credential)
        os.chmod(credential_file, 0o600)
        for device in ["ipad-1", "iphone-2"]:
            cache = os.path.join(self.work, "cache-" + device)
            self.cli("sync", "--server", self.base, "--app", app_id, "--credential-file", credential_file, "--public-key", public_key,
                     "--collection", "FlowerModels", "--cache", cache, "--device-id", device)
            out = os.path.join(self.work, device + ".out")
            self.cli("open", "--cache", cache, "--collection", "FlowerModels", "FlowerClassifier", "--output", out)
            with open(out, "rb") as got, open(model, "rb") as want:
                check(got.read() == want.read(), f"{device} synced and opened the model")

        print("activity", flush=True)
        self.open(owner, TEAM + "/activity")
        charts = owner.find_elements(By.CSS_SELECTOR, "svg.chart[role='img']")
        check(len(charts) == 2, "the activity page has two charts")
        downloads = owner.find_element(By.ID, "downloads-desc").get_attribute("textContent")
        deliveries = owner.find_element(By.ID, "deliveries-desc").get_attribute("textContent")
        check(downloads.startswith("2 downloads"), f"the downloads chart counts both devices' downloads ({downloads})")
        check(deliveries.startswith("2 key deliveries"), f"the deliveries chart counts both keys fetched ({deliveries})")
        check(len(owner.find_elements(By.CSS_SELECTOR, "#downloads-heading ~ .chart-frame rect")) >= 1, "the downloads chart has a bar")
        check("FlowerModels / FlowerClassifier" in self.text(owner), "the legend names the model version")
        check("key.deliver" in self.text(owner) and "app Flower App" in self.text(owner), "the audit log names the app that got the key")
        self.shoot(owner, "admin-08-activity")
        owner.find_element(By.CSS_SELECTOR, "#filter-action option[value='app']").click()
        self.submit(owner, "Filter")
        rows = owner.find_elements(By.CSS_SELECTOR, "table.audit tbody tr")
        check(rows and all(" app." in " " + r.text for r in rows), "filtering by apps shows only app events")
        check("action=app" in owner.current_url, "the filter is in the address, to share")
        self.shoot(owner, "admin-09-activity-filtered")

        print("a viewer", flush=True)
        viewer = self.browser()
        self.open(viewer, "/dashboard/join")
        self.fill(viewer, {"code": vera, "name": "vera", "email": VIEWER_EMAIL, "password": VIEWER_PASSWORD})
        self.submit(viewer, "Join")
        check(viewer.current_url.endswith("/dashboard"), "the viewer made her own account with the invitation and is signed in")
        for page in ["keys", "apps", "members", "activity"]:
            self.open(viewer, TEAM + "/" + page)
            check(not viewer.find_elements(By.CSS_SELECTOR, "main form[method='post']"), f"a viewer gets no change forms on {page}")
        self.open(viewer, TEAM + "/members")
        self.shoot(viewer, "admin-10-members-viewer")
        csrf = viewer.find_element(By.NAME, "csrf").get_attribute("value")
        check(self.post(viewer, TEAM + "/keys", {"csrf": csrf, "name": "mine"}) == 403, "a viewer's key creation is refused (403)")
        check(self.post(viewer, f"{TEAM}/apps/{app_id}/revoke", {"csrf": csrf}) == 403, "a viewer's app revocation is refused (403)")
        check(self.post(viewer, TEAM + "/members", {"csrf": csrf, "name": "eve", "role": "owner"}) == 403, "a viewer cannot add members (403)")
        check(sorted(os.listdir(self.downloads)) == ["flowers-2026.modelkey", "flowers-slow.modelkey"], "no key file came from the refused creation")

        print("forged forms", flush=True)
        check(self.post(owner, f"{TEAM}/apps/{app_id}/revoke", {}) == 403, "a POST without the CSRF token is refused (403)")
        check(self.post(owner, TEAM + "/keys", {"csrf": "forged", "name": "forged"}) == 403, "a POST with a wrong CSRF token is refused (403)")
        self.open(owner, TEAM + "/apps")
        row = [r for r in owner.find_elements(By.CSS_SELECTOR, "table.list tbody tr") if "Flower App" in r.text][0]
        check("Live" in row.text, "the forged revocation changed nothing")
        self.open(owner, TEAM + "/keys")
        check("forged" not in self.text(owner), "the forged key creation changed nothing")

        with open(os.path.join(self.artifacts, "server.log")) as f:
            log = f.read()
        check(not any(secret in log for secret in self.secrets), "no key, credential or token is in the server's log")

    def submit_without_waiting(self, driver, button_text):
        """Clicks a button whose answer is a download (the page stays)."""
        buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "main button") if b.text.strip() == button_text]
        if not buttons:
            raise Failure(f"no button {button_text!r} on {driver.current_url}")
        buttons[0].click()


if __name__ == "__main__":
    sys.exit(run_story(AdminRun, label="admin browser tests", failure_prefix="admin-failure"))
