"""Renderers: solved sheets as Markdown, LaTeX and JSON. They never solve or read specs."""

from renderers import json_out, latex, markdown

FORMATS = {"md": markdown.render, "tex": latex.render, "json": json_out.render}

__all__ = ["FORMATS"]
