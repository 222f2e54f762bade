// The phone top bar is one row: Sessions, the brand, the session title, Lineage and
// Menu; Menu shows the rest (the context badge, search, GraphiQL, help, the account)
// as a row under it (styles.css, max-width 599px). Anything that needs one of them
// hidden there sends a bubbling "reveal" event (search-box's `/`).
const bar = document.querySelector(".topbar");
const toggle = document.getElementById("more-toggle");

function setOpen(open) {
  bar.toggleAttribute("data-menu-open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

toggle.addEventListener("click", () => setOpen(!bar.hasAttribute("data-menu-open")));
bar.addEventListener("reveal", () => setOpen(true));
