// What <smriti-app> does for the import events: open the dialog, send the picked
// file to importSpace, show what it made and list it in the sidebar (spacesImported).
// Like handlers.js, each runs with `this` = the app.
import * as api from "./api.js";
import { byteSize } from "./components/import-dialog.js";
import { spacesImported } from "./store.js";

export const importHandlers = () => ({
  "open-import"() {
    this.ui.importer.show();
  },
  async "import-file"({ file }) {
    const { importer } = this.ui;
    let payload;
    try {
      payload = await api.importDocument(await file.text());
    } catch (error) {
      return importer.fail(error.code === "TOO_LARGE"
        ? `${file.name} is ${byteSize(file.size)}: larger than this server accepts in one request `
          + "(its request body limit, SMRITI_MAX_BODY_BYTES). Import it with `smriti import`, "
          + "or ask the server's operator to raise the limit."
        : error.message);
    }
    if (!payload.errors.length) this.dispatch(spacesImported, payload);
    importer.showResult(payload);
  },
});
