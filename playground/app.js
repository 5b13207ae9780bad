// @ts-check
import { ApiError, call, element, setApiKey } from "./api.js";
import { mountChat } from "./chat.js";
import { mountEmbeddings } from "./embeddings.js";
import { mountImages } from "./images.js";
import { mountSpeech } from "./speech.js";
import { mountTranscription } from "./transcription.js";

/** @typedef {{id: string, task: string, aliases: string[], endpoints: string[]}} Model */

/** The tabs, each offered only when a model serves it; a tab gets only its own models. */
const tabs = [
    {task: "chat", title: "Chat", mount: mountChat},
    {task: "image", title: "Images", mount: mountImages},
    {task: "speech", title: "Speech", mount: mountSpeech},
    {task: "transcription", title: "Transcription", mount: mountTranscription},
    {task: "embeddings", title: "Embeddings", mount: mountEmbeddings}
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

async function loadModels() {
    const response = await call("/v1/models");
    /** @type {{data: Model[]}} */
    const list = await response.json();
    return list.data;
}

/** @param {Model[]} models */
function showTabs(models) {
    nav.replaceChildren();
    /** @type {Map<string, HTMLElement>} */
    const panels = new Map();
    const offered = tabs.filter((tab) => models.some((model) => model.task === tab.task));
    const select = (/** @type {string} */ task) => {
        for (const button of nav.querySelectorAll("button"))
            button.setAttribute("aria-selected", String(button.dataset.task === task));
        for (const [name, section] of panels)
            section.hidden = name !== task;
        location.hash = task;
    };
    for (const tab of offered) {
        const section = element("div", {"data-tab": tab.task});
        panels.set(tab.task, section);
        panel.append(section);
        tab.mount(section, models.filter((model) => model.task === tab.task));
        const button = element("button", {role: "tab", type: "button", "data-task": tab.task}, [tab.title]);
        button.addEventListener("click", () => select(tab.task));
        nav.append(button);
    }
    if (offered.length === 0)
        panel.append(element("p", {}, ["This server has no models yet."]));
    else
        select(offered.some((tab) => tab.task === location.hash.slice(1)) ? location.hash.slice(1) : offered[0].task);
    document.body.dataset.ready = "true";
    performance.mark("playground-ready");
}

async function start() {
    try {
        const models = await loadModels();
        keyForm.hidden = true;
        setStatus(`${models.length} model${models.length === 1 ? "" : "s"}`);
        showTabs(models);
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
