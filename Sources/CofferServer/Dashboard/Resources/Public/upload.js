// Coffer dashboard: uploads a sealed model from the new-deployment and clone pages with a progress
// bar, without leaving the page, then chooses it in the deployment form. Without this script the
// same forms post as multipart/form-data and the server sends the page back with the model chosen.
// A team at its storage quota may still choose a model the server stores already: refused for the
// quota, the script hashes the file (SHA-256, in the browser) and asks, with that hash and an empty
// body, whether the server has it: bytes it stores cost no quota. (Not the file again: a browser
// sends a body whole before it reads the answer.)
// Loaded as a file: the Content-Security-Policy allows no inline script. Writes text only, never HTML.
(function () {
  'use strict';

  function choose(select, sha256, label) {
    var option = Array.prototype.find.call(select.options, function (o) { return o.value === sha256; });
    if (!option) {
      option = new Option(label, sha256);
      select.add(option, 1);
    }
    select.value = sha256;
  }

  // The largest file hashed in the browser to retry a refusal for the quota: WebCrypto hashes a
  // whole buffer, so the file is read into memory once.
  var largestHashed = 1024 * 1024 * 1024;

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }

  // Whether a refusal is worth a second try with the file's hash: the quota, a file small enough to
  // hash here, and WebCrypto (only in a secure context: HTTPS or this machine).
  function canDeclare(xhr, body, file) {
    return xhr.status === 413 && body.code === 'quota_exceeded' && file.size <= largestHashed &&
      window.crypto && window.crypto.subtle && typeof file.arrayBuffer === 'function';
  }

  function upload(form, event) {
    var input = form.querySelector('input[type=file]');
    var file = input.files && input.files[0];
    if (!file) { return; } // the browser's own "required" message
    event.preventDefault();
    send(form, input, file, null, null);
  }

  // Sends `file`; with `sha256` and `refusal` (the quota's answer, shown again if the server does
  // not have the file) only the question whether the server stores it; with `sha256` alone the
  // file declared (the server's copy is damaged: sending it again is free, and replaces it).
  function send(form, input, file, sha256, refusal) {
    var asking = Boolean(sha256 && refusal);
    var bar = form.querySelector('progress');
    var status = form.querySelector('.upload-status');
    var button = form.querySelector('button[type=submit]');
    var select = document.getElementById(form.getAttribute('data-target'));
    var xhr = new XMLHttpRequest();
    xhr.open('POST', form.action);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.setRequestHeader('X-CSRF-Token', form.querySelector('input[name=csrf]').value);
    if (sha256) { xhr.setRequestHeader('X-Coffer-SHA256', sha256); }
    xhr.responseType = 'json';
    bar.hidden = false;
    bar.value = 0;
    button.disabled = true;
    status.className = 'hint upload-status';
    status.textContent = (asking ? 'Checking whether the server already has ' : 'Uploading ') + file.name + '…';
    xhr.upload.onprogress = function (e) {
      if (e.lengthComputable && e.total > 0 && !asking) {
        bar.value = Math.floor(e.loaded * 100 / e.total);
        status.textContent = 'Uploading ' + file.name + ': ' + bar.value + ' %';
      }
    };
    xhr.onload = function () {
      button.disabled = false;
      var body = xhr.response || {};
      if (xhr.status === 201 && body.sha256) {
        bar.value = 100;
        status.className = 'hint upload-status ok';
        status.textContent = 'Uploaded ' + file.name + ': ' + body.label + '. It is chosen below.';
        if (select) { choose(select, body.sha256, body.label); }
        input.value = '';
      } else if (asking && xhr.status === 409 && body.code === 'stored_damaged') {
        send(form, input, file, sha256, null);
      } else if (!sha256 && canDeclare(xhr, body, file)) {
        button.disabled = true;
        status.textContent = 'Checking whether the server already has ' + file.name + '…';
        file.arrayBuffer().then(function (bytes) {
          return window.crypto.subtle.digest('SHA-256', bytes);
        }).then(function (digest) {
          send(form, input, file, hex(digest), body.reason);
        }, function () {
          button.disabled = false;
          bar.hidden = true;
          status.className = 'hint upload-status error';
          status.textContent = body.reason;
        });
      } else {
        bar.hidden = true;
        status.className = 'hint upload-status error';
        status.textContent = (asking && body.code === 'not_stored' && refusal) || body.reason || ('The upload was refused (HTTP ' + xhr.status + ').');
      }
    };
    xhr.onerror = function () {
      button.disabled = false;
      bar.hidden = true;
      status.className = 'hint upload-status error';
      status.textContent = 'The upload stopped: the server refused it or the connection broke. Check that the file is a sealed model (.coffer) and try again.';
    };
    xhr.send(asking ? new Uint8Array(0) : file);
  }

  Array.prototype.forEach.call(document.querySelectorAll('form.upload'), function (form) {
    form.addEventListener('submit', function (event) { upload(form, event); });
  });
})();
