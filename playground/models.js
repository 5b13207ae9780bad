// @ts-check
import { call, element, labelled, streamMessages } from "./api.js";

/**
 * @typedef {{value: string, estimated_bytes: number | null, measured_bytes: number | null, last_used: number | null,
 *     keep_alive: string, pinned: boolean, preload: boolean, error?: string, retry_at?: number,
 *     progress?: {stages: string[], current: string, value: number}}} ModelStatus
 * @typedef {{id: string, task: string, aliases: string[], endpoints: string[], architecture?: {input_modalities: string[], output_modalities: string[]}, parameter_set?: string, status?: ModelStatus}} Model
 * @typedef {{data: Model[], can_manage?: boolean, memory?: {budget_bytes: number, in_use_bytes: number, vram_budget_bytes?: number | null, vram_in_use_bytes?: number}}} Library
 */

/** How often the list is asked for while a model loads or unloads or a pull runs; never while all is still. */
const pollMs = 1000;

/**
 * The models tab: every model of the library with its status (a bar while it loads or unloads), memory (estimated,
 * measured), last use, keep-alive and pin; the memory the models hold against the budget; and, for a caller who may
 * manage models (`can_manage` of GET /models: an administrator's key, or a server without keys), Load and Unload
 * buttons and a pull box showing the download's progress from its events. `onList` gets every fresh list (the other
 * tabs' model pickers follow it). Returns what to do when the tab is shown: ask for the list again.
 * @param {HTMLElement} root
 * @param {Library} initial
 * @param {(models: Model[]) => void} onList
 */
