from django.core.management.base import BaseCommand

from catalog.audit import run_audit


class Command(BaseCommand):
    help = (
        "List where the seeds contradict each other or the recipes' flags, count mismatches and "
        "records that fail validation. Exit 0 when only known, recorded findings remain; 1 otherwise."
    )

    def add_arguments(self, parser):
        parser.add_argument("--verified", action="store_true", help="also list the claims that hold")

    def handle(self, *args, **options):
        result = run_audit()
        for title, findings, style in (
            ("New findings", result.new, self.style.ERROR),
            ("Known findings (recorded)", result.known, self.style.WARNING),
        ):
            self.stdout.write(style(f"{title}: {len(findings)}"))
            for f in findings:
                self.stdout.write(f"- [{f.kind}] {f.key} ({f.subject}): {f.message}")
                if f.statement:
                    self.stdout.write(f"    seed says: {f.statement}")
                if f.source:
                    self.stdout.write(f"    source: {f.source}")
                if f.resolution:
                    self.stdout.write(f"    catalogue: {f.resolution}")
        self.stdout.write(f"Claims verified: {len(result.verified)}")
        if options["verified"]:
            for v in result.verified:
                self.stdout.write(f"- {v.key} ({v.subject}): {v.statement} [{v.source}]")
        if not result.ok:
            self.stderr.write(self.style.ERROR(f"{len(result.new)} new finding(s): record or fix them."))
            raise SystemExit(1)
        self.stdout.write(self.style.SUCCESS("Only known, recorded findings remain."))
