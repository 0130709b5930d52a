// Work that redraws what the pointer may be pressing waits until it is let go. A click is a
// press and a release on the same element: a redraw between the two (a trace or the flow's
// vectors landing) replaces that element, and the click reaches nothing.

const MOST_MS = 1000; // a release the page never hears of (let go outside the window) holds no longer

let pressed = false;
let waiting = [];
let cap = null;

function flush() {
  clearTimeout(cap);
  pressed = false;
  const due = waiting;
  waiting = [];
  for (const work of due) work();
}

document.addEventListener("pointerdown", () => (pressed = true), true);
for (const name of ["pointerup", "pointercancel"]) {
  // after the release's click has been dispatched: it reaches the element that was pressed
  document.addEventListener(name, () => setTimeout(flush, 0), true);
}

// Runs ``work`` now, or once the pointer pressed now is let go.
export function afterPress(work) {
  if (!pressed) return work();
  waiting.push(work);
  clearTimeout(cap);
  cap = setTimeout(flush, MOST_MS);
}