export function mountModels(root, initial, onList) {
    const meter = element("meter", {min: "0", value: "0", "data-role": "memory-bar"});
    const memoryText = element("span", {"data-role": "memory"});
    // A GPU's VRAM beside it, once the server knows a VRAM budget (none without a GPU).
    const vramMeter = element("meter", {min: "0", value: "0", "data-role": "vram-bar"});
    const vramText = element("span", {"data-role": "vram"});
    const vramRow = element("div", {hidden: ""}, [element("div", {class: "row"}, [element("strong", {}, ["VRAM"]), vramText]), vramMeter]);
    const memoryCard = element("div", {class: "card"}, [element("div", {class: "row"}, [element("strong", {}, ["Memory"]), memoryText]), meter, vramRow]);
    const head = element("tr");
    const rows = element("tbody");
    const note = element("p", {class: "muted", "data-role": "models-note"});
    const error = element("p", {class: "error", role: "alert", "data-role": "models-error"});
    const pullName = element("input", {name: "pull", placeholder: "catalogue id, task, or owner/repo[:quant]", size: "40", required: ""});
    const unverified = element("input", {name: "allow_unverified", type: "checkbox"});
    const pullButton = element("button", {type: "submit"}, ["Pull"]);
    const pullProgress = element("progress", {max: "1", value: "0", hidden: "", "data-role": "pull-progress"});
    const pullState = element("div", {class: "muted", "data-role": "pull-state"});
    const pullLog = element("ul", {class: "pull-log", "data-role": "pull-log"});
    const pullError = element("p", {class: "error", role: "alert", "data-role": "pull-error"});
    const pullForm = element("form", {class: "card", hidden: ""}, [
        element("div", {class: "row"}, [labelled("Pull a model from the hub", pullName), element("label", {class: "inline"}, [unverified, " allow files without a known sha256"]), pullButton]),
        pullProgress, pullState, pullLog, pullError
    ]);
    root.append(memoryCard, element("div", {class: "card"}, [element("table", {class: "models"}, [element("thead", {}, [head]), rows]), note, error]), pullForm);

    let library = initial;
    /** Models this page asked to load or unload, until the answer comes. */
    const pending = new Set();
    let pulling = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let refreshing = false;
    let again = false;

    const busy = () => pending.size > 0 || pulling || library.data.some((model) => ["loading", "unloading"].includes(model.status?.value ?? ""));

    const render = () => {
        const manage = library.can_manage === true;
        const memory = library.memory;
        memoryCard.hidden = memory == null;
        if (memory != null) {
            meter.max = memory.budget_bytes;
            meter.high = memory.budget_bytes * 0.9;
            meter.value = memory.in_use_bytes;
            memoryText.textContent = `${formatBytes(memory.in_use_bytes)} of ${formatBytes(memory.budget_bytes)} in use (the models' estimates)`;
            const vramBudget = memory.vram_budget_bytes ?? 0;
            vramRow.hidden = vramBudget <= 0;
            if (vramBudget > 0) {
                const inUse = memory.vram_in_use_bytes ?? 0;
                vramMeter.max = vramBudget;
                vramMeter.high = vramBudget * 0.9;
                vramMeter.value = inUse;
                vramText.textContent = `${formatBytes(inUse)} of ${formatBytes(vramBudget)} in use (the models' estimates)`;
            }
        }
        head.replaceChildren(...["Model", "Task", "Status", "Memory (estimated · measured)", "Last used", "Keep-alive", "Pinned", ...(manage ? [""] : [])]
            .map((title) => element("th", {}, [title])));
        rows.replaceChildren(...library.data.map((model) => row(model, manage)));
        note.textContent = library.data.length === 0
            ? "No models yet." + (manage ? " Pull one below." : "")
            : manage ? "" : "Loading, unloading and pulling models needs an administrator's key.";
        pullForm.hidden = !manage;
    };

    /**
     * @param {Model} model
     * @param {boolean} manage
     */
    const row = (model, manage) => {
        const status = model.status;
        const value = status?.value ?? "loaded";
        const state = element("td", {"data-role": "status", "data-status": value}, [value]);
        if (value === "loading" || value === "unloading") {
            // A load whose engine tells how far it is (GGUF weights): a bar with its value and the percentage beside it.
            const fraction = value === "loading" ? status?.progress?.value : undefined;
            state.append(" ", element("progress", {"aria-label": `${model.id} ${value}`, max: "1", ...fraction != null ? {value: String(fraction)} : {}}));
            if (fraction != null)
                state.append(" ", element("span", {"data-role": "load-progress"}, [`${Math.round(fraction * 100)}%`]));
        }
        if (value === "failed" && status?.error != null)
            state.append(element("div", {class: "error"}, [status.error + (status.retry_at != null ? ` (tried again from ${new Date(status.retry_at * 1000).toLocaleTimeString()})` : "")]));
        const cells = [
            element("td", {}, [model.id, ...(model.aliases.length > 0 ? [element("div", {class: "muted"}, [model.aliases.join(", ")])] : [])]),
            element("td", {}, [model.task]),
            state,
            element("td", {}, [`${formatBytes(status?.estimated_bytes ?? null)} · ${formatBytes(status?.measured_bytes ?? null)}`]),
            element("td", {}, [status?.last_used != null ? new Date(status.last_used * 1000).toLocaleString() : "never"]),
            element("td", {}, [status?.keep_alive ?? ""]),
            element("td", {}, [status?.pinned ? "pinned" : ""])
        ];
        if (manage) {
            const loaded = value === "loaded";
            const action = element("button", {type: "button", class: loaded ? "secondary" : "", "data-action": loaded ? "unload" : "load"}, [loaded ? "Unload" : "Load"]);
            action.disabled = pending.has(model.id) || value === "loading" || value === "unloading";
            action.addEventListener("click", () => void change(loaded ? "unload" : "load", model.id));
            cells.push(element("td", {}, [action]));
        }
        return element("tr", {"data-model": model.id}, cells);
    };

    /** Asks for the list; again at `pollMs` while anything is under way, not otherwise. */
    const refresh = async () => {
        if (refreshing) {
            again = true;
            return;
        }
        refreshing = true;
        clearTimeout(timer);
        timer = undefined;
        try {
            library = await (await call("/models")).json();
            render();
            onList(library.data);
        } catch (failure) {
            error.textContent = messageOf(failure);
        } finally {
            refreshing = false;
        }
        if (again) {
            again = false;
            return refresh();
        }
        if (busy())
            timer = setTimeout(() => void refresh(), pollMs);
    };

    /**
     * POST /models/load or /models/unload; the answer comes once it is done. A refusal (403 for a user's key,
     * 409 for a model in use, 503 when the memory is held) is shown with the server's message.
     * @param {"load" | "unload"} action
     * @param {string} id
     */
    const change = async (action, id) => {
        error.textContent = "";
        pending.add(id);
        render();
        void refresh();
        try {
            await call(`/models/${action}`, {body: {model: id}, onBusy: (seconds) => error.textContent = `${id}: memory busy, retrying in ${seconds} s`});
            error.textContent = "";
        } catch (failure) {
            error.textContent = `${action === "load" ? "Loading" : "Unloading"} ${id}: ${messageOf(failure)}`;
        } finally {
            pending.delete(id);
            void refresh();
        }
    };

    pullForm.addEventListener("submit", async (event) => {
        event.preventDefault();
        const name = pullName.value.trim();
        if (name === "" || pulling)
            return;
        pulling = true;
        pullButton.disabled = true;
        pullError.textContent = "";
        pullLog.replaceChildren();
        pullState.textContent = `asking the hub for ${name}`;
        pullProgress.hidden = false;
        pullProgress.removeAttribute("value");
        delete pullForm.dataset.finished;
        void refresh();
        /** @type {Map<string, {done: number, total: number | null}>} */
        const files = new Map();
        const log = (/** @type {string} */ text) => pullLog.append(element("li", {}, [text]));
        try {
            const response = await call("/models/pull", {body: {model: name, ...(unverified.checked ? {allow_unverified: true} : {})}});
            for await (const {message} of streamMessages(response)) {
                const data = message.data ?? {};
                if (message.event === "message")
                    log(String(data.message));
                else if (message.event === "download_progress") {
                    for (const [file, progress] of Object.entries(data))
                        files.set(file, progress);
                    showProgress(files, pullProgress, pullState);
                } else if (message.event === "file_verified")
                    log(`${data.file}: ${data.verification}`);
                else if (message.event === "download_finished") {
                    log(`${data.id} is ready (${data.task}; it loads on its first request)`);
                    pullForm.dataset.finished = String(data.id);
                    void refresh();
                } else if (message.event === "download_failed")
                    pullError.textContent = data.error?.message ?? "The pull failed.";
            }
            pullState.textContent = pullError.textContent === "" ? "done" : "failed";
        } catch (failure) {
            pullError.textContent = messageOf(failure);
            pullState.textContent = "failed";
        } finally {
            pullProgress.hidden = pullError.textContent !== "" && files.size === 0;
            pulling = false;
            pullButton.disabled = false;
            void refresh();
        }
    });

    render();
    if (busy())
        timer = setTimeout(() => void refresh(), pollMs);
    return {shown: () => void refresh()};
}

