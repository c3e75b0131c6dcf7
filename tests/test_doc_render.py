"""catalog.doc_render: guide Markdown → sanitised HTML with highlighting, anchors and a contents
list."""

from catalog.doc_render import render

DOC = """\
## Build a variant

Some text with `code`.

### On a GPU machine

```bash
flox build pytorch-python313-cuda12_8-sm90-avx512
```

| ISA | Flags |
|:----|------:|
| avx2 | -mavx2 |
"""


def test_headings_get_ids_and_permalinks():
    html = render(DOC).html
    assert '<h2 id="build-a-variant">' in html
    assert 'href="#build-a-variant"' in html
    assert '<h3 id="on-a-gpu-machine">' in html


def test_table_of_contents_lists_the_headings_nested():
    rendered = render(DOC)
    assert rendered.has_toc
    assert 'href="#build-a-variant"' in rendered.toc
    # The h3 sits in a list inside the h2's item.
    assert rendered.toc.index("#build-a-variant") < rendered.toc.index("#on-a-gpu-machine")
    assert rendered.toc.count("<ul>") == 2


def test_no_headings_no_table_of_contents():
    rendered = render("Just a paragraph.")
    assert not rendered.has_toc
    assert rendered.toc == ""


def test_fenced_code_is_highlighted_with_css_classes():
    html = render(DOC).html
    assert '<div class="highlight">' in html
    assert '<span class="w">' in html  # Pygments token classes survive sanitising
    assert "style=" not in html.split('<div class="highlight">')[1].split("</div>")[0]


def test_tables_render_with_alignment_as_classes():
    html = render(DOC).html
    assert "<table>" in html
    # Classes, not style attributes: the Content-Security-Policy allows no inline styles.
    assert '<th class="align-left">ISA</th>' in html
    assert '<td class="align-right">-mavx2</td>' in html
    assert "style=" not in html


def test_script_tags_are_removed_with_their_content():
    html = render(
        "Hello\n\n<script>alert('x')</script>\n\n<SCRIPT SRC=//evil.example/x.js></SCRIPT>"
    ).html
    assert "<script" not in html.lower()
    assert "alert" not in html
    assert "evil.example" not in html


def test_event_handlers_and_javascript_urls_are_stripped():
    html = render(
        '<img src="x.png" onerror="alert(1)">\n\n'
        '<a href="javascript:alert(2)" onclick="alert(3)">x</a>\n\n'
        "[y](javascript:alert(4))\n\n"
        '<div onmouseover="alert(5)" style="position:fixed">z</div>'
    ).html
    lowered = html.lower()
    assert "onerror" not in lowered
    assert "onclick" not in lowered
    assert "onmouseover" not in lowered
    assert "javascript:" not in lowered
    assert "position:fixed" not in lowered
    assert '<img src="x.png">' in html  # the harmless part stays


def test_iframes_forms_and_styles_do_not_come_through():
    html = render(
        '<iframe src="https://example.org"></iframe>\n\n'
        '<form action="/x"><input></form>\n\n'
        "<style>body{display:none}</style>"
    ).html
    assert "<iframe" not in html
    assert "<form" not in html
    assert "<input" not in html
    assert "display:none" not in html


def test_links_keep_their_target():
    html = render(
        "See [build times](/docs/build-times/) and [nixpkgs](https://github.com/NixOS/nixpkgs)."
    ).html
    assert 'href="/docs/build-times/"' in html
    assert 'href="https://github.com/NixOS/nixpkgs"' in html
