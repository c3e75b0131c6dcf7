import os

from django.core.wsgi import get_wsgi_application

from catalog.middleware import ChunkedBodyLimit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
# A chunked body is read, bounded, before Django builds its request: see catalog.middleware.
application = ChunkedBodyLimit(get_wsgi_application())
