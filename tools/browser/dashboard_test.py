#!/usr/bin/env python3
"""End-to-end test of the dashboard in a real headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium), against the built coffer-server on a loopback port with a
temporary data folder. The CLI makes what the dashboard cannot make yet (team, member, key) and
seals the models, as a team would; uploads, deployments, rules and rollouts are done in the browser.

    python3 tools/browser/dashboard_test.py [--bin .build/debug] [--artifacts .build/browser-artifacts]

Screenshots of the main pages, at a laptop's width and a phone's, go into the artifacts folder.
Exits non-zero when a check fails.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

OWNER_EMAIL = "owner@example.com"
OWNER_PASSWORD = "spring release 2026"
VIEWER_EMAIL = "vera@example.com"
VIEWER_PASSWORD = "viewer password 42"
SCRIPT = "<script>alert(1)</script>"
# The team's storage quota: room for the story's sealed models (classifier and stylizer 4 280 bytes
# each, spare 8 376, classifier-large 514: 17 450), not for spare's bytes counted twice (21 032).
TEAM_QUOTA = 19000


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)
    print(f"  ok: {what}", flush=True)


def free_port():
    """A loopback port below the kernel's ephemeral range (tools/free_port.py): a port found by
    binding to 0 can be taken by an outgoing connection before the server binds it."""
    picker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "free_port.py")
    return int(subprocess.check_output([sys.executable, picker], text=True))


class Run:
    # The story's team quota (None: unlimited; the admin story's subclass stores larger models).
    team_quota = TEAM_QUOTA

    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        self.artifacts = os.path.abspath(args.artifacts)
        os.makedirs(self.artifacts, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="coffer-browser-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.token = "cft_browser_" + os.urandom(16).hex()
        self.server = None
        self.drivers = []

    # -- the server and the CLI --------------------------------------------------------------
    def start_server(self):
        env = dict(os.environ, COFFER_BOOTSTRAP_TOKEN=self.token, COFFER_DATA_DIR=os.path.join(self.work, "data"),
                   COFFER_BLOB_COLLECT_MINUTES="0")
        if self.team_quota is not None:
            env["COFFER_TEAM_QUOTA_BYTES"] = str(self.team_quota)
        log = open(os.path.join(self.artifacts, "server.log"), "w")
        # Started from the temporary folder: the templates must not depend on the working directory.
        self.server = subprocess.Popen([os.path.join(self.bin, "coffer-server"), "serve", "--hostname", "127.0.0.1",
                                        "--port", str(self.port)], cwd=self.work, env=env, stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.2)
        raise Failure("coffer-server did not start (see server.log)")

    def cli(self, *arguments):
        env = dict(os.environ, COFFER_SERVER=self.base, COFFER_TOKEN=self.token, COFFER_CONFIG_DIR=os.path.join(self.work, "cli"))
        done = subprocess.run([os.path.join(self.bin, "coffer"), *arguments], cwd=self.work, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise Failure(f"coffer {' '.join(arguments[:2])} failed: {done.stderr.strip()}")
        return done.stdout

    # -- browsers ------------------------------------------------------------------------------
    def browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                     "--force-device-scale-factor=1", "--lang=en-US"]:
            options.add_argument(flag)
        service = webdriver.ChromeService(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
        driver = webdriver.Chrome(options=options, service=service)
        driver.set_page_load_timeout(60)
        self.drivers.append(driver)
        return driver

    def open(self, driver, path):
        driver.get(self.base + path)

    def fill(self, driver, values):
        for name, value in values.items():
            field = driver.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)

    def submit(self, driver, button_text):
        buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "main button") if b.text.strip() == button_text]
        if not buttons:
            raise Failure(f"no button {button_text!r} on {driver.current_url}")
        self.click(driver, buttons[0])

    def click(self, driver, element):
        """Clicks something that loads a page, and waits for the new page: the old document is
        marked first, and a new document does not carry the mark. (Waiting for the old <html> to go
        stale made chromedriver answer with an inspector error now and then.)"""
        driver.execute_script("window.cofferPreviousPage = true")
        element.click()

        def loaded(d):
            try:
                return d.execute_script("return !window.cofferPreviousPage && document.readyState === 'complete'")
            except WebDriverException:
                return False  # between documents
        WebDriverWait(driver, 30).until(loaded)

    def shoot(self, driver, name):
        """A screenshot at a laptop's width and at a phone's, the whole page long; first, every
        page shot is checked for what assistive technology needs (``accessible``)."""
        self.accessible(driver, name)
        for label, width in [("desktop", 1280), ("phone", 390)]:
            driver.set_window_size(width, 900)
            height = driver.execute_script("return Math.max(document.body.scrollHeight, 600)")
            driver.set_window_size(width, min(height + 40, 4000))
            driver.save_screenshot(os.path.join(self.artifacts, f"{name}-{label}.png"))
        driver.set_window_size(1280, 900)

    def accessible(self, driver, name):
        """Every form control has a label (a <label>, aria-label or aria-labelledby), every button
        and link a name, every image a text alternative, the page a title and one <h1>, and the
        page's language is set: checked in the page as the browser built it."""
        problems = driver.execute_script("""
            const named = e => (e.labels && e.labels.length) || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby');
            const out = [];
            for (const e of document.querySelectorAll('input:not([type=hidden]), select, textarea'))
                if (!named(e)) out.push('control without a label: ' + (e.name || e.id || e.outerHTML.slice(0, 80)));
            for (const e of document.querySelectorAll('button, a[href]'))
                if (!(e.textContent.trim() || e.getAttribute('aria-label') || e.getAttribute('title')))
                    out.push('button or link without a name: ' + e.outerHTML.slice(0, 80));
            for (const e of document.querySelectorAll('img, svg'))
                if (e.tagName.toLowerCase() === 'img' ? !e.hasAttribute('alt')
                    : !(e.getAttribute('aria-label') || e.getAttribute('aria-hidden') === 'true' || e.querySelector('title')))
                    out.push('image without a text alternative: ' + e.outerHTML.slice(0, 80));
            if (!document.title.trim()) out.push('no page title');
            if (document.querySelectorAll('h1').length !== 1) out.push(document.querySelectorAll('h1').length + ' <h1> elements');
            if (!document.documentElement.lang) out.push('no lang on <html>');
            return out;""")
        check(not problems, f"{name}: labels, names and text alternatives are there" + (f" (missing: {problems})" if problems else ""))

    def text(self, driver):
        return driver.find_element(By.TAG_NAME, "body").text

    def no_alert(self, driver):
        try:
            driver.switch_to.alert
            return False
        except NoAlertPresentException:
            return True

    def post(self, driver, path, fields):
        """A form posted outside the page (a forgery, or a viewer's hand-made form) with the
        browser's own cookies; returns the HTTP status."""
        cookies = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
        request = urllib.request.Request(self.base + path, data=urllib.parse.urlencode(fields).encode(), method="POST",
                                         headers={"Cookie": cookies, "Content-Type": "application/x-www-form-urlencoded"})

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None
        try:
            return urllib.request.build_opener(NoRedirect).open(request, timeout=30).status
        except urllib.error.HTTPError as error:
            return error.code

    def upload(self, driver, index, path):
        """Uploads a file with the upload form of model name `index` (the page's script, with its
        progress bar); returns what the form says when done."""
        driver.find_element(By.ID, f"file-{index}").send_keys(path)
        form = driver.find_element(By.ID, f"file-{index}").find_element(By.XPATH, "ancestor::form")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        status = form.find_element(By.CSS_SELECTOR, ".upload-status")
        WebDriverWait(driver, 60).until(lambda d: "ok" in status.get_attribute("class") or "error" in status.get_attribute("class"))
        text = status.text
        if "error" not in status.get_attribute("class"):
            check(text.startswith("Uploaded " + os.path.basename(path)), f"{os.path.basename(path)} uploaded with a progress bar")
        return text

    def chosen(self, driver, select_id):
        return driver.execute_script(f"return document.getElementById('{select_id}').value")

    def csrf(self, driver):
        return driver.find_element(By.NAME, "csrf").get_attribute("value")

    # -- the story -----------------------------------------------------------------------------
    def story(self):
        self.start_server()

        owner = self.browser()
        print("first owner and sign-in", flush=True)
        self.open(owner, "/dashboard")
        check(owner.current_url.endswith("/dashboard/setup"), "a new server sends the browser to set-up")
        self.shoot(owner, "01-setup")
        # The accessibility check itself can fail: a field without a label is noticed.
        owner.execute_script("document.querySelector('main').insertAdjacentHTML('beforeend', '<input name=unlabelled>')")
        try:
            self.accessible(owner, "a page with an unlabelled field")
            noticed = False
        except Failure:
            noticed = True
        check(noticed, "the accessibility check notices a field without a label")
        self.open(owner, "/dashboard")
        self.fill(owner, {"token": "cft_wrong", "email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        self.submit(owner, "Create the owner and sign in")
        check("not the bootstrap token" in self.text(owner), "a wrong bootstrap token is refused in words")
        self.fill(owner, {"token": self.token, "email": OWNER_EMAIL, "password": OWNER_PASSWORD})
        self.submit(owner, "Create the owner and sign in")
        check(owner.current_url.endswith("/dashboard"), "set-up signs the owner in")
        check("You are not in a team yet" in self.text(owner), "an owner without a team is told how to make one")
        self.shoot(owner, "02-no-team")
        self.click(owner, owner.find_element(By.LINK_TEXT, "Create a team"))
        self.fill(owner, {"name": "Flowers"})
        self.submit(owner, "Create team")
        check(owner.current_url.endswith("/dashboard"), "the new team's collections are shown")
        vera = json.loads(self.cli("member", "add", "--team", "Flowers", "--name", "vera", "--role", "viewer", "--json"))["invitation"]["code"]
        check("No collections yet" in self.text(owner), "the empty team says what to do next")
        self.shoot(owner, "02-collections-empty")
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "button.link"))
        check(owner.current_url.endswith("/dashboard/sign-in"), "sign-out goes to the sign-in page")
        self.fill(owner, {"email": OWNER_EMAIL, "password": "not the password"})
        self.submit(owner, "Sign in")
        check("The email address or the password is not right." in self.text(owner), "a wrong password gets the generic message")
        self.shoot(owner, "03-sign-in-error")
        # With the keyboard alone: the address, Tab to the password, Enter.
        email = owner.find_element(By.NAME, "email")
        email.clear()
        email.send_keys(OWNER_EMAIL)
        ActionChains(owner).send_keys(Keys.TAB).perform()
        check(owner.switch_to.active_element.get_attribute("name") == "password", "Tab goes from the address to the password")
        owner.execute_script("window.cofferPreviousPage = true")
        ActionChains(owner).send_keys(OWNER_PASSWORD + Keys.ENTER).perform()
        WebDriverWait(owner, 30).until(lambda d: d.execute_script("return !window.cofferPreviousPage && document.readyState === 'complete'"))
        check(owner.current_url.endswith("/dashboard"), "signed in again, with the keyboard alone")

        print("collections", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "New collection"))
        self.fill(owner, {"identifier": SCRIPT, "models": "A"})
        self.submit(owner, "Create collection")
        check(self.no_alert(owner), "markup typed as an identifier does not run")
        check(owner.find_element(By.NAME, "identifier").get_attribute("value") == SCRIPT, "the refused identifier is shown back as text")
        check("collection identifier is 1 to 100" in self.text(owner), "the refusal says what is wrong")
        self.shoot(owner, "04-collection-form-error")
        self.fill(owner, {"identifier": "FlowerModels", "description": "Flower classifier and stylizer of the iOS app",
                          "models": "FlowerClassifier, FlowerStylizer"})
        self.submit(owner, "Create collection")
        check(owner.current_url.endswith("/dashboard/teams/Flowers/collections/FlowerModels"), "the new collection's page opens")
        check("No deployments yet" in self.text(owner), "a collection without deployments says how to make one")
        self.open(owner, "/dashboard/teams/Flowers/collections/new")
        self.fill(owner, {"identifier": "Sandbox", "description": SCRIPT, "models": "A"})
        self.submit(owner, "Create collection")
        self.open(owner, "/dashboard")
        check(self.no_alert(owner), "a description with markup does not run")
        check(SCRIPT in self.text(owner), "a description with markup shows as text")

        print("deployments made in the browser", flush=True)
        # Keys and sealing stay on the developer's machine (the CLI); uploads, deployments and rules are the browser's.
        key = os.path.join(self.work, "Flowers.modelkey")
        self.cli("key", "create", "--team", "Flowers", "--name", "flowers", "--output", key)
        for name, size in [("classifier", 4096), ("stylizer", 4096), ("spare", 8192), ("other", 8192)]:
            with open(os.path.join(self.work, name + ".bin"), "wb") as f:
                f.write(os.urandom(size))
            self.cli("encrypt", os.path.join(self.work, name + ".bin"), "--key", key, "--output", os.path.join(self.work, name + ".coffer"), "--quiet")
        # A real Core ML classifier (the inspection fixture), so the deployment page has facts to show.
        fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "ModelInspectionTests", "Fixtures", "Classifier.mlmodel")
        shutil.copy(fixture, os.path.join(self.work, "classifier-large.mlmodel"))
        self.cli("encrypt", os.path.join(self.work, "classifier-large.mlmodel"), "--key", key, "--output",
                 os.path.join(self.work, "classifier-large.coffer"), "--quiet")
        page = "/dashboard/teams/Flowers/collections/FlowerModels"
        self.open(owner, page)
        self.click(owner, owner.find_element(By.LINK_TEXT, "New deployment"))
        check(owner.current_url.endswith(page + "/deployments/new"), "New deployment opens the form")
        check("Upload a model for FlowerClassifier first" in self.text(owner), "the empty model list says to upload first")
        self.shoot(owner, "04a-deployment-new-empty")
        status = self.upload(owner, 0, os.path.join(self.work, "classifier.bin"))
        check("not a valid Coffer container" in status, "a file that is not a sealed model is refused in words")
        self.upload(owner, 0, os.path.join(self.work, "classifier.coffer"))
        # The team's quota (TEAM_QUOTA) leaves room for spare.coffer once. Sent again, its size is
        # refused for the quota; the script then hashes it and sends it naming its SHA-256, and
        # bytes the server has cost nothing. New bytes of the same size stay refused.
        self.upload(owner, 1, os.path.join(self.work, "spare.coffer"))
        status = self.upload(owner, 1, os.path.join(self.work, "spare.coffer"))
        check(status.startswith("Uploaded spare.coffer"), "a model the server stores is uploaded again near the quota: " + status)
        # Its copy on the server's disk damaged, the script's question is answered stored_damaged
        # and it sends the file, which costs nothing and replaces the copy.
        spare = os.path.join(self.work, "spare.coffer")
        with open(spare, "rb") as f:
            address = hashlib.sha256(f.read()).hexdigest()
        copy = os.path.join(self.work, "data", "blobs", address[:2], address)
        os.truncate(copy, 100)
        status = self.upload(owner, 1, spare)
        check(status.startswith("Uploaded spare.coffer") and os.path.getsize(copy) == os.path.getsize(spare),
              "a damaged copy is replaced near the quota: " + status)
        status = self.upload(owner, 1, os.path.join(self.work, "other.coffer"))
        check("COFFER_TEAM_QUOTA_BYTES" in status, "new bytes past the team's quota are refused in words")
        self.upload(owner, 1, os.path.join(self.work, "stylizer.coffer"))
        check(owner.find_element(By.CSS_SELECTOR, "form.upload progress").get_attribute("value") == "100", "the progress bar reached 100 %")
        classifier = self.chosen(owner, "model-0")
        check(len(classifier) == 64 and len(self.chosen(owner, "model-1")) == 64, "each upload is chosen in the deployment form")
        self.fill(owner, {"name": "spring"})
        self.shoot(owner, "04b-deployment-new")
        self.submit(owner, "Create deployment")
        check(owner.current_url.startswith(self.base + page + "/deployments/"), "the new deployment's page opens")
        check(classifier in self.text(owner) and "No facts recorded" in self.text(owner), "the page shows each model's SHA-256 and that no facts are recorded")
        self.submit(owner, "Activate")
        check(owner.current_url.endswith(page), "activating goes back to the collection")
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring"), "spring is active")

        print("a tablet rule, by cloning", flush=True)
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "a[aria-label='Clone spring']"))
        check(owner.find_element(By.NAME, "name").get_attribute("value") == "spring-copy", "the clone form starts from spring")
        large = self.upload(owner, 0, os.path.join(self.work, "classifier-large.coffer"))
        large = self.chosen(owner, "model-0")
        owner.find_element(By.CSS_SELECTOR, f"#model-0 option[value='{classifier}']").click()
        check(self.chosen(owner, "model-0") == classifier, "the default goes back to spring's classifier")
        self.fill(owner, {"name": "spring-tablets", "rules": "deviceClass=toaster : FlowerClassifier=" + large[:12]})
        self.submit(owner, "Create the clone")
        check("Line 1: Unknown device class" in self.text(owner), "a bad rule is refused in words next to the form")
        check(owner.find_element(By.NAME, "rules").get_attribute("value").startswith("deviceClass=toaster"), "the typed rule is kept")
        self.shoot(owner, "04c-deployment-clone-error")
        self.fill(owner, {"rules": "deviceClass=tablet : FlowerClassifier=" + large[:12]})
        self.submit(owner, "Create the clone")
        check("Rule 1" in self.text(owner) and large in self.text(owner), "the clone's page shows its tablet rule and model")
        self.cli("blob", "upload", os.path.join(self.work, "classifier-large.coffer"), "--team", "Flowers", "--key", key)
        owner.refresh()
        check("Core ML model (.mlmodel)" in self.text(owner) and "class label" in self.text(owner), "facts the CLI recorded show on the deployment page")
        self.shoot(owner, "04d-deployment")
        self.open(owner, page)
        self.click(owner, owner.find_element(By.LINK_TEXT, "FlowerClassifier"))
        check("Core ML model (.mlmodel)" in self.text(owner) and "spring-tablets (rule 1)" in self.text(owner)
              and "spring (default, active)" in self.text(owner), "the model's page lists its versions, their facts and the deployments naming them")
        self.shoot(owner, "04e-model")

        print("activate, target, roll back", flush=True)
        self.open(owner, page)
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "button[aria-label='Activate spring-tablets']"))
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring-tablets"), "spring-tablets is active")
        self.shoot(owner, "05-collection")
        self.click(owner, owner.find_element(By.LINK_TEXT, "What would a device get?"))
        self.fill(owner, {"deviceID": "ipad-1", "deviceClass": "tablet"})
        self.submit(owner, "Show the answer")
        answer = owner.find_element(By.CSS_SELECTOR, ".answer").text
        check("rule 1: deviceClass=tablet" in answer, "a tablet gets the tablet rule")
        check("spring-tablets" in answer and "FlowerClassifier" in answer and "FlowerStylizer" in answer, "the answer lists both models")
        self.shoot(owner, "06-device-tablet")
        self.fill(owner, {"deviceID": "phone-1", "deviceClass": "phone"})
        self.submit(owner, "Show the answer")
        check("the defaults" in owner.find_element(By.CSS_SELECTOR, ".answer").text, "a phone gets the defaults")
        self.open(owner, page)
        self.submit(owner, "Roll back")
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring "), "rolled back to spring")
        check("rollback" in owner.find_element(By.CSS_SELECTOR, "table.history").text, "the history shows the rollback")
        self.shoot(owner, "07-collection-rolled-back")

        print("a staged rollout, halted by hand", flush=True)
        self.click(owner, owner.find_element(By.LINK_TEXT, "spring-tablets"))
        owner.find_element(By.XPATH, "//summary[normalize-space()='Activate in stages']").click()
        self.fill(owner, {"stages": "50,100", "stageHours": "24", "haltAt": "5", "minReports": "20"})
        self.submit(owner, "Start the staged rollout")
        check("staged: stage 1 of 2 (50 %)" in self.text(owner), "the deployment's page shows the stage it is at")
        self.shoot(owner, "07b-deployment-staged")
        self.fill(owner, {"reason": "labels look wrong"})
        self.submit(owner, "Halt: every device back to the previous deployment")
        check("halted: by " in self.text(owner) and ": labels look wrong" in self.text(owner), "the halt and its reason are on the page")
        self.open(owner, page)
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring "), "after the halt spring is active again")
        check("halt" in owner.find_element(By.CSS_SELECTOR, "table.history").text, "the history shows the halt")
        check("Adoption" in self.text(owner), "the collection page has the adoption chart")
        self.open(owner, "/dashboard/signing-key")
        check(len(owner.find_element(By.ID, "public-key").get_attribute("value").strip()) == 44, "the signing key page shows the public key")
        self.shoot(owner, "08-signing-key")
        self.click(owner, owner.find_element(By.CSS_SELECTOR, "a.user"))
        check(OWNER_EMAIL in self.text(owner) and "Change your password" in self.text(owner), "the account page shows the sign-in address")
        self.shoot(owner, "08-account")

        print("forged forms", flush=True)
        self.open(owner, page)
        action = owner.find_element(By.CSS_SELECTOR, "button[aria-label='Activate spring-tablets']").find_element(By.XPATH, "..").get_attribute("action")
        path = urllib.parse.urlparse(action).path
        check(self.post(owner, path, {}) == 403, "a POST without the CSRF token is refused (403)")
        check(self.post(owner, path, {"csrf": "forged"}) == 403, "a POST with a wrong CSRF token is refused (403)")
        self.open(owner, page)
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring "), "the forged forms changed nothing")

        print("a viewer", flush=True)
        viewer = self.browser()
        self.open(viewer, "/dashboard/join")
        self.fill(viewer, {"code": vera, "name": "vera", "email": VIEWER_EMAIL, "password": VIEWER_PASSWORD})
        self.submit(viewer, "Join")
        check(viewer.current_url.endswith("/dashboard"), "the viewer made her own account with the invitation")
        check("New collection" not in self.text(viewer), "a viewer gets no New collection button")
        self.open(viewer, page)
        check("spring-tablets" in self.text(viewer), "a viewer sees the deployments")
        check(not viewer.find_elements(By.CSS_SELECTOR, "main form[method='post']"), "a viewer gets no change forms")
        self.shoot(viewer, "09-collection-viewer")
        status = self.post(viewer, path, {"csrf": self.csrf(viewer)})
        check(status == 403, f"a viewer's activation with a valid CSRF token is refused (403, got {status})")
        rollback = path.rsplit("/deployments", 1)[0] + "/rollback"
        check(self.post(viewer, rollback, {"csrf": self.csrf(viewer)}) == 403, "a viewer's rollback is refused (403)")
        self.open(owner, page)
        check(owner.find_element(By.CSS_SELECTOR, ".deployment.is-active h3").text.startswith("spring "), "the viewer changed nothing")
        self.click(viewer, viewer.find_element(By.CSS_SELECTOR, "button.link"))
        self.open(viewer, page)
        check(viewer.current_url.endswith("/dashboard/sign-in"), "after sign-out the pages need a sign-in again")
        self.shoot(viewer, "10-sign-in")

    def close(self):
        for driver in self.drivers:
            try:
                driver.quit()
            except Exception:
                pass
        if self.server:
            self.server.terminate()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
        subprocess.run(["rm", "-rf", self.work])


def run_story(make_run, label="browser tests", failure_prefix="failure"):
    """Parses the command line, runs `make_run(arguments).story()`, saves a screenshot of every
    browser when it fails, and returns the exit status (also used by admin_test.py)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=".build/debug", help="folder with coffer and coffer-server")
    parser.add_argument("--artifacts", default=".build/browser-artifacts", help="where screenshots and the server log go")
    run = make_run(parser.parse_args())
    started = time.time()
    try:
        run.story()
    except Exception as failure:  # a check, or the browser itself: either fails the run
        print(f"FAILED: {type(failure).__name__}: {failure}", file=sys.stderr)
        for index, driver in enumerate(run.drivers):
            try:
                driver.save_screenshot(os.path.join(run.artifacts, f"{failure_prefix}-{index}.png"))
            except Exception:
                pass
        return 1
    finally:
        run.close()
    print(f"{label} passed in {time.time() - started:.0f} s; screenshots in {run.artifacts}")
    return 0


if __name__ == "__main__":
    sys.exit(run_story(Run))
