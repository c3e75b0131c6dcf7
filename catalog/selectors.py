"""Read queries, each with the joins its page needs, so page query counts stay constant."""
from django.db.models import Count, Q

from catalog.models import Branch, CpuIsa, DocPage, GpuArchitecture


def branches_with_counts():
    return Branch.objects.annotate(
        variant_count=Count("variants"),
        gpu_count=Count("variants", filter=Q(variants__backend="cuda")),
    ).order_by("repository", "preference", "name")


def architectures_with_counts():
    return GpuArchitecture.objects.annotate(variant_count=Count("variants")).prefetch_related("models")


def isas_with_counts():
    return CpuIsa.objects.annotate(variant_count=Count("variants"))


def doc_pages():
    return DocPage.objects.only("slug", "title", "summary", "order")
