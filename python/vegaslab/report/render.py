"""The report's HTML renderer: Jinja2 templates from ``vegaslab/report/templates/`` (package data),
with autoescape on for every template, so a value from a catalog file, a claim or a run can
never become markup. Only what vegaslab itself made as markup (a rendered section spliced
into the page, the robustness markers) is passed in as :class:`markupsafe.Markup`.

Undefined names are errors (``StrictUndefined``): a template that asks for a cell the model
does not give fails the report's tests instead of printing nothing."""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

__all__ = ["Markup", "environment", "render"]


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("vegaslab.report", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
