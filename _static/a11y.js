// Accessible names that say what the reader sees (WCAG 2.5.3, "Label in Name"; axe-core's rule
// label-content-name-mismatch, which tests/book/test_browser.py runs on every page). Jupyter
// Book adds every .js under _static/ to every page; these two buttons are the theme's, built
// only where JavaScript runs, so they are mended here, as the page loads:
// - the search button shows "Search Ctrl+K" but is named "Search": its name comes from its text;
// - the colour-mode button is named "Color mode", but its three icons carry tooltips ("Light",
//   "Dark", "System Settings"), which Font Awesome turns into <title>s that count as the button's
//   text. The icons are decoration: they lose their tooltips and are hidden from the name (the
//   button keeps its own tooltip, "Color mode"), whether Font Awesome has drawn them yet or not.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll(".search-button-field[aria-label]")) {
    button.removeAttribute("aria-label");
  }
  for (const icon of document.querySelectorAll(".theme-switch-button :is(i, svg)")) {
    icon.removeAttribute("title");
    icon.removeAttribute("aria-labelledby");
    icon.setAttribute("aria-hidden", "true");
    for (const title of icon.querySelectorAll("title")) title.remove();
  }
});
