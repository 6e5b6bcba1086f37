// The keys page: creating a key answers with its file as a download, so the page stays as it
// was. Once the download has had time to start, show the page again so the new key is listed.
// Without this script the page says to reload; nothing else depends on it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form[data-download]");
  if (!form) return;
  form.addEventListener("submit", function () {
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    window.setTimeout(function () { window.location.replace(form.getAttribute("data-done")); }, 2000);
  });
});
