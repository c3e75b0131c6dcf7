// The matrix's filter form (/variants/): before htmx sends it, drop empty fields and fields at
// their default (form[data-defaults]), so the pushed address holds only the real selection.
// Without JavaScript the server redirects a form sent with empty fields to the same clean URL.
document.addEventListener("htmx:configRequest", function (event) {
  var form = event.detail.elt.closest && event.detail.elt.closest("form[data-defaults]");
  if (!form || event.detail.verb !== "get") return;
  var data = event.detail.formData;
  var defaults = new URLSearchParams(form.dataset.defaults);
  var keep = [];
  data.forEach(function (value, name) {
    if (value !== "" && defaults.get(name) !== value) keep.push([name, value]);
  });
  Array.from(new Set(data.keys())).forEach(function (name) { data.delete(name); });
  keep.forEach(function (pair) { data.append(pair[0], pair[1]); });
});

// A branch is written "<repository>/<branch>" in every link; the form encodes the slash, which
// would put a second spelling of the same selection in the address bar.
document.addEventListener("htmx:beforeHistoryUpdate", function (event) {
  var history = event.detail.history;
  if (history && history.path) history.path = history.path.replace(/%2F/gi, "/");
});
