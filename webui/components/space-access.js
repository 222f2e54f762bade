// Right pane, above the lineage (accounts mode only): your role in the space and
// "Members", which opens the members dialog (open-members).
import { emit, h, replace, sameState } from "../dom.js";
import { aRole } from "../format.js";

export class SpaceAccess extends HTMLElement {
  /** {accounts, space: {id, name, viewerRole, members} or null}. */
  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { accounts, space } = this._state ?? {};
    this.className = "space-access";
    this.hidden = !accounts || !space;
    if (this.hidden) return replace(this);
    const count = space.members.length;
    replace(this,
      h("span", { class: "muted" }, "You are ", h("strong", { class: "role" },
        aRole(space.viewerRole)), count > 1 ? ` · ${count} members` : " · only you"),
      h("button", { type: "button", class: "small", id: "members-button",
        "aria-label": `Members of space ${space.name}`,
        onclick: () => emit(this, "open-members", { spaceId: space.id }) }, "Members"));
  }
}

customElements.define("space-access", SpaceAccess);
