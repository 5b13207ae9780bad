// @ts-check
import { element } from "./api.js";

/** The image types every API of the server takes (docs/vision.md). */
const types = ["image/png", "image/jpeg", "image/webp", "image/gif"];
/** The server's per-image limit on encoded bytes (20 MiB): a larger file is refused here, before it is sent. */
const maxBytes = 20 * 1024 * 1024;
/** The server's limit of images per request. */
const maxImages = 16;

/**
 * The chat tab's image attachments: an "Attach image" button (a file picker), paste and drag-and-drop onto the
 * composer, and a tray of thumbnails, each removable, until the message is sent. Each image is read as a data URL
 * (FileReader: its bytes in base64, never decoded here) and shown by the browser as an <img> (the page's CSP allows
 * `img-src data:`). Offered only while the chosen model takes images; otherwise the button is disabled and says why.
 * @param {HTMLElement} dropZone where paste and drop attach images
 * @param {(message: string) => void} showError
 */
export function imageAttachments(dropZone, showError) {
    const input = element("input", {type: "file", name: "image", accept: types.join(","), multiple: "", hidden: ""});
    const button = element("button", {type: "button", class: "secondary", name: "attach"}, ["Attach image"]);
    const tray = element("div", {class: "attachments"});
    /** @type {string[]} */
    let pending = [];
    let allowed = true;

    /** @param {Iterable<File>} files */
    async function add(files) {
        for (const file of files) {
            if (!allowed)
                return showError(button.title);
            if (!types.includes(file.type))
                return showError(`${file.name || "The file"} is not a PNG, JPEG, WebP or GIF image.`);
            if (file.size > maxBytes)
                return showError(`${file.name || "The image"} is larger than 20 MiB.`);
            if (pending.length >= maxImages)
                return showError(`At most ${maxImages} images per message.`);
            const url = await dataUrlOf(file);
            pending.push(url);
            const remove = element("button", {type: "button", class: "secondary", title: "Remove this image"}, ["×"]);
            const item = element("figure", {}, [thumbnail(url), remove]);
            remove.addEventListener("click", () => {
                pending = pending.filter((kept) => kept !== url);
                item.remove();
            });
            tray.append(item);
        }
    }

    button.addEventListener("click", () => input.click());
    input.addEventListener("change", () => {
        void add(input.files ?? []);
        input.value = "";
    });
    dropZone.addEventListener("paste", (event) => {
        const files = [...event.clipboardData?.files ?? []].filter((file) => file.type.startsWith("image/"));
        if (files.length > 0) {
            event.preventDefault();
            void add(files);
        }
    });
    dropZone.addEventListener("dragover", (event) => {
        if (event.dataTransfer?.types.includes("Files"))
            event.preventDefault();
    });
    dropZone.addEventListener("drop", (event) => {
        const files = event.dataTransfer?.files;
        if (files != null && files.length > 0) {
            event.preventDefault();
            void add(files);
        }
    });

    return {
        button, input, tray,
        /**
         * Offers the button, or disables it saying why (`reason`).
         * @param {string | null} reason null: the model takes images
         */
        allow(reason) {
            allowed = reason == null;
            button.disabled = !allowed;
            button.title = reason ?? "Attach a PNG, JPEG, WebP or GIF image (or paste or drop one here)";
        },
        /** The attached images' data URLs, and the tray emptied. */
        take() {
            const taken = pending;
            pending = [];
            tray.replaceChildren();
            return taken;
        }
    };
}

/**
 * An image's thumbnail from its data URL, shown by the browser as an <img> shows any image.
 * @param {string} url
 */
export function thumbnail(url) {
    return element("img", {class: "thumbnail", src: url, alt: "attached image"});
}

/**
 * @param {Blob} file
 * @returns {Promise<string>}
 */
function dataUrlOf(file) {
    return new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.addEventListener("load", () => resolve(String(reader.result)));
        reader.addEventListener("error", () => reject(reader.error));
        reader.readAsDataURL(file);
    });
}
