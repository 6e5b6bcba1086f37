// The keys page: creating a key answers with its file as a download, so the page stays as it
// was. Leaving the page before that answer arrives would cancel the download, and with it the
// only copy of the key: the form sends a random ticket, the answer sets the cookie
// coffer_download_TICKET as the download begins, and only then (a second later) is the page shown
// again with the new key listed. Without this script the page says to reload; nothing else depends on it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form[data-download]");
  if (!form) return;
  form.addEventListener("submit", function () {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    var ticket = Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
    var field = form.querySelector("input[name=ticket]");
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = "ticket";
      form.appendChild(field);
    }
    field.value = ticket;
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    var cookie = "coffer_download_" + ticket;
    var started = Date.now();
    var timer = window.setInterval(function () {
      var found = document.cookie.split("; ").indexOf(cookie + "=1") >= 0;
      if (button && Date.now() - started > 60000) button.disabled = false;  // stopped, or very slow: may be sent again
      if (found) {
        window.clearInterval(timer);
        document.cookie = cookie + "=; Path=/dashboard; Max-Age=0; SameSite=Strict";
        // The cookie is stored as the answer's headers arrive, a moment before the browser has
        // made the answer a download: leave it that moment (the file is a few hundred bytes).
        window.setTimeout(function () { window.location.replace(form.getAttribute("data-done")); }, 1000);
      } else if (Date.now() - started > 300000) {
        window.clearInterval(timer);  // no answer in five minutes: the request failed
      }
    }, 200);
  });
});
