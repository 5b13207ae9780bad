// @ts-check
import { ApiError, call, element, modelOptions, setApiKey } from "./api.js";
import { mountChat } from "./chat.js";
import { mountDecide } from "./decide.js";
import { mountEmbeddings } from "./embeddings.js";
import { mountImages } from "./images.js";
import { mountRerank } from "./rerank.js";
import { mountSpeech } from "./speech.js";
import { mountTranscription } from "./transcription.js";

/** @typedef {import("./models.js").Model} Model */
/** @typedef {import("./models.js").Library} Library */
/** @typedef {{shown?: () => void} | void} Mounted */

/**
 * The capability tabs, each offered once a model serves it; a tab gets only its own models, loaded or not. `key` names a
 * tab whose models are another tab's task (Decide asks the chat models). `with`: a second task shown in the same tab,
 * below (reranking in the embeddings tab), given its own models.
 * @type {{task: string, key?: string, title: string, mount: (section: HTMLElement, models: Model[]) => Mounted, with?: {task: string, mount: (section: HTMLElement, models: Model[]) => void}}[]}
 */
const tabs = [
    {task: "chat", title: "Chat", mount: mountChat},
    {task: "chat", key: "decide", title: "Decide", mount: mountDecide},
    {task: "image", title: "Images", mount: mountImages},
    {task: "speech", title: "Speech", mount: mountSpeech},
    {task: "transcription", title: "Transcription", mount: mountTranscription},
    {task: "embeddings", title: "Embeddings", mount: mountEmbeddings, with: {task: "rerank", mount: mountRerank}}
];

const status = /** @type {HTMLElement} */ (document.getElementById("status"));
const panel = /** @type {HTMLElement} */ (document.getElementById("panel"));
const nav = /** @type {HTMLElement} */ (document.getElementById("tabs"));
const keyForm = /** @type {HTMLFormElement} */ (document.getElementById("key-form"));
const keyInput = /** @type {HTMLInputElement} */ (document.getElementById("key-input"));
const keyError = /** @type {HTMLElement} */ (document.getElementById("key-error"));

/** @param {string} text */
export function setStatus(text) {
    status.textContent = text;
}

/** GET /models: every model with its status, whether this key may manage them, and the memory budget. */
async function loadLibrary() {
    const response = await call("/models");
    /** @type {Library} */
    const library = await response.json();
    return library;
}

/** The tabs built so far: their panel, button, the models they were given (kept current in place) and what to do when shown. */
/** @type {Map<string, {section: HTMLElement, button: HTMLElement, models: Model[], mounted: Mounted}>} */
const built = new Map();

/** @param {string} task */
function select(task) {
    for (const button of nav.querySelectorAll("button"))
        button.setAttribute("aria-selected", String(button.dataset.task === task));
    for (const [name, {section}] of built)
        section.hidden = name !== task;
    location.hash = task;
    built.get(task)?.mounted?.shown?.();
}

/**
 * @param {string} task
 * @param {string} title
 * @param {Model[]} models
 * @param {(section: HTMLElement, models: Model[]) => Mounted} mount
 */
function addTab(task, title, models, mount) {
    const section = element("div", {"data-tab": task, hidden: ""});
    panel.append(section);
    const button = element("button", {role: "tab", type: "button", "data-task": task}, [title]);
    button.addEventListener("click", () => select(task));
    const entry = {section, button, models, mounted: /** @type {Mounted} */ (undefined)};
    built.set(task, entry);
    entry.mounted = mount(section, models);
}

/**
 * A fresh list (the models tab asked for it): each tab's model picker lists its models again, keeping the choice;
 * a task that gained its first model (a pull) gets its tab.
 * @param {Model[]} models
 */
function updateModels(models) {
    setStatus(`${models.length} model${models.length === 1 ? "" : "s"}`);
    for (const tab of tabs) {
        const own = models.filter((model) => model.task === tab.task);
        const second = tab.with;
        const others = second == null ? [] : models.filter((model) => model.task === second.task);
        const entry = built.get(tab.key ?? tab.task);
        if (entry == null) {
            if (own.length > 0 || others.length > 0)
                addTab(tab.key ?? tab.task, tab.title, own, (section, given) => {
                    const mounted = own.length > 0 ? tab.mount(section, given) : undefined;
                    if (second != null && others.length > 0)
                        second.mount(section, others);
                    return mounted;
                });
            continue;
        }
        const picker = entry.section.querySelector("select[name=model]");
        const names = own.map((model) => `${model.id} ${model.aliases.join(",")}`).join(" ");
        if (!(picker instanceof HTMLSelectElement) || picker.dataset.names === names)
            continue;
        entry.models.splice(0, entry.models.length, ...own);
        const chosen = picker.value;
        picker.replaceChildren(...modelOptions(own));
        picker.dataset.names = names;
        if (own.some((model) => model.id === chosen))
            picker.value = chosen;
    }
    // Capability tabs in their order, the models tab last.
    nav.replaceChildren(...[...tabs.map((tab) => tab.key ?? tab.task), "models"].flatMap((task) => built.get(task)?.button ?? []));
}

/**
 * The models tab, its module fetched when the tab is first shown (the page opens without it): then built from the
 * list the page opened with, and asked for again each time it is shown.
 * @param {HTMLElement} section
 * @param {Library} library
 */
function modelsTab(section, library) {
    /** @type {Promise<{shown: () => void}> | null} */
    let mounted = null;
    return {
        shown() {
            mounted ??= import("./models.js").then(({mountModels}) => mountModels(section, library, updateModels));
            void mounted.then((tab) => tab.shown(), (error) => section.replaceChildren(element("p", {class: "error"}, [String(error)])));
        }
    };
}

/** @param {Library} library */
function showTabs(library) {
    nav.replaceChildren();
    addTab("models", "Models", [], (section) => modelsTab(section, library));
    updateModels(library.data);
    const offered = [...nav.querySelectorAll("button")].map((button) => button.dataset.task ?? "");
    const wanted = location.hash.slice(1);
    select(offered.includes(wanted) ? wanted : offered[0]);
    document.body.dataset.ready = "true";
    performance.mark("playground-ready");
}

async function start() {
    try {
        const library = await loadLibrary();
        keyForm.hidden = true;
        showTabs(library);
    } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
            // Keys are on: ask for one (kept in this tab's sessionStorage only).
            keyForm.hidden = false;
            keyError.hidden = !keyInput.value;
            keyError.textContent = keyInput.value ? error.message : "";
            keyInput.focus();
            return;
        }
        panel.replaceChildren(element("p", {class: "error"}, [error instanceof Error ? error.message : String(error)]));
    }
}

keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    setApiKey(keyInput.value.trim());
    void start();
});

void start();
