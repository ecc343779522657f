"""The lab's pages through Jinja2 templates in loadtest/report/: summary.md, report.html and the report's notes.
Python computes the figures and the facts; the templates hold every sentence around them."""

import os
from typing import List

import jinja2

from .results import markdown

REPORT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report")

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(REPORT_DIR),
    # HTML templates escape what they print; Markdown and plain text print it as it is.
    autoescape=jinja2.select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
_ENVIRONMENT.filters.update(markdown=markdown, g=lambda value: "%g" % value)


def render(name: str, **facts) -> str:
    """One template of loadtest/report/ filled with the facts."""
    return _ENVIRONMENT.get_template(name).render(**facts)


def paragraphs(name: str, **facts) -> List[str]:
    """A template whose every non-empty line is one paragraph (the report's notes), as a list."""
    return [line for line in render(name, **facts).splitlines() if line.strip()]
