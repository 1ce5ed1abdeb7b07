"""The reproduction report (``index.html``, ``summary.md``, ``results/``): :mod:`.model` says what
the report says, as strings; :mod:`.tables` formats the comparison tables; :mod:`.figures`
draws; the Jinja2 templates in ``templates/`` (package data) are the markup, rendered with
autoescape by :mod:`.render`; :mod:`.robustness` is the robustness section; :mod:`.write`
writes the files.

This package's own module imports nothing, so that a light module of it (``tables``) does not
pull in pandas and matplotlib.
"""
