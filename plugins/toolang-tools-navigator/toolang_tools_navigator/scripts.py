"""The JavaScript the navigator runs in a page: listing what can be acted on (giving
each element a reference that stays with it) and reading the page's content."""

from __future__ import annotations

from typing import Final

REF_ATTRIBUTE: Final = "data-toolang-ref"

OBSERVE: Final = """
([start, max]) => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, '
    + '[role=button], [role=link], [role=checkbox], [role=tab], [role=menuitem], [onclick], '
    + '[contenteditable=""], [contenteditable=true]';
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  let next = start;
  const elements = [];
  for (const el of document.querySelectorAll(selector)) {
    if (elements.length >= max) break;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if ((box.width === 0 && box.height === 0) || style.visibility === 'hidden'
        || style.display === 'none') continue;
    let ref = el.getAttribute('data-toolang-ref');
    if (!ref) { ref = 'e' + next++; el.setAttribute('data-toolang-ref', ref); }
    const tag = el.tagName.toLowerCase();
    const label = (el.labels && el.labels[0] && el.labels[0].innerText)
      || el.getAttribute('aria-label') || el.getAttribute('placeholder')
      || el.getAttribute('title') || '';
    const text = tag === 'input' || tag === 'select' || tag === 'textarea' ? '' : el.innerText;
    const item = {ref, tag, role: el.getAttribute('role') || '',
                  name: clean(label || text || el.value).slice(0, 100)};
    if (tag === 'input') item.type = el.type;
    if (el.name) item.field = el.name;
    if (tag === 'a') item.href = el.href;
    if (['input', 'select', 'textarea'].includes(tag)) {
      item.value = el.type === 'password' ? '' : String(el.value).slice(0, 200);
      if (el.type === 'checkbox' || el.type === 'radio') item.checked = el.checked;
    }
    if (el.disabled) item.disabled = true;
    elements.push(item);
  }
  return {elements, next};
}
"""
"""``(start, max)`` → ``{elements, next}``: the visible actionable elements, each with
its reference (``e<n>``; an element keeps the one it was given, a new one gets the next
number of the session, so a reference never names another element on a later page)."""

EXTRACT: Final = """
(maxText) => {
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].slice(0, 100)
    .map((h) => ({level: Number(h.tagName[1]), text: clean(h.innerText)}));
  const links = [...document.querySelectorAll('a[href]')].slice(0, 200)
    .map((a) => ({text: clean(a.innerText).slice(0, 100), href: a.href}));
  const value = (e) => e.type === 'password' ? ''
    : (e.type === 'checkbox' || e.type === 'radio') ? (e.checked ? e.value : null) : e.value;
  const forms = [...document.forms].slice(0, 20).map((f) => ({
    name: f.getAttribute('name') || f.id || '', action: f.action,
    method: (f.getAttribute('method') || 'get').toLowerCase(),
    fields: [...f.elements].filter((e) => e.name)
      .map((e) => ({name: e.name, type: e.type, value: value(e)})),
  }));
  const tables = [...document.querySelectorAll('table')].slice(0, 20)
    .map((t) => [...t.rows].slice(0, 200).map((r) => [...r.cells].map((c) => clean(c.innerText))));
  const body = document.body ? document.body.innerText : '';
  const text = body.replace(/[ \\t]+/g, ' ').replace(/\\n\\s*\\n+/g, '\\n').trim();
  return {title: document.title, url: location.href, headings, text: text.slice(0, maxText),
          truncated: text.length > maxText, links, forms, tables};
}
"""
"""``maxText`` → the page's structured content."""
