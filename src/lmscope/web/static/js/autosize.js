// A text box that grows with its text, from its rows="" height up to its CSS max-height (then
// it scrolls): a line added by code (Generate, an example) showed half cut off until a scroll.

export function fitHeight(box) {
  box.style.height = ""; // back to the rows="" height, so the box can shrink too
  const style = getComputedStyle(box);
  const border = parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
  const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
  const wanted = style.boxSizing === "border-box" ? box.scrollHeight + border : box.scrollHeight - padding;
  if (box.scrollHeight > box.clientHeight) box.style.height = `${wanted}px`;
}

// Fit ``box`` now, on every edit and when the window's width changes its wrapping.
export function autosize(box) {
  box.addEventListener("input", () => fitHeight(box));
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth !== width) fitHeight(box);
    width = window.innerWidth;
  });
  fitHeight(box);
}
