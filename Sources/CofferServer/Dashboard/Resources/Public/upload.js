// Coffer dashboard: uploads a sealed model from the new-deployment and clone pages with a progress
// bar, without leaving the page, then chooses it in the deployment form. Without this script the
// same forms post as multipart/form-data and the server sends the page back with the model chosen.
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

  function upload(form, event) {
    var input = form.querySelector('input[type=file]');
    var file = input.files && input.files[0];
    if (!file) { return; } // the browser's own "required" message
    event.preventDefault();
    var bar = form.querySelector('progress');
    var status = form.querySelector('.upload-status');
    var button = form.querySelector('button[type=submit]');
    var select = document.getElementById(form.getAttribute('data-target'));
    var xhr = new XMLHttpRequest();
    xhr.open('POST', form.action);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.setRequestHeader('X-CSRF-Token', form.querySelector('input[name=csrf]').value);
    xhr.responseType = 'json';
    bar.hidden = false;
    bar.value = 0;
    button.disabled = true;
    status.className = 'hint upload-status';
    status.textContent = 'Uploading ' + file.name + '…';
    xhr.upload.onprogress = function (e) {
      if (e.lengthComputable) {
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
      } else {
        bar.hidden = true;
        status.className = 'hint upload-status error';
        status.textContent = body.reason || ('The upload was refused (HTTP ' + xhr.status + ').');
      }
    };
    xhr.onerror = function () {
      button.disabled = false;
      bar.hidden = true;
      status.className = 'hint upload-status error';
      status.textContent = 'The upload stopped: the server refused it or the connection broke. Check that the file is a sealed model (.coffer) and try again.';
    };
    xhr.send(file);
  }

  Array.prototype.forEach.call(document.querySelectorAll('form.upload'), function (form) {
    form.addEventListener('submit', function (event) { upload(form, event); });
  });
})();
