"""The Python API reference: HTML pages generated from the docstrings by pdoc, published with the site as `site/api/`.

`roofline build` writes them (`pages()`); `build --check` compares them byte for
byte, so everything in them is a function of the code and the pinned pdoc:
no search index (pdoc builds it with Node.js when it finds one, so its bytes
would depend on the machine), no source listings, no dates. The modules
documented are the front door (`roofline`) and the full `roofline.api`.

>>> from roofline import apidoc
>>> sorted(apidoc.pages())
['index.html', 'roofline.html', 'roofline/api.html']
"""

from __future__ import annotations

import re
import warnings

#: the documented modules, front door first
MODULES = ("roofline", "roofline.api")
#: a memory address in a default value's repr (`<object at 0x7f...>`) would change from run to run
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def pages() -> dict[str, str]:
    """Page name (relative to `api/`) -> HTML for every documented module, plus `index.html`."""
    import pdoc.doc
    import pdoc.render

    import roofline

    from .units import RooflineError

    for name in roofline.__all__:  # load the front door's lazy names, so pdoc finds them in the module's namespace
        getattr(roofline, name)
    pdoc.render.configure(docformat="markdown", show_source=False, search=False, math=False, mermaid=False, include_undocumented=True,
                          footer_text=f"roofline {roofline.__version__}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a docstring or annotation pdoc cannot read fails the build, never a silent gap
        modules = {name: pdoc.doc.Module.from_name(name) for name in MODULES}
        out = {f"{name.replace('.', '/')}.html": pdoc.render.html_module(module=m, all_modules=modules) for name, m in modules.items()}
        out["index.html"] = pdoc.render.html_index(modules)
    for name, html in out.items():
        if _ADDRESS.search(html):
            raise RooflineError(f"api/{name}: a memory address in the page ({_ADDRESS.search(html).group(0)}); give that default a stable repr")
    return out


__all__ = ["MODULES", "pages"]
