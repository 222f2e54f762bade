// The members of a space and their roles, in a modal <dialog>. Its owners add a
// member by user name with a role, change a role, remove a member (add-member,
// update-member, remove-member); everyone else reads the list. The app answers
// with show() (the space as it is now) or fail() (payload errors, in words).
import { emit, h, replace } from "../dom.js";
import { aRole, ROLES } from "../format.js";

/** A payload error in words (the code names the field's problem). */
export function memberError(error, userName) {
  if (error.code === "NOT_FOUND" && error.field === "userName") {
    return `There is no user named “${userName}”.`;
  }
  if (error.code === "CONFLICT") return `${userName} is a member already: change their role in the list.`;
  if (error.code === "FORBIDDEN") return "Only an owner of the space may change its members.";
  return error.message; // LAST_OWNER: "… is the space's last owner: make another member an owner first."
}

export class MembersDialog extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    this.heading = h("h2", { id: "members-title" }, "Members");
    this.body = h("div", { class: "members-body" });
    this.dialog = h("dialog", { class: "members-dialog", id: "members-dialog",
      "aria-labelledby": "members-title" },
    h("div", { class: "dialog-head" }, this.heading,
      h("button", { type: "button", class: "icon", "aria-label": "Close members",
        onclick: () => this.close() }, "×")),
    this.body);
    this.append(this.dialog);
  }

  /** Show (or refresh) the members of `space`; `me`: the signed-in user's name;
   * `note`: what just changed ("bob is now editor."). */
  show(space, me, note = "") {
    this.space = space;
    const owner = space.viewerRole === "OWNER";
    replace(this.heading, "Members of ", space.name);
    this.error = h("p", { class: "error", role: "alert", id: "members-error", hidden: true });
    this.note = h("p", { class: "muted", role: "status", id: "members-note" }, note);
    const rows = space.members.map((member) => this.row(member, owner, me));
    replace(this.body,
      h("ul", { class: "member-list", "aria-label": "Members" }, rows),
      owner ? this.addForm() : h("p", { class: "muted", id: "members-read-only" },
        `You are ${aRole(space.viewerRole)} here: only an owner changes the members.`),
      this.error, this.note);
    if (!this.dialog.open) this.dialog.showModal();
  }

  row(member, owner, me) {
    const name = h("span", { class: "member-name" }, member.userName,
      member.userName === me ? h("span", { class: "muted" }, " (you)") : null);
    if (!owner) {
      return h("li", { class: "member", dataset: { user: member.userName } }, name,
        h("span", { class: "member-role" }, member.role.toLowerCase()));
    }
    const role = h("select", { "aria-label": `Role of ${member.userName}`,
      onchange: (event) => this.send("update-member", { userName: member.userName,
        role: event.target.value }) },
    ROLES.map(([value, label]) => h("option", { value, selected: value === member.role }, label)));
    return h("li", { class: "member", dataset: { user: member.userName } }, name, role,
      h("button", { type: "button", class: "small danger", "aria-label": `Remove ${member.userName}`,
        onclick: () => this.send("remove-member", { userName: member.userName }) }, "Remove"));
  }

  addForm() {
    const name = h("input", { id: "member-name", "aria-label": "User name", placeholder: "User name",
      required: true, autocomplete: "off" });
    const role = h("select", { id: "member-role", "aria-label": "Role of the new member" },
      ROLES.map(([value, label]) => h("option", { value, selected: value === "EDITOR" }, label)));
    return h("form", { class: "member-add", onsubmit: (event) => {
      event.preventDefault();
      const userName = name.value.trim();
      if (userName) this.send("add-member", { userName, role: role.value });
    } }, name, role, h("button", { type: "submit", class: "small primary", id: "member-add" }, "Add"));
  }

  send(type, detail) {
    this.error.hidden = true;
    replace(this.note);
    emit(this, type, { spaceId: this.space.id, ...detail });
  }

  /** Payload errors of a change for `userName`, in words; the list is left as it was. */
  fail(errors, userName) {
    replace(this.error, errors.map((error) => memberError(error, userName)).join(" "));
    this.error.hidden = false;
    // A refused role change: the picker shows the role the member still has.
    for (const select of this.body.querySelectorAll(".member select")) {
      const user = select.closest(".member").dataset.user;
      select.value = this.space.members.find((m) => m.userName === user)?.role ?? select.value;
    }
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }
}

customElements.define("members-dialog", MembersDialog);