/**
 * The pull's progress: every file's bytes so far against their sizes (a bar without a value while a size is unknown).
 * @param {Map<string, {done: number, total: number | null}>} files
 * @param {HTMLProgressElement} bar
 * @param {HTMLElement} text
 */
function showProgress(files, bar, text) {
    const all = [...files.values()];
    const done = all.reduce((sum, file) => sum + file.done, 0);
    const known = all.every((file) => file.total != null);
    const total = all.reduce((sum, file) => sum + (file.total ?? 0), 0);
    if (known && total > 0)
        bar.value = done / total;
    else
        bar.removeAttribute("value");
    const [name, last] = [...files].at(-1) ?? ["", {done: 0, total: null}];
    text.textContent = `${files.size} file${files.size === 1 ? "" : "s"}: ${formatBytes(done)}${known ? ` of ${formatBytes(total)}` : ""} · ${name} ${formatBytes(last.done)}${last.total != null ? ` of ${formatBytes(last.total)}` : ""}`;
}

/** @param {unknown} failure */
function messageOf(failure) {
    return failure instanceof Error ? failure.message : String(failure);
}

/**
 * Bytes as a person reads them (binary units, as the server's log does); "—" for none known.
 * @param {number | null} bytes
 */
export function formatBytes(bytes) {
    if (bytes == null)
        return "—";
    const units = ["B", "KB", "MB", "GB", "TB"];
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return `${unit === 0 || value >= 100 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}
