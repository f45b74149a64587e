"""mkdocs hooks: pages take text that has one home elsewhere in the repository.

``<!-- readme: Heading -->`` becomes the README's section under ``## Heading`` (up to the
next ``## ``), its links to ``docs/`` made relative to the page and its links to other files
of the repository shown as their paths; ``<!-- source: path -->`` becomes that file as a
fenced code block. So the site and the README cannot drift apart.
"""
import os
import posixpath
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DIRECTIVE = re.compile(r'<!-- (readme|source): (.+?) -->')
_LINK = re.compile(r'\[([^\]]+)\]\(([^)#\s]*)(#[^)\s]*)?\)')


def _read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        return f.read()


def _readme_section(heading, page_dir):
    text = _read('README.md')
    match = re.search(rf'^## {re.escape(heading)}\n(.*?)(?=^## |\Z)', text, flags=re.M | re.S)
    if match is None:
        raise ValueError(f'README.md has no section "## {heading}"')

    def relink(m):
        label, target, anchor = m.group(1), m.group(2), m.group(3) or ''
        if target.startswith(('http://', 'https://')) or not target:
            return m.group(0)
        if target.startswith('docs/'):
            return f'[{label}]({posixpath.relpath(target[len("docs/"):], page_dir or ".")}{anchor})'
        return label if label.startswith('`') else f'`{target}`'  # a file outside the site

    return _LINK.sub(relink, match.group(1).strip())


def on_page_markdown(markdown, page, **kwargs):
    page_dir = posixpath.dirname(page.file.src_uri)

    def expand(m):
        kind, arg = m.group(1), m.group(2).strip()
        if kind == 'readme':
            return _readme_section(arg, page_dir)
        return f'```python\n{_read(arg).rstrip()}\n```'

    return _DIRECTIVE.sub(expand, markdown)
