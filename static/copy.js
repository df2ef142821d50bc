// Copy buttons: <button data-copy="#field-id" data-copied="Copied" hidden>. The button stays
// hidden without JavaScript (the read-only field can still be selected and copied by hand);
// here it is shown and copies the field's value, then says so for a moment.
(function () {
  "use strict";
  function copy(button) {
    var field = document.querySelector(button.getAttribute("data-copy"));
    if (!field) { return; }
    var label = button.textContent;
    function done() {
      button.textContent = button.getAttribute("data-copied") || label;
      window.setTimeout(function () { button.textContent = label; }, 2000);
    }
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, function () {
        document.execCommand("copy");
        done();
      });
    } else {
      document.execCommand("copy");
      done();
    }
  }
  function start() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () { copy(button); });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
