// The wizard (/wizard/): copy buttons that survive htmx swaps, and focus on the new step.
// Without JavaScript every step is a plain GET form and the commands stay selectable text.
(function () {
  function showCopyButtons(root) {
    if (!navigator.clipboard) return;
    root.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
      if (document.getElementById(button.dataset.copy)) button.hidden = false;
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.copy[data-copy]");
    if (!button || !navigator.clipboard) return;
    var source = document.getElementById(button.dataset.copy);
    if (!source) return;
    var label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    navigator.clipboard.writeText(source.textContent.trim()).then(
      function () { button.textContent = "Copied"; },
      function () { button.textContent = "Copy failed — select the text"; }
    ).then(function () {
      setTimeout(function () { button.textContent = label; }, 2000);
    });
  });
  document.addEventListener("DOMContentLoaded", function () {
    showCopyButtons(document);
    // A page with answers (after a paste, a shared link, a step without htmx) opens on the
    // answer or the next question, not on the paste form above them.
    if (!location.search || location.hash) return;
    var target = document.querySelector("#result, #wizard .wizard-step");
    if (target) target.scrollIntoView({ block: "start" });
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    var wizard = document.getElementById("wizard");
    if (!wizard) return;
    showCopyButtons(wizard);
    var target = wizard.querySelector("#result h2, .wizard-step legend");
    if (target) {
      target.setAttribute("tabindex", "-1");
      target.focus({ preventScroll: false });
    }
  });
})();
