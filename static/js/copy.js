// Copy buttons for command blocks: <button class="copy" data-copy="ID" hidden>.
// The buttons stay hidden without JavaScript (or without a clipboard); the command text itself
// is always selectable.
(function () {
  if (!navigator.clipboard) return;
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.dataset.copy);
    if (!source) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent.trim()).then(
        function () { button.textContent = "Copied"; },
        function () { button.textContent = "Copy failed — select the text"; }
      ).then(function () {
        setTimeout(function () { button.textContent = label; }, 2000);
      });
    });
  });
})();
