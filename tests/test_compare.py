"""/compare/: variants side by side, differing rows marked, recipe differences, 400s."""

import pytest

from catalog.browse.views.compare import recipe_diff
from catalog.models import Variant
from catalog.recipes.exporting import render_recipe

pytestmark = pytest.mark.django_db

A = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx512"
B = "build-pytorch/main/pytorch-python313-cuda12_8-sm90-avx2"
C = "build-pytorch/main/pytorch-python313-cuda12_8-sm61-avx"
D = "build-pytorch/main/pytorch-python313-darwin-mps"
E = "build-torchvision/main/torchvision-python313-cpu-armv9"


def text(response):
    return response.content.decode()


def get(client, *ids):
    return client.get("/compare/", {"v": list(ids)})


def test_two_variants_side_by_side_with_differences_marked(client):
    response = get(client, A, B)
    body = text(response)
    assert response.status_code == 200
    assert body.count('<tr class="differs">') >= 2  # package name, ISA, compiler flags
    isa_row = body.split("CPU ISA</th>")[1].split("</tr>")[0]
    assert "<td>AVX-512</td><td>AVX2</td>" in isa_row
    branch_row = body.split("Branch</th>")[1].split("</tr>")[0]
    assert body.split("Branch</th>")[0].endswith('<th scope="row">')  # not marked
    assert branch_row.count("<td>main</td>") == 2


def test_recipe_differences_are_highlighted(client):
    body = text(get(client, A, B))
    a = Variant.objects.get(pname=A.split("/")[2], branch__name="main")
    b = Variant.objects.get(pname=B.split("/")[2], branch__name="main")
    lines = recipe_diff(render_recipe(a), render_recipe(b), a.pname, b.pname)
    added = [line for kind, line in lines if kind == "add"]
    assert added and '<span class="diff-add">' in body
    assert any("avx2" in line for line in added)
    assert '<span class="diff-del">' in body


def test_recipe_diff_of_identical_text_is_empty():
    assert recipe_diff("a\nb\n", "a\nb\n", "x", "y") == []
    assert recipe_diff("a\n", "b\n", "x", "y")[1:] == [("del", "-a"), ("add", "+b")]


def test_four_variants_and_removal_links(client):
    body = text(get(client, A, B, C, D))
    assert body.count('class="remove"') == 4
    assert body.count("<h3><code>pytorch-python313-cuda12_8-sm90-avx512</code> →") == 3


def test_an_imported_recipe_is_compared_as_written(client):
    variant = Variant.objects.get(pname=B.split("/")[2], branch__name="main")
    variant.recipe_text = "# imported as written\n{ pkgs }: pkgs.hello\n"
    variant.save()
    body = text(get(client, A, B))
    assert '<span class="diff-add">+# imported as written</span>' in body


@pytest.mark.parametrize(
    "ids, message",
    [
        ([A], "Compare 2 to 4 variants"),
        ([], "Compare 2 to 4 variants"),
        ([A, B, C, D, E], "not 5"),
        ([A, "nonsense"], "&#x27;nonsense&#x27; is not a variant id"),
        ([A, "a//b"], "is not a variant id"),
        ([A, A], "is listed twice"),
        ([A, "build-pytorch/main/pytorch-python399-cpu-avx"], "No variant build-pytorch/main/"),
        ([A, "x" * 5000], "is not a variant id"),
    ],
)
def test_bad_selections_are_a_400_with_the_reason(client, ids, message):
    response = get(client, *ids)
    assert response.status_code == 400
    assert message in text(response)
    assert 'id="compare-error"' in text(response)


@pytest.mark.parametrize("ids", [(A, B), (A, B, C, D), (E, D)])
def test_compare_query_count_is_constant(client, django_assert_max_num_queries, ids):
    with django_assert_max_num_queries(1):
        assert get(client, *ids).status_code == 200


def test_variant_page_offers_compare_with(client):
    body = text(client.get(f"/variants/{A}/"))
    form = body.split('class="inline-form compare-with"')[1].split("</form>")[0]
    assert f'<input type="hidden" name="v" value="{A}">' in form
    assert f'<option value="{B}">' in form  # same branch, same GPU
    assert (
        'value="build-pytorch/pytorch-2.8-python312/pytorch-python312-cuda12_8-sm90-avx512"' in form
    )
    assert body.index('id="commands"') < body.index('id="fields"') < body.index('id="recipe"')


def test_ticked_checkboxes_redirect_to_the_compare_url(client):
    response = client.get("/compare/", {"compare": [A, B]})
    assert response.status_code == 302
    assert response["Location"] == "/compare/?" + "&".join(
        f"v={i.replace('/', '%2F')}" for i in (A, B)
    )


def test_branch_page_lists_variants_with_compare_checkboxes(client):
    body = text(client.get("/branches/build-pytorch/main/"))
    assert 'id="compare-form"' in body and 'action="/compare/"' in body
    assert f'name="compare" form="compare-form" value="{A}"' in body


def test_the_matrix_list_ticks_variants_into_the_compare_form(client):
    body = client.get("/variants/").content.decode()
    assert body.count('name="compare" form="compare-form"') == 50  # one per row of the page
    assert '<form id="compare-form"' in body
