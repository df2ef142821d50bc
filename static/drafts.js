// Warns before leaving a page where something typed could still be lost: a form marked
// data-unsaved-warning that was changed since it was last submitted or autosaved (htmx keeps
// drafts as the reader types; a change made while a save is on its way counts as unsaved).
// Without JavaScript nothing warns, but every button of those pages keeps drafts first.
(function () {
  "use strict";
  function watch(form) {
    var changes = 0;
    var saved = 0;
    var sent = 0;
    function changed() { changes += 1; }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", function () { saved = changes; });
    form.addEventListener("htmx:beforeRequest", function () { sent = changes; });
    form.addEventListener("htmx:afterRequest", function (event) {
      if (event.detail.successful) { saved = Math.max(saved, sent); }
    });
    window.addEventListener("beforeunload", function (event) {
      if (changes > saved) {
        event.preventDefault();
        event.returnValue = "";
      }
    });
  }
  function start() {
    document.querySelectorAll("form[data-unsaved-warning]").forEach(watch);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
