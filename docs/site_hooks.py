"""MkDocs hooks of the documentation site (``hooks:`` in ``mkdocs.yml``).

A screenshot that stands in a paragraph of its own is shrunk to the page's width, where its text cannot be read;
it becomes a link to the full-size image (class ``full-size``, styled in ``stylesheets/site.css``).
"""

from __future__ import annotations

import re
from typing import Any

STANDALONE_IMAGE = re.compile(r'<p>(?P<img><img\b[^>]*\bsrc="(?P<src>[^"]+)"[^>]*>)</p>')


def on_page_content(html: str, **kwargs: Any) -> str:
    """``html`` with every image that is a paragraph of its own wrapped in a link to itself."""
    return STANDALONE_IMAGE.sub(r'<p><a class="full-size" href="\g<src>" title="full size">\g<img></a></p>', html)
