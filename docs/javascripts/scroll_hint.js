// A block wider than its column (a terminal output, a wide table) scrolls sideways in its own box, and nothing on
// the page says so: a reader misses the columns out of view. Each such box gets a visible hint above it, kept in
// step with the window's width. docs/check_site.py fails a page whose wide block has no hint.
function markWideBlocks() {
  const boxes = document.querySelectorAll("article pre > code, article .md-typeset__scrollwrap");
  boxes.forEach((box) => {
    const host = box.tagName === "CODE" ? box.parentElement : box;
    const before = host.previousElementSibling;
    const hint = before && before.classList.contains("scroll-hint") ? before : null;
    const wide = box.scrollWidth > box.clientWidth + 1;
    if (wide && !hint) {
      const made = document.createElement("div");
      made.className = "scroll-hint";
      made.textContent = "⇆ wider than the page: scroll this box sideways for the rest";
      host.before(made);
    } else if (!wide && hint) {
      hint.remove();
    }
  });
}
window.addEventListener("load", markWideBlocks);
window.addEventListener("resize", markWideBlocks);
