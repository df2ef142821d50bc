// Questions shown or hidden as the answers change, without losing a keystroke.
//
// A form of questions autosaves with htmx (hx-post, hx-swap="none"). When an answer shows or
// hides other questions, the autosave's answer carries each question it turned in a
// <template data-question="CODE">: the question as now asked, or the reason it is no longer
// asked. Here each one is shown or hidden in place:
// - a question hidden: its inputs stay where they are (hidden, with whatever they hold) and the
//   reason is shown beside them;
// - a question asked again: the inputs it kept are shown again;
// - a question the page holds no input for: the new markup takes the place of the old.
// No input on the page is ever replaced, so what is typed while an autosave is on its way (the
// focused field included) is never lost. Each autosave also says which questions the page
// shows as not asked, so the answer describes this page's changes.
//
// While an input method composes (Chinese, Japanese…), nothing is autosaved: the save waits
// for the composition to end, so a half-composed "mei" is never kept as a draft.
// Without JavaScript none of this runs: every button posts the whole form.
(function () {
  "use strict";
  var NOT_ASKED_FIELD = "questions_not_asked";
  var composing = false;

  function questionForm(element) {
    return element && element.matches && element.matches("form[hx-post]") &&
      element.querySelector("[data-question]") ? element : null;
  }

  function notAskedOnPage(form) {
    var codes = [];
    form.querySelectorAll("[data-question].not-applicable").forEach(function (question) {
      codes.push(question.dataset.question);
    });
    return codes.join(",");
  }

  function directChild(element, className) {
    for (var i = 0; i < element.children.length; i += 1) {
      if (element.children[i].classList.contains(className)) { return element.children[i]; }
    }
    return null;
  }

  function turn(current, fresh) {
    var asked = directChild(current, "question-asked");
    if (!asked) {
      // No input here (not asked, or shown read-only): draw the question as it is now.
      var drawn = document.importNode(fresh, true);
      current.replaceWith(drawn);
      if (window.htmx) { window.htmx.process(drawn); }
      return;
    }
    var note = directChild(current, "question-not-applicable");
    var freshNote = directChild(fresh, "question-not-applicable");
    if (freshNote) {
      asked.hidden = true;
      var shownNote = document.importNode(freshNote, true);
      if (note) { note.replaceWith(shownNote); } else { current.appendChild(shownNote); }
      current.classList.add("not-applicable");
      return;
    }
    asked.hidden = false;
    if (note) { note.remove(); }
    current.classList.remove("not-applicable");
    var marker = fresh.querySelector(".draft-marker");
    var keptMarker = marker && current.querySelector("#" + CSS.escape(marker.id));
    if (keptMarker) { keptMarker.replaceWith(document.importNode(marker, true)); }
  }

  function applyTurned(form, responseText) {
    if (!responseText || responseText.indexOf("data-question") === -1) { return; }
    var parsed = new DOMParser().parseFromString(responseText, "text/html");
    parsed.querySelectorAll("template[data-question]").forEach(function (template) {
      var current = form.querySelector(
        "[data-question=\"" + CSS.escape(template.dataset.question) + "\"]"
      );
      var fresh = template.content.firstElementChild;
      if (current && fresh) { turn(current, fresh); }
    });
  }

  document.addEventListener("compositionstart", function () { composing = true; }, true);
  document.addEventListener("compositionend", function (event) {
    composing = false;
    // What the composition produced is now typed: let the autosave (whose requests were held
    // meanwhile) start its count again.
    if (event.target && event.target.form && questionForm(event.target.form)) {
      event.target.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }, true);

  document.addEventListener("htmx:confirm", function (event) {
    if (composing && questionForm(event.detail.elt)) { event.preventDefault(); }
  });

  document.addEventListener("htmx:configRequest", function (event) {
    var form = questionForm(event.detail.elt);
    if (form) { event.detail.parameters[NOT_ASKED_FIELD] = notAskedOnPage(form); }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = questionForm(event.detail.elt);
    if (form && event.detail.xhr) { applyTurned(form, event.detail.xhr.responseText); }
  });
})();
