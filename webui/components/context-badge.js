// The header badge: FRESH / HEAD · a1b2c3d / MOUNTED · a1b2c3d, from contextPreview.
import { badge } from "../format.js";

export class ContextBadge extends HTMLElement {
  set plan(plan) {
    this.textContent = badge(plan);
    this.className = `badge ${plan ? plan.mode.toLowerCase() : ""}`;
    this.hidden = !plan;
    this.title = plan ? "The context the next message will be sent with" : "";
  }
}

customElements.define("context-badge", ContextBadge);
