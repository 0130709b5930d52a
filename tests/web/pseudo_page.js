// What test_page_pseudo.py reads from the page.
({
  // Every visible text node outside data (tokens, code, inputs, [data-verbatim]) with where it
  // is; and the title, placeholder, aria-label and alt of every visible element.
  collect: () => {
    const skip = (el) => el.closest("[data-verbatim], code, pre, textarea, input, select, script, style, noscript, svg title");
    const shown = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!el || !node.textContent.trim() || skip(el) || !shown(el)) continue;
      const box = el.closest("[data-testid], [id]");
      out.push([node.textContent, `${el.tagName.toLowerCase()}.${el.className} in ${box ? box.dataset.testid || box.id : "body"}`]);
    }
    for (const el of document.body.querySelectorAll("[title], [placeholder], [aria-label], img[alt]")) {
      if (el.closest("[data-verbatim=all]") || !shown(el)) continue;
      for (const attr of ["title", "placeholder", "aria-label", "alt"]) {
        const value = el.getAttribute(attr);
        const box = el.closest("[data-testid], [id]");
        if (value && value.trim()) out.push([`${attr}=${value}`, `${el.tagName.toLowerCase()}.${el.className} in ${box ? box.dataset.testid || box.id : "body"}`]);
      }
    }
    return out;
  },
  // Elements whose right edge passes the viewport, outside any box that scrolls or clips.
  overflow: () => {
    const width = document.documentElement.clientWidth;
    const clipped = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") return true;
      }
      return false;
    };
    const wide = [];
    for (const el of document.body.querySelectorAll("*")) {
      if (!el.checkVisibility()) continue;
      const r = el.getBoundingClientRect();
      if (r.width && r.right > width + 1 && !clipped(el)) {
        wide.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}: ${Math.round(r.right)} > ${width} "${(el.textContent || "").slice(0, 60)}"`);
      }
    }
    if (document.documentElement.scrollWidth > width + 1) wide.push(`page ${document.documentElement.scrollWidth} > ${width}`);
    return wide.slice(0, 8);
  },
});
