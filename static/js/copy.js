// Copy buttons for command blocks: <button class="copy" data-copy="ID" hidden>.
// The buttons stay hidden without JavaScript (or without a clipboard); the command text itself
// is always selectable. Blocks that htmx swaps in later (the selector's commands) get theirs too.
(function () {
  if (!navigator.clipboard) return;
  function reveal(root) {
    root.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
      if (document.getElementById(button.dataset.copy)) button.hidden = false;
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.copy[data-copy]");
    if (!button) return;
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
  reveal(document);
  document.addEventListener("htmx:afterSettle", function () { reveal(document); });
})();
